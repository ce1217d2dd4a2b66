"""Which files of a blocks folder are blocks: the key rule, symlinks that leave the folder, keys that differ
only by case.

* **Keys** are ASCII: 1-64 letters ``A-Z a-z``, digits, ``-`` or ``_``, starting with a letter or digit
  (:func:`valid_key`). A key is the block's file name and its heading in every prompt, and the model types it
  in ``updateMemory``: a non-ASCII file name can change its bytes on the way (macOS stores some names
  decomposed, so ``café`` typed and ``café`` listed differ), and case folding of other scripts differs between
  file systems. :func:`key_error` says so in words, and where to put a name in another script (the
  description).
* **Links.** A block file, or the project's folder itself, may be a symlink. A block is read and written only
  when its real path (every link followed) lies inside its folder's real path, and, for the project, that folder
  inside the project: a link inside the folder (``team.md -> shared/team.md``) is fine; a link to any other file
  (``/etc/passwd``, a secrets file) is skipped and reported to a person (:class:`Skipped`), never read into a
  prompt, and no write goes through it. For the global folder, the folder's own location is the user's choice
  (a data root on another disk); its files must still lie inside it.
* **Case.** ``notes``, ``Notes`` and ``NOTES`` are one file on macOS and Windows file systems, so a new key that
  equals an existing one apart from case is refused (:func:`case_twin`); existing files keep being read by
  their exact names.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

KEY_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # whole key: fullmatch (``match`` + ``$`` let "a\n" in)


def valid_key(key: object) -> bool:
    return isinstance(key, str) and KEY_RULE.fullmatch(key) is not None


def key_error(shown: str) -> str:
    """Why a key is refused (``shown``: the key as quoted for a message, credentials redacted)."""
    return (f"{shown} is not a usable block key: use 1-64 ASCII letters (A-Z, a-z), digits, '-' or '_', starting "
            "with a letter or digit. The key is the block's file name, and other scripts do not survive every file "
            "system; pick an ASCII key (e.g. team-notes) and put the name in your language in the description.")


@dataclass(frozen=True)
class Skipped:
    """A block file (or a whole project folder: ``key`` ``None``) that is not read, and why, for a person."""

    scope: str
    path: Path
    target: Path  # where the link leads
    inside: Path  # the folder it had to stay in
    key: str | None = None

    @property
    def message(self) -> str:
        if self.key is None:
            return (f"The project's blocks folder {self.path} is not read: it is a link to {self.target}, outside "
                    f"the project {self.inside}. Project blocks must be files of the project; move the folder into "
                    "it, or use global blocks (pi-memory blocks create --scope global).")
        return (f"Block {self.key!r} ({self.scope}) is not read: {self.path} is a link to {self.target}, outside "
                f"the blocks folder {self.inside}. A block goes into every prompt, so it must be a file in its "
                "folder; nothing is read from or written through this link. Replace the link with the file's text, "
                "or delete it.")

    def to_dict(self) -> dict:
        return {"key": self.key, "scope": self.scope, "file": str(self.path), "target": str(self.target),
                "message": self.message}


def real(path: Path) -> Path:
    """``path`` with every link followed (a link loop or a missing part: as far as it resolves)."""
    return Path(os.path.realpath(path))


def within(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def folder_escape(scope: str, folder: Path, root: Path | None) -> Skipped | None:
    """A project folder that leads outside the project (``root``), else ``None`` (the global folder may be
    anywhere)."""
    if scope != "project" or root is None:
        return None
    target, base = real(folder), real(root)
    return None if within(target, base) else Skipped(scope, folder, target, base)


def file_escape(scope: str, path: Path, folder: Path) -> Skipped | None:
    """A block file whose real path lies outside its folder's real path, else ``None``."""
    target, base = real(path), real(folder)
    return None if within(target, base) else Skipped(scope, path, target, base, key=path.stem)


def case_twin(key: str, keys: list[str]) -> str | None:
    """The first of ``keys`` equal to ``key`` apart from case but not the same, else ``None``."""
    folded = key.lower()
    return next((k for k in keys if k != key and k.lower() == folded), None)


def md_names(folder: Path) -> list[str]:
    """The keys of every ``*.md`` entry of ``folder`` (files, links, anything), sorted; none for no folder."""
    try:
        return sorted(p.stem for p in folder.glob("*.md"))
    except OSError:
        return []
