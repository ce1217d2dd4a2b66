"""A store file too large to mirror (pi_memory.index.mirror, module docstring: 1 MiB or 10,000 entries) is not
mirrored, never changed, and said with what to do; a file merely over its character limit is mirrored as always
(a tester's case: a 16 MB MEMORY.md took 5-12 s to mirror at the open of the index)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pi_memory
from pi_memory.index import list_memories, open_index, sync_markdown
from pi_memory.index.mirror import MAX_BYTES, MAX_ENTRIES, not_mirrored_text
from pi_memory.index.mirror_watch import sync_changed
from pi_memory.retrieval import memory_search

SIXTEEN_MIB = 16 << 20
TOO_BIG = "16,777,216 bytes, over the 1,048,576-byte bound"


def _write(path: Path, raw: bytes) -> str:
    """Write ``raw`` with a later modification time (a coarse clock still sees a change); returns its digest."""
    path.write_bytes(raw)
    later = time.time_ns() + 2_000_000_000
    os.utime(path, ns=(later, later))
    return hashlib.sha256(raw).hexdigest()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _contents(conn) -> list[str]:
    return [row["content"] for row in list_memories(conn, target="memory")]


def _entries(n: int, width: int = 0) -> bytes:
    return ("\n§\n".join(f"fact {i}" + "x" * width for i in range(n)) + "\n").encode()


def _sixteen_mib(shape: str) -> bytes:
    if shape == "entries":  # about 100,000 entries
        return _entries(100_000, 160)[:SIXTEEN_MIB].ljust(SIXTEEN_MIB, b"y")
    if shape == "one entry":
        return (b"foo " * (SIXTEEN_MIB // 4))
    if shape == "notes without a delimiter":
        return (b"# Notes\n- uses foo\n- deploys with bar\n\n" * SIXTEEN_MIB)[:SIXTEEN_MIB]
    return random.Random(7).randbytes(SIXTEEN_MIB)  # binary junk


def test_the_text_says_what_happened_and_what_to_do():
    assert not_mirrored_text("MEMORY.md", TOO_BIG, 2200) == (
        "MEMORY.md is too large to mirror into the search index (16,777,216 bytes, over the 1,048,576-byte bound), "
        "so memory_search does not see what it holds now; the file was not changed and the entries the index "
        "already had from it stay. Trim it under its limit of 2,200 chars: it is mirrored again at the next search "
        "or `pi-memory sync-markdown`.")
    assert "Trim it under its character limit (`pi-memory status` shows it):" in not_mirrored_text("M", TOO_BIG)


def test_a_16_mib_store_is_not_mirrored_said_once_and_left_as_it_was(tmp_path, caplog):
    path = tmp_path / "MEMORY.md"
    _write(path, b"Uses pnpm\n\xc2\xa7\nDeploy via gh\n")
    conn = open_index(tmp_path)
    assert sync_changed(conn, tmp_path)[str(path)].added == 2
    digest = _write(path, _sixteen_mib("entries"))
    with caplog.at_level("WARNING", logger="pi_memory.index.mirror_watch"):
        stats = sync_changed(conn, tmp_path)[str(path)]
    assert (stats.added, stats.removed, stats.kept, stats.updated, stats.too_large) == (0, 0, 0, 0, TOO_BIG)
    assert _contents(conn) == ["Uses pnpm", "Deploy via gh"]  # what the index had from the file stays
    assert _digest(path) == digest
    assert caplog.messages == [not_mirrored_text(str(path), TOO_BIG)]
    caplog.clear()
    with caplog.at_level("WARNING", logger="pi_memory.index.mirror_watch"):
        assert sync_changed(conn, tmp_path) == {}  # said once per change of the file, not at every open
    assert caplog.messages == []
    _write(path, b"Uses pnpm\n\xc2\xa7\nThe staging port is 7002\n")  # trimmed: mirrored again at once
    stats = sync_changed(conn, tmp_path)[str(path)]
    assert (stats.added, stats.removed, stats.kept, stats.too_large) == (1, 1, 1, "")
    assert _contents(conn) == ["Uses pnpm", "The staging port is 7002"]
    conn.close()


@pytest.mark.parametrize("shape", ["entries", "one entry", "notes without a delimiter", "binary junk"])
def test_no_16_mib_shape_is_mirrored_and_the_other_stores_still_are(tmp_path, shape):
    digest = _write(tmp_path / "MEMORY.md", _sixteen_mib(shape))
    _write(tmp_path / "USER.md", b"User likes platypus\n")
    conn = open_index(tmp_path)
    stats = sync_markdown(conn, tmp_path)
    assert stats[str(tmp_path / "MEMORY.md")].too_large == TOO_BIG
    assert stats[str(tmp_path / "USER.md")].added == 1
    assert [r["content"] for r in list_memories(conn)] == ["User likes platypus"]
    assert _digest(tmp_path / "MEMORY.md") == digest
    conn.close()


@pytest.mark.parametrize(("raw", "added", "too_large"), [
    (b"a" * MAX_BYTES, 1, ""),
    (b"a" * (MAX_BYTES + 1), 0, "1,048,577 bytes, over the 1,048,576-byte bound"),
    (_entries(MAX_ENTRIES), 10_000, ""),
    (_entries(MAX_ENTRIES + 1), 0, "10,001 entries, over the 10,000-entry bound"),
    (_entries(MAX_ENTRIES + 1) + "§\nfact 0\n".encode(), 0, "10,001 entries, over the 10,000-entry bound"),
    (_entries(MAX_ENTRIES) + "§\nfact 0\n".encode(), 10_000, ""),  # "fact 0" twice counts once
])
def test_the_bounds_are_inclusive_and_count_distinct_entries(tmp_path, raw, added, too_large):
    digest = _write(tmp_path / "MEMORY.md", raw)
    conn = open_index(tmp_path)
    stats = sync_markdown(conn, tmp_path)[str(tmp_path / "MEMORY.md")]
    assert (stats.added, stats.too_large) == (added, too_large)
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == added
    assert _digest(tmp_path / "MEMORY.md") == digest
    conn.close()


def test_a_store_just_over_its_limit_is_mirrored_and_its_hand_edits_found(tmp_path):
    entry = "The release checklist says " + "step " * 593 + "then tag quokka"  # 3,007 chars, limit 2,200
    _write(tmp_path / "MEMORY.md", f"Uses pnpm\n§\n{entry}\n".encode())
    _write(tmp_path / "USER.md", ("Prefers tabs " * 120 + "wombat").encode())  # 1,566 chars, limit 1,375
    conn = open_index(tmp_path)
    stats = sync_changed(conn, tmp_path)
    assert [(Path(p).name, s.added, s.too_large) for p, s in stats.items()] == [
        ("MEMORY.md", 2, ""), ("USER.md", 1, ""), ("FAILURES.md", 0, "")]
    assert [h.content for h in memory_search(conn, "quokka", record_use=False).results] == [entry]
    assert len(memory_search(conn, "wombat", record_use=False).results) == 1
    conn.close()


def test_sync_markdown_and_status_say_it_with_the_limit(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    digest = _write(data / "MEMORY.md", b"foo " * (MAX_BYTES // 4) + b"x")  # one byte over (status is quicker)
    _write(data / "USER.md", b"User likes platypus\n")
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PI_MEMORY_DIR": str(data),
           "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
           "PYTHONPATH": str(Path(pi_memory.__file__).resolve().parents[1])}  # the code under test, from any cwd

    def run(*args: str) -> subprocess.CompletedProcess:
        out = subprocess.run([sys.executable, "-m", "pi_memory", *args], capture_output=True, text=True, env=env,
                             cwd=tmp_path, timeout=120)
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
        return out

    over = "1,048,577 bytes, over the 1,048,576-byte bound"
    synced = run("sync-markdown")
    assert synced.stdout.splitlines() == [not_mirrored_text(str(data / "MEMORY.md"), over),
                                          f"{data / 'USER.md'}: 1 entry in the index (1 added)."]
    as_json = json.loads(run("sync-markdown", "--json").stdout)
    assert as_json[str(data / "MEMORY.md")] == {"added": 0, "removed": 0, "kept": 0, "updated": 0,
                                                "too_large": over}
    assert as_json[str(data / "USER.md")] == {"added": 0, "removed": 0, "kept": 1, "updated": 0}
    status = run("status").stdout.splitlines()
    at = status.index("MEMORY.md: 1 entry, 47662% — 1,048,577/2,200 chars — OVER BUDGET")
    assert status[at + 2] == f"  {not_mirrored_text('MEMORY.md', over, 2200)}"
    assert not any("too large" in line for line in status[at + 3:])
    stores = json.loads(run("status", "--json").stdout)["stores"]
    assert (stores["memory"]["notMirrored"], stores["user"]["notMirrored"]) == (over, None)
    assert _digest(data / "MEMORY.md") == digest
