"""Opening the team store for ``pi-memory serve --database-url``: the pool, the PostgreSQL backend, the token
store, and the copy between an embedded store and the team store (``serve import`` / ``serve export``).

Auth mode: when the database holds at least one active per-user token, the server accepts only those (plus the
shared token when one was given explicitly with ``--token`` / ``$PI_MEMORY_SERVER_TOKEN``: small teams may keep
one); with no per-user token yet it falls back to the one shared team token, as the embedded server does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_memory.safety.urls import redact_url
from pi_memory.semantic.backend import BackendError
from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.backends.team_auth import TokenStore

DATABASE_URL_ENV = "PI_MEMORY_DATABASE_URL"


@dataclass
class Team:
    backend: PostgresBackend
    tokens: TokenStore
    per_user: bool
    where: str
    projects: Any = None  # team_projects.ProjectRoutes

    def close(self) -> None:
        self.backend.close()


def open_team(database_url: str, embedder: dict[str, Any] | None = None, *, shared_token: str | None = None,
              max_connections: int = 8, ef_search: int | None = None, project_char_limit: int | None = None) -> Team:
    """The team store on ``database_url``; ``ef_search``: ``hnsw.ef_search`` per vector query (default
    :data:`~.postgres.EF_SEARCH`); ``project_char_limit``: the shared project stores' limit (default the curated
    project store's)."""
    from pi_memory.config import DEFAULT_MEMORY_CHAR_LIMIT
    from pi_memory.embed import get_embedder
    from pi_memory.semantic.backends.postgres import EF_SEARCH
    from pi_memory.semantic.backends.rest_runner import ServeError
    from pi_memory.semantic.backends.team_projects import ProjectRoutes

    try:
        pool = open_pool(database_url, max_size=max_connections)
    except BackendError as exc:
        raise ServeError(str(exc)) from exc
    tokens = TokenStore(pool, shared_token=shared_token)
    try:
        backend = PostgresBackend(pool, get_embedder(embedder), ef_search=ef_search or EF_SEARCH)
    except ValueError as exc:
        pool.close()
        raise ServeError(str(exc)) from exc
    return Team(backend, tokens, tokens.has_tokens(), redact_url(database_url),
                ProjectRoutes(pool, tokens, project_char_limit or DEFAULT_MEMORY_CHAR_LIMIT))


def open_tokens(database_url: str) -> TokenStore:
    """The token store alone (``serve token …``, ``serve audit``): no embedder is loaded."""
    return TokenStore(open_pool(database_url, max_size=2))


# --- copy between stores -------------------------------------------------------------------------------
_HISTORY_KEYS = ("event", "old_text", "new_text", "related_id", "reason", "at", "seq")
_SQLITE_COLS = ("id, user_id, project_id, agent_id, text, hash, status, created_at, updated_at, observed_at, "
                "superseded_by, superseded_at, source, metadata")


def sqlite_rows(index_path: Path) -> Iterator[dict[str, Any]]:
    """Every semantic memory of an embedded store (all scopes, all statuses), with its history and vectors."""
    import sqlite3

    conn = sqlite3.connect(f"file:{index_path}?mode=ro", uri=True)
    try:
        history: dict[str, list[dict[str, Any]]] = {}
        for r in conn.execute("SELECT memory_id, event, old_text, new_text, related_id, reason, at, id FROM "
                              "semantic_history ORDER BY id"):
            history.setdefault(r[0], []).append(dict(zip(_HISTORY_KEYS, r[1:], strict=True)))
        vectors: dict[str, list[dict[str, Any]]] = {}
        for mid, model, dim, blob in conn.execute("SELECT memory_id, model, dim, vector FROM semantic_vectors"):
            import numpy as np

            vectors.setdefault(mid, []).append({"model": model, "dim": dim,
                                                "vector": np.frombuffer(blob, dtype="<f4").tolist()})
        for r in conn.execute(f"SELECT {_SQLITE_COLS} FROM semantic_memories ORDER BY pk"):
            row = dict(zip([c.strip() for c in _SQLITE_COLS.split(",")], r, strict=True))
            row["source"] = json.loads(row["source"] or "{}")
            row["metadata"] = json.loads(row["metadata"] or "{}")
            row["history"] = history.get(row["id"], [])
            row["vectors"] = vectors.get(row["id"], [])
            yield row
    finally:
        conn.close()


def import_rows(backend: PostgresBackend, rows: Iterator[dict[str, Any]]) -> dict[str, int]:
    """Copy rows (as :func:`sqlite_rows` yields them, or :func:`export_rows` wrote them) into the team store
    with their ids, statuses, history (in its original order) and vectors, in one transaction: all or nothing.
    A row whose id is already there is skipped, so running a copy again adds only what is new."""
    from psycopg.types.json import Jsonb

    from pi_memory.semantic.backends.postgres import _vector_literal

    counts = {"memories": 0, "skipped": 0, "history": 0, "vectors": 0}
    pending_links: list[tuple[str, str]] = []
    events: list[tuple[int, dict[str, Any], dict[str, Any]]] = []
    with backend.pool.connection() as conn, conn.transaction():
        for row in rows:
            cur = conn.execute(
                "INSERT INTO semantic_memories(id, user_id, project_id, agent_id, text, hash, status, created_at, "
                "updated_at, observed_at, superseded_by, superseded_at, source, metadata) VALUES "
                "(%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,NULL,%s,%s,%s) ON CONFLICT (id) DO NOTHING",
                (row["id"], row["user_id"], row["project_id"] or "", row["agent_id"] or "", row["text"],
                 row["hash"], row["status"], row["created_at"], row["updated_at"], row["observed_at"],
                 row["superseded_at"], Jsonb(row["source"]), Jsonb(row["metadata"])))
            if cur.rowcount == 0:
                counts["skipped"] += 1
                continue
            counts["memories"] += 1
            if row.get("superseded_by"):
                pending_links.append((row["id"], row["superseded_by"]))
            events += [(int(h.get("seq") or 0), row, h) for h in row.get("history", [])]
            for v in row.get("vectors", []):
                conn.execute("INSERT INTO semantic_vectors(memory_id, model, dim, embedding) VALUES "
                             "(%s,%s,%s,%s::vector) ON CONFLICT DO NOTHING",
                             (row["id"], v["model"], v["dim"], _vector_literal(v["vector"])))
                counts["vectors"] += 1
        for _seq, row, h in sorted(events, key=lambda e: e[0]):
            conn.execute("INSERT INTO semantic_history(memory_id, user_id, project_id, agent_id, event, old_text, "
                         "new_text, related_id, reason, at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                         (row["id"], row["user_id"], row["project_id"] or "", row["agent_id"] or "", h["event"],
                          h["old_text"], h["new_text"], h["related_id"], h["reason"], h["at"]))
            counts["history"] += 1
        for old, new in pending_links:
            conn.execute("UPDATE semantic_memories SET superseded_by = %s WHERE id = %s", (new, old))
    return counts


def export_rows(backend: PostgresBackend) -> Iterator[dict[str, Any]]:
    """Every memory of the team store with its history and vectors (the shape :func:`import_rows` reads)."""
    from pi_memory.semantic.backends.postgres import _COLS

    cols = [c.strip() for c in _COLS.split(",")]
    with backend.pool.connection() as conn:
        history: dict[str, list[dict[str, Any]]] = {}
        for r in conn.execute("SELECT memory_id, event, old_text, new_text, related_id, reason, at, id FROM "
                              "semantic_history ORDER BY id"):
            history.setdefault(r[0], []).append(dict(zip(_HISTORY_KEYS, r[1:], strict=True)))
        vectors: dict[str, list[dict[str, Any]]] = {}
        for mid, model, dim, text in conn.execute("SELECT memory_id, model, dim, embedding::text FROM semantic_vectors"):
            vectors.setdefault(mid, []).append({"model": model, "dim": dim, "vector": json.loads(text)})
        for r in conn.execute(f"SELECT {_COLS} FROM semantic_memories ORDER BY pk"):
            row = dict(zip(cols, r, strict=True))
            row["history"] = history.get(row["id"], [])
            row["vectors"] = vectors.get(row["id"], [])
            yield row


__all__ = ["DATABASE_URL_ENV", "Team", "export_rows", "import_rows", "open_team", "open_tokens", "sqlite_rows"]
