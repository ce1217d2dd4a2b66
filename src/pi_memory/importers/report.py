"""What an import would bring (dry run) or brought (``--apply``): one :class:`ImportItem` per thing found."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from pi_memory.curated.entries import printable
from pi_memory.shown_text import raw_prefix, shown

# action -> (dry-run wording, applied wording), for people
ACTIONS = {
    "add": ("to add", "added"),
    "extended": ("to the extended store (searchable; the Markdown file is full)",
                 "added to the extended store (searchable; the Markdown file is full)"),
    "already": ("already there", "already there"),
    "clash": ("clashes (ours kept)", "clashed (ours kept)"),
    "skip": ("skipped", "skipped"),
}


@dataclass(frozen=True)
class ImportItem:
    """``kind``: where it comes from (``MEMORY.md``, ``skill``, ``STANDING.md``, ``mem0``...); ``what``: a
    preview; ``action``: one of :data:`ACTIONS`; ``reason`` for a clash or a skip; ``to``: where it goes."""

    kind: str
    what: str
    action: str
    reason: str | None = None
    to: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class ImportReport:
    source: str
    applied: bool
    items: list[ImportItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    duplicates_merged: int = 0  # copies of exact duplicates in our stores that the import merged (dry run: would)

    def add(self, kind: str, what: str, action: str, reason: str | None = None, to: str | None = None) -> None:
        """One item; ``what`` and ``reason`` are kept as a person is shown them (a refused entry is shown too):
        ``what`` its first 100 characters on one line, credentials redacted, and both with control and hidden
        characters as escapes (:func:`pi_memory.shown_text.shown`), so no escape code reaches a terminal."""
        flat = " ".join(what.split())
        part = raw_prefix(flat, 100)
        shown_what = shown(part) + ("..." if len(part) < len(flat) else "")
        self.items.append(ImportItem(kind, shown_what, action, None if reason is None else printable(reason), to))

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, Counter] = {}
        for item in self.items:
            out.setdefault(item.kind, Counter())[item.action] += 1
        return {k: dict(v) for k, v in out.items()}

    def to_dict(self) -> dict:
        return {"success": True, "source": self.source, "applied": self.applied, "counts": self.counts(),
                "items": [i.to_dict() for i in self.items], "notes": self.notes,
                "duplicatesMerged": self.duplicates_merged}

    def lines(self) -> list[str]:
        """The report for a person: a line per kind with its counts, then every clash and skip with its
        reason, then the notes."""
        col = 1 if self.applied else 0
        head = (f"Imported from {self.source}." if self.applied
                else f"Dry run of an import from {self.source}: nothing was written. Add --apply to import.")
        out = [head]
        for kind, counts in self.counts().items():
            parts = [f"{n} {ACTIONS[a][col]}" for a, n in counts.items()]
            out.append(f"  {kind}: " + ", ".join(parts))
        problems = [i for i in self.items if i.action in ("clash", "skip")]
        if problems:
            out.append("Not imported:")
            out += [f"  [{i.kind}] {i.what}: {i.reason}" for i in problems]
        out += self.notes
        return out
