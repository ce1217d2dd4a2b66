"""Why a data folder cannot be used, in words for a person: read-only, no permission, full, missing, not a
folder, or locked by another process.

Every host reports storage failures the same way through :func:`storage_problem`: it reads an exception
(an ``OSError`` and its ``errno``, a ``sqlite3.OperationalError``, a ``filelock`` timeout, anywhere in the
exception's cause/context chain) and returns a :class:`StorageProblem` whose ``message`` says which folder,
what is wrong with it and what to do. SQLite does not say *why* it could not open or write a file ("unable to
open database file"), so for those errors :func:`probe_folder` tries what SQLite tried: it writes 64 KiB to a
temporary file in the folder (or in its nearest existing parent, for a folder not created yet) and reads the
``errno`` the system gives. Nothing it writes is left behind.

A folder whose mode gives no one write access (``chmod 0555``, ``chmod a-w``) is read-only on purpose, and is
treated so even when running as root, whom the kernel lets write there anyway: :func:`refuse_read_only_folder`
(called before every write that creates a file in a data folder: the curated stores' lock, atomic write and
backups, the index's open) raises :class:`ReadOnlyFolderError`, and :func:`probe_folder` reports it, so root
gets the refusal any other user gets instead of new files in a folder that was made read-only. The same rule
``curated/files.py`` applies to a file without write bits, and :func:`read_blocker` to a file without read bits.

A disk with less than :data:`MIN_FREE_BYTES` free is treated as full before anything is written
(:func:`write_blocker`, from ``statvfs``), so a write is refused up front rather than failing half-way.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from filelock import Timeout

Kind = str  # read_only | permission | disk_full | missing | not_a_folder | locked | unusable | unreadable

MIN_FREE_BYTES = 1024 * 1024  # below this much free space a data folder's disk counts as full (write_blocker)

ERRNO_KIND = {
    errno.EROFS: "read_only",
    errno.EACCES: "permission",
    errno.EPERM: "permission",
    errno.ENOSPC: "disk_full",
    errno.EDQUOT: "disk_full",
    errno.EFBIG: "disk_full",
    errno.ENOENT: "missing",
    errno.ENOTDIR: "not_a_folder",
    errno.EEXIST: "not_a_folder",  # creating the folder met a file of that name (mkdir(exist_ok=True) raises it)
}
_SQLITE_LOCKED = ("database is locked", "database table is locked", "database schema is locked")
_SQLITE_STORAGE = ("unable to open database file", "readonly database", "disk i/o error", "disk is full",
                   "database or disk is full", "no such file or directory", "read-only file system")
_OTHER_FOLDER = "or use another folder with --dir or $PI_MEMORY_DIR"


@dataclass(frozen=True)
class StorageProblem:
    """``kind`` (see :data:`Kind`), the data ``folder`` concerned, and ``message``: the whole sentence for a
    person (what is wrong, with which folder, what to do). ``notice``: for a folder opened for reading only
    (:func:`read_only_problem`), what a host says when it opens it (``message`` is what a write gets), and
    ``detail``, the words :func:`describe` was given (to say it again in another sentence), and ``file``, the file
    it names when the folder could be written but that file cannot (a ``0444`` index)."""

    kind: Kind
    folder: Path
    message: str
    notice: str = ""
    detail: str = ""
    file: Path | None = None  # the file of the folder that cannot be written, when the folder itself can be


class ReadOnlyFolderError(PermissionError):
    """A data folder (or the existing parent it would be created in) whose mode gives no one write access."""


def _existing(folder: Path) -> Path:
    """``folder``, or for one not created yet its nearest existing parent (where it would be created)."""
    existing = Path(folder)
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    return existing


def read_only_by_mode(folder: Path) -> str | None:
    """Why ``folder`` (or the parent it would be created in) is read-only by its mode, or ``None``."""
    existing = _existing(folder)
    try:
        mode = existing.stat().st_mode
    except OSError:
        return None
    if not existing.is_dir() or mode & 0o222:
        return None
    what = "its mode" if existing == Path(folder) else f"the mode of {existing}, where it would be created,"
    return (f"{what} {mode & 0o7777:04o} lets no one write there, and pi-memory honours that even when running "
            "as root")


class ReadOnlyFileError(PermissionError):
    """A file whose mode gives no one write access (``chmod a-w``): the user made it read-only on purpose, which
    pi-memory honours even when running as root (``errno`` EACCES, ``strerror`` says its mode)."""


def refuse_read_only_file(path: Path) -> None:
    """Raise :class:`ReadOnlyFileError` when ``path`` exists and its mode has no write bit."""
    try:
        mode = Path(path).stat().st_mode
    except OSError:
        return
    if not mode & 0o222:
        raise ReadOnlyFileError(errno.EACCES, f"its mode {mode & 0o7777:04o} lets no one write it, and pi-memory "
                                "honours that even when running as root", str(path))


def write_failure(exc: BaseException, path: Path, label: str = "data folder") -> StorageProblem | None:
    """The read-only refusal behind a failed write of file ``path``: a folder or file read-only by its mode
    (:class:`ReadOnlyFolderError`, :class:`ReadOnlyFileError`), no permission, a read-only mount, a full disk.
    ``message`` is :func:`describe`'s two sentences; ``None`` for any other error (the caller says it its way)."""
    if not isinstance(exc, OSError):
        return None
    folder, file, detail = Path(path).parent, None, ""
    if isinstance(exc, ReadOnlyFolderError):
        kind = "permission"
        folder = _existing(Path(exc.filename or folder))
        detail = read_only_by_mode(folder) or exc.strerror or ""
    elif isinstance(exc, ReadOnlyFileError):
        kind, file, detail = "permission", Path(exc.filename or path), exc.strerror or ""
    else:
        kind = ERRNO_KIND.get(exc.errno or 0, "")
        if kind not in ("read_only", "permission", "disk_full"):
            return None
    what, todo = describe(kind, folder, detail, label, file=file)
    return StorageProblem(kind, folder, f"{what} {todo}", detail=detail, file=file)


def refuse_read_only_folder(folder: Path) -> None:
    """Raise :class:`ReadOnlyFolderError` (``EACCES``) when ``folder`` is read-only by its mode (see the module
    docstring); a folder with any write bit, or one that cannot be examined, passes (the write then says)."""
    why = read_only_by_mode(folder)
    if why is not None:
        raise ReadOnlyFolderError(errno.EACCES, why, str(folder))


class ReadOnlyDataError(sqlite3.OperationalError):
    """A write refused because the data folder was opened for reading only (its search index:
    :func:`pi_memory.index.db.open_index`); ``problem`` says why and what to do. An ``OperationalError``, so
    code that records something on the side (usage counts, job outcomes) logs it as any failed write."""

    def __init__(self, problem: StorageProblem):
        super().__init__(problem.message)
        self.problem = problem


def write_blocker(folder: Path, files: Iterable[Path] = ()) -> tuple[Kind, str] | None:
    """What stops writes in ``folder`` (or in ``files`` there), found without writing anything: a mode that lets
    no one write (:func:`read_only_by_mode`), a file system mounted read-only, less than :data:`MIN_FREE_BYTES`
    free on its disk, no write permission for this user, a file in ``files`` without write bits or not writable
    by this user. ``None`` when none of these is seen (a disk that fills during a write is found by the write:
    :func:`probe_folder`)."""
    folder = Path(folder)
    existing = _existing(folder)
    why = read_only_by_mode(folder)
    if why is not None:
        return "permission", why
    try:
        fs = os.statvfs(existing)
    except OSError:
        return None
    if fs.f_flag & os.ST_RDONLY:
        return "read_only", ""
    if fs.f_bavail * fs.f_frsize < MIN_FREE_BYTES:
        return "disk_full", (f"{_size(fs.f_bavail * fs.f_frsize)} free; pi-memory writes nothing there with less "
                             f"than {_size(MIN_FREE_BYTES)} free")
    if existing.is_dir() and not os.access(existing, os.W_OK):
        return "permission", ""
    for path in files:
        try:
            mode = Path(path).stat().st_mode
        except OSError:
            continue
        if not mode & 0o222:
            return "permission", (f"the mode of {path} is {mode & 0o7777:04o}, which lets no one write it, and "
                                  "pi-memory honours that even when running as root")
        if not os.access(path, os.W_OK):
            return "permission", f"{path} is not writable by this user"
    return None


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MiB" if n >= 1024 * 1024 else f"{n // 1024} KiB"


def read_blocker(path: Path) -> str | None:
    """Why ``path`` (an existing file) cannot be read, or ``None``: a mode that lets no one read it (honoured even
    as root, as :func:`read_only_by_mode` is), or no read permission for this user."""
    try:
        mode = Path(path).stat().st_mode
    except OSError:
        return None
    if not mode & 0o444:
        return "its mode lets no one read it, and pi-memory honours that even when running as root"
    if not os.access(path, os.R_OK):
        return "this user may not read it"
    return None


class UnreadableFileError(PermissionError):
    """A file of the data folder that exists but cannot be read; ``problem`` (kind ``unreadable``) names the file,
    its owner and mode, and what to do."""

    def __init__(self, problem: StorageProblem):
        super().__init__(problem.message)
        self.problem = problem


def unreadable_problem(path: Path, folder: Path, why: str) -> StorageProblem:
    """The refusal to use ``path`` (a file of data folder ``folder``) that cannot be read (``why``)."""
    import pwd

    st = Path(path).stat()
    try:
        owner = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        owner = f"user id {st.st_uid}"
    try:
        user = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        user = f"user id {os.geteuid()}"
    mode = f"{st.st_mode & 0o7777:04o}"
    fix = f"`chmod u+r {path}`" if owner == user else f"`chmod a+r {path}` as {owner}, or `sudo chown {user} {path}`"
    said = (f"The file {path} cannot be read by this user ({user}): it belongs to {owner} and its mode is {mode} "
            f"({why}).")
    todo = f"Give your user read access to it (for example {fix}), or point --dir or $PI_MEMORY_DIR at another folder."
    return StorageProblem("unreadable", folder, f"{said} Nothing was read or changed. {todo}",
                          notice=f"{said} pi-memory refuses searches, recall and every write until this is fixed. {todo}")


def read_only_problem(kind: Kind, folder: Path, detail: str = "", file: Path | None = None) -> StorageProblem:
    """The refusal of a write into ``folder`` (or into its ``file`` that cannot be written) once it was opened for
    reading only: what is wrong, that nothing was saved, what to do."""
    what, todo = describe(kind, folder, detail, file=file)
    return StorageProblem(kind, folder, what + " pi-memory opened it for reading only, so nothing was saved. " + todo,
                          notice=what + " pi-memory opened it for reading only: searches and recall answer from what "
                          "is there; indexing, capture and every other write are skipped. " + todo, detail=detail,
                          file=file)


INDEX_FILE = "index.sqlite3"  # the search index of a data folder (pi_memory.index names it too)


def data_write_problem(folder: Path) -> StorageProblem | None:
    """The refusal every write into data folder ``folder`` gets now (:func:`read_only_problem`), found without
    writing, or ``None`` when nothing stops a write. The one check the stores beside the curated ones are given
    (memory blocks, skills, ``STANDING.md``): a folder opened for reading only has its subfolders refused too,
    though their own modes (or root) would let a write through. That is a folder :func:`write_blocker` stops, or
    one whose search index (``index.sqlite3``) cannot be written (a ``0444`` file in a writable folder): a host
    opens such a folder for reading only and says every write is skipped, so a block, skill or pin is refused too,
    naming the index file to ``chmod u+w`` (before, they were written while the curated stores were refused). A
    store's own file or folder that cannot be written is its write's own refusal (:func:`write_failure`)."""
    blocked = write_blocker(folder)
    if blocked is not None:
        return read_only_problem(blocked[0], Path(folder), blocked[1])
    index = Path(folder) / INDEX_FILE
    if index.is_file() and write_blocker(folder, [index]) is not None:
        mode = index.stat().st_mode & 0o7777
        why = (f"its mode {mode:04o} lets no one write it, and pi-memory honours that even when running as root"
               if not mode & 0o222 else "this user may not write it")
        why += "; while the index cannot be written, the whole data folder is open for reading only"
        return read_only_problem("permission", Path(folder), why, file=index)
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def probe_folder(folder: Path) -> tuple[Kind, str] | None:
    """What stops a write in ``folder`` (``(kind, detail)``), found by trying one; ``None`` when a write works.

    A folder that does not exist yet is judged by its nearest existing parent (where it would be created)."""
    folder = Path(folder)
    existing = _existing(folder)
    if not existing.is_dir():
        return "not_a_folder", f"{existing} is a file, not a folder"
    why = read_only_by_mode(folder)
    if why is not None:
        return "permission", why
    try:
        with tempfile.TemporaryFile(dir=existing, prefix=".pi-memory-probe-") as handle:
            handle.write(b"\0" * 65536)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        kind = ERRNO_KIND.get(exc.errno or 0, "unusable")
        return kind, ("" if kind != "unusable" else exc.strerror or str(exc))
    return None


def describe(kind: Kind, folder: Path, detail: str = "", label: str = "data folder",
             file: Path | None = None) -> tuple[str, str]:
    """``(what, todo)`` for a person about ``folder`` having problem ``kind``: what is wrong (``detail``: where
    or the system's words) and what to do, as two sentences; the caller says what was (not) done between them.
    ``label`` names the folder's role ("data folder"; "folder" for another one, such as pi's agent folder);
    ``file``: the file that cannot be written when the folder could be (its permission is the one to change)."""
    what, todo = _WORDS.get("permission_file" if file is not None and kind == "permission" else kind,
                            _WORDS["unusable"])
    fields = {"label": label, "folder": folder, "why": f" ({detail})" if detail else "", "other": _OTHER_FOLDER,
              "file": file}
    return what.format(**fields), todo.format(**fields)


_WORDS = {  # kind -> (what is wrong, what to do)
    "read_only": ("The {label} {folder} is on a read-only file system{why}, so pi-memory cannot write there.",
                  "Remount it read-write, {other}."),
    "permission": ("You have no permission to write in the {label} {folder}{why}.",
                   "Give your user write access to it (for example `chmod u+w {folder}`), {other}."),
    "permission_file": ("You have no permission to write the file {file} in the {label} {folder}{why}.",
                        "Give your user write access to it (for example `chmod u+w {file}`), {other}."),
    "disk_full": ("The disk holding the {label} {folder} is full{why}.",
                  "Free some space on that disk, {other}, then run it again."),
    "missing": ("The {label} {folder} does not exist and could not be created{why}.",
                "Create it (`mkdir -p {folder}`), {other}."),
    "not_a_folder": ("The {label} {folder} cannot be used{why}.",
                     "Point --dir, $PI_MEMORY_DIR or the dataDir setting at a folder."),
    "locked": ("The search index in {folder} is locked by another process (a pi session, `pi-memory mcp` or an "
               "indexing run){why}.", "Wait for that process to finish, then run it again."),
    "unusable": ("pi-memory cannot use the {label} {folder}{why}.",
                 "Check the folder and the files in it (index.sqlite3, MEMORY.md), {other}."),
}


def _problem(kind: Kind, folder: Path, detail: str, label: str = "data folder") -> StorageProblem:
    what, todo = describe(kind, folder, detail, label)
    done = " The command stopped; what it had already saved is kept. " if kind == "disk_full" else \
        " The command stopped. "
    return StorageProblem(kind, folder, what + done + todo)


def _related(path: Path, folder: Path | None) -> bool:
    """Whether ``path`` is ``folder``, inside it, or one of the parents created with it."""
    if folder is None:
        return False
    folder = Path(folder)
    return path == folder or folder in path.parents or path in folder.parents


def folder_problem(folder: Path) -> StorageProblem | None:
    """The problem :func:`probe_folder` finds in ``folder``, as a :class:`StorageProblem`; ``None`` when a write
    works (for a command that will serve for a long time and should refuse at once, not at the first write)."""
    found = probe_folder(folder)
    return _problem(found[0], folder, found[1]) if found else None


def is_locked(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite saying another process holds the database (what :func:`storage_problem` reads
    as ``locked``)."""
    return isinstance(exc, sqlite3.OperationalError) and any(s in str(exc).lower() for s in _SQLITE_LOCKED)


def storage_problem(exc: BaseException, folder: Path | None) -> StorageProblem | None:
    """The storage problem behind ``exc`` for data folder ``folder`` (``None`` when ``exc`` is not one)."""
    for item in _chain(exc):
        if isinstance(getattr(item, "problem", None), StorageProblem):  # ReadOnlyDataError, UnreadableFileError...
            return item.problem
        if isinstance(item, Timeout):
            where = folder or Path(item.lock_file).parent
            return _problem("locked", where, f"lock file {item.lock_file} still held after waiting")
        if isinstance(item, sqlite3.OperationalError):
            text = str(item).lower()
            if any(s in text for s in _SQLITE_LOCKED):
                where = folder or Path.cwd()
                return _problem("locked", where, f"SQLite: {item}")
            if any(s in text for s in _SQLITE_STORAGE) and folder is not None:
                found = probe_folder(folder)
                kind, detail = found if found else ("unusable", f"SQLite: {item}")
                return _problem(kind, folder, detail)
        if isinstance(item, ReadOnlyFolderError):
            where = folder if folder is not None and _related(Path(item.filename), folder) else Path(item.filename)
            return _problem("permission", where, item.strerror,
                            "data folder" if where == folder else "folder")
        if isinstance(item, OSError) and item.errno in ERRNO_KIND:
            kind = ERRNO_KIND[item.errno]
            where, label = folder, "data folder"
            if item.filename and not _related(Path(item.filename), folder):
                where, label = Path(item.filename).parent, "folder"  # outside the data root: pi's agent folder...
            if where is None:
                where = Path.cwd()
            if (kind == "missing" and where.is_dir()) or (item.errno == errno.EEXIST and where.is_dir()):
                continue  # a file inside an existing folder vanished, or a name was taken: not a folder problem
            return _problem(kind, where, f"at {item.filename}" if item.filename else "", label)
    return None
