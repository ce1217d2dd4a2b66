"""Files and folders readable by their user only, with the standard library alone (the hooks' start-up path
imports this, and nothing heavier): a data folder and the hooks' state hold every memory and turn."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def make_private_folder(folder: Path) -> None:
    """Create ``folder`` and its missing parents readable by the user only (0700): a data folder holds every
    memory and (redacted) session turn. A folder that exists keeps its mode (the user chose it)."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for new in reversed(missing):
        try:
            new.mkdir(mode=0o700)
        except FileExistsError:  # another process made it first; a file of that name fails below as before
            if not new.is_dir():
                raise


def create_private_file(path: Path) -> bool:
    """Create ``path`` empty and 0600 when nothing (not even a dangling symbolic link) has that name; True when
    this call made it. An existing name is left exactly as it is: it may be another program's file."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
        return True
    except OSError:  # it exists, or a folder we may not write to: the open that follows says so in words
        return False


def tighten_private_file(path: Path) -> bool:
    """Make ``path`` readable by its user only when it is a regular file of this user that others may read; True
    when its mode was changed. Call it only for a file known to be pi-memory's (the search index once it opened
    as one, and its ``-wal`` / ``-shm``, which SQLite gives the index's mode). Anything else keeps its mode: a
    symbolic link (nor what it points at), a device, a pipe, a folder, another user's file."""
    return set_own_file_mode(path, lambda mode: mode & 0o700 if mode & 0o077 else None)


def set_own_file_mode(path: Path, new_mode) -> bool:
    """Give ``path`` the mode ``new_mode(current mode)`` (``None``: leave it) when it is a regular file of this
    user (``lstat``: a symbolic link, a device, a pipe or a folder is never changed); True when changed. The file
    is never opened for reading or writing: closing such a handle would drop the locks this process's SQLite
    connections hold on it."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return False
        mode = new_mode(stat.S_IMODE(st.st_mode))
        if mode is None or mode == stat.S_IMODE(st.st_mode):
            return False
        if os.chmod in os.supports_follow_symlinks:  # lchmod: a name swapped for a link since the lstat fails
            os.chmod(path, mode, follow_symlinks=False)
            return True
        if not hasattr(os, "O_PATH") or not os.path.isdir("/proc/self/fd"):
            return False  # no way to change exactly the file that was looked at: leave it
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW)  # an O_PATH handle holds and drops no lock
        try:
            now = os.fstat(fd)
            if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                return False
            os.chmod(f"/proc/self/fd/{fd}", mode)
            return True
        finally:
            os.close(fd)
    except OSError:  # gone, not ours to change: SQLite reports what matters when it opens it
        return False
