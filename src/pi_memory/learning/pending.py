"""Flushes a session's end could not finish, kept in the index for the next session (``learning_pending``).

pi's shutdown flush (and a host's ``session-end`` flush) runs as the process ends. When it is refused (the job or
day budget, a model that does not answer, a reply never usable) or the process ends before it finishes, the mark
of what was reviewed lived only in that process, and the session's last messages were never reviewed. Now the
flush records its session file and mark here before it reads anything, moves the mark with every part it reads,
and removes the row once the session is reviewed to its end. The next session of the same project (a pi session,
the MCP server) reads what is left at its start, on its worker (:meth:`pi_memory.learning.triggers.SessionLearning.
start`), oldest first as any review does; a row stays until its messages were reviewed or its file is gone.

Every other review or flush keeps its mark here too while it runs (its ``reason``: ``review``, ``compaction``),
holding the session file's lock (:func:`lock`, a file lock the system lets go of when the process dies), and
removes the row when it ends. A row whose lock is free was left by a job that was killed before it finished (a
host hook's job past its ceiling, ``kill -9``, a machine that went down): the session's next trigger (a host
hook's next ``stop``: :meth:`pi_memory.learning.triggers.SessionLearning.resume`) or the next session of the
project reviews its messages from that mark. A row whose lock is held belongs to a job still running, which no
other process touches.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from pi_memory.index.db import now_iso, transaction

PICKUP_FILES = 3  # sessions one start reviews at most; the rest wait for the next start
_LOCKS: dict[str, object] = {}  # one lock object per session file and process, so taking it again is reentrant
_LOCKS_GUARD = threading.Lock()


@dataclass(frozen=True)
class Pending:
    session_file: str
    session_id: str | None
    reviewed: int
    refused_from: int
    reason: str
    since: str
    outcome: str | None


def record(conn: sqlite3.Connection, session_file: str, project: str | None, session_id: str | None, reviewed: int,
           refused_from: int, reason: str, outcome: str | None = None, detail: str | None = None) -> None:
    """Keep (or move) the mark of ``session_file``: ``reviewed`` messages of it are reviewed, the rest are not."""
    with transaction(conn):
        conn.execute(
            "INSERT INTO learning_pending(session_file, project, session_id, reviewed, refused_from, reason, since, "
            "outcome, detail) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(session_file) DO UPDATE SET "
            "project = excluded.project, session_id = excluded.session_id, reviewed = excluded.reviewed, "
            "refused_from = excluded.refused_from, outcome = excluded.outcome, detail = excluded.detail",
            (session_file, project or "", session_id, reviewed, refused_from, reason, now_iso(), outcome, detail))


def lock(data_dir: Path | str, session_file: str):
    """The lock a review or flush of ``session_file`` holds while it runs: ``<data root>/.locks/review-<digest>.lock``,
    one object per file in this process (taken again by the same process, on any thread, it only counts)."""
    from filelock import FileLock

    from pi_memory.private_files import make_private_folder

    folder = Path(data_dir) / ".locks"
    path = str(folder / f"review-{hashlib.sha256(session_file.encode('utf-8', 'surrogatepass')).hexdigest()[:24]}.lock")
    with _LOCKS_GUARD:
        if path not in _LOCKS:
            make_private_folder(folder)
            _LOCKS[path] = FileLock(path, thread_local=False)
        return _LOCKS[path]


def take(data_dir: Path | str, session_file: str, wait: float = 0.0):
    """The file's lock (:func:`lock`) when it could be taken within ``wait`` seconds, else ``None``."""
    from filelock import Timeout

    held = lock(data_dir, session_file)
    try:
        held.acquire(timeout=wait)
    except Timeout:
        return None
    return held


def get(conn: sqlite3.Connection, session_file: str) -> Pending | None:
    row = conn.execute("SELECT session_file, session_id, reviewed, refused_from, reason, since, outcome "
                       "FROM learning_pending WHERE session_file = ?", (session_file,)).fetchone()
    return Pending(*row) if row else None


def clear(conn: sqlite3.Connection, session_file: str) -> None:
    with transaction(conn):
        conn.execute("DELETE FROM learning_pending WHERE session_file = ?", (session_file,))


def waiting(conn: sqlite3.Connection, project: str | None, limit: int = PICKUP_FILES) -> list[Pending]:
    """The oldest ``limit`` sessions of ``project`` left unreviewed at their end."""
    rows = conn.execute("SELECT session_file, session_id, reviewed, refused_from, reason, since, outcome "
                        "FROM learning_pending WHERE project = ? ORDER BY since, session_file LIMIT ?",
                        (project or "", limit)).fetchall()
    return [Pending(*row) for row in rows]


def count(conn: sqlite3.Connection, project: str | None) -> int:
    return conn.execute("SELECT count(*) FROM learning_pending WHERE project = ?", (project or "",)).fetchone()[0]
