"""Writing an index pass: files grouped into transactions, word indexing per group.

Why (measured with ``benchmarks/index_throughput.py`` on 64 MB of generated pi sessions, 2 cores):

* **One word-index insert per group.** New message rows are added to ``messages_fts`` with one
  ``INSERT ... SELECT`` over their ids when a group is committed. FTS5 writes a segment whenever its pending
  terms are flushed; one flush per file (or worse, per row, as an insert trigger does) multiplies the segments
  to merge later: 20.7 MB/s with a trigger, 34.7 with one insert per file.
* **Groups.** Files are written in one ``BEGIN IMMEDIATE`` transaction until ``GROUP_BYTES`` of JSONL or
  ``GROUP_SECONDS`` have gone by, each file inside its own ``SAVEPOINT``: a file that fails is rolled back
  alone, the others of the group still land. The write lock is held at most about ``GROUP_SECONDS`` plus
  one file, so a concurrent writer (the pi bridge, ``memory_add``) waits well under the 10 s busy timeout.
* **No reading beside writing.** Reading in a forked worker process (parsing there, writing here) was built
  and measured: 38.7 MB/s against 49.6 in-process on 65 MB, quiet 2-core machine (pickling the parsed records
  back costs the writer more than the parsing it saves, once ``orjson`` parses session lines at ~230 MB/s).
  A writer thread is worse still: ``executemany`` takes the GIL back for every row.

Every write to the connection happens in the calling thread.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from pi_memory.index.segments import refill_mark

GROUP_BYTES = 16 * 1024 * 1024
GROUP_SECONDS = 0.5

IdRange = tuple[int, int]
"""``(first, last)`` message ids written for one file, both included."""


def index_ranges(conn: sqlite3.Connection, ranges: list[IdRange]) -> None:
    """Add the message rows with ids in ``ranges`` to the word index (inside the caller's transaction). While the
    word index is refilled after a repair (:mod:`.segments`), rows below the refill's mark are left to the refill:
    the triggers leave them alone too, so a later edit of such a row, indexed here, would never reach the index
    (new ids fall below the mark once every message above it was deleted)."""
    floor = refill_mark(conn)
    for lo, hi in ranges:
        lo = max(lo, floor) if floor is not None else lo
        if lo > hi:
            continue
        conn.execute(
            "INSERT INTO messages_fts(rowid, text) SELECT id, coalesce(fts_text, text) FROM messages "
            "WHERE id BETWEEN ? AND ?",
            (lo, hi),
        )


class GroupWriter:
    """Writes files into group transactions: ``write(fn)`` runs ``fn(conn) -> IdRange | None`` in a savepoint
    and returns what it returned; ``commit()`` indexes and commits the open group, ``rollback()`` drops it.
    Not thread-safe: one thread calls it."""

    def __init__(self, conn: sqlite3.Connection, group_bytes: int = GROUP_BYTES, group_seconds: float = GROUP_SECONDS):
        self.conn = conn
        self.group_bytes, self.group_seconds = group_bytes, group_seconds
        self.pending: list[IdRange] = []
        self.open = False
        self.started = 0.0
        self.bytes = 0

    def write(self, fn: Callable[[sqlite3.Connection], IdRange | None], size: int) -> IdRange | None:
        if not self.open:
            self.conn.execute("BEGIN IMMEDIATE")
            self.open, self.started, self.bytes = True, time.monotonic(), 0
        self.conn.execute("SAVEPOINT index_file")
        try:
            ids = fn(self.conn)
        except BaseException:
            self.conn.execute("ROLLBACK TO index_file")
            self.conn.execute("RELEASE index_file")
            raise
        self.conn.execute("RELEASE index_file")
        if ids is not None:
            self.pending.append(ids)
        self.bytes += size
        if self.bytes >= self.group_bytes or time.monotonic() - self.started >= self.group_seconds:
            self.commit()
        return ids

    def commit(self) -> None:
        if not self.open:
            return
        try:
            index_ranges(self.conn, self.pending)
        except BaseException:
            self.rollback()
            raise
        self.conn.execute("COMMIT")
        self.open, self.pending = False, []

    def rollback(self) -> None:
        if self.open:
            self.conn.execute("ROLLBACK")
            self.open, self.pending = False, []
