"""Which project a working directory belongs to.

A project is identified by its git repository root, not by a folder name (two repos both called ``api``
must not share memories; a peer keyed projects by basename and its users' projects collided):

* inside a repository, any subdirectory maps to the repository's top folder;
* a linked worktree (its ``.git`` is a FILE ``gitdir: <repo>/.git/worktrees/<name>``) maps to the main
  repository: the worktree's git dir holds a ``commondir`` file that points at the shared ``.git``, whose parent
  is the root. So every worktree of a repository shares one project;
* a submodule (``.git`` file without ``commondir``) is its own project, rooted at its folder;
* outside git, or for a directory that no longer exists, the directory itself.

Found by reading ``.git`` entries on disk (no ``git`` process, so it works without git installed and costs a
few ``stat`` calls). :func:`project_id` is a short hash of the resolved root path (stable, collision-free for
same-named repos); :func:`project_name` is the root's basename, for display only.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

ID_LENGTH = 12


def _read_gitfile(gitfile: Path) -> Path | None:
    """The git dir named by a ``.git`` file (``gitdir: <path>``), or ``None`` when it is not one."""
    try:
        text = gitfile.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    if not target.is_absolute():
        target = gitfile.parent / target
    return Path(os.path.normpath(target))


def _root_from_gitdir(folder: Path, gitdir: Path) -> Path:
    """The repository root for a ``.git`` file in ``folder`` pointing at ``gitdir``."""
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return folder  # a submodule or a plain gitfile: the folder is the repository's top
    common_dir = Path(common)
    if not common_dir.is_absolute():
        common_dir = gitdir / common_dir
    common_dir = Path(os.path.normpath(common_dir))
    return common_dir.parent if common_dir.name == ".git" else common_dir


def _project_root(cwd: str) -> str:
    start = Path(cwd)
    for folder in (start, *start.parents):
        git = folder / ".git"
        try:
            if git.is_dir():
                return str(folder)
            if git.is_file():
                gitdir = _read_gitfile(git)
                return str(_root_from_gitdir(folder, gitdir) if gitdir is not None else folder)
        except OSError:
            continue
    return cwd


def project_root(cwd: Path | str) -> Path:
    """The git repository root that ``cwd`` belongs to (see the module docstring), else ``cwd`` itself."""
    resolved = Path(os.path.expanduser(str(cwd))).resolve(strict=False)
    return Path(_project_root(str(resolved)))


def project_id(root: Path | str) -> str:
    """A short, stable id for a project root: the first 12 hex digits of SHA-256 of the resolved path."""
    resolved = Path(os.path.expanduser(str(root))).resolve(strict=False)
    return hashlib.sha256(str(resolved).encode("utf-8", "surrogatepass")).hexdigest()[:ID_LENGTH]


def project_folder(root: Path | str) -> str:
    """The folder of a project's stores under ``<data root>/projects/``: ``<name>-<id>`` (name made file-safe),
    e.g. ``api-3f9c0a1b2c3d``. The curated project store and the project's skills both live there."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", project_name(root)).strip("-") or "root"
    return f"{safe}-{project_id(root)}"


def project_name(root: Path | str) -> str:
    """The root's folder name, for display (``/`` for the file-system root)."""
    path = Path(root)
    return path.name or str(path)
