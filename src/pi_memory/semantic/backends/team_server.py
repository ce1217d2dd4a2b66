"""Opening the team store for ``pi-memory serve --database-url``: the pool, the PostgreSQL backend, the token
store, and the copy between an embedded store and the team store (``serve export`` here; ``serve import``,
which applies an add's checks to every row, in :mod:`.team_import`).

Auth mode: when the database holds at least one active per-user token, the server accepts only those (plus the
shared token when one was given explicitly with ``--token`` / ``$PI_MEMORY_SERVER_TOKEN``: small teams may keep
one); with no per-user token yet it falls back to the one shared team token, as the embedded server does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pi_memory.semantic.backend import BackendError
from pi_memory.semantic.backends.pg_connect import shown
from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.backends.team_auth import TokenStore
from pi_memory.semantic.backends.team_import import (
    ImportProblem,
    ImportReport,
    import_rows,
    jsonl_rows,
    sqlite_rows,
)

DATABASE_URL_ENV = "PI_MEMORY_DATABASE_URL"


@dataclass
class Team:
    backend: PostgresBackend
    tokens: TokenStore
    per_user: bool
    where: str
    projects: Any = None  # team_projects.ProjectRoutes
    reembed: Any = None  # team_reembed.ReembedLoop, once started

    def start_reembed(self, every: float | None = None, cap: int | None = None,
                      report: Any = None) -> None:
        """Embed what an import (or a start's sweep) queues while the server runs (:mod:`.team_reembed`):
        a pass every ``every`` seconds (default :data:`~.team_reembed.EVERY_S`), ``cap`` memories at most each."""
        from pi_memory.semantic.backends import team_reembed

        self.reembed = team_reembed.ReembedLoop(self.backend, every=every or team_reembed.EVERY_S,
                                                cap=cap or team_reembed.CAP, report=report).start()

    def close(self) -> None:
        if self.reembed is not None:
            self.reembed.stop()
        self.backend.close()


def open_team(database_url: str, embedder: dict[str, Any] | None = None, *, shared_token: str | None = None,
              max_connections: int = 8, ef_search: int | None = None, project_char_limit: int | None = None,
              on_clean: Any = None) -> Team:
    """The team store on ``database_url``; ``ef_search``: ``hnsw.ef_search`` per vector query (default
    :data:`~.postgres.EF_SEARCH`); ``project_char_limit``: the shared project stores' limit (default the curated
    project store's); ``on_clean``: gets the report when stored ids holding a credential were rewritten at
    this start (:func:`~.pg_clean.clean_stored_ids`)."""
    from pi_memory.config import DEFAULT_MEMORY_CHAR_LIMIT
    from pi_memory.embed import get_embedder
    from pi_memory.semantic.backends.postgres import EF_SEARCH
    from pi_memory.semantic.backends.rest_runner import ServeError
    from pi_memory.semantic.backends.team_projects import ProjectRoutes

    try:
        pool = open_pool(database_url, max_size=max_connections, on_clean=on_clean)
    except BackendError as exc:
        raise ServeError(str(exc)) from exc
    tokens = TokenStore(pool, shared_token=shared_token)
    try:
        backend = PostgresBackend(pool, get_embedder(embedder), ef_search=ef_search or EF_SEARCH)
    except ValueError as exc:
        pool.close()
        raise ServeError(str(exc)) from exc
    from pi_memory.semantic.backends.team_reembed import embed_pass

    embed_pass(backend)  # queued by an import or this start's sweep (pg_sweep); more: Team.start_reembed
    return Team(backend, tokens, tokens.has_tokens(), shown(database_url),
                ProjectRoutes(pool, tokens, project_char_limit or DEFAULT_MEMORY_CHAR_LIMIT))


def open_tokens(database_url: str) -> TokenStore:
    """The token store alone (``serve token …``, ``serve audit``): no embedder is loaded."""
    return TokenStore(open_pool(database_url, max_size=2))


# --- copy between stores (serve import: team_import) ----------------------------------------------------
_HISTORY_KEYS = ("event", "old_text", "new_text", "related_id", "reason", "at", "seq")


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


def project_store_rows(backend: PostgresBackend) -> list[dict[str, Any]]:
    """Every shared project store as the line ``serve export`` writes for it (:mod:`.team_project_copy`)."""
    from pi_memory.semantic.backends.team_project_copy import project_store_rows as rows

    with backend.pool.connection() as conn:
        return rows(conn)


__all__ = ["DATABASE_URL_ENV", "ImportProblem", "ImportReport", "Team", "export_rows", "import_rows", "jsonl_rows",
           "open_team", "open_tokens", "project_store_rows", "sqlite_rows"]
