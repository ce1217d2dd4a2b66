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
    refused: bool | None = None  # a skip our checks refused (a credential, a threat pattern...): the exit code is 1

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class ImportReport:
    source: str
    applied: bool
    items: list[ImportItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    duplicates_merged: int = 0  # copies of exact duplicates in our stores that the import merged (dry run: would)

    def add(self, kind: str, what: str, action: str, reason: str | None = None, to: str | None = None,
            refused: bool = False) -> None:
        """One item; ``what`` and ``reason`` are kept as a person is shown them (a refused entry is shown too):
        ``what`` its first 100 characters on one line, credentials redacted, and both with control and hidden
        characters as escapes (:func:`pi_memory.shown_text.shown`), so no escape code reaches a terminal.
        ``refused``: a skip the scanners or a store's rules refused (:attr:`refused`), not one left for another
        reason (a project with no known folder, a session with no text left)."""
        flat = " ".join(what.split())
        part = raw_prefix(flat, 100)
        shown_what = shown(part) + ("..." if len(part) < len(flat) else "")
        self.items.append(ImportItem(kind, shown_what, action, None if reason is None else printable(reason), to,
                                     True if refused else None))

    @property
    def refused(self) -> int:
        """How many items were refused (a dry run: would be): the command then exits 1, as the other imports do."""
        return sum(1 for item in self.items if item.refused)

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, Counter] = {}
        for item in self.items:
            out.setdefault(item.kind, Counter())[item.action] += 1
        return {k: dict(v) for k, v in out.items()}

    def to_dict(self) -> dict:
        return {"success": True, "source": self.source, "applied": self.applied, "counts": self.counts(),
                "items": [i.to_dict() for i in self.items], "notes": self.notes, "refused": self.refused,
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
        if self.refused:
            out.append(f"{self.refused} item(s) {'were' if self.applied else 'would be'} refused (listed above): fix "
                       "them in the source and import again; the command exits 1 meanwhile.")
        return out
