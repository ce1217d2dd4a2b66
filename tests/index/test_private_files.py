"""The data folder and the search index are the user's alone: a new data folder is 0700, the index (and the
WAL and shared-memory files SQLite gives its mode) 0600, and an index another user could read is tightened on
open. A fresh tester found every memory readable by other users through a 0644 index under a 0755 folder."""

from __future__ import annotations

import os
import stat

from pi_memory.curated.store import MemoryStore
from pi_memory.index import open_index


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
