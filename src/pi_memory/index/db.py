"""The index database: ``<data_dir>/index.sqlite3``, its schema, migrations and corruption recovery.

The database is derived data. Markdown stores and session files stay the source of truth; deleting the file
and running ``pi-memory reindex`` rebuilds it.

Connection (``open_index``): WAL journal, ``busy_timeout`` 10 s, ``foreign_keys=ON``, ``synchronous=NORMAL``,
``secure_delete=OFF`` (this SQLite build zeroes freed pages by default, which slows every FTS merge), autocommit
mode (``isolation_level=None``): write with :func:`transaction`, which issues ``BEGIN IMMEDIATE``/``COMMIT``.

Schema (``MIGRATIONS``, applied in order, each once, each in its own transaction, recorded by name in
``schema_migrations(name, applied_at)``):

* ``sessions``: one row per conversation: ``source`` (pi | claude_code | codex), ``session_key`` (the id found in
  the file, else the file name without extension), ``cwd``, ``project_id`` / ``project_name`` /
  ``project_root`` (see :mod:`pi_memory.project`), ``started_at``, ``version``, ``parent_session``.
* ``session_files``: one row per transcript file, for incremental passes: ``path``, ``size``, ``mtime_ns``,
  ``tail_hash`` (BLAKE2b of the file's last 4 KiB), ``prefix_hash`` (of its first 4 KiB and the 4 KiB before
  ``end_offset``, which tells an append from a rewrite), ``end_offset`` / ``end_line`` (where the next pass starts), ``leaf_id``,
  ``info`` (the reader's ``SessionInfo`` as JSON), ``skipped`` (reason -> count, JSON) and ``indexed_at``.
* ``entries``: the tree of each file (``file_id, entry_id -> parent_id``), every entry including those that gave
  no searchable text, so an append can recompute which entries are on the active branch.
* ``messages``: one searchable record: provenance (``session_id``, ``file_id``, ``entry_id``, ``parent_id``,
  ``line``, ``timestamp``; the cwd comes through the session), ``role``, ``kind``, ``tool_name``, ``branch``
  ('active' | 'abandoned') and ``text`` (capped, see :mod:`.indexer`).
* ``messages_fts``: FTS5 word index (``unicode61``, contentless, ``columnsize=0``) over
  ``coalesce(messages.fts_text, messages.text)``: ``fts_text`` is the text with every CJK character spaced out
  (:mod:`.words`), set only for rows that contain CJK. Kept in sync by triggers (a contentless index must be
  told the exact indexed text on delete, which the triggers take from the row). There is no insert trigger:
  rows go in through :func:`pi_memory.index.indexer.insert_messages`, which indexes a whole batch with one
  ``INSERT ... SELECT`` (an FTS5 insert run by a trigger flushes the index once per row: 3x slower).
  Migration 005 replaced the first, trigram, index (``002``) and re-indexed the existing rows.
* ``memories``: the searchable mirror of the curated stores plus the extended store: ``scope`` (global |
  project), ``project`` (project id, NULL for global), ``target`` (memory | user | project | failure),
  ``category``, ``content``, ``failure_reason``, ``source`` ('markdown' | 'extended'), ``created``,
  ``last_used``, ``hit_count``. One row per distinct content within (scope, project, target).
* ``memories_fts``: the same word index over ``content`` and ``failure_reason`` (one text, newline between),
  kept in sync by triggers that call ``pm_fts_form`` (registered on every connection ``open_index`` makes,
  :mod:`.words`). Migration 007 replaced the first, trigram, index (``003``).
* ``pending_paths``: session files to read again at the next pass without explicit paths (filled when a
  corrupt index's sessions could not be copied, :mod:`.salvage`).
* ``meta``: key/value facts (``rebuilds``: how many times this file was rebuilt after corruption,
  ``recovered_from``: where the corrupt copy went).

Corruption: at open a probe reads the schema (a garbage file fails with "file is not a database"), and
``PRAGMA quick_check`` runs when the file is at most ``QUICK_CHECK_MAX_BYTES`` (32 MiB: it reads every page, so
a large index is not checked on every start; pass ``check=True`` to force it). Damage deeper in a large file
surfaces later as ``sqlite3.DatabaseError``: :func:`is_corruption` tells it apart from busy/locked errors, and
``open_index(data_dir, check=True)`` then repairs. Only SQLite's own corruption codes (CORRUPT, NOTADB)
count: a busy or read-only database is reported, never "repaired". On corruption:

1. take ``index.sqlite3.rebuild.lock`` (``filelock``; a process that finds it held waits for the holder);
2. under the lock, open the file again: if a peer already rebuilt it, use that and stop (one rebuild, not one
   per process -- a peer's bug started 196 rebuild processes);
3. otherwise move the file and its ``-wal``/``-shm`` aside to ``index.sqlite3.corrupt-<UTC time>``, create a
   fresh schema and run the ``rebuild`` callback (default: copy the memory rows still readable in the damaged
   file -- the extended store lives only here -- and the session rows, or failing that the list of session
   files to read again (:mod:`.salvage`), then mirror the Markdown stores again);
4. circuit breaker: if a corrupt copy was set aside less than ``REBUILD_COOLDOWN_S`` ago and the database is
   corrupt again, or the fresh database fails its check, stop with :class:`IndexUnavailableError` instead of
   rebuilding again.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from pi_memory.index.words import TOKENIZER, fts_form
from pi_memory.index.words import register as register_words

INDEX_FILE = "index.sqlite3"
BUSY_TIMEOUT_S = 10.0
REBUILD_LOCK_TIMEOUT_S = 120.0
REBUILD_COOLDOWN_S = 60.0
QUICK_CHECK_MAX_BYTES = 32 * 1024 * 1024
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


class IndexUnavailableError(RuntimeError):
    """The index cannot be opened or repaired; the message says why and what to do."""


@dataclass(frozen=True)
class Migration:
    """One schema step: ``sql`` (a script), then ``run(conn)`` when given, in the same transaction."""

    name: str
    sql: str
    run: Callable[[sqlite3.Connection], None] | None = None


MESSAGES_DELETE_TRIGGER = (
    "CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN "
    "INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, coalesce(old.fts_text, old.text)); "
    "END"
)

_WORD_INDEX = (
    f"CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='', columnsize=0, tokenize='{TOKENIZER}');\n"
    + MESSAGES_DELETE_TRIGGER
    + ";\nCREATE TRIGGER messages_au AFTER UPDATE OF text, fts_text ON messages BEGIN "
    "INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, coalesce(old.fts_text, old.text)); "
    "INSERT INTO messages_fts(rowid, text) VALUES (new.id, coalesce(new.fts_text, new.text)); END;"
)


_MEMORY_FORM = "pm_fts_form({row}.content || char(10) || ifnull({row}.failure_reason, ''))"
"""What ``memories_fts`` indexes for a row: content and failure reason, CJK spaced out (:mod:`.words`)."""


def _to_word_index(conn: sqlite3.Connection) -> None:
    """Migration 005: fill ``fts_text`` for rows with CJK text, create the word index and index every row."""
    last = 0
    while True:  # in batches: a large index must not be read into memory at once
        rows = conn.execute("SELECT id, text FROM messages WHERE id > ? ORDER BY id LIMIT 5000", (last,)).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        forms = [(fts_form(text), rid) for rid, text in rows if not text.isascii()]
        conn.executemany("UPDATE messages SET fts_text = ? WHERE id = ?", [(f, rid) for f, rid in forms if f])
    for statement in split_statements(_WORD_INDEX):
        conn.execute(statement)
    conn.execute("INSERT INTO messages_fts(rowid, text) SELECT id, coalesce(fts_text, text) FROM messages")

MIGRATIONS: list[Migration] = [
    Migration(
        "001_sessions",
        """
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            source TEXT NOT NULL,
            session_key TEXT NOT NULL,
            cwd TEXT,
            project_id TEXT,
            project_name TEXT,
            project_root TEXT,
            started_at TEXT,
            version TEXT,
            parent_session TEXT,
            UNIQUE (source, session_key)
        );
        CREATE INDEX sessions_project ON sessions(project_id);
        CREATE TABLE session_files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            tail_hash BLOB,
            prefix_hash BLOB,
            end_offset INTEGER NOT NULL DEFAULT 0,
            end_line INTEGER NOT NULL DEFAULT 0,
            leaf_id TEXT,
            info TEXT,
            skipped TEXT,
            indexed_at TEXT
        );
        CREATE INDEX session_files_session ON session_files(session_id);
        CREATE TABLE entries (
            file_id INTEGER NOT NULL REFERENCES session_files(id) ON DELETE CASCADE,
            entry_id TEXT NOT NULL,
            parent_id TEXT,
            PRIMARY KEY (file_id, entry_id)
        ) WITHOUT ROWID;
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            file_id INTEGER NOT NULL REFERENCES session_files(id) ON DELETE CASCADE,
            entry_id TEXT,
            parent_id TEXT,
            line INTEGER NOT NULL,
            timestamp TEXT,
            role TEXT NOT NULL,
            kind TEXT NOT NULL,
            tool_name TEXT,
            branch TEXT NOT NULL DEFAULT 'active' CHECK (branch IN ('active', 'abandoned')),
            text TEXT NOT NULL
        );
        CREATE INDEX messages_file ON messages(file_id, entry_id);
        CREATE INDEX messages_session ON messages(session_id);
        CREATE INDEX messages_time ON messages(timestamp);
        """,
    ),
    Migration(
        "002_messages_fts_trigram",
        """
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            text, content='messages', content_rowid='id', tokenize='trigram'
        );
        CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END;
        CREATE TRIGGER messages_au AFTER UPDATE OF text ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
            INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text);
        END;
        """,
    ),
    Migration(
        "003_memories",
        """
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL CHECK (scope IN ('global', 'project')),
            project TEXT,
            target TEXT NOT NULL CHECK (target IN ('memory', 'user', 'project', 'failure')),
            category TEXT CHECK (category IS NULL OR category IN
                ('failure', 'correction', 'insight', 'preference', 'convention', 'tool-quirk')),
            content TEXT NOT NULL,
            failure_reason TEXT,
            source TEXT NOT NULL CHECK (source IN ('markdown', 'extended')),
            created TEXT NOT NULL,
            last_used TEXT,
            hit_count INTEGER NOT NULL DEFAULT 0,
            CHECK ((scope = 'global') = (project IS NULL))
        );
        CREATE UNIQUE INDEX memories_unique ON memories(scope, ifnull(project, ''), target, content);
        CREATE INDEX memories_target ON memories(target, category);
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            content, failure_reason, content='memories', content_rowid='id', tokenize='trigram'
        );
        CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts(rowid, content, failure_reason)
            VALUES (new.id, new.content, new.failure_reason);
        END;
        CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, content, failure_reason)
            VALUES ('delete', old.id, old.content, old.failure_reason);
        END;
        CREATE TRIGGER memories_au AFTER UPDATE OF content, failure_reason ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, content, failure_reason)
            VALUES ('delete', old.id, old.content, old.failure_reason);
            INSERT INTO memories_fts(rowid, content, failure_reason)
            VALUES (new.id, new.content, new.failure_reason);
        END;
        """,
    ),
    Migration("004_meta", "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"),
    Migration(
        "005_messages_fts_words",
        """
        DROP TRIGGER IF EXISTS messages_ai;
        DROP TRIGGER IF EXISTS messages_ad;
        DROP TRIGGER IF EXISTS messages_au;
        DROP TABLE IF EXISTS messages_fts;
        ALTER TABLE messages ADD COLUMN fts_text TEXT;
        """,
        _to_word_index,
    ),
    Migration("006_pending_paths", "CREATE TABLE pending_paths (path TEXT PRIMARY KEY) WITHOUT ROWID;"),
    Migration(
        "007_memories_fts_words",
        f"""
        DROP TRIGGER IF EXISTS memories_ai;
        DROP TRIGGER IF EXISTS memories_ad;
        DROP TRIGGER IF EXISTS memories_au;
        DROP TABLE IF EXISTS memories_fts;
        CREATE VIRTUAL TABLE memories_fts USING fts5(text, content='', columnsize=0, tokenize='{TOKENIZER}');
        CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts(rowid, text) VALUES (new.id, {_MEMORY_FORM.format(row="new")});
        END;
        CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.id, {_MEMORY_FORM.format(row="old")});
        END;
        CREATE TRIGGER memories_au AFTER UPDATE OF content, failure_reason ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.id, {_MEMORY_FORM.format(row="old")});
            INSERT INTO memories_fts(rowid, text) VALUES (new.id, {_MEMORY_FORM.format(row="new")});
        END;
        INSERT INTO memories_fts(rowid, text)
            SELECT id, {_MEMORY_FORM.format(row="memories")} FROM memories;
        """,
    ),
]

RebuildHook = Callable[[sqlite3.Connection, Path], None]
"""Called as ``rebuild(conn, damaged_copy)`` on the fresh database after a corrupt one was set aside."""


def index_path(data_dir: Path | str) -> Path:
    return Path(data_dir) / INDEX_FILE


def now_iso() -> str:
    """UTC now as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (the form session files use, so strings sort by time)."""
    dt = datetime.now(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection, immediate: bool = True) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolls back when the block raises. Not re-entrant."""
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def split_statements(sql: str) -> list[str]:
    """Split a script into complete statements (``CREATE TRIGGER ... END;`` stays whole)."""
    out: list[str] = []
    buf = ""
    for piece in sql.split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \n\t;"):
                out.append(buf.strip())
            buf = ""
    return out


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY rowid")]


def migrate(conn: sqlite3.Connection, migrations: list[Migration] | None = None) -> list[str]:
    """Apply the steps not yet recorded, in order, each in one transaction. Returns the names applied now.

    Safe when several processes migrate at once: each step re-checks under ``BEGIN IMMEDIATE``. Steps recorded
    by a newer version of pi-memory that this version does not know are left alone.
    """
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


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA secure_delete = OFF")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -65536")
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


def _open_checked(path: Path, check: bool | None) -> sqlite3.Connection:
    try:
        conn = _connect(path)
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            raise _Corrupt(str(exc)) from exc
        raise
    try:
        _check(conn, path, check)
        migrate(conn)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if is_corruption(exc):
            raise _Corrupt(str(exc)) from exc
        raise
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
    """Copy the memories still readable in the damaged file (extended store, usage counts; and the semantic
    store's rows when :mod:`pi_memory.semantic` is installed) and the sessions (:mod:`.salvage`: the rows, or
    the files to read again), then mirror the Markdown stores again."""
    from pi_memory.index.mirror import salvage_memories, sync_markdown
    from pi_memory.index.salvage import salvage_sessions

    salvage_memories(conn, damaged)
    salvage_sessions(conn, damaged)
    try:  # the semantic store also lives only in this file (optional module)
        from pi_memory.semantic.schema import salvage_semantic
    except ImportError:
        salvage_semantic = None
    if salvage_semantic is not None:
        salvage_semantic(conn, damaged)
    sync_markdown(conn, damaged.parent)


def open_index(
    data_dir: Path | str, check: bool | None = None, rebuild: RebuildHook | None = _default_rebuild
) -> sqlite3.Connection:
    """Open (creating and migrating as needed) ``<data_dir>/index.sqlite3``; repair it once if it is corrupt.

    ``check``: ``None`` runs ``PRAGMA quick_check`` on files up to ``QUICK_CHECK_MAX_BYTES``; ``True`` always;
    ``False`` only probes the schema. ``rebuild`` runs on the fresh database after a corrupt one was set aside.
    Raises :class:`IndexUnavailableError` when the file cannot be repaired (see the module docstring).
    """
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = index_path(data_dir)
    try:
        return _open_checked(path, check)
    except _Corrupt as first:
        return _recover(path, check, rebuild, first.detail)


def _recover(path: Path, check: bool | None, rebuild: RebuildHook | None, detail: str) -> sqlite3.Connection:
    lock_path = path.with_name(path.name + ".rebuild.lock")
    try:
        with FileLock(lock_path, timeout=REBUILD_LOCK_TIMEOUT_S):
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
                    "tool rewriting the folder), then delete the file and run `pi-memory reindex`."
                )
            moved = _quarantine(path)
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
                rebuild(conn, moved)
            return conn
    except Timeout:
        raise IndexUnavailableError(
            f"The search index {path} is damaged and another process has held the repair lock "
            f"({lock_path.name}) for over {REBUILD_LOCK_TIMEOUT_S:.0f} s. Wait for it to finish, or if no "
            "pi-memory process is running, delete the index file and run `pi-memory reindex`."
        ) from None


def meta_get(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None
