"""The index database: pragmas, named migrations, corruption recovery without a rebuild storm."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_memory.index import db as dbmod
from pi_memory.index.db import (
    MIGRATIONS,
    IndexUnavailableError,
    Migration,
    applied_migrations,
    is_corruption,
    meta_get,
    migrate,
    open_index,
    split_statements,
)

NAMES = [m.name for m in MIGRATIONS]


def corrupt(path: Path) -> None:
    """A damaged index: SQLite's header, then garbage (a file without the header is not an index at all, and is
    refused untouched: tests/index/test_not_an_index.py)."""
    path.write_bytes(b"SQLite format 3\x00" + b"this is not a database, just garbage bytes " * 200)


def quarantined(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("index.sqlite3.corrupt-*") if not p.name.endswith(("-wal", "-shm")))


def test_open_creates_wal_database_with_pragmas(tmp_path):
    conn = open_index(tmp_path / "data")
    assert (tmp_path / "data" / "index.sqlite3").is_file()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000
    assert conn.isolation_level is None


def test_schema_tables_exist(tmp_path):
    conn = open_index(tmp_path)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
    for table in ("sessions", "session_files", "entries", "messages", "messages_fts", "memories",
                  "memories_fts", "meta", "schema_migrations", "messages_ad", "messages_au", "memories_ai"):
        assert table in names
    assert "messages_ai" not in names  # rows are word-indexed per batch by insert_messages, not per row
    ddl = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").fetchone()[0]
    assert "content=''" in ddl and "columnsize=0" in ddl and "trigram" not in ddl
    ddl = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memories_fts'").fetchone()[0]
    assert "content=''" in ddl and "trigram" not in ddl


def test_migrations_recorded_by_name_in_order_and_not_reapplied(tmp_path):
    conn = open_index(tmp_path)
    assert applied_migrations(conn) == NAMES
    stamps = conn.execute("SELECT applied_at FROM schema_migrations").fetchall()
    conn.close()
    conn = open_index(tmp_path)
    assert applied_migrations(conn) == NAMES
    assert conn.execute("SELECT applied_at FROM schema_migrations").fetchall() == stamps
    assert migrate(conn) == []


def test_new_migration_applied_once(tmp_path):
    conn = open_index(tmp_path)
    extra = [*MIGRATIONS, Migration("900_test_table", "CREATE TABLE t900 (x); INSERT INTO t900 VALUES (1);")]
    assert migrate(conn, extra) == ["900_test_table"]
    assert migrate(conn, extra) == []
    assert conn.execute("SELECT count(*) FROM t900").fetchone()[0] == 1
    assert applied_migrations(conn)[-1] == "900_test_table"


def test_failing_migration_rolls_back_and_is_not_recorded(tmp_path):
    conn = open_index(tmp_path)
    bad = [*MIGRATIONS, Migration("901_bad", "CREATE TABLE t901 (x); INSERT INTO no_such_table VALUES (1);")]
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, bad)
    assert "901_bad" not in applied_migrations(conn)
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 't901'").fetchone()[0] == 0


def test_unknown_newer_migrations_are_left_alone(tmp_path):
    conn = open_index(tmp_path)
    conn.execute("INSERT INTO schema_migrations VALUES ('999_from_a_newer_version', 'x')")
    conn.close()
    conn = open_index(tmp_path)
    assert applied_migrations(conn) == [*NAMES, "999_from_a_newer_version"]


def test_split_statements_keeps_triggers_whole():
    sql = "CREATE TABLE a(x); CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT 1; SELECT 2; END; SELECT 3;"
    assert split_statements(sql) == [
        "CREATE TABLE a(x);",
        "CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT 1; SELECT 2; END;",
        "SELECT 3;",
    ]


def test_garbage_file_is_moved_aside_and_rebuilt_once(tmp_path):
    path = tmp_path / "index.sqlite3"
    corrupt(path)
    calls = []
    conn = open_index(tmp_path, rebuild=lambda c, moved: calls.append(moved))
    moved = quarantined(tmp_path)
    assert len(moved) == 1
    assert moved[0].read_bytes().startswith(b"SQLite format 3\x00this is not a database")
    assert calls == moved
    assert applied_migrations(conn) == NAMES
    assert meta_get(conn, "rebuilds") == "1"
    assert meta_get(conn, "recovered_from") == moved[0].name
    assert "not a database" in meta_get(conn, "recovered_reason")
    conn.close()
    # the next open finds a healthy file: no second rebuild
    conn = open_index(tmp_path, rebuild=lambda c, moved: calls.append(moved))
    assert len(calls) == 1 and len(quarantined(tmp_path)) == 1


def test_damaged_page_is_detected_by_quick_check(tmp_path):
    conn = open_index(tmp_path)
    with dbmod.transaction(conn):
        conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", [(f"k{i}", "v" * 500) for i in range(400)])
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    path = tmp_path / "index.sqlite3"
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")  # the page size, from the file header
    assert page == dbmod.PAGE_SIZE
    for p in range(1, len(data) // page):  # leave page 1 (the header and the schema) intact
        data[p * page + 8 : p * page + 600] = os.urandom(592)
    path.write_bytes(bytes(data))
    conn = open_index(tmp_path, rebuild=None)
    assert len(quarantined(tmp_path)) == 1
    assert meta_get(conn, "rebuilds") == "1"


@pytest.mark.parametrize("sql", [b"CREATE TABLE x(a) \xbe", b"CREATE \xbe TABLE x(a)"])
def test_schema_with_bytes_that_are_not_utf8_is_corruption(tmp_path, sql):
    # Found as a 1-in-60 failure of the random-damage test above: SQLite quotes the damaged schema in its error
    # message, and Python raised UnicodeDecodeError (not a DatabaseError) from open_index.
    conn = open_index(tmp_path)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql) "
                 "VALUES ('table', 'x', 'x', 2, CAST(? AS TEXT))", (sql,))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    conn = open_index(tmp_path, rebuild=None)
    assert len(quarantined(tmp_path)) == 1
    assert meta_get(conn, "rebuilds") == "1"
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'x'").fetchone() == (0,)


def test_default_rebuild_restores_markdown_memories(tmp_path):
    (tmp_path / "MEMORY.md").write_text("Project uses uv\n§\nTests run with pytest -q\n", encoding="utf-8")
    corrupt(tmp_path / "index.sqlite3")
    conn = open_index(tmp_path)
    rows = conn.execute("SELECT content, source FROM memories ORDER BY id").fetchall()
    assert rows == [("Project uses uv", "markdown"), ("Tests run with pytest -q", "markdown")]


def test_the_command_that_repairs_the_index_says_so_with_what_came_back(tmp_path, caplog):
    (tmp_path / "MEMORY.md").write_text("Project uses uv\n§\nTests run with pytest -q\n", encoding="utf-8")
    corrupt(tmp_path / "index.sqlite3")
    with caplog.at_level("WARNING", logger="pi_memory.index.db"):
        open_index(tmp_path).close()
    said = [r.getMessage() for r in caplog.records if r.name == "pi_memory.index.db"]
    assert len(said) == 1
    moved = quarantined(tmp_path)[0].name
    assert said[0].startswith(f"the search index {tmp_path / 'index.sqlite3'} was damaged (")
    assert f"has been rebuilt; the damaged copy is kept as {moved}. Copied back: 0 session messages" in said[0]
    assert said[0].endswith("`pi-memory status` shows this repair.")
    caplog.clear()
    with caplog.at_level("WARNING", logger="pi_memory.index.db"):
        open_index(tmp_path).close()  # healthy now: nothing to say
    assert not [r for r in caplog.records if r.name == "pi_memory.index.db"]


def test_corrupt_again_right_after_a_rebuild_stops_instead_of_looping(tmp_path):
    corrupt(tmp_path / "index.sqlite3")
    open_index(tmp_path, rebuild=None).close()
    corrupt(tmp_path / "index.sqlite3")
    with pytest.raises(IndexUnavailableError) as err:
        open_index(tmp_path, rebuild=None)
    assert "rebuilding in a loop" in str(err.value)
    assert "pi-memory reindex" in str(err.value)
    assert len(quarantined(tmp_path)) == 1


def test_cooldown_expired_allows_a_new_rebuild(tmp_path, monkeypatch):
    corrupt(tmp_path / "index.sqlite3")
    open_index(tmp_path, rebuild=None).close()
    old = quarantined(tmp_path)[0]
    past = time.time() - dbmod.REBUILD_COOLDOWN_S - 5
    os.utime(old, (past, past))
    corrupt(tmp_path / "index.sqlite3")
    conn = open_index(tmp_path, rebuild=None)
    assert len(quarantined(tmp_path)) == 2
    assert meta_get(conn, "rebuilds") == "1"  # a fresh file counts its own rebuilds


def test_busy_database_is_not_corruption(tmp_path):
    open_index(tmp_path).close()
    holder = sqlite3.connect(tmp_path / "index.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    other = sqlite3.connect(tmp_path / "index.sqlite3", timeout=0)
    with pytest.raises(sqlite3.OperationalError) as err:
        other.execute("INSERT INTO meta VALUES ('a', 'b')")
    assert not is_corruption(err.value)
    holder.execute("ROLLBACK")
    assert is_corruption(sqlite3.DatabaseError("database disk image is malformed"))
    assert not is_corruption(ValueError("malformed"))


RACER = """
import os, sys, time
from pathlib import Path
from pi_memory.index.db import open_index

data_dir, log, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
while not go.exists():
    time.sleep(0.005)

def rebuild(conn, moved):
    with open(log, "a") as fh:
        fh.write(f"{os.getpid()} {moved.name}\\n")
    time.sleep(0.5)  # hold the lock while the others arrive

conn = open_index(data_dir, rebuild=rebuild)
print(conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0])
"""


def test_concurrent_opens_of_a_corrupt_database_rebuild_once(tmp_path):
    corrupt(tmp_path / "index.sqlite3")
    log, go = tmp_path / "rebuilds.log", tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(tmp_path), str(log), str(go)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(4)
    ]
    time.sleep(0.5)  # let every process start and wait at the line
    go.touch()
    outcomes = [p.communicate(timeout=60) for p in procs]
    assert [(out.strip(), p.returncode) for (out, _err), p in zip(outcomes, procs, strict=True)] == [
        (str(len(NAMES)), 0)
    ] * 4, [err for _out, err in outcomes]
    assert len(log.read_text().splitlines()) == 1
    assert len(quarantined(tmp_path)) == 1
    conn = open_index(tmp_path, rebuild=None)
    assert meta_get(conn, "rebuilds") == "1"


def test_deleted_database_is_recreated_empty(tmp_path):
    conn = open_index(tmp_path)
    conn.execute("INSERT INTO meta VALUES ('x', 'y')")
    conn.close()
    for suffix in ("", "-wal", "-shm"):
        p = tmp_path / f"index.sqlite3{suffix}"
        if p.exists():
            p.unlink()
    conn = open_index(tmp_path)
    assert meta_get(conn, "x") is None
    assert applied_migrations(conn) == NAMES


def test_a_repair_that_could_not_read_the_semantic_history_says_what_may_be_lost(tmp_path, caplog):
    from pi_memory.index.semantic_schema import SEMANTIC_MIGRATIONS

    conn = open_index(tmp_path)
    migrate(conn, SEMANTIC_MIGRATIONS)
    conn.close()
    path = tmp_path / "index.sqlite3"
    for side in ("-wal", "-shm"):
        path.with_name(path.name + side).unlink(missing_ok=True)
    with open(path, "r+b") as fh:
        fh.truncate(8192)  # the first pages survive, the semantic tables do not
    with caplog.at_level("WARNING", logger="pi_memory.index.db"):
        open_index(tmp_path).close()
    [said] = [r.getMessage() for r in caplog.records if r.name == "pi_memory.index.db"]
    assert ("; the semantic memories' history could not be read, so any memory not copied back is lost. "
            "`pi-memory status` shows this repair.") in said


def test_a_new_file_another_connection_is_making_is_waited_for_not_refused(tmp_path):
    """Seen once in the concurrent-repair test: one process's fresh index was being made by another, and setting
    WAL mode got "database is locked" at once (SQLite skips its busy wait when a read lock is held). A new file
    another connection holds a write lock on is waited for, as the busy wait would."""
    import threading

    from pi_memory.index.db import _connect

    path = tmp_path / "index.sqlite3"
    path.touch()
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    timer = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    timer.start()
    conn = _connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    timer.join()
    conn.close()
    other.close()
