"""Project identity: the git repository root (worktrees share it, subdirectories map to it), else the cwd."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from pi_memory.project import project_id, project_name, project_root

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main", *args],
        cwd=cwd, check=True, capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "api"
    root.mkdir(parents=True)
    git(root, "init")
    git(root, "commit", "--allow-empty", "-m", "init")
    return root.resolve()


def test_outside_git_the_cwd_is_the_project(tmp_path):
    folder = tmp_path / "plain" / "folder"
    folder.mkdir(parents=True)
    assert project_root(folder) == folder.resolve()


def test_missing_directory_maps_to_itself(tmp_path):
    gone = tmp_path / "was" / "here"
    assert project_root(gone) == gone.resolve()


@needs_git
def test_repo_root_and_subdirectory_map_to_the_root(repo):
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    assert project_root(repo) == repo
    assert project_root(sub) == repo
    assert project_id(project_root(sub)) == project_id(repo)


@needs_git
def test_worktree_shares_the_main_repository(repo, tmp_path):
    wt = tmp_path / "elsewhere" / "api-feature"
    git(repo, "worktree", "add", "-b", "feature", str(wt))
    assert (wt / ".git").is_file()
    (wt / "docs").mkdir()
    assert project_root(wt) == repo
    assert project_root(wt / "docs") == repo
    assert project_id(project_root(wt)) == project_id(repo)
    assert project_name(project_root(wt)) == "api"


@needs_git
def test_same_named_repositories_get_different_ids(tmp_path):
    a = tmp_path / "one" / "api"
    b = tmp_path / "two" / "api"
    for root in (a, b):
        root.mkdir(parents=True)
        git(root, "init")
    assert project_name(project_root(a)) == project_name(project_root(b)) == "api"
    assert project_id(project_root(a)) != project_id(project_root(b))


@needs_git
def test_submodule_style_gitfile_without_commondir_is_its_own_project(tmp_path):
    outer = tmp_path / "outer"
    inner = outer / "vendor" / "lib"
    inner.mkdir(parents=True)
    gitdir = outer / ".git" / "modules" / "lib"
    gitdir.mkdir(parents=True)
    (inner / ".git").write_text(f"gitdir: {Path('../../.git/modules/lib')}\n", encoding="utf-8")
    (inner / "src").mkdir()
    assert project_root(inner / "src") == inner.resolve()
    assert project_root(inner) == inner.resolve()


def test_project_id_is_a_short_hash_of_the_resolved_path(tmp_path):
    root = tmp_path / "x"
    root.mkdir()
    expected = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:12]
    assert project_id(root) == expected
    assert project_id(str(root) + "/") == expected
    assert project_id(root / "sub" / "..") == expected
    link = tmp_path / "link"
    link.symlink_to(root)
    assert project_id(link) == expected


def test_project_name_is_the_basename():
    assert project_name(Path("/home/u/code/api")) == "api"
    assert project_name(Path("/")) == "/"
