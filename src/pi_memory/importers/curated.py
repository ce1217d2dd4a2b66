"""Bring Markdown entries into the curated stores, and what does not fit into the extended store.

Shared by the importers: :func:`import_entries` plans first (duplicates, scanner refusals, what fits the
store's budget, in order) and, when applying, writes entry by entry through :class:`MemoryStore` (lock,
re-read, atomic write, mirrored into the index), so a dry run and an import decide alike. Entries that do
not fit go to the index's extended store (searchable by ``memory_search``) instead of being dropped. A hand-made
store holding exact duplicates has them merged by the first add (the store's rule); the report says so, and a dry
run says it would (``ImportReport.duplicates_merged`` and a note).
"""

from __future__ import annotations

from pi_memory import safety
from pi_memory.curated import entries as fmt
from pi_memory.curated.messages import for_person, merged_note
from pi_memory.importers.report import ImportReport
from pi_memory.index import list_memories
from pi_memory.index.db import index_path
from pi_memory.index.mirror import parse_failure_entry


def index_or_none(memory, create: bool):
    """The index connection; ``None`` in a dry run when there is no index yet (a dry run creates nothing)."""
    if not create and not index_path(memory.settings.data_dir).exists():
        return None
    return memory.index()


def existing_rows(conn, scope: str, project: str | None, target: str) -> set[str]:
    if conn is None:
        return set()
    return {r["content"] for r in list_memories(conn, scope=scope, project=project if scope == "project" else None,
                                                 target=target)}


def refusal(text: str) -> str | None:
    """Why ``text`` cannot be stored at all (scanner or format), in a person's words, else ``None``."""
    problem = fmt.content_problem(text)
    if problem:
        return {"delimiter": "it holds a line that is only '§' (an entry separator)",
                "control": "it holds terminal control characters"}.get(problem, "it is empty")
    finding = safety.check_write(text)
    return found_in_import(finding) if finding else None


_AGAIN = "in the source, then import again"


def found_in_import(finding) -> str:
    """Why the scanners refuse an imported text (``finding``: :func:`pi_memory.safety.check_write`'s), in words for
    the person running the import: the text is theirs, in the file they import from, so what to do is change it
    there (a model writing memory is told to rephrase instead: :func:`pi_memory.safety.refusal_message`)."""
    if finding.category == safety.SECRET:
        return (f"it holds a credential ({finding.id}), and pi-memory stores no secrets: replace the value by where "
                f"it is kept (e.g. \"API key is in ~/.config/x\") {_AGAIN}")
    if finding.category == safety.INVISIBLE_UNICODE:
        return (f"it holds a hidden character ({finding.id}) that can hide instructions in future prompts: remove it "
                f"{_AGAIN}")
    if finding.id in safety.IMAGE_BEACON_IDS:
        return (f"it has an image whose address carries data (threat pattern {finding.id}), which a client would send "
                f"to the image's host by loading it: remove the image or the data {_AGAIN}")
    kind = "" if finding.category == finding.id else f", {finding.category}"
    return (f"it reads like an instruction to the model (threat pattern {finding.id}{kind}), and what pi-memory stores "
            f"goes into future prompts: reword it as a plain note {_AGAIN}, or leave it out")


def import_entries(report: ImportReport, memory, store, target: str, texts: list[tuple[str, str | None]],
                   kind: str, apply: bool) -> None:
    """Import ``texts`` (``(text, created-date or None)``) into ``store``'s ``target``; see the module
    docstring. ``memory`` is the :class:`pi_memory.runtime.Memory` whose index holds the extended store."""
    scope = "project" if target == "project" else "global"
    project = store.project_id if target == "project" else None
    current = list(store.entries(target))
    conn = index_or_none(memory, apply)
    extended = existing_rows(conn, scope, project, target)
    limit = store.limit(target)
    copies, merged, added = len(store.copies(target)), 0, False  # copies: what the first add would merge
    for raw, created in texts:
        text = raw.strip()
        why = refusal(text)
        if why:
            report.add(kind, text, "skip", why, refused=True)
            continue
        if text in current or text in extended:
            report.add(kind, text, "already", to=store.name(target))
            continue
        if fmt.joined_length([*current, text]) <= limit:
            action = "add"
            if apply:
                store.begin_turn()  # an import is not an agent run: the retry guard must not stop it
                result = store.add(target, text)
                merged += result.duplicates_merged or 0
                action = "add" if result.success else "extended" if result.code == "over_limit" else "skip"
                if action == "skip":
                    report.add(kind, text, "skip", for_person(result.error), refused=True)
                    continue
            if action == "add":
                added = True
                current.append(text)
                report.add(kind, text, "add", to=store.name(target))
                continue
        if apply:
            from pi_memory.index import add_extended

            meta = parse_failure_entry(text) if target == "failure" else None
            add_extended(memory.index(), text, target=target, scope=scope, project=project,
                         category=meta.category if meta else None,
                         failure_reason=meta.failure_reason if meta else None, created=created)
        extended.add(text)
        report.add(kind, text, "extended", to="extended store")
    if merged or (added and copies and not apply):
        n = merged or copies
        report.duplicates_merged += n
        report.notes.append(merged_note(store.name(target), n, dry_run=not apply))
