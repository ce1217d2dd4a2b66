"""Read-only connections of the recall worker threads, one per thread and database file.

One ``sqlite3.Connection`` runs one statement at a time: the threads of one recall (the session keyword search,
the vector lists' reads, the calling thread's semantic and curated searches) waited for each other on it, so a
recall took as long as the sum of its parts however many cores there were. In WAL mode readers do not block
each other or the writer, so each worker thread reads through a connection of its own (:func:`reader`), opened
once and kept: opening one costs about as much as a whole recall.

A reader sees what is committed when each of its statements starts. Where that is not the caller's view, the
caller's connection is used as it is: an in-memory database (no file to open twice), or a connection inside a
transaction (its uncommitted writes are visible only to it).

A kept connection is dropped when its file was replaced (same path, another inode: a rebuilt index). Each
thread keeps its ``MAX_PER_THREAD`` most recently used files open (a test run opens a new index per test;
a host reads one). Connections are read-only (``mode=ro``) and get the index's SQL function (:func:`.words.register`). In a folder
that is read-only by its mode the caller's connection is used: a read-only connection there is opened
``immutable`` (:func:`.db.read_only_uri`), which would never see a later change. So is an index opened for
reading only (:mod:`.read_only`: a folder that cannot be written, where a second ``mode=ro`` connection may not
open at all).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path

from pi_memory.index.db import BUSY_TIMEOUT_S, database_file, read_only_uri
from pi_memory.index.read_only import CACHE_KIB, ReadOnlyConnection
from pi_memory.index.words import register

MAX_PER_THREAD = 4

_local = threading.local()


def reader(conn: sqlite3.Connection) -> sqlite3.Connection:
    """A read-only connection of the calling thread to ``conn``'s database file, or ``conn`` itself (module
    docstring: in-memory, in a transaction, or a file that cannot be opened again)."""
    if conn.in_transaction or isinstance(conn, ReadOnlyConnection):  # not read_only(conn): that asks the folder
        return conn  # (0.09 ms); a folder turned read-only since the open keeps its readers, or gets none below
    path = database_file(conn)
    if not path:
        return conn
    try:
        st = os.stat(path)
    except OSError:
        return conn
    kept: OrderedDict[str, tuple[tuple[int, int], sqlite3.Connection]] | None = getattr(_local, "kept", None)
    if kept is None:
        kept = _local.kept = OrderedDict()
    known = kept.get(path)
    if known is not None:
        if known[0] == (st.st_dev, st.st_ino):
            kept.move_to_end(path)
            return known[1]
        del kept[path]  # the file was replaced (a rebuilt index): the old connection reads the old one
        known[1].close()
    uri = read_only_uri(Path(path))
    if "immutable=1" in uri:  # a read-only folder: such a connection would never see a later change
        return conn
    try:
        own = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                              check_same_thread=True)
        own.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        own.execute("PRAGMA temp_store = MEMORY")
        own.execute(f"PRAGMA cache_size = -{CACHE_KIB}")  # the index connection's: the default read a recall's
        # pages from the file again for every statement (lockstep recall_ab: about 0.5-0.9 ms less CPU a recall)
        register(own)
    except sqlite3.Error:
        return conn
    kept[path] = ((st.st_dev, st.st_ino), own)
    while len(kept) > MAX_PER_THREAD:
        _, (_, old) = kept.popitem(last=False)
        old.close()
    return own


def close_readers() -> None:
    """Close the calling thread's readers (a thread about to end, or a test that removes its database)."""
    kept = getattr(_local, "kept", None)
    while kept:
        _, (_, conn) = kept.popitem()
        conn.close()
