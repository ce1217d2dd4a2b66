"""The index schema: named migrations, applied in order by :func:`pi_memory.index.db.migrate`.

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
* ``008_redact_secrets``: credentials in stored text are redacted (:mod:`.redaction`; the step records the
  work, which :func:`~pi_memory.index.open_index` then does in batches).
* ``009_utc_timestamps``: message and session timestamps in one form, UTC with milliseconds (the readers write
  them so: :func:`pi_memory.index.readers.base.utc_ts`), since they are compared as text.
* ``011_turns_index``: ``messages_turns``, a partial index of the session turns (``conversation.TURN_SQL``) on
  ``(session_id, id, timestamp)``, for the neighbour seeks of recall's context windows.
* ``meta``: key/value facts (``rebuilds``: how many times this file was rebuilt after corruption,
  ``recovered_from``: where the corrupt copy went).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from pi_memory.index import redaction
from pi_memory.index.conversation import TURN_SQL
from pi_memory.index.segments import REFILL_KEY
from pi_memory.index.words import TOKENIZER, fts_form


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


@dataclass(frozen=True)
class Migration:
    """One schema step: ``sql`` (a script), then ``run(conn)`` when given, in the same transaction.
    ``readers_need``: an index without this step cannot be read by this version; ``False`` for a step that only
    speeds something up which works without it (a read-only index written by an older version is then read as
    it is: :func:`pi_memory.index.read_only.check_schema`)."""

    name: str
    sql: str
    run: Callable[[sqlite3.Connection], None] | None = None
    readers_need: bool = True


# A message the word index does not hold yet (a refill under way) must not be deleted from it: deleting a row a
# contentless FTS5 table lacks damages the index. The triggers act only on messages at or above the refill's mark.
_IN_WORD_INDEX = f"old.id >= ifnull((SELECT CAST(value AS INTEGER) FROM meta WHERE key = '{REFILL_KEY}'), 0)"

MESSAGES_DELETE_TRIGGER = (
    f"CREATE TRIGGER messages_ad AFTER DELETE ON messages WHEN {_IN_WORD_INDEX} BEGIN "
    "INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, coalesce(old.fts_text, old.text)); "
    "END"
)

_MESSAGES_UPDATE_TRIGGER = (
    f"CREATE TRIGGER messages_au AFTER UPDATE OF text, fts_text ON messages WHEN {_IN_WORD_INDEX} BEGIN "
    "INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, coalesce(old.fts_text, old.text)); "
    "INSERT INTO messages_fts(rowid, text) VALUES (new.id, coalesce(new.fts_text, new.text)); END"
)

_WORD_INDEX = (
    f"CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='', columnsize=0, tokenize='{TOKENIZER}');\n"
    + MESSAGES_DELETE_TRIGGER + ";\n" + _MESSAGES_UPDATE_TRIGGER + ";"
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

_STORED_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z"


def _utc_timestamps(conn: sqlite3.Connection) -> None:
    """Migration 009: message and session timestamps written with an offset or without milliseconds
    (``2026-12-04T09:00:00+14:00``) rewritten in the stored UTC form, as the readers now write them: they are
    compared as text, so a ``+14:00`` turn written an hour ago sorted after "now" and was never found. Only the
    rows not in that form are read (one scan of the time index)."""
    from pi_memory.index.readers.base import utc_ts

    for table, column in (("messages", "timestamp"), ("sessions", "started_at")):
        rows = conn.execute(f"SELECT id, {column} FROM {table} WHERE {column} IS NOT NULL AND {column} NOT GLOB ?",
                            (_STORED_GLOB,)).fetchall()
        changed = [(new, rid) for rid, ts in rows if (new := utc_ts(ts)) != ts]
        conn.executemany(f"UPDATE {table} SET {column} = ? WHERE id = ?", changed)


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
    Migration(redaction.MIGRATION_NAME, "", redaction.start),
    Migration("009_utc_timestamps", "", _utc_timestamps),
    Migration("010_word_index_refill_guard",
              "DROP TRIGGER IF EXISTS messages_ad;\nDROP TRIGGER IF EXISTS messages_au;\n"
              + MESSAGES_DELETE_TRIGGER + ";\n" + _MESSAGES_UPDATE_TRIGGER + ";", readers_need=False),
    # recall's context windows seek the nearest turns of a session: with only ``messages_session`` each row in
    # between was read for its kind, role, length and time (tool output: whole pages of it)
    Migration("011_turns_index", f"CREATE INDEX IF NOT EXISTS messages_turns ON messages(session_id, id, timestamp) "
              f"WHERE {TURN_SQL};", readers_need=False),
]
