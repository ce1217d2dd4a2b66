"""A curated write while another process holds the search index (an indexing pass, a rebuild): the Markdown file
is saved at once and the command does not wait the index connection's 10 s busy timeout per step -- `pi-memory
add` took 20.6 s (the open's mirror of changed files and the write's own mirror, 10 s each) and a duplicate that
wrote nothing 10.6 s. The mirror waits ``MIRROR_WAIT_S``; the next command that opens the free index mirrors what
changed, so memory_search finds the entry without `pi-memory sync-markdown`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_memory.runtime import MIRROR_WAIT_S


def _cli(folder: Path, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(folder.parent / "agent")}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pi_memory", *args, "--dir", str(folder)], capture_output=True,
                          text=True, timeout=120, env=env)
    return proc, time.monotonic() - start


@pytest.fixture()
def held(tmp_path):
    """A data folder with one entry, whose index another process holds with a write transaction until told."""
    folder = tmp_path / "data"
    proc, _ = _cli(folder, "add", "memory", "The queue is Redis")
    assert proc.returncode == 0, proc.stderr
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys\n"
         f"c = sqlite3.connect({str(folder / 'index.sqlite3')!r}, isolation_level=None)\n"
         "c.execute('BEGIN EXCLUSIVE'); c.execute('DELETE FROM meta WHERE 0')\n"
         "print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"

    def release() -> None:
        if holder.poll() is None:
            holder.stdin.close()
            holder.wait(timeout=10)

    yield folder, release
    release()


def test_a_write_on_a_held_index_is_saved_without_the_long_wait_and_found_once_the_index_is_free(held):
    folder, release = held
    proc, took = _cli(folder, "add", "memory", "The cache is Memcached")
    assert proc.returncode == 0, proc.stderr
    assert "Saved to MEMORY.md." in proc.stdout
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == "The queue is Redis\n§\nThe cache is Memcached\n"
    # two mirrors at most MIRROR_WAIT_S each, plus start-up: before, 20.6 s (10 s each)
    assert took < 2 * MIRROR_WAIT_S + 6, took
    assert proc.stderr.splitlines() == [
        "warning: MEMORY.md was saved, but another process held the search index, so searches may not find the change "
        "until the index is brought up to date (the next pi-memory command or session does it; `pi-memory "
        "sync-markdown` does it now)."]
    release()
    found, _ = _cli(folder, "memory-search", "Memcached", "--json")
    assert found.returncode == 0, found.stderr
    assert [r["content"] for r in json.loads(found.stdout)["results"]] == ["The cache is Memcached"]


def test_a_duplicate_on_a_held_index_says_so_without_the_long_wait(held):
    folder, _release = held
    proc, took = _cli(folder, "add", "memory", "The queue is Redis")
    assert proc.returncode == 0, proc.stderr
    assert "This exact entry is already in MEMORY.md; nothing was written." in proc.stdout
    assert took < MIRROR_WAIT_S + 6, took  # before: 10.6 s
    assert (folder / "MEMORY.md").read_text(encoding="utf-8") == "The queue is Redis\n"


def test_the_wait_is_given_back_after_the_mirror(tmp_path):
    from pi_memory.index import busy_wait, open_index

    conn = open_index(tmp_path)
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10000
    with busy_wait(conn, 0.25):
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 250
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10000
    with pytest.raises(RuntimeError), busy_wait(conn, 1.5):
        raise RuntimeError("a failed mirror")
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10000
    conn.close()


def test_a_search_on_a_held_index_says_it_may_miss_what_the_files_hold_and_does_not_wait_long(held):
    """A search while another process held the index waited 10.75 s (the usage counter's write) and, when MEMORY.md
    had changed since the index mirrored it, answered "No matches" without a word about why."""
    folder, release = held
    (folder / "MEMORY.md").write_text("The queue is Redis\n§\nFlamingos nest on the roof\n", encoding="utf-8")
    found, took = _cli(folder, "memory-search", "Redis", "--json")
    assert found.returncode == 0, found.stderr
    assert [r["content"] for r in json.loads(found.stdout)["results"]] == ["The queue is Redis"]
    assert took < MIRROR_WAIT_S + 0.25 + 6, took  # the mirror at open and the usage counter: 10.75 s before
    assert found.stderr.splitlines() == [
        "warning: The memory files changed since the search index last mirrored them, but the search index was busy "
        "with another write (an indexing pass of this or another process), so memory_search may not find those "
        "changes yet; the next pi-memory command or session "
        "mirrors them (`pi-memory sync-markdown` does it now)."]
    release()
    again, _ = _cli(folder, "memory-search", "Flamingos", "--json")
    assert [r["content"] for r in json.loads(again.stdout)["results"]] == ["Flamingos nest on the roof"]
    assert again.stderr == ""


def test_closing_leaves_the_connection_to_a_call_that_still_uses_it(tmp_path, monkeypatch):
    """An MCP server's shutdown closed the index connection while a tool call's mirror, given up on a held index,
    ran its next statement on it: the process died of a segmentation fault."""
    import sqlite3

    from pi_memory.runtime import open_memory

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    memory = open_memory(tmp_path, override_dir=tmp_path / "data")
    conn = memory.index()
    with memory.using():
        started = time.monotonic()
        memory.close(wait=0.2)
        assert 0.2 <= time.monotonic() - started < 2
        assert conn.execute("SELECT 1").fetchone() == (1,)  # still open for the call
    again = open_memory(tmp_path, override_dir=tmp_path / "data")
    other = again.index()
    again.close()
    with pytest.raises(sqlite3.ProgrammingError):  # nobody used it: closed
        other.execute("SELECT 1")
