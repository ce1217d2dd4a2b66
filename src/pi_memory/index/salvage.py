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
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from pi_memory.index.db import transaction
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
    try:
        return src.execute(f"SELECT {_TABLES[table]} FROM {table}").fetchall()
    except sqlite3.Error:
        return None


def _readable_paths(src: sqlite3.Connection) -> list[str]:
    paths: list[str] = []
    try:
        for (path,) in src.execute("SELECT path FROM session_files"):
            paths.append(path)
    except sqlite3.Error:
        pass  # keep what was read before the damaged page
    return paths


def salvage_sessions(conn: sqlite3.Connection, damaged: Path | str) -> SalvageReport:
    """Copy the session rows of the damaged index file ``damaged`` into the fresh index ``conn``, or queue
    their files for the next pass (see the module docstring). Never raises for a damaged or missing file."""
    report = SalvageReport()
    try:
        src = sqlite3.connect(f"file:{Path(damaged)}?mode=ro", uri=True)
    except sqlite3.Error:
        return report
    try:
        tables = {name: _read_all(src, name) for name in _TABLES}
        if all(rows is not None for rows in tables.values()):
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
            report.copied_files = len(tables["session_files"] or [])
            report.copied_messages = len(tables["messages"] or [])
            return report
        paths = _readable_paths(src)
        with transaction(conn):
            conn.executemany("INSERT OR IGNORE INTO pending_paths(path) VALUES (?)", [(p,) for p in paths])
        report.pending_paths = len(paths)
    except sqlite3.Error:
        pass  # the fresh index stays as it is; the next pass reads the default folders
    finally:
        src.close()
    return report
