"""Files and folders readable by their user only, with the standard library alone (the hooks' start-up path
imports this, and nothing heavier): a data folder and the hooks' state hold every memory and turn."""

from __future__ import annotations

import os
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


def make_private_file(path: Path) -> None:
    """``path`` created empty 0600 when missing, or made 0600 when it is this user's file and others may read
    it (the search index, which SQLite's WAL and shared-memory files copy their mode from)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        return
    except FileExistsError:
        pass
    except OSError:  # a folder we may not write to: the open that follows says so in words
        return
    try:
        st = path.stat()
        if st.st_uid == os.getuid() and st.st_mode & 0o077:
            os.chmod(path, st.st_mode & 0o700)
    except OSError:  # not ours to change, or gone: SQLite reports what matters when it opens it
        pass
