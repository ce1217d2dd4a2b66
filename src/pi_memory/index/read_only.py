"""The index of a data folder that cannot be written, opened for reading only.

A read-only mount, a backup opened for inspection, a folder of another user, a folder made read-only with
``chmod``, a full disk: every read (``session_search``, ``memory_search``, recall, listing memories) should
still answer from what is there. :func:`pi_memory.index.db.open_index` finds such a folder
(:func:`pi_memory.storage.write_blocker`, without writing; or the error of the normal open) and calls
:func:`open_read_only_index`, which:

* opens ``index.sqlite3`` with ``mode=ro`` when its ``-wal`` and ``-shm`` files are both there (SQLite then
  reads the write-ahead log too; ``readonly_shm=1``, so even root does not write the ``-shm``), otherwise
  ``immutable=1``: a WAL database cannot be opened ``mode=ro`` without
  its ``-shm`` file in a folder where that file cannot be made, and ``immutable`` creates no file (not even as
  root in a ``0555`` folder). A ``-wal`` holding changes but no ``-shm`` cannot be read: said in the log;
* answers from an empty index in memory, with the Markdown stores mirrored into it, when the folder has no
  index file or an empty (0-byte) one (so ``memory_search`` finds the curated entries);
* refuses a file that is not a pi-memory index (:func:`.file_guard.refuse_foreign`), as a writable open does;
* migrates nothing (:func:`check_schema`): when the file lacks steps this version needs, it refuses with the
  steps named, rather than half-work on an old schema. A feature whose tables were never made in this file
  (semantic memory, the learning log: none of its steps applied) gets them empty, from an in-memory database
  attached to the connection, so its readers answer "nothing yet". Redaction of an older index is left for
  the next writable open (searches redact what they show meanwhile: :func:`.redaction.redaction_pending`);
* repairs nothing: a damaged file is :class:`~pi_memory.index.db.IndexUnavailableError`;
* returns a :class:`ReadOnlyConnection`, whose ``problem`` (:func:`read_only`) tells every writer why nothing
  can be written: :func:`pi_memory.index.db.transaction` raises :class:`pi_memory.storage.ReadOnlyDataError`
  with it, and background work that would write (index catch-up, capture, vectors, usage counts, job outcomes)
  asks :func:`read_only` first and is skipped with a log line. ``PRAGMA query_only`` refuses any write that goes
  around them.

:func:`read_only` asks the same of a connection opened for writing (:class:`.file_guard.IndexConnection`), each
time: a folder that turned read-only since the open (:func:`.file_guard.write_problem`) gets its writes refused
and its background work skipped the same way.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from pi_memory.index.file_guard import (
    IndexConnection,
    is_empty,
    refuse_foreign,
    refuse_not_sqlite,
    write_problem,
)
from pi_memory.storage import ReadOnlyDataError, StorageProblem, describe

# Page cache of every index connection, in KiB (SQLite's default is 2 MiB: 125 pages of 16 KiB, too few for one
# recall's reads, so every statement read its pages from the file again)
CACHE_KIB = 65536

log = logging.getLogger(__name__)


class ReadOnlyConnection(sqlite3.Connection):
    """A connection to an index opened for reading only; ``problem`` is the refusal every write gets."""

    problem: StorageProblem


def read_only(conn: object) -> StorageProblem | None:
    """Why ``conn`` may not be written (the refusal a write gets), or ``None``: for a connection opened for reading
    only, the refusal it was opened with; for one opened for writing, what stops a write in its folder now (module
    docstring)."""
    if isinstance(conn, ReadOnlyConnection):
        return getattr(conn, "problem", None)
    if isinstance(conn, IndexConnection):
        return write_problem(conn.data_dir)
    return None


def refuse_write(conn: object) -> None:
    """Raise :class:`ReadOnlyDataError` when ``conn`` was opened for reading only."""
    problem = read_only(conn)
    if problem is not None:
        raise ReadOnlyDataError(problem)


_said: set[tuple[str, str]] = set()


def skipped(conn: object, what: str) -> bool:
    """True when ``conn`` is read-only, so ``what`` (work that would write, such as "index catch-up") is skipped;
    the first skip of each ``what`` per data folder is logged (a recall skips its vectors every time)."""
    problem = read_only(conn)
    if problem is None:
        return False
    key = (str(problem.folder), what)
    if key not in _said:
        _said.add(key)
        why = {"read_only": "a read-only file system", "disk_full": "a full disk",
               "locked": "another process is writing to it"}.get(problem.kind, "no permission")
        # a command reading while another process writes said it once already (cli/semantic_held.py)
        level = logging.INFO if problem.kind == "locked" else logging.WARNING
        log.log(level, "%s skipped: the data folder %s is open for reading only (%s)", what, problem.folder, why)
    return True


def check_schema(conn: sqlite3.Connection, steps: list, optional: bool) -> None:
    """The read-only side of :func:`pi_memory.index.db.migrate`: nothing is applied. Steps missing from the file
    are refused (:func:`refuse_pending`), except steps readers do not need (``Migration.readers_need``: the
    turn matrix's record of gone vector rows, whose absence turns its message map off) and an ``optional``
    feature (not the core schema) none of whose ``steps`` was ever applied here: its tables come empty from an in-memory database attached to
    ``conn`` (module docstring)."""
    from pi_memory.index.db import applied_migrations

    has_table = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'").fetchone()
    done = set(applied_migrations(conn)) if has_table else set()
    done |= getattr(conn, "empty_features", set())
    pending = [step.name for step in steps if step.name not in done and step.readers_need]
    if not pending:
        return
    if optional and not any(step.name in done for step in steps):
        _attach_empty(conn, steps)
        return
    refuse_pending(conn, pending)


def _attach_empty(conn: sqlite3.Connection, steps: list) -> None:
    """Attach a shared in-memory database holding ``steps`` applied (its tables empty) to ``conn``; unqualified
    names that ``conn``'s own file lacks are found there. The connection that made it is kept on ``conn``, so
    the memory database lives as long as ``conn``."""
    import uuid

    from pi_memory.index.db import migrate
    from pi_memory.index.words import register as register_words

    uri = f"file:pi-memory-empty-{uuid.uuid4().hex}?mode=memory&cache=shared"
    maker = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    register_words(maker)
    migrate(maker, steps)
    alias = f"empty_{len(getattr(conn, 'empty_makers', []))}"
    conn.execute(f"ATTACH DATABASE ? AS {alias}", (uri,))
    conn.empty_makers = [*getattr(conn, "empty_makers", []), maker]
    conn.empty_features = getattr(conn, "empty_features", set()) | {step.name for step in steps}
    log.info("the read-only index has no tables for %s yet: read as empty", ", ".join(s.name for s in steps))


def refuse_pending(conn: sqlite3.Connection, pending: list[str]) -> None:
    """Refuse to use a read-only index that lacks the schema steps ``pending`` (it was written by an older
    pi-memory, or never held the tables a feature needs), naming them and what to do."""
    problem = read_only(conn)
    assert problem is not None
    what, todo = describe(problem.kind, problem.folder, problem.detail, file=problem.file)
    message = (f"The search index in {problem.folder} lacks schema steps this version of pi-memory needs "
               f"({', '.join(pending)}): it was written by an older version. They cannot be added now: "
               f"{what[0].lower()}{what[1:]} Nothing was read or changed. {todo[:-1]}; "
               "once the folder is writable, any pi-memory command adds them. To look at it as it is, copy the "
               "folder somewhere writable and point --dir or $PI_MEMORY_DIR at the copy.")
    raise ReadOnlyDataError(StorageProblem(problem.kind, problem.folder, message))


def file_uri(path: Path) -> tuple[str, bool]:
    """The URI of the read-only connection to ``path`` and whether it is ``immutable`` (module docstring)."""
    wal, shm = path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")
    base = f"{path.absolute().as_uri()}?mode=ro"
    if wal.exists() and shm.exists():
        return base + "&readonly_shm=1", False  # the -shm read, never written (root could write it)
    return base + "&immutable=1", True


def _connect(uri: str, problem: StorageProblem, timeout: float) -> ReadOnlyConnection:
    from pi_memory.index.words import register as register_words

    conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False,
                           factory=ReadOnlyConnection)
    conn.problem = problem
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        register_words(conn)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the file is opened here
    except BaseException:
        conn.close()
        raise
    return conn


def _in_memory(data_dir: Path, problem: StorageProblem) -> ReadOnlyConnection:
    """An empty index with the Markdown stores mirrored, for a read-only folder that has no index file."""
    from pi_memory.index.db import migrate
    from pi_memory.index.mirror import sync_markdown
    from pi_memory.index.words import register as register_words

    conn = sqlite3.connect("file::memory:", uri=True, isolation_level=None, check_same_thread=False,
                           factory=ReadOnlyConnection)
    register_words(conn)
    migrate(conn)
    sync_markdown(conn, data_dir)
    conn.problem = problem  # from here on a read-only connection like the others
    conn.execute("PRAGMA query_only = ON")
    return conn


def open_read_only_index(path: Path, check: bool | None, problem: StorageProblem,
                         timeout: float) -> ReadOnlyConnection:
    """Open ``path`` (the index of a folder that cannot be written, ``problem`` saying why) for reading only; see
    the module docstring. Raises :class:`ReadOnlyDataError` for missing schema steps, ``IndexUnavailableError``
    for a damaged file, ``sqlite3`` errors for a file that cannot be read at all."""
    from pi_memory.index.db import MIGRATIONS, _check, _Corrupt, applied_migrations, is_corruption

    log.warning("%s", problem.notice, extra={"read_only_notice": True})  # the CLI holds it: .cli.notices
    if not path.exists() or is_empty(path):
        return _in_memory(path.parent, problem)
    wal = path.with_name(path.name + "-wal")
    try:
        conn, immutable = _open_file(path, problem, timeout)
        if immutable and wal.exists() and wal.stat().st_size > 0:
            log.warning("the search index's write-ahead log %s cannot be read without its -shm file in a folder that "
                        "cannot be written: changes made since its last checkpoint are not seen. To see them, copy "
                        "the folder somewhere writable and point --dir or $PI_MEMORY_DIR at the copy.", wal)
        try:
            refuse_foreign(conn, path)
            _check(conn, path, check)
            done = set(applied_migrations(conn))
        except BaseException:
            conn.close()
            raise
    except _Corrupt as damaged:
        refuse_not_sqlite(path)
        raise _not_repaired(path, damaged.detail, problem) from None
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            refuse_not_sqlite(path)
            raise _not_repaired(path, str(exc), problem) from None
        if "no such table" not in str(exc):
            raise
        return _in_memory(path.parent, problem)  # an SQLite file without tables (refuse_foreign): no index yet
    pending = [step.name for step in MIGRATIONS if step.name not in done and step.readers_need]
    if pending:
        try:
            refuse_pending(conn, pending)
        finally:
            conn.close()
    return conn


def open_while_held(path: Path, problem: StorageProblem, timeout: float) -> ReadOnlyConnection:
    """``path`` opened for reading only while another process holds its write lock (an indexing pass, a rebuild):
    a command that only reads answers from what is there instead of waiting for the lock. ``problem`` (kind
    ``locked``) is the refusal a write through it gets; a feature whose tables were never made reads as empty
    (:func:`check_schema`)."""
    return _open_file(path, problem, timeout)[0]


def _open_file(path: Path, problem: StorageProblem, timeout: float) -> tuple[ReadOnlyConnection, bool]:
    """The read-only connection to ``path`` and whether it is ``immutable`` (:func:`file_uri`; ``immutable`` also
    when ``mode=ro`` fails, as with a ``-shm`` file this user may not read)."""
    uri, immutable = file_uri(path)
    try:
        return _connect(uri, problem, timeout), immutable
    except sqlite3.OperationalError:
        if immutable:
            raise
        return _connect(uri + "&immutable=1", problem, timeout), True


def _not_repaired(path: Path, detail: str, problem: StorageProblem) -> Exception:
    from pi_memory.index.db import IndexUnavailableError

    what, todo = describe(problem.kind, problem.folder, problem.detail, file=problem.file)
    return IndexUnavailableError(
        f"The search index {path} is damaged ({detail}), and it cannot be repaired here: {what[0].lower()}{what[1:]} "
        f"Nothing was changed. {todo[:-1]}, then run the command again to repair it.")


__all__ = ["ReadOnlyConnection", "check_schema", "file_uri", "open_read_only_index", "read_only", "refuse_pending",
           "refuse_write", "skipped"]
