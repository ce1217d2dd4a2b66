"""A writer killed between its temp file and the rename leaves ``.<name>.<8 characters>.tmp`` beside the file.
The next write of that file deletes those of its name last changed over ``STALE_TMP_S`` (15 minutes) ago, and
nothing else: a recent one (a live writer may be using it), another file's, another name, a link, or anything on a
folder opened for reading only."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from pi_memory.curated.files import STALE_TMP_S, atomic_write_text  # noqa: E402
from read_only_folder import own_agent, root_read_only, seed_every_store, tree_state  # noqa: E402,F401


def aged(path: Path, seconds: float, text: str = "half a write") -> Path:
    path.write_text(text)
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def test_the_window_is_fifteen_minutes():
    assert STALE_TMP_S == 900


def test_a_write_deletes_only_its_own_stale_temp_files(tmp_path):
    target = tmp_path / "MEMORY.md"
    target.write_text("old\n")
    stale = aged(tmp_path / ".MEMORY.md.k3x_9a0q.tmp", STALE_TMP_S + 60)
    fresh = aged(tmp_path / ".MEMORY.md.p1l2m3n4.tmp", STALE_TMP_S - 60)
    other = aged(tmp_path / ".USER.md.k3x_9a0q.tmp", STALE_TMP_S + 60)
    unlike = [aged(tmp_path / name, STALE_TMP_S + 60) for name in
              (".MEMORY.md.short.tmp", ".MEMORY.md.k3x_9a0q.tmp.bak", "MEMORY.md.k3x_9a0q.tmp")]
    (tmp_path / "elsewhere").write_text("not a temp file")
    link = tmp_path / ".MEMORY.md.zzzzzzzz.tmp"
    link.symlink_to(tmp_path / "elsewhere")
    os.utime(link, (time.time() - STALE_TMP_S - 60,) * 2, follow_symlinks=False)

    atomic_write_text(target, "new\n")

    assert target.read_text() == "new\n"
    assert not stale.exists()
    assert all(p.exists() for p in [fresh, other, *unlike]) and link.is_symlink()
    assert (tmp_path / "elsewhere").read_text() == "not a temp file"


@pytest.mark.usefixtures("own_agent")
def test_every_store_cleans_its_file_at_its_next_write(tmp_path):
    from pi_memory.runtime import open_memory
    from pi_memory.standing import StandingStore

    data = tmp_path / "data"
    seed_every_store(data)
    left = [aged(data / ".MEMORY.md.aaaaaaaa.tmp", STALE_TMP_S + 5),
            aged(data / "blocks" / ".agent.md.bbbbbbbb.tmp", STALE_TMP_S + 5),
            aged(data / ".STANDING.md.cccccccc.tmp", STALE_TMP_S + 5),
            aged(data / "skills" / "evil" / ".SKILL.md.dddddddd.tmp", STALE_TMP_S + 5)]
    memory = open_memory(override_dir=data)
    try:
        assert memory.store.add("memory", "the deploy port is 8443").success
        assert memory.blocks().update("agent", "writes short commits").success
        assert StandingStore.in_data_dir(data).add("always run the tests").success
        assert memory.skills().update("global:evil", description="Deploys the staging server")["success"]
    finally:
        memory.close()
    assert [p.exists() for p in left] == [False] * 4


@pytest.mark.usefixtures("own_agent")
def test_a_read_only_folder_keeps_its_stale_temp_files(tmp_path):
    from pi_memory.runtime import open_memory

    data = tmp_path / "data"
    seed_every_store(data)
    aged(data / ".MEMORY.md.aaaaaaaa.tmp", STALE_TMP_S + 5)
    aged(data / "blocks" / ".agent.md.bbbbbbbb.tmp", STALE_TMP_S + 5)
    root_read_only(data)
    try:
        before = tree_state(data)
        memory = open_memory(override_dir=data)
        try:
            assert not memory.store.add("memory", "the deploy port is 8443").success
            assert not memory.blocks().update("agent", "writes short commits").success
        finally:
            memory.close()
        assert tree_state(data) == before
    finally:
        data.chmod(0o755)
