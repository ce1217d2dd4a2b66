"""Which files of a blocks folder are blocks: the key rule, symlinks that leave the folder, keys that differ
only by case. (A file whose frontmatter the safe loader refuses, :mod:`pi_memory.front_matter`, is skipped too:
:class:`Skipped` with ``refused``, found by the store as it reads the file.)

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
* **Hard links.** A block file with more than one name on disk (``st_nlink`` over 1, after following a link
  that stays in the folder) may be a file outside the folder under another name (``ln /etc/shadow notes.md``):
  it is skipped and reported like a link leading out, never read or written.
* **Windows device names.** ``CON``, ``PRN``, ``AUX``, ``NUL``, ``COM1``-``COM9`` and ``LPT1``-``LPT9`` (any case,
  with any extension: ``con.md`` too) name devices on Windows, where no file can have them as its name; a new
  block with such a key is refused (:func:`reserved_key`). A file of that name made elsewhere is still read.
* **Opening.** A write reads the block under its lock through :func:`open_block`: the real path is worked out
  once, checked against the folder and opened without following a link at its last step (``O_NOFOLLOW`` where
  the system has it; elsewhere a check right after the open), and the new text replaces that real path by a
  rename, which never writes through a link swapped in after the check.
* **Case.** ``notes``, ``Notes`` and ``NOTES`` are one file on macOS and Windows file systems, so a new key that
  equals an existing one apart from case is refused (:func:`case_twin`); existing files keep being read by
  their exact names.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

MAX_KEY_CHARS = 64
KEY_RULE = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_-]{{0,{MAX_KEY_CHARS - 1}}}")  # whole key: fullmatch (``match`` + ``$``
# let "a\n" in)
WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                             *(f"LPT{i}" for i in range(1, 10))})
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # absent on Windows: there the open is followed by a check


def valid_key(key: object) -> bool:
    return isinstance(key, str) and KEY_RULE.fullmatch(key) is not None


def key_error(shown: str) -> str:
    """Why a key is refused (``shown``: the key as quoted for a message, credentials redacted)."""
    return (f"{shown} is not a usable block key: use 1-64 ASCII letters (A-Z, a-z), digits, '-' or '_', starting "
            "with a letter or digit. The key is the block's file name, and other scripts do not survive every file "
            "system; pick an ASCII key (e.g. team-notes) and put the name in your language in the description.")


def reserved_key(key: str) -> bool:
    """Whether ``key`` is a Windows device name (``con``, ``Com1``, ``LPT9.notes``: the part before a dot)."""
    return key.split(".", 1)[0].upper() in WINDOWS_DEVICES


def reserved_error(key: str) -> str:
    """Why a Windows device name is refused as a key (``key`` passed :func:`valid_key`: ASCII, no quotes)."""
    return (f"'{key}' cannot be a block key: CON, PRN, AUX, NUL, COM1-COM9 and LPT1-LPT9 (in any case, with or "
            "without an extension) are device names on Windows, where no file can be called that, so the block "
            f"could not be read or written there. Nothing was created; pick another key (e.g. '{key}-notes').")


@dataclass(frozen=True)
class Skipped:
    """A block file (or a whole project folder: ``key`` ``None``) that is not read, and why, for a person."""

    scope: str
    path: Path
    target: Path  # where the link leads
    inside: Path  # the folder it had to stay in
    key: str | None = None
    links: int = 0  # a hard link: how many names the file has (``target``: the file, its other names unknown)
    alias: str | None = None  # a link to another block file of the same folder: that block's key
    refused: str = ""  # a frontmatter the safe loader refuses (YAML aliases, too long): why, for a person

    @property
    def code(self) -> str:
        """The refusal code a write or ``blocks show`` of it gets."""
        return "unreadable_frontmatter" if self.refused else "link_outside"

    @property
    def message(self) -> str:
        if self.refused:
            return (f"Block {self.key!r} ({self.scope}, {self.path}) is not read: {self.refused}. It goes into no "
                    "prompt; the other blocks are read as usual. Fix the file's frontmatter, or delete the file.")
        if self.alias:
            return (f"Block {self.key!r} ({self.scope}) is not read: {self.path} is a link to block {self.alias!r} in "
                    f"the same folder, so the same text would be in every prompt twice, under two names, and a "
                    f"change to {self.key!r} would change {self.alias!r}. Use {self.alias!r}; delete the link, or "
                    "replace it with a copy of the text if the two should differ.")
        if self.links:
            return (f"Block {self.key!r} ({self.scope}) is not read: {self.path} is a hard link (the file has "
                    f"{self.links} names on disk), so it may be a file outside the blocks folder {self.inside} under "
                    "another name. A block goes into every prompt, so it must be a file of its own in its folder; "
                    "nothing is read from or written to it. Replace it with a copy of its text (copy it to a new "
                    "file, delete this one, rename the copy), or delete it.")
        if self.key is None:
            return (f"The project's blocks folder {self.path} is not read: it is a link to {self.target}, outside "
                    f"the project {self.inside}. Project blocks must be files of the project; move the folder into "
                    "it, or use global blocks (pi-memory blocks create --scope global).")
        return (f"Block {self.key!r} ({self.scope}) is not read: {self.path} is a link to {self.target}, outside "
                f"the blocks folder {self.inside}. A block goes into every prompt, so it must be a file in its "
                "folder; nothing is read from or written through this link. Replace the link with the file's text, "
                "or delete it.")

    def to_dict(self) -> dict:
        data = {"key": self.key, "scope": self.scope, "file": str(self.path), "target": str(self.target),
                "message": self.message}
        if self.links:
            data["links"] = self.links
        if self.alias:
            data["alias"] = self.alias
        if self.refused:
            data["refused"] = self.refused
        return data


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
    """A block file whose real path lies outside its folder's real path, or that has other names on disk (a
    hard link), or that is a link to another block file of its folder (an alias: one text under two keys), else
    ``None``."""
    target, base = real(path), real(folder)
    if not within(target, base):
        return Skipped(scope, path, target, base, key=path.stem)
    if (target != real(path.parent) / path.name and target.parent == base and target.suffix == ".md"
            and valid_key(target.stem) and target.is_file()):
        return Skipped(scope, path, target, base, key=path.stem, alias=target.stem)
    try:
        info = os.stat(target)
    except OSError:  # missing (a dangling link inside the folder) or unreadable: the caller's own checks say so
        return None
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        return Skipped(scope, path, target, base, key=path.stem, links=info.st_nlink)
    return None


class LinkSwapped(OSError):
    """A block file became a link, or a hard link, between its check and its opening: nothing is read."""


def open_block(path: Path, folder: Path) -> tuple[Path, bytes | None]:
    """``(real path, bytes)`` of block file ``path`` read for a write, ``None`` bytes for a missing file. The
    real path is worked out once and opened without following a link at its last step; raises
    :class:`LinkSwapped` when it lies outside ``folder`` or is (now) a link or a hard link."""
    target = real(path)
    if not within(target, real(folder)):
        raise LinkSwapped(errno.ELOOP, "leads out of its folder", str(path))
    try:
        fd = os.open(target, os.O_RDONLY | NOFOLLOW | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return target, None
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(target):  # a link swapped in since real() read the path
            raise LinkSwapped(errno.ELOOP, "became a link", str(path)) from exc
        raise
    try:
        info = os.fstat(fd)
        if not NOFOLLOW and os.path.islink(target):
            raise LinkSwapped(errno.ELOOP, "became a link", str(path))
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            raise LinkSwapped(errno.EMLINK, "is a hard link", str(path))
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return target, fh.read()
    finally:
        os.close(fd)


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
