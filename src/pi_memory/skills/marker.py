"""The ``.pi-memory-export`` file that marks a skill folder in a host's skill folder as our exported copy.

Its first line is the skill's id (``global:deploy-staging``), its second the folder it was copied from; copies
made before the second line existed have the id only. A folder holding this file is ours to refresh or remove;
any other folder there is the user's and is never touched (:mod:`pi_memory.skills.export`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

MARKER = ".pi-memory-export"


@dataclass(frozen=True)
class Marked:
    """What a marker says: the skill's id and, when written by this version, the folder it was copied from."""

    skill_id: str
    source: Path | None


def read(folder: Path) -> Marked | None:
    """The marker of ``folder`` (a folder, not a link), or ``None`` when it has none."""
    if folder.is_symlink():
        return None
    with contextlib.suppress(OSError, UnicodeDecodeError):
        marker = folder / MARKER
        if marker.is_file():
            lines = marker.read_text(encoding="utf-8").splitlines()
            if lines and lines[0].strip():
                source = Path(lines[1].strip()) if len(lines) > 1 and lines[1].strip() else None
                return Marked(lines[0].strip(), source)
    return None


def write(folder: Path, skill_id: str, source: Path) -> None:
    (folder / MARKER).write_text(f"{skill_id}\n{source}\n", encoding="utf-8")


def within(path: Path, roots: list[Path]) -> bool:
    """Whether ``path`` is one of ``roots`` or inside one."""
    return any(path == r or r in path.parents for r in roots)
