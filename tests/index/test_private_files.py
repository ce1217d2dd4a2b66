"""The data folder and the search index are the user's alone: a new data folder is 0700, the index (and the
WAL and shared-memory files SQLite gives its mode) 0600, and an index another user could read is tightened on
open. A fresh tester found every memory readable by other users through a 0644 index under a 0755 folder."""

from __future__ import annotations

import os
import random
import sqlite3
import stat

import pytest

from pi_memory.curated.store import MemoryStore
from pi_memory.index import open_index
from pi_memory.index.file_guard import NotAnIndexError


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_data_folder_and_index_are_private(tmp_path):
    os.umask(0o022)
    data = tmp_path / "a" / "data"
    conn = open_index(data)
    conn.execute("CREATE TABLE t(x)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    assert mode(data) == 0o700 and mode(tmp_path / "a") == 0o700
    assert mode(data / "index.sqlite3") == 0o600
    assert mode(data / "index.sqlite3-wal") == 0o600 and mode(data / "index.sqlite3-shm") == 0o600
    conn.close()


def test_an_index_others_can_read_is_tightened_and_an_existing_folder_keeps_its_mode(tmp_path):
    os.umask(0o022)
    data = tmp_path / "shared"
    data.mkdir(mode=0o755)
    open_index(data).close()
    os.chmod(data / "index.sqlite3", 0o644)
    open_index(data).close()
    assert mode(data / "index.sqlite3") == 0o600 and mode(data) == 0o755


def test_the_curated_store_creates_its_folder_private(tmp_path):
    os.umask(0o022)
    store = MemoryStore(tmp_path / "new" / "memory")
    assert store.add("memory", "Prefers tabs").success
    assert mode(tmp_path / "new") == 0o700 and mode(tmp_path / "new" / "memory") == 0o700
    assert mode(tmp_path / "new" / "memory" / "MEMORY.md") == 0o600


# A tester's `pi-memory memory-search build` turned another program's 0644 SQLite file, a file of random bytes and,
# through a symbolic link at index.sqlite3, /dev/null itself into 0600 files. Only a regular file known to be a
# pi-memory index (or made by pi-memory) is tightened; these tests use files of their own in tmp, never a system
# file.
def foreign_sqlite(path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)")
    conn.execute("INSERT INTO photos(path) VALUES ('a.jpg')")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("content", ["photos", "random", "text"])
def test_a_file_that_is_not_an_index_keeps_its_mode_and_bytes(tmp_path, content):
    data = tmp_path / "data"
    data.mkdir()
    path = data / "index.sqlite3"
    if content == "photos":
        foreign_sqlite(path)
    else:
        path.write_bytes(random.Random(7).randbytes(8192) if content == "random" else b"my notes\n" * 100)
    os.chmod(path, 0o644)
    before = path.read_bytes()
    with pytest.raises(NotAnIndexError) as refused:
        open_index(data)
    assert refused.value.problem.kind == "not_an_index"
    assert mode(path) == 0o644 and path.read_bytes() == before
    assert sorted(p.name for p in data.iterdir()) == ["index.sqlite3"]


def test_a_link_to_an_index_of_its_own_elsewhere_is_used_and_neither_link_nor_file_is_chmod_ed(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    open_index(elsewhere).close()
    real = elsewhere / "index.sqlite3"
    os.chmod(real, 0o644)
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    (data / "index.sqlite3").symlink_to(real)
    conn = open_index(data)
    conn.close()
    assert mode(real) == 0o644 and (data / "index.sqlite3").is_symlink()
    assert os.readlink(data / "index.sqlite3") == str(real)


def test_a_link_to_a_foreign_file_leaves_the_file_s_mode(tmp_path):
    theirs = tmp_path / "photos.db"
    foreign_sqlite(theirs)
    os.chmod(theirs, 0o664)
    data = tmp_path / "data"
    data.mkdir()
    (data / "index.sqlite3").symlink_to(theirs)
    with pytest.raises(NotAnIndexError):
        open_index(data)
    assert mode(theirs) == 0o664


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_folder_or_pipe_named_index_sqlite3_keeps_its_mode(tmp_path, kind):
    data = tmp_path / "data"
    data.mkdir()
    path = data / "index.sqlite3"
    if kind == "folder":
        path.mkdir(mode=0o755)
        os.chmod(path, 0o755)
    else:
        os.mkfifo(path, 0o644)
        os.chmod(path, 0o644)
    with pytest.raises(NotAnIndexError):
        open_index(data)
    assert mode(path) == 0o755 if kind == "folder" else mode(path) == 0o644


def test_tighten_private_file_changes_only_a_regular_file_of_this_user(tmp_path):
    from pi_memory.private_files import tighten_private_file

    plain = tmp_path / "plain"
    plain.write_text("x")
    os.chmod(plain, 0o644)
    link = tmp_path / "link"
    link.symlink_to(plain)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe, 0o644)
    os.chmod(pipe, 0o644)
    folder = tmp_path / "folder"
    folder.mkdir()
    os.chmod(folder, 0o755)
    assert [tighten_private_file(p) for p in (link, pipe, folder, tmp_path / "missing")] == [False] * 4
    assert (mode(plain), mode(pipe), mode(folder)) == (0o644, 0o644, 0o755)
    assert tighten_private_file(plain) is True and mode(plain) == 0o600
    assert tighten_private_file(plain) is False  # already private
    data = tmp_path / "data"  # a 0-byte file is a new index (file_guard.is_empty): tightened once it holds one
    data.mkdir()
    (data / "index.sqlite3").write_bytes(b"")
    os.chmod(data / "index.sqlite3", 0o644)
    open_index(data).close()
    assert mode(data / "index.sqlite3") == 0o600

