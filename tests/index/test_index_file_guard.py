"""What the index file and its folder allow (:mod:`pi_memory.index.file_guard`): a file that is not a pi-memory
index is refused and left as it is, an empty one is no index, an unreadable one is named with its owner and
mode, and a folder that turns read-only (or whose disk fills) after the index was opened refuses the next write."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_memory import storage
from pi_memory.index import describe_repair, last_repair, open_index, transaction
from pi_memory.index import read_only as read_only_module
from pi_memory.index.db import MIGRATIONS, applied_migrations
from pi_memory.index.file_guard import NotAnIndexError
from pi_memory.index.read_only import ReadOnlyConnection, read_only, skipped
from pi_memory.retrieval import memory_search
from pi_memory.storage import ReadOnlyDataError, UnreadableFileError, storage_problem, write_blocker

NAMES = [m.name for m in MIGRATIONS]
TODO = ("Move or rename it if it belongs to another program (if it is a damaged pi-memory index, move it aside "
        "rather than deleting it -- semantic memories live only in that file -- and run `pi-memory reindex`), "
        "or point --dir or $PI_MEMORY_DIR at another folder.")


def files(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def not_an_index(path: Path, what: str) -> str:
    return f"The file {path} is not a pi-memory search index: {what}. pi-memory left it as it is and stopped. {TODO}"


FOREIGN = {  # (tables made, as the refusal lists them)
    "notes": (["CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"], "notes"),
    "rails": (["CREATE TABLE schema_migrations (version TEXT PRIMARY KEY)", "CREATE TABLE users (id)"],
              "schema_migrations, users"),
    "seven": ([f"CREATE TABLE t{i} (x)" for i in range(7)], "t0, t1, t2, t3, t4 and 2 more"),
}


def foreign_db(path: Path, statements: list[str]) -> None:
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.execute("INSERT INTO " + statements[-1].split()[2] + " DEFAULT VALUES")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("name", FOREIGN)
def test_another_programs_sqlite_database_is_refused_and_left_as_it_is(tmp_path, name):
    statements, shown = FOREIGN[name]
    path = tmp_path / "index.sqlite3"
    foreign_db(path, statements)
    before = files(tmp_path)
    for _ in range(2):  # the second open too: nothing was set aside or rebuilt
        with pytest.raises(NotAnIndexError) as caught:
            open_index(tmp_path)
        assert str(caught.value) == not_an_index(path, f"it is an SQLite database of another program (tables: {shown})")
        assert storage_problem(caught.value, tmp_path).kind == "not_an_index"
    assert files(tmp_path) == before  # no -wal, -shm, journal mode change or corrupt copy
    assert path.read_bytes()[18] == 1  # still a rollback-journal database (open_index would have made it WAL)


@pytest.mark.parametrize("data", [b"hello", b"\0" * 4096, b'{"sessions": []}\n' * 50,
                                  bytes(range(256)) * 20], ids=["text", "zeros", "json", "bytes"])
def test_a_file_that_is_not_sqlite_is_refused_not_set_aside(tmp_path, data):
    path = tmp_path / "index.sqlite3"
    path.write_bytes(data)
    with pytest.raises(NotAnIndexError) as caught:
        open_index(tmp_path)
    assert str(caught.value) == not_an_index(
        path, "it is not an SQLite database (its first bytes are not SQLite's header)")
    assert [p.name for p in tmp_path.iterdir()] == ["index.sqlite3"] and path.read_bytes() == data


def test_a_file_that_is_not_an_index_is_refused_in_a_read_only_folder_too(ro):
    foreign_db(ro.folder / "index.sqlite3", FOREIGN["notes"][0])
    ro.freeze()
    before = ro.state()
    with pytest.raises(NotAnIndexError, match="it is an SQLite database of another program \\(tables: notes\\)"):
        open_index(ro.folder)
    assert ro.state() == before


def test_an_empty_index_file_is_a_new_index(tmp_path):
    (tmp_path / "MEMORY.md").write_text("the build uses make\n")
    path = tmp_path / "index.sqlite3"
    path.write_bytes(b"")
    conn = open_index(tmp_path)
    try:
        assert applied_migrations(conn) == NAMES
        assert path.read_bytes()[:16] == b"SQLite format 3\x00"
    finally:
        conn.close()


def _age(path, seconds):
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_an_index_file_found_empty_is_said_and_recorded_not_taken_for_new(tmp_path, caplog):
    (tmp_path / "MEMORY.md").write_text("the build uses make\n")
    path = tmp_path / "index.sqlite3"
    path.write_bytes(b"")
    _age(path, 3600)
    with caplog.at_level(logging.WARNING):
        conn = open_index(tmp_path)
    try:
        assert applied_migrations(conn)[:len(NAMES)] == NAMES  # and the semantic tables, made by every repair
        assert [h.content for h in memory_search(conn, "build").results] == ["the build uses make"]
        record = last_repair(tmp_path)
    finally:
        conn.close()
    kept = [p.name for p in tmp_path.glob("index.sqlite3.corrupt-*") if not p.name.endswith(("-wal", "-shm"))]
    assert len(kept) == 1 and (tmp_path / kept[0]).read_bytes() == b""
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(said) == 1
    assert said[0].startswith(f"the search index {path} was found empty (0 bytes, last changed ")
    assert f"the empty file is kept as {kept[0]}" in said[0]
    assert "those stored before the file was emptied are gone unless you have a copy of index.sqlite3" in said[0]
    assert said[0].endswith("`pi-memory status` shows this repair.")
    assert record["damagedCopy"] == kept[0] and record["lost"] == {"emptied": True}
    line = describe_repair(record)
    assert ": the file was empty, so nothing was copied back. Lost: whatever" in line
    assert line.endswith("Lost: whatever the file held before it was emptied (semantic memories included) "
                         "(vectors are embedded again).")


@pytest.mark.parametrize("case", ["just made", "its log holds the pages"])
def test_an_empty_index_file_being_made_or_in_wal_mode_is_no_repair(tmp_path, case, caplog):
    path = tmp_path / "index.sqlite3"
    if case == "just made":
        path.write_bytes(b"")  # another process made it a moment ago and is about to write its schema
    else:
        conn = open_index(tmp_path)
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        conn.close()
        path.write_bytes(b"")
        (tmp_path / "index.sqlite3-wal").write_bytes(b"x" * 100)  # pages SQLite reads from the log
        _age(path, 3600)
    with caplog.at_level(logging.WARNING), contextlib.suppress(Exception):  # a log of junk is SQLite's to judge
        open_index(tmp_path).close()
    assert not list(tmp_path.glob("index.sqlite3.corrupt-*"))
    assert not [r for r in caplog.records if "found empty" in r.getMessage()]


@pytest.mark.parametrize("content", [b"", None], ids=["0 bytes", "sqlite without tables"])
def test_an_empty_index_in_a_read_only_folder_reads_as_no_index(ro, content):
    (ro.folder / "MEMORY.md").write_text("the build uses make\n§\nthe deploy port is 8443\n")
    path = ro.folder / "index.sqlite3"
    if content is None:
        sqlite3.connect(path).execute("PRAGMA user_version = 7").connection.close()  # a header, no table
    else:
        path.write_bytes(content)
    ro.freeze()
    before = ro.state()
    conn = open_index(ro.folder)
    try:
        assert isinstance(conn, ReadOnlyConnection)
        assert [h.content for h in memory_search(conn, "deploy").results] == ["the deploy port is 8443"]
    finally:
        conn.close()
    assert ro.state() == before


def owner_words(path: Path) -> tuple[str, str]:
    import pwd

    return pwd.getpwuid(path.stat().st_uid).pw_name, pwd.getpwuid(os.geteuid()).pw_name


@pytest.mark.parametrize(("name", "mode"), [("index.sqlite3", 0o000), ("index.sqlite3", 0o200),
                                            ("index.sqlite3-wal", 0o000)])
def test_an_index_file_nobody_may_read_is_named_with_its_owner_and_mode(tmp_path, name, mode):
    open_index(tmp_path).close()
    path = tmp_path / name
    path.touch()
    path.chmod(mode)
    before = files_stat(tmp_path)
    try:
        with pytest.raises(UnreadableFileError) as caught:
            open_index(tmp_path)
        owner, user = owner_words(path)
        fix = f"`chmod u+r {path}`" if owner == user else f"`chmod a+r {path}` as {owner}, or `sudo chown {user} {path}`"
        assert str(caught.value) == (
            f"The file {path} cannot be read by this user ({user}): it belongs to {owner} and its mode is {mode:04o} "
            "(its mode lets no one read it, and pi-memory honours that even when running as root). Nothing was read "
            f"or changed. Give your user read access to it (for example {fix}), or point --dir or $PI_MEMORY_DIR "
            "at another folder.")
        problem = storage_problem(caught.value, tmp_path)
        assert (problem.kind, problem.folder) == ("unreadable", tmp_path)
        assert files_stat(tmp_path) == before
    finally:
        path.chmod(0o600)


def files_stat(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


def test_an_index_of_another_user_is_named_with_its_owner(tmp_path, monkeypatch):
    """As another user would meet it: 0600, this user denied by the system (``access``)."""
    open_index(tmp_path).close()
    path = tmp_path / "index.sqlite3"
    path.chmod(0o600)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, m, **kw: False if Path(p) == path and m == os.R_OK else real(p, m))
    with pytest.raises(UnreadableFileError) as caught:
        open_index(tmp_path)
    owner, user = owner_words(path)
    assert f"it belongs to {owner} and its mode is 0600 (this user may not read it)" in str(caught.value)


def test_a_folder_made_read_only_after_the_open_refuses_the_next_write(tmp_path):
    folder = tmp_path / "data"
    conn = open_index(folder)
    try:
        with transaction(conn):
            conn.execute("INSERT INTO meta(key, value) VALUES ('a', '1')")
        assert read_only(conn) is None and not skipped(conn, "test work")
        folder.chmod(0o555)
        try:
            with pytest.raises(ReadOnlyDataError) as caught, transaction(conn):
                conn.execute("INSERT INTO meta(key, value) VALUES ('b', '2')")
            assert str(caught.value) == (
                f"You have no permission to write in the data folder {folder} (its mode 0555 lets no one write there, "
                "and pi-memory honours that even when running as root). pi-memory opened it for reading only, so "
                f"nothing was saved. Give your user write access to it (for example `chmod u+w {folder}`), or use "
                "another folder with --dir or $PI_MEMORY_DIR.")
            assert read_only(conn).kind == "permission" and skipped(conn, "test work")
        finally:
            folder.chmod(0o755)
        with transaction(conn):  # writable again: the next write goes on
            conn.execute("INSERT INTO meta(key, value) VALUES ('c', '3')")
        assert [k for (k,) in conn.execute("SELECT key FROM meta WHERE key IN ('a', 'b', 'c')")] == ["a", "c"]
    finally:
        conn.close()


def test_a_nearly_full_disk_is_seen_before_a_write(tmp_path, monkeypatch, caplog):
    folder = tmp_path / "data"
    conn = open_index(folder)
    monkeypatch.setattr(storage, "MIN_FREE_BYTES", 1 << 62)  # every disk is nearly full
    monkeypatch.setattr(read_only_module, "_said", set())
    kind, detail = write_blocker(folder)
    assert kind == "disk_full" and detail.endswith(" free; pi-memory writes nothing there with less than "
                                                    f"{(1 << 62) / 1024 / 1024:.1f} MiB free"), detail
    try:
        with pytest.raises(ReadOnlyDataError) as caught, transaction(conn):
            conn.execute("INSERT INTO meta(key, value) VALUES ('b', '2')")
        assert str(caught.value).startswith(f"The disk holding the data folder {folder} is full ({detail}). "
                                            "pi-memory opened it for reading only, so nothing was saved.")
        with caplog.at_level(logging.WARNING, logger="pi_memory.index.read_only"):
            assert skipped(conn, "capture")
        assert caplog.messages == [
            f"capture skipped: the data folder {folder} is open for reading only (a full disk)"]
    finally:
        conn.close()
    again = open_index(folder)  # opened for reading only: nothing created, migrated or written
    try:
        assert isinstance(again, ReadOnlyConnection) and read_only(again).kind == "disk_full"
    finally:
        again.close()


def test_a_really_full_tmpfs_is_seen_before_a_write(tmp_path):
    base = tmp_path / "small"
    base.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(base)],
                                           capture_output=True).returncode != 0:
        pytest.skip("this user may not mount a tmpfs: the monkeypatched case covers it")
    try:
        (base / "filler").write_bytes(b"\0" * (1536 * 1024))  # 0.5 MiB left, under MIN_FREE_BYTES
        kind, detail = write_blocker(base)
        assert kind == "disk_full" and detail.endswith("KiB free; pi-memory writes nothing there with less than "
                                                        "1.0 MiB free"), detail
        conn = open_index(base / "data")
        try:
            assert read_only(conn).kind == "disk_full"
        finally:
            conn.close()
        assert sorted(p.name for p in base.iterdir()) == ["filler"]
    finally:
        subprocess.run(["umount", "-l", str(base)], capture_output=True)


LOOK = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
        "print(c.execute(\"SELECT value FROM meta WHERE key = 'seen'\").fetchone()); c.close()")


@pytest.mark.parametrize("opens", [1, 3])
def test_another_open_in_this_process_keeps_the_first_connections_writes_seen_by_others(tmp_path, opens):
    """No check reads the index file outside SQLite while it may be open: closing such a file drops this
    process's locks on it, and another process's connection, closing, then took itself for the last one and
    deleted the write-ahead log the first connection still wrote to (its writes unseen until it closed)."""
    first = open_index(tmp_path)
    try:
        for _ in range(opens):
            open_index(tmp_path).close()
        look = [sys.executable, "-c", LOOK, str(tmp_path / "index.sqlite3")]
        assert subprocess.run(look, capture_output=True, text=True, check=True).stdout == "None\n"
        with transaction(first):
            first.execute("INSERT INTO meta(key, value) VALUES ('seen', 'yes')")
        assert subprocess.run(look, capture_output=True, text=True, check=True).stdout == "('yes',)\n"
        assert (tmp_path / "index.sqlite3-wal").exists()
    finally:
        first.close()
