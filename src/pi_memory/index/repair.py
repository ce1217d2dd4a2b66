"""The rebuild after corruption: what :func:`pi_memory.index.db.open_index` runs on the fresh index once the
damaged file was set aside (its default ``rebuild`` hook).

The fresh index already has every core table (:func:`.db.migrate` ran when it was opened); the semantic tables are
made first too, before any row is copied, so that whatever happens next the index the following commands open is
whole. Then each step copies what it can, the rows that exist nowhere else first:

1. the semantic memories and their history (:func:`.semantic_schema.copy_semantic`), then the active ones whose
   rows were unreadable, recreated from that history (:func:`.salvage.rebuild_semantic_from_history`);
2. the extended memories and usage counts (:func:`.mirror.salvage_memories`);
3. the sessions, or the list of their files to read again (:func:`.salvage.salvage_sessions`);
4. the Markdown stores mirrored again (:func:`.mirror.sync_markdown`).

Reading the damaged copy goes on past a damaged schema entry of another table and past text that is not UTF-8
(:mod:`.damaged`). A step that fails anyway (the fresh file cannot be written, a defect) is caught and the next
runs; the repair record (:func:`.salvage.record_repair`, shown by ``pi-memory status``) is written in every
case, with what was copied back, what was lost, the steps that failed and the damaged copy's name, and
:func:`rebuild_from_damaged` returns the same as one message for the command that repaired.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_memory.index import mirror, salvage, semantic_schema
from pi_memory.index.damaged import describe_error
from pi_memory.index.db import meta_get, migrate

log = logging.getLogger(__name__)


def _step(failed: list[str], name: str, fn: Callable[[], Any], default: Any = None) -> Any:
    """``fn()``, or ``default`` when it raises: the failure is logged and kept in ``failed`` as ``name: error``."""
    try:
        return fn()
    except Exception as exc:  # one step's failure must not end the repair or hide its record
        log.debug("repair step %r failed", name, exc_info=True)
        failed.append(f"{name}: {describe_error(exc)}")
        return default


def rebuild_from_damaged(conn: sqlite3.Connection, damaged: Path) -> str:
    """Copy back into the fresh index ``conn`` what the damaged copy ``damaged`` still holds (module docstring),
    write the repair record, and return the message that tells a person what happened. Never raises."""
    failed: list[str] = []
    _step(failed, "the semantic tables", lambda: migrate(conn, semantic_schema.SEMANTIC_MIGRATIONS))
    if _size(damaged) == 0:
        return _rebuild_emptied(conn, damaged, failed)
    semantic = _step(failed, "semantic memories", lambda: semantic_schema.copy_semantic(conn, damaged))
    if semantic is None:
        semantic = semantic_schema.SemanticCopy(unreadable=["semantic_memories", "semantic_history"])
    history = _step(failed, "semantic memories from their history",
                    lambda: salvage.rebuild_semantic_from_history(conn, damaged))
    if history is None:
        history = salvage.SemanticRebuild(history_readable=False)
    memories = _step(failed, "memories", lambda: mirror.salvage_memories(conn, damaged), 0)
    sessions = _step(failed, "session rows", lambda: salvage.salvage_sessions(conn, damaged), salvage.SalvageReport())
    _step(failed, "Markdown memories", lambda: mirror.sync_markdown(conn, damaged.parent))
    gone = _step(failed, "the list of session files to read again", lambda: sum(
        1 for (p,) in conn.execute("SELECT path FROM pending_paths") if not Path(p).exists()), 0)
    semantic_unreadable = "semantic_memories" in semantic.unreadable
    history_unreadable = not history.history_readable or "semantic_history" in semantic.unreadable
    at = _step([], "", lambda: meta_get(conn, "recovered_at"))
    reason = _step([], "", lambda: meta_get(conn, "recovered_reason")) or "damaged"
    record = {
        "at": at, "damagedCopy": damaged.name, "reason": reason,
        "rebuilt": {"sessionFiles": sessions.copied_files, "messages": sessions.copied_messages,
                    "filesToReadAgain": sessions.pending_paths, "memories": memories,
                    "semanticMemories": semantic.memories, "semanticHistory": semantic.history,
                    "semanticFromHistory": history.rebuilt},
        "lost": {"semanticMemories": history.lost, "semanticUnreadable": semantic_unreadable,
                 "semanticHistoryUnreadable": history_unreadable, "semanticRowsRefused": semantic.skipped,
                 "transcriptsGone": gone, "vectors": "embedded again"},
        "failed": failed,
    }
    recorded = _step([], "", lambda: salvage.record_repair(conn, record) or True, False)
    return repair_message(record, damaged, recorded)


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _rebuild_emptied(conn: sqlite3.Connection, empty: Path, failed: list[str]) -> str:
    """The repair of an index file found empty (:func:`pi_memory.index.db._emptied`): nothing can be copied back;
    the Markdown stores are mirrored again now and the session files read by the next indexing passes (none is
    indexed). Whatever the file held is lost (the semantic memories lived only there), which the record and the
    message say."""
    _step(failed, "Markdown memories", lambda: mirror.sync_markdown(conn, empty.parent))
    record = {"at": _step([], "", lambda: meta_get(conn, "recovered_at")), "damagedCopy": empty.name,
              "reason": _step([], "", lambda: meta_get(conn, "recovered_reason")) or "0 bytes",
              "rebuilt": {"messages": 0, "memories": 0, "semanticMemories": 0, "semanticFromHistory": 0},
              "lost": {"emptied": True}, "failed": failed}
    recorded = _step([], "", lambda: salvage.record_repair(conn, record) or True, False)
    return repair_message(record, empty, recorded)


def rebuild_failed(conn: sqlite3.Connection, damaged: Path, exc: Exception) -> str:
    """Record a ``rebuild`` hook that raised (the fresh index is whole: made and migrated before it ran) as a
    repair that copied nothing back, and return its message. Never raises."""
    record = {"at": _step([], "", lambda: meta_get(conn, "recovered_at")), "damagedCopy": damaged.name,
              "reason": _step([], "", lambda: meta_get(conn, "recovered_reason")) or "damaged",
              "rebuilt": {"messages": 0, "memories": 0, "semanticMemories": 0, "semanticFromHistory": 0},
              "lost": {"semanticUnreadable": True, "semanticHistoryUnreadable": True},
              "failed": [f"the rows of the damaged copy: {describe_error(exc)}"]}
    recorded = _step([], "", lambda: salvage.record_repair(conn, record) or True, False)
    return repair_message(record, damaged, recorded)


def repair_message(record: dict, damaged: Path, recorded: bool = True) -> str:
    """The message of a repair ``record`` for the command that repaired: what happened, what came back, what was
    lost, and what to do next."""
    rebuilt, lost, failed = record["rebuilt"], record["lost"], record.get("failed") or []
    losses = []
    if lost.get("semanticMemories"):
        losses.append(f"{lost['semanticMemories']} semantic memories could not be recovered")
    elif lost.get("semanticUnreadable") and lost.get("semanticHistoryUnreadable"):
        losses.append("the semantic memories could not be read, nor their history, so any memory not copied back "
                      "is lost")
    elif lost.get("semanticHistoryUnreadable"):
        losses.append("the semantic memories' history could not be read, so any memory not copied back is lost")
    if lost.get("semanticRowsRefused"):
        losses.append(f"{lost['semanticRowsRefused']} damaged semantic rows were left out")
    losses += [f"{step.split(': ', 1)[0]} could not be copied back ({step.split(': ', 1)[-1]})" for step in failed]
    reason = " ".join(str(record["reason"]).split())  # an integrity check's report: several lines, maybe long
    reason = reason if len(reason) <= 160 else reason[:159] + "…"
    if lost.get("emptied"):
        return (f"the search index {damaged.parent / 'index.sqlite3'} was found empty ({reason}) and has been made "
                f"again; the empty file is kept as {damaged.name}. Your Markdown memories are in it again, and the "
                "session files are read by the next indexing passes (or run `pi-memory index-sessions` now). Semantic "
                "memories are kept only in the index: those stored before the file was emptied are gone unless you "
                "have a copy of index.sqlite3 (stop every pi-memory process, then put the copy back). "
                + ("`pi-memory status` shows this repair." if recorded else
                   "The record of this repair could not be written, so `pi-memory status` will not show it."))
    text = (f"the search index {damaged.parent / 'index.sqlite3'} was damaged ({reason}) and has been "
            f"rebuilt; the damaged copy is kept as {damaged.name}. Copied back: {rebuilt['messages']} session "
            f"messages, {rebuilt['memories']} memories, {rebuilt['semanticMemories']} semantic memories "
            f"({rebuilt['semanticFromHistory']} from their history)" + "".join(f"; {x}" for x in losses) + ". ")
    if rebuilt.get("filesToReadAgain"):
        text += (f"{rebuilt['filesToReadAgain']} session files will be read again by the next indexing pass (or run "
                 "`pi-memory index-sessions` now). ")
    if failed or lost.get("semanticUnreadable"):
        text += (f"Keep the damaged copy {damaged}: what was not copied back may still be read from it (report this "
                 "to the pi-memory maintainers). ")
    return text + ("`pi-memory status` shows this repair." if recorded else
                   "The record of this repair could not be written, so `pi-memory status` will not show it.")
