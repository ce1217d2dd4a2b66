"""A Markdown store written or edited by hand reaches memory_search without a write through pi-memory
(pi_memory.index.mirror_watch; a tester's case: "No memories are stored yet." while MEMORY.md held entries)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from pi_memory.index import open_index
from pi_memory.index.mirror_watch import sync_changed
from pi_memory.retrieval import memory_search
from pi_memory.runtime import open_memory
from pi_memory.session import AgentSession

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from read_only_folder import read_only_folder  # noqa: E402


def _contents(conn, query: str) -> list[str]:
    return [h.content for h in memory_search(conn, query, record_use=False).results]


def _write(path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    later = time.time_ns() + 2_000_000_000  # a different modification time even on a coarse clock
    os.utime(path, ns=(later, later))


def test_a_hand_written_store_is_found_by_the_cli_in_a_fresh_data_folder(tmp_path):
    data = tmp_path / "hand"
    data.mkdir(mode=0o700)
    (data / "MEMORY.md").write_text("Uses pnpm\n§\nDeploy via gh\n", encoding="utf-8")
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PI_MEMORY_DIR": str(data)}
    out = subprocess.run([sys.executable, "-m", "pi_memory", "memory-search", "pnpm"], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Uses pnpm" in out.stdout and "No memories" not in out.stdout


def test_an_edit_by_hand_is_mirrored_at_the_next_open_and_unchanged_files_cost_nothing(tmp_path):
    (tmp_path / "MEMORY.md").write_text("Uses pnpm\n§\nDeploy via gh\n", encoding="utf-8")
    conn = open_index(tmp_path)
    first = sync_changed(conn, tmp_path)[str(tmp_path / "MEMORY.md")]
    assert (first.added, first.removed, first.kept) == (2, 0, 0)
    assert sync_changed(conn, tmp_path) == {}  # nothing changed since
    _write(tmp_path / "MEMORY.md", "Uses pnpm\n§\nThe staging port is 7002\n")
    synced = sync_changed(conn, tmp_path)
    stats = synced[str(tmp_path / "MEMORY.md")]
    assert (stats.added, stats.removed, stats.kept) == (1, 1, 1)
    assert _contents(conn, "staging") == ["The staging port is 7002"]
    assert _contents(conn, "deploy") == []
    conn.close()


def test_a_credential_written_by_hand_is_mirrored_redacted(tmp_path):
    (tmp_path / "USER.md").write_text("Deploy token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab is mine\n",
                                      encoding="utf-8")
    memory = open_memory(tmp_path, override_dir=tmp_path)
    assert _contents(memory.index(), "deploy token") == ["Deploy token [REDACTED:github_token] is mine"]


def test_a_running_host_mirrors_an_edit_made_while_it_runs_at_its_next_index_pass(tmp_path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("PI_MEMORY_DIR", str(data))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    session = AgentSession(tmp_path)
    conn = session.memory.index()  # opened before the edit: the open's mirror saw no file
    assert _contents(conn, "kafka") == []
    data.mkdir(exist_ok=True)
    _write(data / "MEMORY.md", "Events go through Kafka\n")
    session._catch_up()  # what the worker runs every --index-interval seconds
    assert _contents(conn, "kafka") == ["Events go through Kafka"]


def test_a_store_edited_in_a_read_only_folder_is_searched_as_last_mirrored_and_nothing_fails(tmp_path):
    with read_only_folder(tmp_path / "ro") as ro:
        (ro.folder / "MEMORY.md").write_text("Uses pnpm\n", encoding="utf-8")
        open_memory(ro.folder, override_dir=ro.folder).index().close()  # mirrored while writable
        (ro.folder / "MEMORY.md").write_text("Uses pnpm\n§\nThe staging port is 7002\n", encoding="utf-8")
        ro.freeze()
        memory = open_memory(ro.folder, override_dir=ro.folder)
        conn = memory.index()  # read-only: the edit is not mirrored, and the open does not fail
        assert _contents(conn, "pnpm") == ["Uses pnpm"]
        assert _contents(conn, "staging") == []


def test_a_store_that_cannot_be_read_is_said_and_the_others_are_still_mirrored(tmp_path, caplog):
    """A tester's case: a MEMORY.md that is a folder stopped every other store's hand edits from reaching the
    index, and sync-markdown ended in an IsADirectoryError traceback."""
    (tmp_path / "MEMORY.md").mkdir()
    (tmp_path / "USER.md").write_text("User likes platypus\n", encoding="utf-8")
    conn = open_index(tmp_path)
    with caplog.at_level("WARNING", logger="pi_memory.index.mirror_watch"):
        synced = sync_changed(conn, tmp_path)
    assert synced[str(tmp_path / "MEMORY.md")].unreadable.startswith("IsADirectoryError")
    assert _contents(conn, "platypus") == ["User likes platypus"]
    assert "MEMORY.md cannot be read (IsADirectoryError" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="pi_memory.index.mirror_watch"):
        assert sync_changed(conn, tmp_path) == {}  # said once, not at every open
    assert caplog.text == ""
    conn.close()
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PI_MEMORY_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "pi_memory", "sync-markdown"], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=120)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert (f"{tmp_path / 'MEMORY.md'}: cannot be read (IsADirectoryError: Is a directory); its entries in the "
            "index are left as they were.") in out.stdout


def test_a_project_folder_removed_by_hand_is_reported_with_the_entries_that_left(tmp_path):
    """A tester's case: sync-markdown said nothing of the entries of a deleted project folder (they did leave)."""
    from pi_memory.index import sync_markdown

    folder = tmp_path / "projects" / "api-0123456789ab"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("Project uses tabs\n§\nRun make test\n", encoding="utf-8")
    conn = open_index(tmp_path)
    sync_markdown(conn, tmp_path)
    assert _contents(conn, "tabs") == ["Project uses tabs"]
    (folder / "MEMORY.md").unlink()
    folder.rmdir()
    stats = sync_markdown(conn, tmp_path)
    assert stats[str(tmp_path / "projects" / "*-0123456789ab" / "MEMORY.md")].removed == 2
    assert _contents(conn, "tabs") == []
    conn.close()
