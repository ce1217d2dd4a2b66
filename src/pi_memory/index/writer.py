"""Writing an index pass: files grouped into transactions, word indexing per group, reading beside writing.

Why (measured with ``benchmarks/index_throughput.py`` on 64 MB of generated pi sessions, 2 cores):

* **One word-index insert per group.** New message rows are added to ``messages_fts`` with one
  ``INSERT ... SELECT`` over their ids when a group is committed. FTS5 writes a segment whenever its pending
  terms are flushed; one flush per file (or worse, per row, as an insert trigger does) multiplies the segments
  to merge later: 20.7 MB/s with a trigger, 34.7 with one insert per file.
* **Groups.** Files are written in one ``BEGIN IMMEDIATE`` transaction until ``GROUP_BYTES`` of JSONL or
  ``GROUP_SECONDS`` have gone by, each file inside its own ``SAVEPOINT``: a file that fails is rolled back
  alone, the others of the group still land. The write lock is held at most about ``GROUP_SECONDS`` plus
  one file, so a concurrent writer (the pi bridge, ``memory_add``) waits well under the 10 s busy timeout.
* **Reading beside writing.** A large pass (``PARALLEL_BYTES`` in :mod:`.indexer`) reads and parses files in
  a second process while this one writes: on two idle cores the JSON parsing (about a third of the work) is
  hidden behind the writes. A thread does not do it: the writer's ``executemany`` needs the GIL back for every
  row and waits up to the 5 ms switch interval each time the parsing thread holds it (measured: slower than
  no overlap at all). The worker is forked, and only from a single-threaded process (the CLI); a spawned one
  would re-run the caller's ``__main__`` module, which a library must never do. It stays at most
  ``LOOKAHEAD`` files ahead (bounded memory).

Every write to the connection happens in the calling thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import pickle
import signal
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

GROUP_BYTES = 16 * 1024 * 1024
GROUP_SECONDS = 0.5

IdRange = tuple[int, int]
"""``(first, last)`` message ids written for one file, both included."""


def index_ranges(conn: sqlite3.Connection, ranges: list[IdRange]) -> None:
    """Add the message rows with ids in ``ranges`` to the word index (inside the caller's transaction)."""
    for lo, hi in ranges:
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


def _die_with_parent(parent: int) -> None:
    """Worker start-up: ask Linux to kill this worker when the indexing process dies (``PR_SET_PDEATHSIG``),
    so a ``kill -9`` of the indexer leaves no reader behind; exit at once if the parent is already gone."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle (no worker traceback)


LOOKAHEAD = 4  # files read ahead of the writer (bounds the memory held by parsed files)


def pipeline(
    items: Iterable[T], read: Callable[[T], R], write: Callable[[T, R], None], in_process: bool = True
) -> str:
    """For each item, in order: ``parsed = read(item)``, then ``write(item, parsed)`` in the calling thread.

    ``in_process=False``: ``read`` runs in one forked worker process, at most ``LOOKAHEAD`` items ahead of
    ``write`` (``read``'s argument and result must pickle). Only when this process runs a single thread (a
    fork copies one thread and whatever locks the others held); otherwise, or if the worker cannot start or
    dies, items are read in this process. ``read`` should return
    an exception object rather than raise for a per-item failure; whatever ``write`` raises stops the pass.
    Returns where the items were read: ``"process"`` (the worker read at least one) or ``"in-process"``.
    """
    todo = list(items)
    pool: ProcessPoolExecutor | None = None
    if not in_process and len(todo) > 1 and threading.active_count() == 1:
        try:  # no fork on Windows: read in this process there
            pool = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("fork"), initializer=_die_with_parent,
                initargs=(os.getpid(),),
            )
        except (ValueError, OSError):
            pool = None
    if pool is None:
        for item in todo:
            write(item, read(item))
        return "in-process"
    used = False
    ahead: deque[tuple[T, Future | None]] = deque()
    nxt = 0
    try:
        while ahead or nxt < len(todo):
            while nxt < len(todo) and len(ahead) < LOOKAHEAD:
                future = None
                if pool is not None:
                    try:
                        future = pool.submit(read, todo[nxt])
                    except (BrokenProcessPool, RuntimeError, OSError):
                        pool = None  # could not start a worker: read here from now on
                ahead.append((todo[nxt], future))
                nxt += 1
            item, future = ahead.popleft()
            try:
                parsed = future.result() if future is not None else read(item)
                used |= future is not None
            except (BrokenProcessPool, OSError, pickle.PickleError):
                parsed = read(item)  # the worker died (killed, out of memory): read here
            write(item, parsed)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return "process" if used else "in-process"
