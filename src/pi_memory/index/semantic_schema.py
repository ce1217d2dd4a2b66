"""Schema of the semantic tables in the index database, and their salvage after corruption. The index owns every
table of its file, so the semantic store (:mod:`pi_memory.semantic`) keeps its rows here and a corruption rebuild
(:mod:`.db`) carries them over without reaching up into the semantic package.

Tables (``SEMANTIC_MIGRATIONS``, names prefixed ``semantic_``, applied with :func:`pi_memory.index.db.migrate`
when a backend opens the index):

* ``semantic_memories``: one row per memory version. ``pk`` (FTS rowid), ``id`` (uuid4 text), scope columns
  ``user_id`` / ``project_id`` / ``agent_id`` (``''`` when absent, so every filter is a plain ``=``), ``text``,
  ``hash`` (:func:`~pi_memory.semantic.models.text_hash`), ``status`` (active | superseded | deleted),
  ``created_at`` / ``updated_at`` / ``observed_at``, ``superseded_by`` / ``superseded_at``, ``source`` and
  ``metadata`` (JSON), ``seq`` (bumped on every insert or status change; see :mod:`.vectors`). The
  ``(scope, seq, status, id)`` index covers the matrix sync query.
* ``semantic_history``: append-only events (ADD, UPDATE, DELETE, SUPERSEDE) with the scope columns.
* ``semantic_vectors``: ``(memory_id, model) → dim, vector`` (float32 little-endian BLOB, ``dim × 4`` bytes)
  with the scope columns. A rowid table (a 1.5 KB row fits in a 4 KB table page; in a WITHOUT ROWID table it
  would spill to overflow pages) indexed on ``(model, scope)``: entries with one key are in rowid order, so
  loading a scope's matrix reads the rows in insertion order instead of one random lookup per memory.
* ``semantic_words`` (migration 006): the FTS5 word index of ``text`` (``unicode61 remove_diacritics 2``,
  every CJK character its own token: ``pm_fts_form``, :mod:`.words`), contentless and without row lengths
  (``columnsize=0``), kept in sync by the triggers ``semantic_memories_words_ai/ad/au`` (a contentless index
  must be told on delete exactly the text it indexed, which they compute from the row). Migration 006 drops
  the first index, ``semantic_fts`` (``tokenize='trigram'``, migration 002), and its triggers, and indexes
  every existing row in batches. Read by :mod:`pi_memory.semantic.keyword`.
* ``semantic_curated_vectors`` (migration 003): one vector per (curated entry of the index's ``memories``
  table, model): ``memory_id``, ``model``, ``dim``, ``vector`` (as above), ``text`` (exactly what was embedded,
  so an entry whose text changed is re-embedded, never matched with its old vector). See :mod:`.turn_vectors`.
* ``semantic_turn_vectors`` (migration 004): one vector per (session turn of the index's ``messages`` table,
  model), with the turn's ``project_id`` (``''`` for none) copied from its session so a project's matrix loads
  with one range scan of ``(model, project_id, id)``.
* ``semantic_turn_vectors_gone`` (migration 007): a record (``seq``, the row's ``id`` and ``message_id``) of
  each turn vector row deleted (its message's cascade included), updated, or about to be replaced by an
  insert of the same ``(message_id, model)``, written by the triggers ``semantic_turn_vectors_gone_ad/au/bi``;
  the newest ``GONE_KEEP`` are kept. The turn matrix maps message ids to vector rows and needs to know which
  rows went (:mod:`pi_memory.semantic.turn_matrix`).
* ``semantic_skill_vectors`` (migration 005): one vector per (skill, model): ``skill`` is the ``SKILL.md``
  path (skills live in files, not in this database, so there is no row to reference), ``hash`` the SHA-256 of
  exactly what was embedded (name and description), so a changed skill is embedded again once and an
  unchanged one never (:mod:`pi_memory.retrieval.sources_skills`).

* ``semantic_vectors_usable`` (migration 008): a partial index of ``semantic_vectors`` on ``(memory_id, model,
  dim)`` holding the rows whose blob is ``dim × 4`` bytes long, so the count of memories without a usable vector
  (:mod:`pi_memory.semantic.embedded_reembed`) reads index entries, not every 1.5 KB vector row. Its query names
  it (``INDEXED BY``): SQLite's planner prefers the ``(memory_id, model)`` unique index, which does not hold the
  blob's length. Readers do not need it (an index without it is counted the old way).

Both vector tables key rows by an ``AUTOINCREMENT`` id that is never reused: the in-memory matrices
(:mod:`.sources`) pick up new rows with ``id > last seen``, and a row that was replaced or deleted cannot come
back under the same id. Their ``ON DELETE CASCADE`` foreign keys drop a vector with its entry or message (the
index's connections run with ``foreign_keys=ON``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from pi_memory.index.damaged import open_damaged, read_rows, table_names
from pi_memory.index.db import Migration, migrate, transaction
from pi_memory.index.words import SQL_FTS_FORM, TOKENIZER

SCOPE_SQL = "user_id = ? AND project_id = ? AND agent_id = ?"
M_SCOPE_SQL = "m.user_id = ? AND m.project_id = ? AND m.agent_id = ?"

WORDS_TABLE = "semantic_words"
GONE_TABLE = "semantic_turn_vectors_gone"  # migration 007: the turn vector rows that went
USABLE_INDEX = "semantic_vectors_usable"  # migration 008: the vectors whose blob is as long as their dimension says
USABLE_SQL = "length({v}vector) = {v}dim * 4"  # its WHERE (``{v}``: a table alias and dot); a query repeats it
GONE_KEEP = 100_000  # records of gone rows kept (older ones are dropped every GONE_PRUNE_EVERY records)
GONE_PRUNE_EVERY = 1000
_FILL_BATCH = 5000  # rows indexed per statement when migration 006 fills the word index

_WORDS_TRIGGERS = f"""
CREATE TRIGGER semantic_memories_words_ai AFTER INSERT ON semantic_memories BEGIN
    INSERT INTO {WORDS_TABLE}(rowid, text) VALUES (new.pk, {SQL_FTS_FORM}(new.text));
END;
CREATE TRIGGER semantic_memories_words_ad AFTER DELETE ON semantic_memories BEGIN
    INSERT INTO {WORDS_TABLE}({WORDS_TABLE}, rowid, text) VALUES ('delete', old.pk, {SQL_FTS_FORM}(old.text));
END;
CREATE TRIGGER semantic_memories_words_au AFTER UPDATE OF text ON semantic_memories BEGIN
    INSERT INTO {WORDS_TABLE}({WORDS_TABLE}, rowid, text) VALUES ('delete', old.pk, {SQL_FTS_FORM}(old.text));
    INSERT INTO {WORDS_TABLE}(rowid, text) VALUES (new.pk, {SQL_FTS_FORM}(new.text));
END;
"""


def _fill_words(conn: sqlite3.Connection) -> None:
    """Migration 006: index every existing memory in the word index, ``_FILL_BATCH`` rows per statement (a
    large store is never read into memory at once), then merge the index into one segment."""
    last = 0
    while True:
        top = conn.execute("SELECT max(pk) FROM (SELECT pk FROM semantic_memories WHERE pk > ? ORDER BY pk "
                           "LIMIT ?)", (last, _FILL_BATCH)).fetchone()[0]
        if top is None:
            break
        conn.execute(f"INSERT INTO {WORDS_TABLE}(rowid, text) SELECT pk, {SQL_FTS_FORM}(text) "
                     "FROM semantic_memories WHERE pk > ? AND pk <= ?", (last, top))
        last = top
    conn.execute(f"INSERT INTO {WORDS_TABLE}({WORDS_TABLE}) VALUES ('optimize')")


SEMANTIC_MIGRATIONS: list[Migration] = [
    Migration(
        "semantic_001_tables",
        """
        CREATE TABLE semantic_memories (
            pk INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            project_id TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL,
            hash TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'deleted')),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            observed_at TEXT,
            superseded_by TEXT,
            superseded_at TEXT,
            source TEXT NOT NULL DEFAULT '{}',
            metadata TEXT NOT NULL DEFAULT '{}',
            seq INTEGER NOT NULL
        );
        CREATE INDEX semantic_memories_scope_seq ON semantic_memories(user_id, project_id, agent_id, seq, status, id);
        CREATE INDEX semantic_memories_scope_hash ON semantic_memories(user_id, project_id, agent_id, hash);
        CREATE INDEX semantic_memories_seq ON semantic_memories(seq);
        CREATE INDEX semantic_memories_superseded_by ON semantic_memories(superseded_by);
        CREATE TABLE semantic_history (
            id INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            project_id TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            event TEXT NOT NULL CHECK (event IN ('ADD', 'UPDATE', 'DELETE', 'SUPERSEDE')),
            old_text TEXT,
            new_text TEXT,
            related_id TEXT,
            reason TEXT,
            at TEXT NOT NULL
        );
        CREATE INDEX semantic_history_memory ON semantic_history(memory_id);
        CREATE TABLE semantic_vectors (
            id INTEGER PRIMARY KEY,
            model TEXT NOT NULL,
            user_id TEXT NOT NULL,
            project_id TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            memory_id TEXT NOT NULL REFERENCES semantic_memories(id) ON DELETE CASCADE,
            dim INTEGER NOT NULL CHECK (dim > 0),
            vector BLOB NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (memory_id, model)
        );
        CREATE INDEX semantic_vectors_scope ON semantic_vectors(model, user_id, project_id, agent_id);
        """,
    ),
    Migration(
        "semantic_002_fts_trigram",
        """
        CREATE VIRTUAL TABLE semantic_fts USING fts5(
            text, content='semantic_memories', content_rowid='pk', tokenize='trigram'
        );
        CREATE TRIGGER semantic_memories_ai AFTER INSERT ON semantic_memories BEGIN
            INSERT INTO semantic_fts(rowid, text) VALUES (new.pk, new.text);
        END;
        CREATE TRIGGER semantic_memories_ad AFTER DELETE ON semantic_memories BEGIN
            INSERT INTO semantic_fts(semantic_fts, rowid, text) VALUES ('delete', old.pk, old.text);
        END;
        CREATE TRIGGER semantic_memories_au AFTER UPDATE OF text ON semantic_memories BEGIN
            INSERT INTO semantic_fts(semantic_fts, rowid, text) VALUES ('delete', old.pk, old.text);
            INSERT INTO semantic_fts(rowid, text) VALUES (new.pk, new.text);
        END;
        """,
    ),
    Migration(
        "semantic_003_curated_vectors",
        """
        CREATE TABLE semantic_curated_vectors (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL CHECK (dim > 0),
            vector BLOB NOT NULL,
            text TEXT NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (memory_id, model)
        );
        CREATE INDEX semantic_curated_vectors_model ON semantic_curated_vectors(model, id);
        """,
    ),
    Migration(
        "semantic_004_turn_vectors",
        """
        CREATE TABLE semantic_turn_vectors (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            project_id TEXT NOT NULL DEFAULT '',
            dim INTEGER NOT NULL CHECK (dim > 0),
            vector BLOB NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (message_id, model)
        );
        CREATE INDEX semantic_turn_vectors_scope ON semantic_turn_vectors(model, project_id, id);
        """,
    ),
    Migration(
        "semantic_005_skill_vectors",
        """
        CREATE TABLE semantic_skill_vectors (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            skill TEXT NOT NULL,
            model TEXT NOT NULL,
            hash TEXT NOT NULL,
            dim INTEGER NOT NULL CHECK (dim > 0),
            vector BLOB NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (skill, model)
        );
        """,
    ),
    Migration(
        "semantic_006_words",
        f"""
        DROP TRIGGER IF EXISTS semantic_memories_ai;
        DROP TRIGGER IF EXISTS semantic_memories_ad;
        DROP TRIGGER IF EXISTS semantic_memories_au;
        DROP TABLE IF EXISTS semantic_fts;
        CREATE VIRTUAL TABLE {WORDS_TABLE} USING fts5(text, content='', columnsize=0, tokenize='{TOKENIZER}');
        {_WORDS_TRIGGERS}
        """,
        _fill_words,
    ),
    Migration(
        "semantic_007_turn_vectors_gone",
        f"""
        CREATE TABLE {GONE_TABLE} (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id INTEGER NOT NULL,
            message_id INTEGER NOT NULL
        );
        CREATE TRIGGER semantic_turn_vectors_gone_ad AFTER DELETE ON semantic_turn_vectors BEGIN
            INSERT INTO {GONE_TABLE}(id, message_id) VALUES (old.id, old.message_id);
        END;
        CREATE TRIGGER semantic_turn_vectors_gone_au AFTER UPDATE ON semantic_turn_vectors BEGIN
            INSERT INTO {GONE_TABLE}(id, message_id) VALUES (old.id, old.message_id);
        END;
        CREATE TRIGGER semantic_turn_vectors_gone_bi BEFORE INSERT ON semantic_turn_vectors BEGIN
            INSERT INTO {GONE_TABLE}(id, message_id) SELECT id, message_id FROM semantic_turn_vectors
                WHERE message_id = new.message_id AND model = new.model;
        END;
        CREATE TRIGGER semantic_turn_vectors_gone_prune AFTER INSERT ON {GONE_TABLE}
        WHEN new.seq % {GONE_PRUNE_EVERY} = 0 BEGIN
            DELETE FROM {GONE_TABLE} WHERE seq <= new.seq - {GONE_KEEP};
        END;
        """,
        readers_need=False,  # without it the turn matrix looks vector rows up as before
    ),
    Migration(
        "semantic_008_usable_vectors",
        f"CREATE INDEX {USABLE_INDEX} ON semantic_vectors(memory_id, model, dim) WHERE {USABLE_SQL.format(v='')};",
        readers_need=False,  # without it the stale count reads every vector row, as before
    ),
]


@dataclass
class SemanticCopy:
    """What :func:`copy_semantic` brought back: ``memories`` and ``history`` rows copied, ``skipped`` rows the new
    index refused, and ``unreadable``: the tables that could not be read to their end (or that a schema read
    only in part may have held)."""

    memories: int = 0
    history: int = 0
    skipped: int = 0
    unreadable: list[str] = field(default_factory=list)


def copy_semantic(conn: sqlite3.Connection, damaged: str | Path) -> SemanticCopy:
    """Copy the semantic rows still readable in a damaged index file into ``conn`` (a fresh database), the
    memories before their history; reading goes on past a damaged schema entry of another table, and text that
    is not UTF-8 is kept with U+FFFD (:mod:`.damaged`). History rows are kept even when their memory could not
    be read: :func:`pi_memory.index.salvage.rebuild_semantic_from_history` recreates the memory from them.
    Vectors are not copied: :meth:`EmbeddedBackend.reembed` recreates them (and ``pi-memory semantic
    embed-sessions`` those of curated entries and session turns). Errors writing ``conn`` propagate; a damaged
    file never raises."""
    migrate(conn, SEMANTIC_MIGRATIONS)
    report = SemanticCopy()
    src = open_damaged(damaged)
    if src is None:
        report.unreadable = [table for table, _ in _SALVAGE]
        return report
    try:
        names, whole_schema = table_names(src)
        read = {}
        for table, cols in _SALVAGE:
            if table not in names:
                if not whole_schema:
                    report.unreadable.append(table)
                continue
            read[table], complete = read_rows(src, f"SELECT {cols} FROM {table}")
            if not complete:
                report.unreadable.append(table)
    finally:
        src.close()
    for table, cols in _SALVAGE:
        marks = ",".join("?" * len(cols.split(",")))
        with transaction(conn):
            for row in read.get(table, []):
                try:
                    cur = conn.execute(f"INSERT OR IGNORE INTO {table}({cols}) VALUES ({marks})", row)
                except sqlite3.IntegrityError:  # a damaged value the schema refuses: that row only
                    report.skipped += 1
                    continue
                if table == "semantic_memories":
                    report.memories += cur.rowcount
                else:
                    report.history += cur.rowcount
    return report


def salvage_semantic(conn: sqlite3.Connection, damaged: str | Path) -> int:
    """Copy the semantic rows still readable in a damaged index file into ``conn`` (a fresh database); returns
    the memories copied (:func:`copy_semantic` tells more). Semantic memories live only in the index, so a
    corruption rebuild must carry them over (:mod:`pi_memory.index.repair` does)."""
    return copy_semantic(conn, damaged).memories


_SALVAGE = (
    ("semantic_memories", "id, user_id, project_id, agent_id, text, hash, status, created_at, updated_at, "
                          "observed_at, superseded_by, superseded_at, source, metadata, seq"),
    ("semantic_history", "memory_id, user_id, project_id, agent_id, event, old_text, new_text, related_id, "
                         "reason, at"),
)
