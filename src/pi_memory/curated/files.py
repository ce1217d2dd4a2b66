"""File primitives for the curated stores: cross-process lock, atomic write, drift backups.

* Lock: ``filelock.FileLock`` on ``<file>.lock`` beside the store (the stores live in the data root), with a
  timeout; a file outside the data root (a project's memory block) is locked in a folder of the data root
  instead (``lock_dir``: ``<name>-<hash of its real path>.lock``), so nothing is left beside it. The lock
  guards every read-modify-write; readers take no lock because writers only ever publish whole files.
* Atomic write: temp file in the same directory -> write -> flush -> fsync -> ``os.replace`` -> fsync of the
  directory. A reader sees the old file or the new one, never a torn one. A symlinked store is written through
  its link (the link stays a link).
* Stale temp files: a writer killed between the temp file and the rename (SIGKILL, power loss) leaves
  ``.<name>.<8 random characters>.tmp`` beside the file. The next write of that file deletes those of its name
  whose last change is over :data:`STALE_TMP_S` old (:func:`remove_stale_temps`): a live writer changes its temp
  file while it writes and renames it right after its last ``fsync``, so one untouched for that long has no
  writer any more.
* Backups: ``<file>.bak.<unix-seconds>``; when a backup with identical bytes already exists it is reused, so a
  drifted file refused many times does not fill the folder with copies.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from pi_memory.private_files import make_private_folder
from pi_memory.storage import refuse_read_only_file, refuse_read_only_folder

STALE_TMP_S = 15 * 60  # a temp file of an atomic write untouched this long has no live writer (module docstring)


class StoreLockedError(RuntimeError):
    """Another process held the store's lock longer than the timeout."""

    def __init__(self, lock_path: Path, timeout: float):
        self.lock_path = lock_path
        self.timeout = timeout
        super().__init__(
            f"The memory file is locked by another process (lock file {lock_path}, waited {timeout:g} s). "
            "Another pi-memory writer is busy or stuck; retry in a moment. If no pi-memory process is running, "
            "the lock is free on the next try (filelock releases it when its holder exits)."
        )


def real_path(path: Path) -> Path:
    """Follow symlinks so writes land in the link's target; a loop raises ``OSError``."""
    return Path(os.path.realpath(path, strict=False)) if path.is_symlink() else path


def lock_file(path: Path, lock_dir: Path | None = None) -> Path:
    """The lock file of ``path``: ``<file>.lock`` beside the symlink-resolved file, or with ``lock_dir``
    ``<lock_dir>/<file name>-<first 16 hex digits of the SHA-256 of its real path>.lock`` (every link to one
    file, and every folder spelling of it, gives the same name)."""
    target = real_path(path)
    if lock_dir is None:
        return target.with_name(target.name + ".lock")
    digest = hashlib.sha256(os.fsencode(os.path.realpath(target))).hexdigest()[:16]
    return Path(lock_dir) / f"{target.name}-{digest}.lock"


@contextlib.contextmanager
def locked(path: Path, timeout: float, lock_dir: Path | None = None) -> Iterator[None]:
    """Hold the cross-process lock for ``path``; raises :class:`StoreLockedError` after ``timeout`` seconds.

    The lock sits beside the symlink-resolved file, so stores reaching one file through different links
    share one lock; with ``lock_dir``, in that folder (:func:`lock_file`).
    """
    lock_path = lock_file(path, lock_dir)
    if not lock_path.exists():
        refuse_read_only_folder(lock_path.parent)  # a folder without write bits gets no new file, even as root
    make_private_folder(lock_path.parent)
    lock = FileLock(lock_path, timeout=timeout)
    try:
        lock.acquire()
    except Timeout as exc:
        raise StoreLockedError(lock_path, timeout) from exc
    try:
        yield
    finally:
        lock.release()


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or ``None`` when it does not exist. Other ``OSError``s propagate."""
    try:
        return real_path(path).read_bytes()
    except FileNotFoundError:
        return None


def try_read_bytes(path: Path) -> bytes | OSError | None:
    """Like :func:`read_bytes`, but an unreadable file gives its ``OSError`` instead of raising."""
    try:
        return read_bytes(path)
    except OSError as exc:
        return exc


def atomic_write_text(path: Path, text: str, *, follow_links: bool = True) -> None:
    """Publish ``text`` (UTF-8) at ``path`` atomically and durably. ``follow_links=False``: ``path`` is taken as
    it is (the caller worked out and checked the real path): the rename replaces whatever is there, a link
    swapped in since the check included, and never writes through it."""
    target = real_path(path) if follow_links else path
    refuse_read_only_folder(target.parent)  # its temp file is a new file there
    make_private_folder(target.parent)
    refuse_read_only_file(target)  # no write bit for anyone: read-only on purpose (honoured even as root)
    remove_stale_temps(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileNotFoundError):
            if follow_links:
                shutil.copymode(target, tmp)
            elif stat.S_ISREG(mode := os.lstat(target).st_mode):  # a link's own mode is 0777: not copied
                os.chmod(tmp, stat.S_IMODE(mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


_TEMP_NAME = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is how :func:`atomic_write_text` names a temp file (``.<name>.<8 characters>.tmp``): half
    a file, never anything to read, copy or export."""
    return _TEMP_NAME.fullmatch(name) is not None


def remove_stale_temps(target: Path, older_than: float = STALE_TMP_S) -> list[Path]:
    """Delete the temp files earlier atomic writes of ``target`` left beside it (``.<name>.<8 characters>.tmp``,
    as :func:`atomic_write_text` names them), regular files only, last changed over ``older_than`` seconds ago;
    returns those deleted. Anything else (a link, a folder, another name, a recent one) is left alone."""
    pattern = re.compile(re.escape(f".{target.name}.") + r"[a-z0-9_]{8}\.tmp")
    cutoff = time.time() - older_than
    removed = []
    try:
        names = [e for e in os.scandir(target.parent) if pattern.fullmatch(e.name)]
    except OSError:
        return removed
    for entry in names:
        with contextlib.suppress(OSError):
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def backup(path: Path, raw: bytes) -> Path:
    """Save ``raw`` as ``<path>.bak.<unix-ts>`` (reusing an identical earlier backup); returns its path."""
    target = real_path(path)
    refuse_read_only_folder(target.parent)
    for existing in sorted(target.parent.glob(target.name + ".bak.*")):
        with contextlib.suppress(OSError):
            if existing.stat().st_size == len(raw) and existing.read_bytes() == raw:
                return existing
    stamp = int(time.time())
    candidate = target.with_name(f"{target.name}.bak.{stamp}")
    while candidate.exists():
        stamp += 1
        candidate = target.with_name(f"{target.name}.bak.{stamp}")
    fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(raw)
        fh.flush()
        os.fsync(fh.fileno())
    return candidate
