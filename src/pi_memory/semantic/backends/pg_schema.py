"""The team server's PostgreSQL schema: named migrations, each applied once, recorded in ``pi_memory_migrations``.

Tables (every memory row carries its scope columns ``user_id``, ``project_id``, ``agent_id``; ``""`` for an
absent part, as in the embedded store):

* ``semantic_memories``: one row per version of a fact (``status`` active / superseded / deleted,
  ``superseded_by``), ``tsv`` a generated ``tsvector`` (``simple`` configuration: no language's stemming is
  imposed on a team's mixed-language text) with a GIN index for the hybrid search's keyword list.
* ``semantic_history``: ADD / UPDATE / SUPERSEDE / DELETE events, with old and new text and the reason.
* ``semantic_vectors``: one vector per (memory, model), the model name and dimension recorded; pgvector's
  ``vector`` type without a fixed dimension, indexed per (model, dimension) by a partial HNSW index on
  ``embedding::vector(dim)`` with cosine distance, created when a model is first used
  (:func:`ensure_vector_index`).
* ``api_tokens``: per-user bearer tokens, stored as SHA-256 hashes only (:mod:`.team_auth`).
* ``audit_log``: every write with the token's user.
* ``project_stores``: the shared project stores a team edits together (:mod:`.team_projects`): one row per
  (project, target) with its curated entries (a JSON list of strings) and a version bumped by every write.
* ``pi_memory_keys``: the database's own random keys, by name; ``id-redaction`` keys the placeholders that
  replace credentials found in stored ids (:mod:`.pg_clean`). Never exported.
* ``pi_memory_sweeps``: per table, the last row read for credentials at a start and the scanner's
  fingerprint then; ``pi_memory_reembed``: memories whose vectors were dropped when their text was redacted,
  to embed again (:mod:`.pg_sweep`).

Migrations run under a transaction-level advisory lock, so several ``serve`` processes starting at once
apply each step exactly once.
"""

from __future__ import annotations

import hashlib

from psycopg import Connection, sql

MIGRATIONS: list[tuple[str, str]] = [
    ("pg_001_semantic", """
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE semantic_memories (
            pk BIGSERIAL PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL, project_id TEXT NOT NULL DEFAULT '', agent_id TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL, hash TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'deleted')),
            created_at TEXT NOT NULL, updated_at TEXT NOT NULL, observed_at TEXT NOT NULL,
            superseded_by TEXT, superseded_at TEXT,
            source JSONB NOT NULL DEFAULT '{}'::jsonb, metadata JSONB NOT NULL DEFAULT '{}'::jsonb,
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED
        );
        CREATE INDEX semantic_memories_scope ON semantic_memories (user_id, project_id, agent_id, status, pk);
        CREATE UNIQUE INDEX semantic_memories_active_hash ON semantic_memories (user_id, project_id, agent_id, hash)
            WHERE status = 'active';
        CREATE INDEX semantic_memories_tsv ON semantic_memories USING gin (tsv);
        CREATE INDEX semantic_memories_superseded_by ON semantic_memories (superseded_by);
        CREATE TABLE semantic_history (
            id BIGSERIAL PRIMARY KEY,
            memory_id TEXT NOT NULL,
            user_id TEXT NOT NULL, project_id TEXT NOT NULL DEFAULT '', agent_id TEXT NOT NULL DEFAULT '',
            event TEXT NOT NULL, old_text TEXT, new_text TEXT, related_id TEXT, reason TEXT, at TEXT NOT NULL
        );
        CREATE INDEX semantic_history_memory ON semantic_history (memory_id);
        CREATE TABLE semantic_vectors (
            memory_id TEXT NOT NULL REFERENCES semantic_memories(id) ON DELETE CASCADE,
            model TEXT NOT NULL, dim INTEGER NOT NULL, embedding vector NOT NULL,
            PRIMARY KEY (memory_id, model)
        );
    """),
    ("pg_002_tokens_audit", """
        CREATE TABLE api_tokens (
            id TEXT PRIMARY KEY, user_id TEXT NOT NULL, admin BOOLEAN NOT NULL DEFAULT false,
            token_hash TEXT NOT NULL UNIQUE, label TEXT, created_at TEXT NOT NULL, revoked_at TEXT
        );
        CREATE TABLE audit_log (
            id BIGSERIAL PRIMARY KEY, at TEXT NOT NULL, token_id TEXT, user_id TEXT NOT NULL, admin BOOLEAN NOT NULL,
            action TEXT NOT NULL, memory_id TEXT, scope TEXT NOT NULL, detail JSONB NOT NULL DEFAULT '{}'::jsonb
        );
        CREATE INDEX audit_log_at ON audit_log (at);
    """),
    ("pg_003_project_stores", """
        CREATE TABLE project_stores (
            project_id TEXT NOT NULL, target TEXT NOT NULL DEFAULT 'project',
            entries JSONB NOT NULL DEFAULT '[]'::jsonb, version BIGINT NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL, updated_by TEXT,
            PRIMARY KEY (project_id, target)
        );
    """),
    ("pg_004_keys", """
        CREATE TABLE pi_memory_keys (
            name TEXT PRIMARY KEY, value TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
    """),
    ("pg_005_sweeps", """
        CREATE TABLE pi_memory_sweeps (
            name TEXT PRIMARY KEY, scanner TEXT NOT NULL, last_key BIGINT NOT NULL,
            at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
        CREATE TABLE pi_memory_reembed (
            memory_id TEXT PRIMARY KEY, queued_at TIMESTAMPTZ NOT NULL DEFAULT now()
        );
    """),
]
LOCK_KEY = 0x70694D656D  # "piMem": the advisory lock serialising migrations across processes


def migrate(conn: Connection) -> list[str]:
    """Apply the migrations ``conn``'s database lacks, in order, each in its own transaction; returns the
    names applied now."""
    applied_now: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        conn.execute("CREATE TABLE IF NOT EXISTS pi_memory_migrations (name TEXT PRIMARY KEY, applied_at "
                     "TIMESTAMPTZ NOT NULL DEFAULT now())")
        done = {r[0] for r in conn.execute("SELECT name FROM pi_memory_migrations")}
        for name, script in MIGRATIONS:
            if name in done:
                continue
            with conn.transaction():
                conn.execute(script)
                conn.execute("INSERT INTO pi_memory_migrations(name) VALUES (%s)", (name,))
            applied_now.append(name)
    return applied_now


def applied(conn: Connection) -> list[str]:
    """Names of the migrations this database has, oldest first."""
    rows = conn.execute("SELECT name FROM pi_memory_migrations ORDER BY applied_at, name").fetchall()
    return [r[0] for r in rows]


def vector_index_name(model: str, dim: int) -> str:
    return "semantic_vectors_hnsw_" + hashlib.sha256(f"{model}\0{dim}".encode()).hexdigest()[:16]


HNSW_BUILD = (16, 128)  # (m, ef_construction): pgvector's m, twice its ef_construction (docs/architecture.md)


def ensure_vector_index(conn: Connection, model: str, dim: int, m: int = HNSW_BUILD[0],
                        ef_construction: int = HNSW_BUILD[1]) -> None:
    """The partial HNSW index (cosine) over this model's vectors; the model is a literal in the predicate so
    the planner can match it (a bound parameter could not). ``m`` / ``ef_construction`` apply when the index
    is created; an existing index keeps the values it was built with (drop it to rebuild with others)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        conn.execute(sql.SQL("CREATE INDEX IF NOT EXISTS {} ON semantic_vectors USING hnsw "
                             "((embedding::vector({})) vector_cosine_ops) WITH (m = {}, ef_construction = {}) "
                             "WHERE model = {} AND dim = {}").format(
            sql.Identifier(vector_index_name(model, dim)), sql.Literal(int(dim)), sql.Literal(int(m)),
            sql.Literal(int(ef_construction)), sql.Literal(model), sql.Literal(int(dim))))
