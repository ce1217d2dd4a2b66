"""Per-thread read-only connections of the recall workers (pi_memory.index.parallel)."""

from __future__ import annotations

import os
import sqlite3
import threading

import pytest

from pi_memory.index import open_index, parallel
from pi_memory.index.db import transaction


def _on_thread(fn):
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_a_reader_is_its_threads_own_and_sees_what_others_commit(tmp_path):
    conn = open_index(tmp_path)
    conn.execute("CREATE TABLE IF NOT EXISTS t(x)")
    first = parallel.reader(conn)
    assert first is not conn and parallel.reader(conn) is first  # kept and reused on this thread
    assert _on_thread(lambda: parallel.reader(conn)) is not first  # another thread gets its own
    conn.execute("INSERT INTO t VALUES (1)")
    assert first.execute("SELECT x FROM t").fetchall() == [(1,)]
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        first.execute("INSERT INTO t VALUES (2)")
    parallel.close_readers()
    conn.close()


def test_a_connection_inside_a_transaction_or_in_memory_is_used_as_it_is(tmp_path):
    conn = open_index(tmp_path)
    conn.execute("CREATE TABLE IF NOT EXISTS t(x)")
    with transaction(conn):
        conn.execute("INSERT INTO t VALUES (1)")
        assert parallel.reader(conn) is conn  # its uncommitted row is visible only to it
    memory = sqlite3.connect(":memory:")
    assert parallel.reader(memory) is memory
    parallel.close_readers()
    conn.close()


def test_a_replaced_index_file_is_never_read_through_the_old_connection(tmp_path):
    conn = open_index(tmp_path)
    conn.execute("CREATE TABLE IF NOT EXISTS t(x)")
    conn.execute("INSERT INTO t VALUES ('old')")
    assert parallel.reader(conn).execute("SELECT x FROM t").fetchall() == [("old",)]
    conn.close()
    path = tmp_path / "index.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{path}{suffix}"):
            os.remove(f"{path}{suffix}")
    conn = open_index(tmp_path)  # a rebuilt index at the same path
    conn.execute("CREATE TABLE IF NOT EXISTS t(x)")
    conn.execute("INSERT INTO t VALUES ('new')")
    assert parallel.reader(conn).execute("SELECT x FROM t").fetchall() == [("new",)]
    parallel.close_readers()
    conn.close()


def test_each_thread_keeps_at_most_a_few_files_open(tmp_path):
    conns = [open_index(tmp_path / f"d{i}") for i in range(parallel.MAX_PER_THREAD + 2)]
    readers = [parallel.reader(c) for c in conns]
    with pytest.raises(sqlite3.ProgrammingError):  # the least recently used were closed
        readers[0].execute("SELECT 1")
    assert readers[-1].execute("SELECT 1").fetchone() == (1,)
    assert len(parallel._local.kept) == parallel.MAX_PER_THREAD
    parallel.close_readers()
    for c in conns:
        c.close()


def test_in_a_read_only_folder_the_callers_connection_is_used(tmp_path):
    conn = open_index(tmp_path / "ro")
    conn.execute("CREATE TABLE IF NOT EXISTS t(x)")
    conn.close()
    (tmp_path / "ro").chmod(0o555)
    try:
        ro = sqlite3.connect(f"file:{tmp_path / 'ro' / 'index.sqlite3'}?mode=ro", uri=True)
        assert parallel.reader(ro) is ro  # an immutable reader kept open would never see a later change
        ro.close()
    finally:
        (tmp_path / "ro").chmod(0o755)


def test_a_reader_caches_as_many_pages_as_the_index_connection(tmp_path):
    """SQLite's default page cache (2 MiB) made each recall statement of a worker read its pages from the file
    again; a reader gets the index connection's cache."""
    conn = open_index(tmp_path)
    own = parallel.reader(conn)
    assert own is not conn
    assert own.execute("PRAGMA cache_size").fetchone()[0] == conn.execute("PRAGMA cache_size").fetchone()[0] == -65536
    parallel.close_readers()
    conn.close()
