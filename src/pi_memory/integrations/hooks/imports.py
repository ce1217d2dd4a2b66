"""``pi-memory import claude-code-memory`` / ``import codex-memories``: the hosts' own memories into
pi-memory's stores, planned first (dry run), written only with ``--apply``. The host's files stay as they are.

* Claude Code's auto-memory: ``<config dir>/projects/<slug>/memory/`` (``~/.claude`` or
  ``$CLAUDE_CONFIG_DIR``; the slug is the project's git root with every character but letters and digits made
  ``-``): ``MEMORY.md`` is an index (``- [Title](file.md) — hook`` lines, loaded into each session) and every
  other ``*.md`` one memory with YAML front matter (``name``, ``description``, ``type`` or ``metadata.type``:
  ``user`` / ``feedback`` / ``project`` / ``reference``). A ``user`` memory goes to USER.md, the others to the
  project's store (Claude Code keeps them per project); index lines that point at no file are project entries
  too. ``CLAUDE.md`` files: :mod:`.imports_instructions`.
* Codex's memories (``[features] memories = true``): ``$CODEX_HOME/memories/`` holds ``memory_summary.md``
  (first line ``v1``) and ``MEMORY.md``, Markdown written by Codex from past threads, not per project; each
  bullet, and each paragraph outside headings and code blocks, becomes an entry of MEMORY.md (your notes).
  ``raw_memories.md`` and ``rollout_summaries/`` are Codex's working files and are left out. ``AGENTS.md``
  files: :mod:`.imports_instructions`.

Entries pass through the store as any write does (threat and secret scanning, character limits, duplicates
skipped), so what is refused is reported with the store's reason and nothing is half written. The dry run
(:func:`preview`) asks every entry the same checks, in order, so it says what ``--apply`` will do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

MAX_ENTRY_CHARS = 600
_LINK = re.compile(r"\[([^\]]+)\]\(([^)]+)\)")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


@dataclass
class Planned:
    """One entry to import: ``target`` store, ``text``, and ``source`` (the file it came from)."""

    target: str
    text: str
    source: str

    def to_dict(self) -> dict:
        """What a person is shown: the text with every credential redacted (a refused entry is printed too)."""
        from pi_memory import safety

        return {"target": self.target, "text": safety.redact(self.text), "source": self.source}


def clean(text: str) -> str:
    """One line, whitespace collapsed, cut at :data:`MAX_ENTRY_CHARS` on a word boundary."""
    text = " ".join(text.split())
    if len(text) <= MAX_ENTRY_CHARS:
        return text
    cut = text[: MAX_ENTRY_CHARS - 1].rsplit(" ", 1)[0]
    return cut + "…"


def front_matter(raw: str) -> tuple[dict, str]:
    """``(front matter, body)``; no front matter gives ``({}, raw)``, an unreadable one (not YAML, or refused by
    the safe loader: aliases, too long, :mod:`pi_memory.front_matter`) ``({}, the body after it)``."""
    if not raw.startswith("---"):
        return {}, raw
    end = raw.find("\n---", 3)
    if end < 0:
        return {}, raw
    from pi_memory.front_matter import FrontMatterError, FrontMatterRefused, load

    body = raw[end + 4:].split("\n", 1)[1] if "\n" in raw[end + 4:] else ""
    try:
        meta = load(raw[3:end]) or {}
    except FrontMatterRefused:
        return {}, body
    except FrontMatterError:
        return {}, raw
    return (meta if isinstance(meta, dict) else {}), body


def claude_memory_dir(project: Path, config_dir: Path) -> Path:
    from pi_memory.project import project_root

    root = str(project_root(project))
    return config_dir / "projects" / re.sub(r"[^A-Za-z0-9]", "-", root) / "memory"


def plan_claude_code(folder: Path) -> list[Planned]:
    planned: list[Planned] = []
    if not folder.is_dir():
        return planned
    for path in sorted(folder.glob("*.md")):
        if path.name == "MEMORY.md":
            continue
        meta, body = front_matter(path.read_text(encoding="utf-8", errors="replace"))
        kind = meta.get("type")
        if not kind and isinstance(meta.get("metadata"), dict):
            kind = meta["metadata"].get("type")
        description = meta.get("description")
        description = "" if description is None or isinstance(description, list | dict) else str(description).strip()
        text = clean(body) or clean(description)
        if description and text and description.lower() not in text.lower():
            text = clean(f"{description}: {text}")
        if text:
            planned.append(Planned("user" if kind == "user" else "project", text, str(path)))
    index = folder / "MEMORY.md"
    if index.is_file():
        for line in index.read_text(encoding="utf-8", errors="replace").splitlines():
            if not _BULLET.match(line):
                continue
            links = [target for _, target in _LINK.findall(line)]
            if any((folder / target).is_file() for target in links):
                continue  # the topic file itself was imported above
            text = clean(_LINK.sub(r"\1", _BULLET.sub("", line)))
            if text:
                planned.append(Planned("project", text, str(index)))
    return planned


def markdown_sections(text: str) -> list[tuple[str, str]]:
    """``(heading, item)`` for each bullet and paragraph outside code, tables, comments and front matter; the
    heading is the nearest one of level 2 or more above it (``""`` when none)."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":  # YAML front matter (rules files: ``paths:``)
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
        lines = lines[end + 1:] if end is not None else lines
    items: list[tuple[str, str]] = []
    heading, current, fence, comment = "", [], "", False

    def flush() -> None:
        if current:
            items.append((heading, " ".join(current)))
            current.clear()

    for line in lines:
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
            continue
        if comment:
            comment = "-->" not in stripped
            continue
        if stripped.startswith(("```", "~~~")):
            flush()
            fence = stripped[:3]
            continue
        if stripped.startswith("<!--"):
            flush()
            comment = "-->" not in stripped
            continue
        match = _HEADING.match(stripped)
        if match:
            flush()
            heading = match.group(2) if len(match.group(1)) >= 2 else ""
            continue
        if not stripped or stripped.startswith("|") or set(stripped) <= set("-*_= "):
            flush()
            continue
        if _BULLET.match(line):
            flush()
            current.append(_BULLET.sub("", line).strip())
        else:
            current.append(stripped)
    flush()
    return items


def markdown_items(lines: list[str]) -> list[str]:
    """Each bullet and each paragraph that is not a heading or inside a code block, as one line of text."""
    return [item for _, item in markdown_sections("\n".join(lines))]


def plan_codex(folder: Path) -> list[Planned]:
    planned: list[Planned] = []
    seen: set[str] = set()
    for name in ("memory_summary.md", "MEMORY.md"):
        path = folder / name
        if not path.is_file():
            continue
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        if name == "memory_summary.md" and lines and lines[0].strip() == "v1":
            lines = lines[1:]
        for item in markdown_items(lines):
            text = clean(item)
            if text and text not in seen:
                seen.add(text)
                planned.append(Planned("memory", text, str(path)))
    return planned


def rule_key(text: str) -> str:
    """:func:`pi_memory.standing.rule_key` (what ``pin add`` counts as a duplicate), imported when first needed."""
    from pi_memory.standing import rule_key as key

    return key(text)


def _standing_rules(standing) -> set[str]:
    return {rule_key(r) for r in standing.rules()} if standing is not None else set()


def _store_refusal(store, target: str, text: str, current: list[str] | None) -> str | None:
    """Why ``store.add(target, text)`` would refuse ``text`` with ``current`` the entries of ``target`` by
    then (``None``: no such store), or ``None`` when it would not: the store's own checks (the folder can be
    written, content rules, threat and secret scans, then the character limit), nothing written."""
    from pi_memory.curated import entries as fmt
    from pi_memory.curated import messages as msg
    from pi_memory.curated.operations import Operation
    from pi_memory.curated.store import LIMIT_SETTINGS

    if current is None:
        return msg.invalid_target(target, store.targets)
    op = Operation(action="add", content=text)
    refused = store.write_refused(target) or store.check(target, [op], single=True)
    if refused is not None:
        return refused.error or ""
    entry = fmt.normalise_newlines(text).strip()
    limit = store.limits[target]
    if entry in current or not store.enforce_limits and len(entry) <= limit:
        return None
    before, after = fmt.joined_length(current), fmt.joined_length([*current, entry])
    if after <= limit:
        return None
    words = msg.over_limit(store.name(target), limit, before, after, Operation(action="add", content=entry),
                           LIMIT_SETTINGS[target])
    if store.on_overflow is not None:  # learning's memoryOverflowStrategy may make room at --apply
        words += (" (With --apply, your learning setting memoryOverflowStrategy may first make room: consolidate "
                  "the store or evict its oldest entries.)")
    return words


def preview(store, planned: list[Planned], standing=None) -> list[dict]:
    """The dry run of :func:`apply`, writing nothing: one row per entry, ``status``: ``would add`` | ``already
    there`` | ``would be refused`` (with the store's reason in ``message``). Each entry is asked every check
    :func:`apply`'s write makes (control characters, the scanners, a store's character limit, the pins' caps),
    against the stores as the entries before it would leave them, so the dry run says what ``--apply`` does. The
    first entry added to a hand-made store holding exact duplicates merges them: its row says so
    (``duplicatesMerged``, and the words in ``message``)."""
    from pi_memory.curated import entries as fmt
    from pi_memory.curated.messages import merged_note
    from pi_memory.standing import normalise_rule

    rules = standing.rules() if standing is not None else []
    current = {t: list(store.entries(t)) for t in store.targets}
    rows = []
    copies = {t: len(store.copies(t)) for t in store.targets}  # merged by the first add to each store
    for item in planned:
        if item.target == "standing":
            if standing is None:
                raise ValueError("a standing instruction to import needs the standing store")
            refused = standing.check(item.text, rules)
            if refused is not None and refused.code == "duplicate":
                rows.append({**item.to_dict(), "status": "already there", "message": ""})
            elif refused is not None:
                rows.append({**item.to_dict(), "status": "would be refused", "message": refused.error or ""})
            else:
                rules.append(normalise_rule(" ".join(item.text.split())))
                rows.append({**item.to_dict(), "status": "would add", "message": ""})
            continue
        entries = current.get(item.target)
        why = _store_refusal(store, item.target, item.text, entries)
        if why is not None:
            rows.append({**item.to_dict(), "status": "would be refused", "message": why})
        elif (entry := fmt.normalise_newlines(item.text).strip()) in entries:
            rows.append({**item.to_dict(), "status": "already there", "message": ""})
        else:
            entries.append(entry)
            rows.append({**item.to_dict(), "status": "would add", "message": ""})
            if n := copies.pop(item.target, 0):
                rows[-1].update(message=merged_note(store.name(item.target), n, dry_run=True), duplicatesMerged=n)
    return rows


def apply(store, planned: list[Planned], standing=None) -> list[dict]:
    """Write each planned entry through ``store.add`` (``target`` ``standing``: ``standing.add``, a
    :class:`pi_memory.standing.StandingStore`); one result per entry: ``{target, text, source, status: added |
    duplicate | refused, message}``."""
    results = []
    for item in planned:
        if item.target == "standing":
            if standing is None:
                raise ValueError("a standing instruction to import needs the standing store")
            known = rule_key(item.text) in _standing_rules(standing)
            outcome = standing.add(item.text)
            status = "duplicate" if known else ("added" if outcome.success else "refused")
            results.append({**item.to_dict(), "status": status,
                            "message": "" if outcome.success or known else (outcome.error or "")})
            continue
        before = len(store.entries(item.target)) if item.target in store.targets else 0
        store.begin_turn()  # an import is not an agent run: the retry guard must not stop it
        outcome = store.add(item.target, item.text)
        after = len(store.entries(item.target)) if item.target in store.targets else 0
        status = "refused" if not outcome.success else ("added" if after > before else "duplicate")
        results.append({**item.to_dict(), "status": status,
                        "message": outcome.error or outcome.message or ""})
        if outcome.duplicates_merged:
            results[-1]["duplicatesMerged"] = outcome.duplicates_merged
    return results
