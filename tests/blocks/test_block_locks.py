"""Where a memory block's lock file goes (a fresh tester's finding): `blocks create conventions --scope project`
left `.pi/memory-blocks/conventions.md.lock` in the user's repository, an untracked file in `git status`, and
global blocks got `*.md.lock` files beside them. Every block's lock now lives in `<data root>/locks/`, named by
the block's file name and a hash of its real path, and still keeps two writers apart."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest
from filelock import FileLock

from pi_memory.blocks import BlockStore


@pytest.fixture
def store(tmp_path):
    project = tmp_path / "repo"
    project.mkdir()
    return BlockStore(tmp_path / "data" / "blocks", project, project_trusted=True, lock_timeout=0.2)


def files_under(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def expected_lock(tmp_path, path) -> str:
    digest = hashlib.sha256(os.fsencode(os.path.realpath(path))).hexdigest()[:16]
    return f"locks/{path.name}-{digest}.lock"


def test_project_and_global_blocks_leave_no_lock_file_beside_them(store, tmp_path):
    assert store.create("conventions", "How we write code", scope="project").success
    assert store.update("conventions", "Tabs, not spaces.").success
    assert store.create("infra", "Servers", scope="global").success
    assert store.update("infra", "Staging DB is db-staging:5432.").success
    assert files_under(tmp_path / "repo") == [".pi/memory-blocks/conventions.md"]
    project_block = tmp_path / "repo" / ".pi" / "memory-blocks" / "conventions.md"
    global_block = tmp_path / "data" / "blocks" / "infra.md"
    assert files_under(tmp_path / "data") == sorted(["blocks/infra.md", expected_lock(tmp_path, project_block),
                                                     expected_lock(tmp_path, global_block)])


def test_a_held_lock_still_keeps_a_second_writer_out(store, tmp_path):
    from pi_memory.curated.files import lock_file

    assert store.create("conventions", scope="project").success
    path = tmp_path / "repo" / ".pi" / "memory-blocks" / "conventions.md"
    lock = tmp_path / "data" / "locks" / f"conventions.md-{expected_lock(tmp_path, path).split('-')[-1]}"
    assert lock_file(path, store.lock_dir) == lock
    with FileLock(str(lock)):  # another process's writer, as the shell's `flock` would hold it
        result = store.update("conventions", "Tabs.")
    assert (result.success, result.code) == (False, "locked")
    assert str(lock) in result.error
    assert store.update("conventions", "Tabs.").success  # free again


def test_a_block_reached_through_a_symlink_shares_the_lock_of_its_target(tmp_path):
    """A link that stays inside the blocks folder (one leaving it is skipped: test_block_links.py)."""
    from pi_memory.curated.files import lock_file

    real = tmp_path / "data" / "blocks" / "shared" / "team.md"
    real.parent.mkdir(parents=True)
    real.write_text("---\ndescription: Team\n---\n\nAna.\n")
    (tmp_path / "data" / "blocks" / "team.md").symlink_to(real)
    store = BlockStore(tmp_path / "data" / "blocks")
    assert lock_file(tmp_path / "data" / "blocks" / "team.md", store.lock_dir) == lock_file(real, store.lock_dir)
    assert store.update("team", "Bo.").success
    assert real.read_text() == "---\ndescription: Team\n---\n\nAna.\nBo.\n"
    assert (tmp_path / "data" / "blocks" / "team.md").is_symlink()
    assert files_under(real.parent) == ["team.md"]


def test_the_cli_leaves_only_the_block_in_git_status(tmp_path):
    """The tester's steps: trust the repository, create a project block, look at `git status`."""
    repo = tmp_path / "r"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PI_MEMORY_DIR": str(tmp_path / "home" / ".pi-memory"),
           "PI_CODING_AGENT_DIR": str(tmp_path / "home" / "agent")}
    for args in (["trust", "."], ["blocks", "create", "conventions", "--scope", "project"],
                 ["blocks", "create", "infra"]):
        done = subprocess.run([sys.executable, "-m", "pi_memory", *args], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    status = subprocess.run(["git", "status", "--short", "-uall"], cwd=repo, capture_output=True, text=True)
    assert status.stdout == "?? .pi/memory-blocks/conventions.md\n"
    assert not list((tmp_path / "home" / ".pi-memory" / "blocks").glob("*.lock"))
