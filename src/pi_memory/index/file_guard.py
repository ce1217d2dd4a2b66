"""What the index file and its data folder allow, asked before the index is opened and before each write.

* :func:`write_problem`: why nothing may be written in the data folder now (:func:`pi_memory.storage.write_blocker`
  over the folder and the index files: a mode or mount that is read-only, no permission, a disk with too little
  free space), as the refusal a write gets. :func:`pi_memory.index.db.open_index` asks it to choose a read-only
  open; :func:`pi_memory.index.read_only.read_only` asks it again, before each write, of a connection opened for
  writing (an :class:`IndexConnection`), since a folder can turn read-only after the open (``chmod``, a
  remount, a disk filling up): the write is then refused, and background work skipped, as on a folder found
  read-only at open.
* :func:`leftovers` / :func:`release_leftovers`: ``-wal`` / ``-shm`` files without write bits beside a writable
  pi-memory index (made by a read-only connection while the index was ``0444``) do not block writes once the
  index is writable again; the next open gives them the index's mode.
* :func:`refuse_unreadable`: an index file (or its ``-wal`` / ``-shm``) that exists but cannot be read by this
  user is refused with its owner and mode (:class:`pi_memory.storage.UnreadableFileError`, kind ``unreadable``).
* :func:`is_empty`: a 0-byte index file is no index (SQLite makes a fresh one in it; a read-only folder answers
  from an empty index in memory). One found empty long after it was made is repaired (:func:`.db._emptied`).
* :func:`refuse_not_sqlite` and :func:`refuse_foreign`: a file that is not a pi-memory index, bytes without
  SQLite's header (asked when SQLite finds the file damaged, never before: :func:`refuse_not_sqlite`) or an
  SQLite database of another program (tables, but no ``schema_migrations(name, applied_at)``, the table
  pi-memory makes before any other), is refused (:class:`NotAnIndexError`, kind ``not_an_index``) and left
  exactly as it is: it may be someone else's file that ``--dir`` pointed at. A damaged pi-memory index (SQLite's
  header, damage further on) is still set aside and rebuilt (:mod:`.db`).
* :func:`refuse_not_a_file`: a name SQLite cannot open as a database file (a folder, a named pipe, a device, a
  symbolic link to nothing or to one of these) is refused up front (:class:`NotAnIndexError`, kind
  ``not_a_file``), before any write, so a curated write is not saved to Markdown and then left unmirrored.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterable
from pathlib import Path

from pi_memory.storage import (
    StorageProblem,
    UnreadableFileError,
    read_blocker,
    read_only_problem,
    unreadable_problem,
    write_blocker,
)

SQLITE_HEADER = b"SQLite format 3\x00"
_OURS = {"name", "applied_at"}  # the columns of pi-memory's schema_migrations (Rails' has "version")


class IndexConnection(sqlite3.Connection):
    """A connection to ``<data_dir>/index.sqlite3`` opened for writing; ``data_dir`` is asked again before each
    write (:func:`write_problem`)."""

    data_dir: Path


class NotAnIndexError(RuntimeError):
    """The index file is not a pi-memory index (module docstring); ``problem`` says which file and what to do."""

    def __init__(self, problem: StorageProblem):
        super().__init__(problem.message)
        self.problem = problem


def index_files(data_dir: Path) -> list[Path]:
    """``index.sqlite3`` and its ``-wal`` / ``-shm`` in ``data_dir``, those that exist."""
    path = Path(data_dir) / "index.sqlite3"
    return [p for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")) if p.exists()]


def write_problem(data_dir: Path) -> StorageProblem | None:
    """The refusal a write into ``data_dir`` gets now (:func:`pi_memory.storage.read_only_problem`), or ``None``
    when nothing is seen to stop it. Leftover ``-wal`` / ``-shm`` files of a writable index (:func:`leftovers`) do
    not count: the next open gives them the index's mode."""
    stale = leftovers(data_dir)
    files = [p for p in index_files(data_dir) if p not in stale]
    blocked = write_blocker(data_dir, files)
    if blocked is None:
        return None
    if blocked[0] == "permission" and write_blocker(data_dir) is None:  # the folder is fine: one file is not
        for path in files:
            if write_blocker(data_dir, [path]) is not None:
                return read_only_problem("permission", Path(data_dir), _file_detail(path), file=path)
    return read_only_problem(blocked[0], Path(data_dir), blocked[1])


def _file_detail(path: Path) -> str:
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return ""
    if not mode & 0o222:
        return f"its mode {mode:04o} lets no one write it, and pi-memory honours that even when running as root"
    return "this user may not write it"


def leftovers(data_dir: Path) -> list[Path]:
    """The ``-wal`` / ``-shm`` files beside a writable pi-memory index that lack every write bit: left by a
    read-only connection while the index was ``0444`` (SQLite gives them the index's mode), they would keep
    refusing writes after ``chmod u+w index.sqlite3``. Only regular files of this user beside a regular index
    file of this user that reads as a pi-memory index (through an ``immutable`` connection)."""
    path = Path(data_dir) / "index.sqlite3"
    try:
        st = os.lstat(path)
    except OSError:
        return []
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or not st.st_mode & 0o200:
        return []
    found = []
    for side in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            side_st = os.lstat(side)
        except OSError:
            continue
        if stat.S_ISREG(side_st.st_mode) and side_st.st_uid == os.getuid() and not side_st.st_mode & 0o222:
            found.append(side)
    return found if found and _is_ours(path) else []


def release_leftovers(data_dir: Path) -> list[Path]:
    """Give :func:`leftovers` the index's mode (read and write bits); the files changed."""
    from pi_memory.private_files import set_own_file_mode

    stale = leftovers(data_dir)
    if not stale:
        return []
    mode = stat.S_IMODE(os.lstat(Path(data_dir) / "index.sqlite3").st_mode) & 0o666
    return [side for side in stale if set_own_file_mode(side, lambda _old: mode)]


def _is_ours(path: Path) -> bool:
    """Whether ``path`` holds pi-memory's ``schema_migrations`` (read ``immutable``: nothing made beside it)."""
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro&immutable=1", uri=True, timeout=1)
    except sqlite3.Error:
        return False
    try:
        return {row[1] for row in conn.execute("PRAGMA table_info(schema_migrations)")} >= _OURS
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def refuse_unreadable(paths: Iterable[Path], data_dir: Path) -> None:
    """Raise :class:`UnreadableFileError` for the first of ``paths`` this user cannot read."""
    for path in paths:
        why = read_blocker(path)
        if why is not None:
            raise UnreadableFileError(unreadable_problem(path, Path(data_dir), why))


def is_empty(path: Path) -> bool:
    try:
        return Path(path).stat().st_size == 0
    except OSError:
        return False


_STOPPED = "pi-memory left it as it is and stopped."
_UNTIL = "pi-memory refuses searches, recall and every write until this is fixed."  # what `status` says instead


def _problem(kind: str, path: Path, said: str, todo: str) -> StorageProblem:
    """The refusal of index file ``path`` (``said``: what it is), as a command gets it (``message``) and as
    ``pi-memory status`` says it (``notice``)."""
    return StorageProblem(kind, path.parent, f"{said} {_STOPPED} {todo}", notice=f"{said} {_UNTIL} {todo}")


def _refused(path: Path, what: str) -> NotAnIndexError:
    return NotAnIndexError(_problem("not_an_index", path, f"The file {path} is not a pi-memory search index: {what}.", (
        "Move or rename it if it belongs to another program (if it is a damaged pi-memory index, move it aside "
        "rather than deleting it -- semantic memories live only in that file -- and run `pi-memory reindex`), or "
        "point --dir or $PI_MEMORY_DIR at another folder.")))


def _what_it_is(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
            "not a regular file")


def refuse_not_a_file(path: Path) -> None:
    """Raise :class:`NotAnIndexError` (kind ``not_a_file``) when ``path`` exists but SQLite cannot open it as a
    database file: a folder, a named pipe, a device, a socket, a symbolic link that points at nothing or at one
    of these. A missing name (a new index) and a regular file, or a link to one, pass."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except OSError:
        return  # missing: a new index is made there
    if stat.S_ISREG(st.st_mode):
        return
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        try:
            st = os.stat(path)
        except OSError:
            what = f"a symbolic link to {target}, which does not exist"
        else:
            if stat.S_ISREG(st.st_mode):
                return
            what = f"a symbolic link to {target}, which is {_what_it_is(st.st_mode)}"
        todo = ("Point the link at a pi-memory index file or remove it (pi-memory then makes a new index there, and "
                "`pi-memory reindex` fills it), or point --dir or $PI_MEMORY_DIR at another folder.")
    else:
        what = _what_it_is(st.st_mode)
        todo = ("Move or remove it (pi-memory then makes a new index there, and `pi-memory reindex` fills it), or "
                "point --dir or $PI_MEMORY_DIR at another folder.")
    raise NotAnIndexError(_problem("not_a_file", path, f"The search index {path} cannot be opened: it is {what}.",
                                   todo))


def refuse_not_sqlite(path: Path) -> None:
    """Raise :class:`NotAnIndexError` when ``path`` exists, is not empty and does not start with SQLite's
    header. Asked only once SQLite itself found the file damaged: reading a database file outside SQLite and
    closing it drops every POSIX lock this process's SQLite connections hold on it, and a connection that then
    believes itself the last one deletes the ``-wal`` other connections still write to (their writes vanish
    from every other process until they close)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except OSError:
        return  # missing, or unreadable: refuse_unreadable and the open say it
    if head and head != SQLITE_HEADER:
        raise _refused(Path(path), "it is not an SQLite database (its first bytes are not SQLite's header)")


def refuse_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """Raise :class:`NotAnIndexError` when ``conn`` (just opened on ``path``, nothing written yet) holds tables
    but not pi-memory's ``schema_migrations``. Errors reading the schema are left to the open's own check."""
    try:
        tables = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        columns = {row[1] for row in conn.execute("PRAGMA table_info(schema_migrations)")}
    except sqlite3.DatabaseError:
        return
    if tables and not columns >= _OURS:
        shown = ", ".join(tables[:5]) + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")
        raise _refused(Path(path), f"it is an SQLite database of another program (tables: {shown})")


def index_problem(data_dir: Path) -> StorageProblem | None:
    """Why the index of ``data_dir`` cannot be used at all, found without writing anything (for ``pi-memory
    status``): not a file (:func:`refuse_not_a_file`), unreadable (:func:`refuse_unreadable`), not a pi-memory
    index (:func:`refuse_foreign`, or SQLite does not recognise it). ``None`` when none of these (a missing or
    empty file is a new index). The file is read through an ``immutable`` SQLite connection, which creates
    nothing beside it and leaves this process's other connections' locks alone."""
    path = Path(data_dir) / "index.sqlite3"
    try:
        refuse_not_a_file(path)
        refuse_unreadable(index_files(data_dir), Path(data_dir))
    except (NotAnIndexError, UnreadableFileError) as exc:
        return exc.problem
    if not path.exists() or is_empty(path):
        return None
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro&immutable=1", uri=True, timeout=1)
    except sqlite3.Error:
        return None
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        refuse_foreign(conn, path)
    except NotAnIndexError as exc:
        return exc.problem
    except sqlite3.DatabaseError as exc:
        if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF == 26:  # SQLITE_NOTADB
            return _refused(path, "SQLite does not recognise it as a database (it is another kind of file, or its "
                                  "first page is damaged)").problem
        return None  # damage further on: the next open repairs it
    except UnicodeDecodeError:  # a damaged schema entry whose bytes are not text: the next open repairs it too
        return None
    finally:
        conn.close()
    return None


__all__ = ["IndexConnection", "NotAnIndexError", "index_files", "index_problem", "is_empty", "leftovers", "refuse_foreign", "refuse_not_a_file",
           "refuse_not_sqlite", "refuse_unreadable", "release_leftovers", "write_problem"]
