"""Sessions out of a damaged index: copy what is readable, else remember which files to read again.

After corruption (:mod:`.db`) the fresh index starts empty. Two things would be lost if the next index pass
only looked at the default session folders: text whose transcript is gone (Claude Code deletes transcripts
after 30 days, and the index is then the only copy) and files indexed from other folders
(``pi-memory index-sessions ~/elsewhere``). :func:`salvage_sessions` therefore:

1. reads every row of ``sessions``, ``session_files``, ``entries`` and ``messages`` from the damaged file
   (read-only). If all four read without an error, they are copied as they were (same ids, so the
   newest-first order holds) in one transaction and the copied messages are word-indexed; the next pass
   then skips the unchanged files as usual.
2. If any of them fails part-way (the damage is in those pages), nothing of the sessions is copied -- a file
   row without all its messages would make the next pass skip a file whose text is missing -- and the paths
   that could be read go into ``pending_paths``: the next :func:`~.indexer.index_paths` without explicit
   paths reads them again beside the default folders, then forgets them.

Semantic memories live only in this file. When their table is unreadable, :func:`rebuild_semantic_from_history`
recreates the active ones from ``semantic_history`` (the text of each ADD/UPDATE; SUPERSEDE/DELETE end one).

Every repair leaves a record in ``meta`` (:func:`record_repair`): ``at``, ``damagedCopy``, ``reason``,
``rebuilt`` (session files and messages copied, files queued to read again, memories and semantic memories
copied, semantic memories rebuilt from history) and ``lost`` (semantic memories that could not be rebuilt,
queued transcripts that no longer exist, so their text is gone, and vectors, which are embedded again).
``pi-memory status`` shows the newest, and the pi bridge's ``status`` carries it as ``indexRepair``.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from pi_memory.index.damaged import open_damaged, read_rows, table_names
from pi_memory.index.db import open_read_only, transaction
from pi_memory.index.redaction import redact_text
from pi_memory.index.words import fts_form
from pi_memory.index.writer import index_ranges

_TABLES = {
    "sessions": "id, source, session_key, cwd, project_id, project_name, project_root, started_at, version, "
    "parent_session",
    "session_files": "id, path, session_id, size, mtime_ns, tail_hash, prefix_hash, end_offset, end_line, leaf_id, "
    "info, skipped, indexed_at",
    "entries": "file_id, entry_id, parent_id",
    "messages": "id, session_id, file_id, entry_id, parent_id, line, timestamp, role, kind, tool_name, branch, text",
}


@dataclass
class SalvageReport:
    """``copied_files`` / ``copied_messages``: rows copied; ``pending_paths``: files queued to be read again."""

    copied_files: int = 0
    copied_messages: int = 0
    pending_paths: int = 0


def _read_all(src: sqlite3.Connection, table: str) -> list[tuple] | None:
    rows, complete = read_rows(src, f"SELECT {_TABLES[table]} FROM {table}")
    return rows if complete else None


def _readable_paths(src: sqlite3.Connection) -> list[str]:
    return [path for (path,) in read_rows(src, "SELECT path FROM session_files")[0]]  # those before the damage


def salvage_sessions(conn: sqlite3.Connection, damaged: Path | str) -> SalvageReport:
    """Copy the session rows of the damaged index file ``damaged`` into the fresh index ``conn``, or queue
    their files for the next pass (see the module docstring). Never raises for a damaged or missing file; errors
    writing ``conn`` propagate."""
    report = SalvageReport()
    src = open_damaged(damaged)
    if src is None:
        return report
    try:
        tables = {name: _read_all(src, name) for name in _TABLES}
        paths = _readable_paths(src)
    finally:
        src.close()
    if all(rows is not None for rows in tables.values()):
        try:
            _copy_sessions(conn, tables)
            report.copied_files = len(tables["session_files"] or [])
            report.copied_messages = len(tables["messages"] or [])
            return report
        except sqlite3.IntegrityError:  # damaged values the schema refuses: the files are read again instead
            pass
    with transaction(conn):
        conn.executemany("INSERT OR IGNORE INTO pending_paths(path) VALUES (?)", [(p,) for p in paths])
    report.pending_paths = len(paths)
    return report


def _copy_sessions(conn: sqlite3.Connection, tables: dict[str, list[tuple] | None]) -> None:
    with transaction(conn):
        messages = [(*r[:-1], redact_text(r[-1])) for r in tables["messages"] or []]  # an older index
        tables["messages"] = [(*r, None if r[-1].isascii() else fts_form(r[-1])) for r in messages]
        for name, rows in tables.items():
            if rows:
                cols = _TABLES[name] + (", fts_text" if name == "messages" else "")
                marks = ", ".join("?" * len(rows[0]))
                conn.executemany(f"INSERT INTO {name}({cols}) VALUES ({marks})", rows)
        if tables["messages"]:  # not per row: an insert trigger would flush the word index per row
            ids = [r[0] for r in tables["messages"]]
            index_ranges(conn, [(min(ids), max(ids))])


# ---------------------------------------------------------------------------------------- semantic memories
@dataclass
class SemanticRebuild:
    """``rebuilt``: active memories recreated from ``semantic_history``; ``lost``: memories the history says
    were active that could not be recreated (their history rows were unreadable too); ``history_readable``."""

    rebuilt: int = 0
    lost: int = 0
    history_readable: bool = True


def _history(src: sqlite3.Connection) -> tuple[list[tuple], bool]:
    """The history events that can be read, and whether all could (a file without the table has none)."""
    names, whole_schema = table_names(src)
    if "semantic_history" not in names:
        return [], whole_schema  # a schema read in part may have held it: nothing tells what it held
    return read_rows(src, "SELECT memory_id, user_id, project_id, agent_id, event, new_text, at "
                          "FROM semantic_history ORDER BY at, id")


def _final_states(rows: list[tuple]) -> dict[str, dict]:
    """memory id -> its last state by its events: ADD / UPDATE (the new memory an update made) create it
    active with ``new_text``; SUPERSEDE and DELETE end it."""
    states: dict[str, dict] = {}
    for memory_id, user_id, project_id, agent_id, event, new_text, at in rows:
        if event in ("ADD", "UPDATE") and new_text:
            states[memory_id] = {"scope": (user_id, project_id, agent_id), "text": new_text, "created": at,
                                 "updated": at, "active": True}
        elif memory_id in states:
            states[memory_id].update(active=False, updated=at)
        else:
            states[memory_id] = {"active": False}
    return states


def rebuild_semantic_from_history(conn: sqlite3.Connection, damaged: Path | str) -> SemanticRebuild:
    """Recreate in ``conn`` (a fresh index) the semantic memories that the damaged file's history shows active
    but whose rows could not be copied (a torn page on ``semantic_memories``): id, scope and text from the
    history, ``created_at`` from their first event, no metadata or vector (the backend re-embeds them). Runs
    after :func:`pi_memory.index.semantic_schema.salvage_semantic` copied what was readable; a memory already there
    is left alone. Never raises for a damaged file."""
    report = SemanticRebuild()
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'semantic_memories'").fetchone():
        return report
    src = open_damaged(damaged)
    if src is None:
        return report
    try:
        rows, report.history_readable = _history(src)
        # how many were active (a count may still read where the rows cannot)
        counted, _ = read_rows(src, "SELECT count(*) FROM semantic_memories WHERE status = 'active'")
        expected = counted[0][0] if counted else None
    finally:
        src.close()
    from pi_memory.semantic.models import text_hash

    present = {r[0] for r in conn.execute("SELECT id FROM semantic_memories")}
    seq = conn.execute("SELECT ifnull(max(seq), 0) FROM semantic_memories").fetchone()[0]
    todo = [(mid, st) for mid, st in _final_states(rows).items() if st.get("active") and mid not in present]
    with transaction(conn):
        for mid, st in todo:
            seq += 1
            conn.execute(
                "INSERT INTO semantic_memories(id, user_id, project_id, agent_id, text, hash, status, created_at, "
                "updated_at, observed_at, source, metadata, seq) VALUES (?,?,?,?,?,?,'active',?,?,?,?,'{}',?)",
                (mid, *st["scope"], st["text"], text_hash(st["text"]), st["created"], st["updated"], st["created"],
                 json.dumps({"kind": "rebuilt-from-history"}), seq))
    report.rebuilt = len(todo)
    active = conn.execute("SELECT count(*) FROM semantic_memories WHERE status = 'active'").fetchone()[0]
    if expected is not None:
        report.lost = max(0, expected - active)
    return report


# ------------------------------------------------------------------------------------------- repair record
REPAIRS_KEY = "repairs"
MAX_REPAIRS = 10


def record_repair(conn: sqlite3.Connection, record: dict) -> None:
    """Keep ``record`` (when, the damaged copy, why, what was rebuilt, what was lost) in ``meta`` beside the
    earlier ones (the newest ``MAX_REPAIRS``)."""
    with transaction(conn):
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (REPAIRS_KEY,)).fetchone()
        try:
            repairs = json.loads(row[0]) if row else []
        except ValueError:
            repairs = []
        repairs = [*repairs, record][-MAX_REPAIRS:]
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (REPAIRS_KEY, json.dumps(repairs)))


def repairs(conn: sqlite3.Connection) -> list[dict]:
    """Every kept repair record, oldest first (``[]`` when the index was never repaired)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (REPAIRS_KEY,)).fetchone()
        return json.loads(row[0]) if row else []
    except (sqlite3.Error, ValueError):
        return []


def last_repair(data_dir: Path | str) -> dict | None:
    """The newest repair record of ``<data_dir>/index.sqlite3``, read without opening the index for writing (so
    a status line can ask often and cheaply); ``None`` when there is none or the file cannot be read."""
    path = Path(data_dir) / "index.sqlite3"
    if not path.is_file():  # missing, or a folder, a pipe, a link to nothing: no record (a pipe would block)
        return None
    src = open_read_only(path, timeout=1)
    if src is None:
        return None
    try:
        found = repairs(src)
    finally:
        src.close()
    return found[-1] if found else None


def describe_repair(record: dict) -> str:
    """One line for a person about a repair record: when, what was rebuilt, what was lost."""
    rebuilt, lost = record.get("rebuilt", {}), record.get("lost", {})
    done = [f"{rebuilt.get('messages', 0)} messages of {rebuilt.get('sessionFiles', 0)} session files copied"]
    if rebuilt.get("filesToReadAgain"):
        done.append(f"{rebuilt['filesToReadAgain']} session files to read again")
    done.append(f"{rebuilt.get('memories', 0)} memories and {rebuilt.get('semanticMemories', 0)} semantic memories "
                + (f"(with {rebuilt['semanticHistory']} history events) " if rebuilt.get("semanticHistory") else "")
                + "copied")
    if rebuilt.get("semanticFromHistory"):
        done.append(f"{rebuilt['semanticFromHistory']} semantic memories rebuilt from their history")
    gone = []
    if lost.get("emptied"):
        done = ["the file was empty, so nothing was copied back"]
        gone.append("whatever the file held before it was emptied (semantic memories included)")
    if lost.get("semanticMemories"):
        gone.append(f"{lost['semanticMemories']} semantic memories")
    elif lost.get("semanticUnreadable") and lost.get("semanticHistoryUnreadable"):
        gone.append("any semantic memories that could not be read (nor their history)")
    elif lost.get("semanticHistoryUnreadable"):
        gone.append("any semantic memory whose history could not be read")
    if lost.get("semanticRowsRefused"):
        gone.append(f"{lost['semanticRowsRefused']} damaged semantic rows")
    if lost.get("transcriptsGone"):
        gone.append(f"the text of {lost['transcriptsGone']} transcripts that no longer exist")
    failed = "".join(f" Not copied back: {step}." for step in record.get("failed") or [])
    return (f"index repaired at {record.get('at') or '?'} (damaged copy {record.get('damagedCopy')}): "
            + "; ".join(done) + ". Lost: " + (", ".join(gone) or "nothing") + " (vectors are embedded again)."
            + failed)
