"""A 0444 index in a writable folder: reading it (``pi-memory status``, ``mcp`` at start: the repair record, the
integrity check) creates no ``-wal`` / ``-shm`` beside it (they were made 0444 and kept refusing writes after
``chmod 644 index.sqlite3``), and such leftovers of pi-memory's own no longer block writes once the index is
writable again."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from pi_memory.index import last_repair, open_index, transaction
from pi_memory.index.file_guard import leftovers, write_problem
from pi_memory.index.integrity import check_integrity


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "data"
    conn = open_index(folder)
    with transaction(conn):
        conn.execute("INSERT INTO meta(key, value) VALUES ('x', '1')")
    conn.close()
    assert sorted(p.name for p in folder.iterdir()) == ["index.sqlite3"]
    yield folder
    for p in folder.iterdir():
        p.chmod(0o600)


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_reading_a_0444_index_creates_nothing_beside_it(data):
    (data / "index.sqlite3").chmod(0o444)
    assert last_repair(data) is None
    report = check_integrity(data)
    assert (report.ok, report.detail, report.ran) == (True, "ok", True)
    conn = open_index(data)
    assert conn.execute("SELECT value FROM meta WHERE key = 'x'").fetchone() == ("1",)
    conn.close()
    assert names(data) == ["index.sqlite3"]


def old_reader_leftovers(folder: Path) -> None:
    """What the earlier `status` left: a mode=ro connection to the 0444 WAL index made its -wal and -shm, 0444."""
    reader = sqlite3.connect(f"{(folder / 'index.sqlite3').as_uri()}?mode=ro", uri=True)
    reader.execute("SELECT count(*) FROM meta").fetchone()
    reader.close()


def test_leftover_side_files_no_longer_block_writes_once_the_index_is_writable(data):
    index = data / "index.sqlite3"
    index.chmod(0o444)
    old_reader_leftovers(data)
    sides = [data / "index.sqlite3-shm", data / "index.sqlite3-wal"]
    assert names(data) == ["index.sqlite3", *(p.name for p in sides)]
    assert [mode(p) for p in sides] == [0o444, 0o444]
    assert write_problem(data) is not None and leftovers(data) == []  # the index itself is still read-only
    index.chmod(0o644)
    assert leftovers(data) == [sides[1], sides[0]]
    assert write_problem(data) is None  # status says writable
    conn = open_index(data)
    with transaction(conn):
        conn.execute("INSERT INTO meta(key, value) VALUES ('y', '2')")
    assert conn.execute("SELECT value FROM meta WHERE key = 'y'").fetchone() == ("2",)
    assert [mode(p) for p in sides if p.exists()] == [0o600] * len([p for p in sides if p.exists()])
    assert mode(index) == 0o600
    conn.close()


def test_side_files_of_a_foreign_database_are_not_released(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    conn = sqlite3.connect(folder / "index.sqlite3")
    conn.execute("CREATE TABLE photos (id)")
    conn.commit()
    conn.close()
    side = folder / "index.sqlite3-wal"
    side.write_bytes(b"")
    side.chmod(0o444)
    assert leftovers(folder) == []
    assert mode(side) == 0o444


def test_a_side_file_that_is_a_link_is_not_released(data, tmp_path):
    mine = tmp_path / "elsewhere"
    mine.write_bytes(b"")
    mine.chmod(0o444)
    (data / "index.sqlite3-wal").symlink_to(mine)
    assert leftovers(data) == []
    assert mode(mine) == 0o444
