"""The index database: ``<data_dir>/index.sqlite3``, its schema, migrations and corruption recovery.

The database is derived data. Markdown stores and session files stay the source of truth; deleting the file
and running ``pi-memory reindex`` rebuilds it.

Connection (``open_index``): 16 KiB pages for a new file, WAL journal, ``busy_timeout`` 10 s, ``foreign_keys=ON``, ``synchronous=NORMAL``,
``secure_delete=OFF`` (this SQLite build zeroes freed pages by default, which slows every FTS merge), autocommit
mode (``isolation_level=None``): write with :func:`transaction`, which issues ``BEGIN IMMEDIATE``/``COMMIT``.

Schema and migrations: :mod:`.schema` (tables, named steps, the word-index triggers).

Credentials: migration ``008_redact_secrets`` is finished at open (:func:`.redaction.redact_pending_index`:
batched and resumable; the CLI shows its progress).

Not an index (:mod:`.file_guard`): a file without SQLite's header, or another program's SQLite database, is
refused and never touched; a 0-byte file is a new index, unless it is over a minute old with no ``-wal``
pages: then it was emptied, and it is repaired as a damaged one is (:func:`_emptied`).

Corruption: at open a probe reads the schema (a damaged header fails with "file is not a database"), and
``PRAGMA quick_check`` runs when the file is at most ``QUICK_CHECK_MAX_BYTES`` (32 MiB: it reads every page, so
a large index is not checked on every start; pass ``check=True`` to force it). Damage deeper in a large file
surfaces later as ``sqlite3.DatabaseError``: :func:`is_corruption` tells it apart from busy/locked errors, and
``open_index(data_dir, check=True)`` then repairs. Only SQLite's own corruption codes (CORRUPT, NOTADB)
count: a busy or read-only database is reported, never "repaired". On corruption:

1. take ``index.sqlite3.rebuild.lock`` (``filelock``; a process that finds it held waits for the holder);
2. under the lock, open the file again: if a peer already rebuilt it, use that and stop (one rebuild, not one
   per process -- a peer's bug started 196 rebuild processes);
3. otherwise move the file and its ``-wal``/``-shm`` aside to ``index.sqlite3.corrupt-<UTC time>``, create a
   fresh schema (a new 0600 file, every migration) and run the ``rebuild`` callback (default, :mod:`.repair`:
   copy the semantic memories and their history still readable in the damaged file -- they live only here --,
   the memory rows, and the session rows, or failing that the list of session files to read again
   (:mod:`.salvage`), then mirror the Markdown stores again; each step's failure is caught, and the repair
   record is written in every case). A ``rebuild`` that raises is reported and recorded, never raised: the
   fresh index is whole before it runs;
4. circuit breaker: if a corrupt copy was set aside less than ``REBUILD_COOLDOWN_S`` ago and the database is
   corrupt again, or the fresh database fails its check, stop with :class:`IndexUnavailableError` instead of
   rebuilding again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from pi_memory.index.file_guard import (
    IndexConnection,
    index_files,
    refuse_foreign,
    refuse_not_a_file,
    refuse_not_sqlite,
    refuse_unreadable,
    release_leftovers,
    write_problem,
)
from pi_memory.index.filters import stored_time
from pi_memory.index.read_only import CACHE_KIB, check_schema, open_read_only_index, read_only, refuse_write
from pi_memory.index.read_only import file_uri as read_only_file_uri
from pi_memory.index.redaction import redact_pending_index
from pi_memory.index.schema import MIGRATIONS, Migration, split_statements
from pi_memory.index.segments import repair_levels
from pi_memory.index.words import register as register_words
from pi_memory.private_files import create_private_file, make_private_folder, tighten_private_file
from pi_memory.storage import (
    StorageProblem,
    read_only_problem,
    refuse_read_only_folder,
    storage_problem,
    write_blocker,
)

INDEX_FILE = "index.sqlite3"
BUSY_TIMEOUT_S = 10.0
REBUILD_LOCK_TIMEOUT_S = 120.0
REBUILD_COOLDOWN_S = 60.0
# An empty index file older than this was not just made by a process about to write its schema (which it does at
# once): it was emptied, or a process died between making and writing it. Opened as damaged (:func:`_emptied`).
EMPTY_GRACE_S = 60.0
QUICK_CHECK_MAX_BYTES = 32 * 1024 * 1024
PAGE_SIZE = 16384  # new index files: 5-10% faster bulk indexing than 4 KiB on session text (rows of 1-20k chars)
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_log = logging.getLogger(__name__)


class IndexUnavailableError(RuntimeError):
    """The index cannot be opened or repaired; the message says why and what to do."""


RebuildHook = Callable[[sqlite3.Connection, Path], None]
"""Called as ``rebuild(conn, damaged_copy)`` on the fresh database after a corrupt one was set aside."""


def index_path(data_dir: Path | str) -> Path:
    return Path(data_dir) / INDEX_FILE


def now_iso() -> str:
    """UTC now as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (the form session files use, so strings sort by time)."""
    return stored_time(datetime.now(UTC))


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection, immediate: bool = True) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolls back when the block raises. Not re-entrant. On an index opened
    for reading only it raises :class:`pi_memory.storage.ReadOnlyDataError` (:mod:`.read_only`)."""
    refuse_write(conn)
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextlib.contextmanager
def busy_wait(conn: sqlite3.Connection, seconds: float) -> Iterator[sqlite3.Connection]:
    """Inside the block, a statement on ``conn`` waits at most ``seconds`` for another process's lock on the
    index (then raises ``database is locked``), instead of the connection's ``BUSY_TIMEOUT_S``; the wait is
    given back after. For writes that may fail because a later pass repeats them (the Markdown mirror:
    :meth:`pi_memory.runtime.Memory.mirror`), so a locked index does not hold a command for 10 s per write."""
    before = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute(f"PRAGMA busy_timeout = {max(0, int(seconds * 1000))}")
    try:
        yield conn
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(before)}")


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY rowid")]


def migrate(conn: sqlite3.Connection, migrations: list[Migration] | None = None) -> list[str]:
    """Apply the steps not yet recorded, in order, each in one transaction. Returns the names applied now.

    Safe when several processes migrate at once: each step re-checks under ``BEGIN IMMEDIATE``. Steps recorded
    by a newer version of pi-memory that this version does not know are left alone. On an index opened for
    reading only nothing is applied: a step missing there is refused (:func:`.read_only.refuse_pending`).
    """
    if read_only(conn) is not None:
        check_schema(conn, migrations if migrations is not None else MIGRATIONS, optional=migrations is not None)
        return []
    register_words(conn)  # the memories triggers call pm_fts_form
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = set(applied_migrations(conn))
    applied: list[str] = []
    for step in migrations if migrations is not None else MIGRATIONS:
        if step.name in done:
            continue
        with transaction(conn):
            if conn.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (step.name,)).fetchone():
                continue
            for statement in split_statements(step.sql):
                conn.execute(statement)
            if step.run is not None:
                step.run(conn)
            conn.execute(
                "INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)", (step.name, now_iso())
            )
        applied.append(step.name)
    return applied


def _wal(conn: sqlite3.Connection) -> None:
    """Put the file in WAL mode. Two processes making a new file at once (a repair's fresh index, a first start
    of several hosts) both write its first page: SQLite then answers "database is locked" at once, without its
    busy wait, to the one that would otherwise wait on the other while holding a read lock. Tried again for up
    to ``BUSY_TIMEOUT_S``, as the busy wait would have."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False,
                           factory=IndexConnection)
    conn.data_dir = path.parent  # asked again before each write (.file_guard.write_problem)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        refuse_foreign(conn, path)  # before the journal mode is set: another program's file is left as it is
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # takes effect for a new file only (not in WAL mode)
        _wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA secure_delete = OFF")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        register_words(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def is_corruption(exc: BaseException) -> bool:
    """True for SQLite's corruption codes only (not for busy, locked, read-only or missing-file errors)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _CORRUPT_CODES
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


class _Corrupt(Exception):
    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


def _check(conn: sqlite3.Connection, path: Path, check: bool | None) -> None:
    """Raise :class:`_Corrupt` when the database is damaged."""
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        size = path.stat().st_size if path.exists() else 0
        if check or (check is None and size <= QUICK_CHECK_MAX_BYTES):
            rows = [r[0] for r in conn.execute("PRAGMA quick_check")]
            if rows != ["ok"]:
                raise _Corrupt("; ".join(map(str, rows[:3])))
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            raise _Corrupt(str(exc)) from exc
        raise


def _undecodable(exc: UnicodeDecodeError) -> _Corrupt:
    # Our statements are ASCII, so bytes that are not UTF-8 came from the file: SQLite quotes a damaged schema
    # in its error message, and Python cannot decode that message.
    return _Corrupt(f"the schema holds bytes that are not UTF-8 ({exc.reason} at byte {exc.start})")


def _emptied(path: Path) -> str | None:
    """Why ``path`` is taken for an index that was emptied (the repair's reason), or ``None``. SQLite takes a
    0-byte file for a new database, so an index truncated by a tool, a full disk or a mistaken ``>`` would be
    started again without a word while the semantic memories that lived only there were gone. An empty file
    counts when it is older than :data:`EMPTY_GRACE_S` and no ``-wal`` beside it holds pages (in WAL mode the
    main file can stay empty while the log holds everything)."""
    try:
        st = path.stat()
    except OSError:
        return None
    if st.st_size or time.time() - st.st_mtime < EMPTY_GRACE_S:
        return None
    with contextlib.suppress(OSError):
        if path.with_name(path.name + "-wal").stat().st_size:
            return None
    changed = datetime.fromtimestamp(st.st_mtime, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"0 bytes, last changed {changed}"


def _open_checked(path: Path, check: bool | None) -> sqlite3.Connection:
    emptied = _emptied(path)
    if emptied is not None:
        raise _Corrupt(emptied)
    try:
        conn = _connect(path)
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            raise _Corrupt(str(exc)) from exc
        raise
    except UnicodeDecodeError as exc:
        raise _undecodable(exc) from exc
    try:
        _check(conn, path, check)
        migrate(conn)
        with contextlib.suppress(sqlite3.OperationalError):  # busy: the next open rebuilds it
            repair_levels(conn)  # a word index near FTS5's level limit (old SQLite: .segments)
        # Busy, locked or read-only: the work stays recorded and the next open goes on; searches redact what
        # they show meanwhile (:func:`.redaction.redaction_pending`).
        with contextlib.suppress(sqlite3.OperationalError):
            redact_pending_index(conn, path)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if is_corruption(exc):
            raise _Corrupt(str(exc)) from exc
        raise
    except UnicodeDecodeError as exc:
        conn.close()
        raise _undecodable(exc) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _recent_quarantine(path: Path) -> Path | None:
    now = time.time()
    for old in path.parent.glob(path.name + ".corrupt-*"):
        with contextlib.suppress(OSError):
            if now - old.stat().st_mtime < REBUILD_COOLDOWN_S and not old.name.endswith(("-wal", "-shm")):
                return old
    return None


def _quarantine(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    os.replace(path, target)
    os.utime(target)  # the cool-down counts from the quarantine, not from the last write
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            with contextlib.suppress(OSError):
                os.replace(side, target.with_name(target.name + suffix))
    return target


def _default_rebuild(conn: sqlite3.Connection, damaged: Path) -> None:
    """Copy back what the damaged file still holds, semantic memories first (they exist nowhere else), then the
    memories, the sessions and the Markdown mirror (:mod:`.repair`), and say so on the command that repaired, not
    only in the repair record `pi-memory status` shows: a person should know at once what went."""
    from pi_memory.index.repair import rebuild_from_damaged

    _log.warning("%s", rebuild_from_damaged(conn, damaged))


def open_index(
    data_dir: Path | str, check: bool | None = None, rebuild: RebuildHook | None = _default_rebuild
) -> sqlite3.Connection:
    """Open (creating and migrating as needed) ``<data_dir>/index.sqlite3``; repair it once if it is corrupt.

    ``check``: ``None`` runs ``PRAGMA quick_check`` on files up to ``QUICK_CHECK_MAX_BYTES``; ``True`` always;
    ``False`` only probes the schema. ``rebuild`` runs on the fresh database after a corrupt one was set aside.
    Raises :class:`IndexUnavailableError` when the file cannot be repaired (see the module docstring).

    A data folder that cannot be written (read-only mount or mode, no permission, full disk: found without
    writing by :func:`pi_memory.storage.write_blocker`, or by the error of the normal open) gets the index opened
    for reading only, and nothing created, migrated, redacted or repaired (:mod:`.read_only`). An index file this
    user cannot read, or one that is not a pi-memory index, is refused and left alone; an empty one is no index
    (:mod:`.file_guard`).
    """
    data_dir = Path(data_dir)
    path = index_path(data_dir)
    sides = (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"))
    refuse_not_a_file(path)  # .file_guard: a folder, a pipe, a link to nothing: SQLite cannot open it
    refuse_unreadable(index_files(data_dir), data_dir)  # .file_guard: an index file this user cannot read
    release_leftovers(data_dir)  # .file_guard: a 0444 -wal/-shm left beside an index made writable again
    blocked = write_problem(data_dir)
    if blocked is not None:
        return open_read_only_index(path, check, blocked, BUSY_TIMEOUT_S)
    try:
        refuse_read_only_folder(data_dir)  # SQLite would create the file, its -wal and -shm there, even as root
        make_private_folder(data_dir)
        create_private_file(path)  # a new index is made 0600 (SQLite gives -wal/-shm its mode); others untouched
        try:
            conn = _open_checked(path, check)
        except _Corrupt as first:
            refuse_not_sqlite(path)  # no SQLite header: not an index at all, left alone (.file_guard)
            conn = _recover(path, check, rebuild, first.detail)
        for private in (path, *sides):  # only now known to be a pi-memory index: tightened if others may read it
            tighten_private_file(private)
        return conn
    except (OSError, sqlite3.OperationalError) as exc:
        fallback = _read_only_instead(exc, data_dir)
        if fallback is None:
            raise
        return open_read_only_index(path, check, fallback, BUSY_TIMEOUT_S)


def _read_only_instead(exc: BaseException, data_dir: Path) -> StorageProblem | None:
    """The read-only refusal to open the index with instead, when the normal open failed because the folder
    cannot be written (a full disk, what :func:`pi_memory.storage.write_blocker` cannot see); else ``None``."""
    problem = storage_problem(exc, data_dir)
    if problem is None or problem.kind not in ("read_only", "permission", "disk_full") or problem.folder != data_dir:
        return None
    return read_only_problem(problem.kind, data_dir, "")


def _recover(path: Path, check: bool | None, rebuild: RebuildHook | None, detail: str) -> sqlite3.Connection:
    lock_path = path.with_name(path.name + ".rebuild.lock")
    try:
        with FileLock(lock_path, timeout=REBUILD_LOCK_TIMEOUT_S, mode=0o600):
            try:  # a peer may have rebuilt it while we waited for the lock
                return _open_checked(path, check)
            except _Corrupt as again:
                detail = again.detail
            recent = _recent_quarantine(path)
            if recent is not None:
                raise IndexUnavailableError(
                    f"The search index {path} is damaged again ({detail}), less than "
                    f"{REBUILD_COOLDOWN_S:.0f} s after the last damaged copy was set aside ({recent.name}). "
                    "pi-memory stopped instead of rebuilding in a loop. Check the disk (space, errors, a sync "
                    "tool rewriting the folder), then move the file aside (keep it: semantic memories live only "
                    "there) and run `pi-memory reindex`."
                )
            moved = _quarantine(path)
            create_private_file(path)  # the fresh index is 0600 like the one it replaces (and its -wal/-shm)
            try:
                conn = _open_checked(path, check)
            except _Corrupt as fresh:
                raise IndexUnavailableError(
                    f"A fresh search index at {path} failed its own check ({fresh.detail}); the damaged copy "
                    f"is at {moved.name}. The disk or file system is likely at fault; pi-memory will not retry."
                ) from None
            with transaction(conn):
                count = conn.execute("SELECT value FROM meta WHERE key = 'rebuilds'").fetchone()
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('rebuilds', ?), ('recovered_from', ?), "
                    "('recovered_reason', ?), ('recovered_at', ?)",
                    (str(int(count[0]) + 1 if count else 1), moved.name, detail, now_iso()),
                )
            if rebuild is not None:
                try:
                    rebuild(conn, moved)
                except Exception as exc:  # the index is whole; what could not be copied back is said, not raised
                    from pi_memory.index.repair import rebuild_failed

                    _log.debug("rebuild after corruption failed", exc_info=True)
                    _log.warning("%s", rebuild_failed(conn, moved, exc))
            return conn
    except Timeout:
        raise IndexUnavailableError(
            f"The search index {path} is damaged and another process has held the repair lock "
            f"({lock_path.name}) for over {REBUILD_LOCK_TIMEOUT_S:.0f} s. Wait for it to finish, or if no "
            "pi-memory process is running, move the index file aside (keep it: semantic memories live only there) "
            "and run `pi-memory reindex`."
        ) from None


def database_file(conn: sqlite3.Connection) -> str:
    """The main database file of ``conn`` (``""`` for an in-memory one)."""
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2] or "") if row else ""


def read_only_uri(path: Path) -> str:
    """The URI of a read-only connection to ``path``. In a folder that cannot be written, or for an index file that
    cannot (:func:`pi_memory.storage.write_blocker`: read-only by its mode or mount, another user's) it is the one
    :mod:`.read_only` opens: ``immutable`` unless the ``-wal`` and ``-shm`` files are both there, since a WAL
    database's read-only connection would otherwise create them (as root), or fail (as another user)."""
    path = Path(path)
    sides = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
    if write_blocker(path.parent, [p for p in sides if p.exists()]) is not None:  # a 0444 index too: SQLite
        return read_only_file_uri(path)[0]  # would make its -wal/-shm 0444 beside it, blocking every later write
    return f"{path.absolute().as_uri()}?mode=ro"


def open_read_only(path: Path | str, timeout: float = 5.0) -> sqlite3.Connection | None:
    """A read-only connection to a database file that may be damaged (salvage, a repair record), or ``None``
    when it cannot be opened at all (:func:`read_only_uri`: immutable in a read-only folder)."""
    try:
        return sqlite3.connect(read_only_uri(Path(path)), uri=True, timeout=timeout)
    except sqlite3.Error:
        return None


def meta_get(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None
