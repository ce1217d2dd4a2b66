"""Targets beyond memory/user: per-project memory keyed by the git root, and failure memories (issue #3 §3)."""

from __future__ import annotations

import subprocess

import pytest

from pi_memory.curated import MemoryStore, build_snapshot
from pi_memory.curated.store import failure_entry
from pi_memory.project import project_id, project_root


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "work" / "api"
    (root / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_project_store_is_keyed_by_repo_root_not_cwd(tmp_path, repo):
    data = tmp_path / "data"
    a = MemoryStore(data, project_root=project_root(repo / "src" / "deep"))
    assert a.add("project", "API tests need docker").success
    b = MemoryStore(data, project_root=project_root(repo))
    assert b.read("project").entries == ["API tests need docker"]
    assert a.path("project") == data / "projects" / f"api-{project_id(repo.resolve())}" / "MEMORY.md"


def test_same_named_repos_do_not_collide(tmp_path):
    data = tmp_path / "data"
    one, two = tmp_path / "a" / "api", tmp_path / "b" / "api"
    for r in (one, two):
        r.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(r)], check=True)
    MemoryStore(data, project_root=one).add("project", "first api")
    assert MemoryStore(data, project_root=two).read("project").entries == []


def test_failure_entries_and_snapshot_block(tmp_path, repo):
    s = MemoryStore(tmp_path, project_root=repo, memory_char_limit=1000)
    assert s.limit("failure") == 2000
    for i in range(7):
        assert s.add_failure(f"lesson {i}", "correction" if i % 2 else "failure", "why" if i == 6 else None).success
    assert s.entries("failure")[-1] == "[failure] lesson 6 — Failed: why"
    s.add("project", "runs on port 8080")
    snap = build_snapshot(s)
    assert "PROJECT MEMORY: api (notes about this repository)" in snap and "runs on port 8080" in snap
    assert "newest 5; 2 older in memory_search" in snap
    assert "lesson 1" not in snap and "lesson 2" in snap


def test_failure_entry_format():
    assert failure_entry(" x ", "insight") == "[insight] x"
    assert failure_entry("x", "failure", " timeout ") == "[failure] x — Failed: timeout"


def test_on_change_hook_sees_every_write_and_never_breaks_it(tmp_path):
    seen = []
    s = MemoryStore(tmp_path, on_change=lambda t, e: seen.append((t, e)))
    s.add("memory", "one")
    s.add("memory", "one")  # duplicate: no write, no call
    s.remove("memory", "one")
    assert seen == [("memory", ["one"]), ("memory", [])]

    def boom(t, e):
        raise RuntimeError("index down")

    s2 = MemoryStore(tmp_path, on_change=boom)
    assert s2.add("user", "still saved").success
    assert (tmp_path / "USER.md").read_text() == "still saved\n"
