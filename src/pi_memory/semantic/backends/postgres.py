"""The team store: semantic memories in PostgreSQL with pgvector, shared by any number of ``serve`` processes.

Same contract as the embedded store (:mod:`pi_memory.semantic.backend`): every statement carries the scope
filter, per-id calls look the id up *with* it (another scope's id is "not found"), nothing is erased (delete
marks, update supersedes, history kept), text is cleaned by the same :func:`~pi_memory.semantic.embedded.clean_text`
(credentials redacted, threat scanner) before it is stored.

Search is the embedded store's hybrid: a keyword list (PostgreSQL full-text search, ``simple`` configuration,
any of the query's terms, ranked by ``ts_rank_cd``) and a vector list (pgvector cosine distance over the
model's partial HNSW index, ``hnsw.iterative_scan`` so a scope filter still fills ``top_k``), fused by the
same reciprocal rank fusion (:func:`pi_memory.retrieval.fusion.rrf_fuse`). ``exact=True`` on
:meth:`PostgresBackend.vector_candidates` skips the index (the benchmark's recall@10 reference).

Concurrency: no state lives in the process but a connection pool; the unique index on the active hash of a
scope makes two concurrent adds of one fact store it once (the loser reads the winner's row); an update
locks the old row (``FOR UPDATE``) so two updates of one memory cannot both supersede it. Every query is
parameterised.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from psycopg import errors, sql
from psycopg.types.json import Jsonb

from pi_memory.retrieval.fusion import RRF_K, rrf_fuse
from pi_memory.semantic.backend import BackendError, MemoryNotFoundError
from pi_memory.semantic.backends import pg_schema
from pi_memory.semantic.embedded import IDENTITY_KEYS, clean_text
from pi_memory.semantic.models import (
    HistoryEvent,
    MemorySource,
    Scope,
    ScoreDetails,
    SemanticHit,
    SemanticMemory,
    now_iso,
    text_hash,
)
from pi_memory.semantic.sanitize import check_observed_at, clean_metadata, clean_reason, clean_source
from pi_memory.semantic.terms import keyword_terms

log = logging.getLogger(__name__)

CANDIDATES = 50
SCOPE = "user_id = %s AND project_id = %s AND agent_id = %s"
_COLS = ("id, text, user_id, project_id, agent_id, created_at, updated_at, observed_at, status, superseded_by, "
         "superseded_at, source, metadata, hash")


def _row(r: Sequence[Any]) -> SemanticMemory:
    return SemanticMemory(
        id=r[0], text=r[1], user_id=r[2], project_id=r[3] or None, agent_id=r[4] or None, created_at=r[5],
        updated_at=r[6], observed_at=r[7], status=r[8], superseded_by=r[9], superseded_at=r[10],
        source=MemorySource.model_validate(r[11] or {}), metadata=r[12] or {}, hash=r[13])


def _vector_literal(vec: np.ndarray) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in np.asarray(vec, dtype=np.float32).reshape(-1)) + "]"


def open_pool(database_url: str, *, min_size: int = 1, max_size: int = 8, timeout: float = 10.0):
    """A psycopg connection pool on ``database_url``, migrated. Raises :class:`BackendError` saying what to
    check when the server cannot be reached or pgvector is missing."""
    from psycopg_pool import ConnectionPool

    pool = ConnectionPool(database_url, min_size=min_size, max_size=max_size, timeout=timeout, open=False,
                          kwargs={"autocommit": True}, check=ConnectionPool.check_connection)
    try:
        pool.open(wait=True, timeout=timeout)
        with pool.connection() as conn:
            pg_schema.migrate(conn)
    except Exception as exc:
        pool.close()
        raise BackendError(f"cannot use the PostgreSQL database at {redact_url(database_url)}: "
                           f"{str(exc).strip() or type(exc).__name__}. Check that the server runs, that the URL's "
                           "user may create tables, and that the pgvector extension is installed.") from exc
    return pool


def redact_url(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(":" + parts.password + "@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url


class PostgresBackend:
    """See the module docstring. ``pool``: from :func:`open_pool`; ``embedder``: any
    :class:`pi_memory.embed.Embedder` (its model name and dimension are stored with every vector)."""

    name = "postgres"

    def __init__(self, pool: Any, embedder: Any, *, weights: dict[str, float] | None = None, rrf_k: int = RRF_K,
                 candidates: int = CANDIDATES) -> None:
        self.pool = pool
        self.embedder = embedder
        self.weights = {"keyword": 1.0, "vector": 1.0, **(weights or {})}
        self.rrf_k = rrf_k
        self.candidates = candidates
        self.last_embed_error: str | None = None
        self._indexed = False

    @property
    def model(self) -> str:
        return str(self.embedder.model_name)

    @property
    def dim(self) -> int:
        return int(self.embedder.dim)

    def _conn(self):
        try:
            return self.pool.connection()
        except Exception as exc:  # pool timeout: the database is down or every connection is busy
            raise BackendError(f"the PostgreSQL database cannot be reached ({exc}); the server retries on the "
                               "next request, check the database") from exc

    def _ensure_index(self, conn) -> None:
        if not self._indexed:
            pg_schema.ensure_vector_index(conn, self.model, self.dim)
            self._indexed = True

    # --- embedding --------------------------------------------------------------------------------------
    def _embed(self, texts: list[str]) -> np.ndarray | None:
        try:
            out = np.asarray(self.embedder.embed(texts), dtype=np.float32)
            self.last_embed_error = None
            return out
        except Exception as exc:  # noqa: BLE001 - keyword search still works
            self.last_embed_error = str(exc)
            log.warning("team store: embedding failed, continuing without vectors: %s", exc)
            return None

    def _embed_query(self, text: str) -> np.ndarray | None:
        try:
            return np.asarray(self.embedder.embed_query(text), dtype=np.float32)
        except Exception as exc:  # noqa: BLE001
            self.last_embed_error = str(exc)
            return None

    # --- writes -----------------------------------------------------------------------------------------
    def _history(self, conn, scope: Scope, memory_id: str, event: str, old: str | None, new: str | None,
                 related: str | None, reason: str | None, at: str) -> None:
        conn.execute("INSERT INTO semantic_history(memory_id, user_id, project_id, agent_id, event, old_text, "
                     "new_text, related_id, reason, at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                     (memory_id, *scope.columns(), event, old, new, related, clean_reason(reason), at))

    def _insert(self, conn, mem: SemanticMemory, vector: np.ndarray | None, status: str = "active") -> None:
        conn.execute(
            "INSERT INTO semantic_memories(id, user_id, project_id, agent_id, text, hash, status, created_at, "
            "updated_at, observed_at, superseded_by, superseded_at, source, metadata) "
            "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (mem.id, *mem.scope.columns(), mem.text, mem.hash, status, mem.created_at, mem.updated_at,
             mem.observed_at, mem.superseded_by, mem.superseded_at,
             Jsonb(mem.source.model_dump(exclude_none=True)), Jsonb(mem.metadata)))
        if vector is not None:
            self._store_vector(conn, mem.id, vector)

    def _store_vector(self, conn, memory_id: str, vector: np.ndarray, model: str | None = None) -> None:
        vec = np.asarray(vector, dtype=np.float32).reshape(-1)
        conn.execute("INSERT INTO semantic_vectors(memory_id, model, dim, embedding) VALUES (%s,%s,%s,%s::vector) "
                     "ON CONFLICT (memory_id, model) DO UPDATE SET dim = excluded.dim, embedding = excluded.embedding",
                     (memory_id, model or self.model, int(vec.shape[0]), _vector_literal(vec)))

    def _by_hash(self, conn, scope: Scope, digest: str) -> SemanticMemory | None:
        row = conn.execute(f"SELECT {_COLS} FROM semantic_memories WHERE {SCOPE} AND hash = %s AND "
                           "status = 'active' LIMIT 1", (*scope.columns(), digest)).fetchone()
        return _row(row) if row else None

    def add(self, text: str, *, scope: Scope, source: dict[str, Any] | None = None,
            metadata: dict[str, Any] | None = None, observed_at: str | None = None) -> SemanticMemory:
        cleaned = clean_text(text)
        observed_at = check_observed_at(observed_at)
        digest = text_hash(cleaned)
        with self._conn() as conn:
            existing = self._by_hash(conn, scope, digest)
            if existing is not None:
                return existing
            vecs = self._embed([cleaned])
            now = now_iso()
            mem = SemanticMemory(text=cleaned, user_id=scope.user_id, project_id=scope.project_id,
                                 agent_id=scope.agent_id, created_at=now, updated_at=now,
                                 observed_at=observed_at or now, source=clean_source(source),
                                 metadata=clean_metadata(metadata, IDENTITY_KEYS), hash=digest)
            try:
                with conn.transaction():
                    self._insert(conn, mem, vecs[0] if vecs is not None else None)
                    self._history(conn, scope, mem.id, "ADD", None, mem.text, None, mem.source.kind or None, now)
            except errors.UniqueViolation:  # a concurrent writer stored the same fact first
                again = self._by_hash(conn, scope, digest)
                if again is None:
                    raise
                return again
        return mem

    def delete(self, memory_id: str, *, scope: Scope, reason: str | None = None) -> bool:
        with self._conn() as conn, conn.transaction():
            row = conn.execute(f"SELECT text FROM semantic_memories WHERE id = %s AND {SCOPE} AND status = 'active' "
                               "FOR UPDATE", (str(memory_id), *scope.columns())).fetchone()
            if row is None:
                return False
            now = now_iso()
            conn.execute(f"UPDATE semantic_memories SET status = 'deleted', updated_at = %s WHERE id = %s AND {SCOPE}",
                         (now, str(memory_id), *scope.columns()))
            self._history(conn, scope, str(memory_id), "DELETE", row[0], None, None, reason, now)
        return True

    def update(self, memory_id: str, text: str, *, scope: Scope, reason: str | None = None) -> SemanticMemory:
        cleaned = clean_text(text)
        digest = text_hash(cleaned)
        old = self.get(memory_id, scope=scope)
        if old is None or old.status != "active":
            raise MemoryNotFoundError(f"No active memory {memory_id!r} in scope {scope.key}.")
        if digest == old.hash:
            return old
        vecs = self._embed([cleaned])
        now = now_iso()
        new = SemanticMemory(text=cleaned, user_id=scope.user_id, project_id=scope.project_id,
                             agent_id=scope.agent_id, created_at=now, updated_at=now, observed_at=now,
                             source=old.source, metadata=old.metadata, hash=digest)
        with self._conn() as conn, conn.transaction():
            locked = conn.execute(f"SELECT status FROM semantic_memories WHERE id = %s AND {SCOPE} FOR UPDATE",
                                  (old.id, *scope.columns())).fetchone()
            if locked is None or locked[0] != "active":
                raise MemoryNotFoundError(f"Memory {memory_id!r} was changed by another writer; retry.")
            target = self._by_hash(conn, scope, digest)
            conn.execute(f"UPDATE semantic_memories SET status = 'superseded', superseded_by = %s, superseded_at = %s, "
                         f"updated_at = %s WHERE id = %s AND {SCOPE}",
                         (target.id if target else new.id, now, now, old.id, *scope.columns()))
            if target is None:
                self._insert(conn, new, vecs[0] if vecs is not None else None)
                self._history(conn, scope, new.id, "UPDATE", old.text, new.text, old.id, reason, now)
                target = new
            self._history(conn, scope, old.id, "SUPERSEDE", old.text, target.text, target.id, reason, now)
        return target

    # --- reads ------------------------------------------------------------------------------------------
    def get(self, memory_id: str, *, scope: Scope) -> SemanticMemory | None:
        return self.get_many([str(memory_id)], scope=scope).get(str(memory_id))

    def get_many(self, memory_ids: Sequence[str], *, scope: Scope) -> dict[str, SemanticMemory]:
        if not memory_ids:
            return {}
        with self._conn() as conn:
            rows = conn.execute(f"SELECT {_COLS} FROM semantic_memories WHERE id = ANY(%s) AND {SCOPE}",
                                (list(map(str, memory_ids)), *scope.columns())).fetchall()
        return {r[0]: _row(r) for r in rows}

    def get_all(self, *, scope: Scope, limit: int = 100, include_superseded: bool = False) -> list[SemanticMemory]:
        status = "" if include_superseded else " AND status = 'active'"
        with self._conn() as conn:
            rows = conn.execute(f"SELECT {_COLS} FROM semantic_memories WHERE {SCOPE}{status} "
                                "ORDER BY created_at DESC, pk DESC LIMIT %s",
                                (*scope.columns(), max(0, int(limit)))).fetchall()
        return [_row(r) for r in rows]

    def count(self, *, scope: Scope | None = None, status: str | None = "active") -> int:
        where, args = [], []
        if scope is not None:
            where.append(SCOPE)
            args += scope.columns()
        if status is not None:
            where.append("status = %s")
            args.append(status)
        with self._conn() as conn:
            return int(conn.execute("SELECT count(*) FROM semantic_memories"
                                    + (" WHERE " + " AND ".join(where) if where else ""), args).fetchone()[0])

    def history(self, memory_id: str, *, scope: Scope) -> list[HistoryEvent]:
        with self._conn() as conn:
            rows = conn.execute(
                f"""WITH RECURSIVE chain(id) AS (
                        SELECT id FROM semantic_memories WHERE id = %s AND {SCOPE}
                        UNION
                        SELECT m.id FROM semantic_memories m, chain c
                        WHERE m.user_id = %s AND m.project_id = %s AND m.agent_id = %s
                          AND (m.superseded_by = c.id OR m.id = (SELECT superseded_by FROM semantic_memories
                                                                  WHERE id = c.id)))
                    SELECT memory_id, event, old_text, new_text, at, reason, related_id FROM semantic_history
                    WHERE memory_id IN (SELECT id FROM chain) AND {SCOPE} ORDER BY at, id""",
                (str(memory_id), *scope.columns(), *scope.columns(), *scope.columns())).fetchall()
        return [HistoryEvent(memory_id=r[0], event=r[1], old_text=r[2], new_text=r[3], at=r[4], reason=r[5],
                             related_id=r[6]) for r in rows]

    # --- search -----------------------------------------------------------------------------------------
    def keyword_candidates(self, query: str, *, scope: Scope, limit: int | None = None) -> list[tuple[str, float]]:
        """``(id, rank)`` of active memories holding any of the query's terms, best first."""
        terms = [t for t in keyword_terms(query) if t.isalnum() or t.replace("-", "").isalnum()]
        if not terms:
            return []
        tsquery = " | ".join(f"{t.replace('-', '')}:*" for t in terms)
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT id, ts_rank_cd(tsv, q) AS r FROM semantic_memories, to_tsquery('simple', %s) q "
                f"WHERE {SCOPE} AND status = 'active' AND tsv @@ q ORDER BY r DESC, pk DESC LIMIT %s",
                (tsquery, *scope.columns(), limit or self.candidates)).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    def vector_candidates(self, query: str | np.ndarray, *, scope: Scope, limit: int | None = None,
                          exact: bool = False) -> list[tuple[str, float]]:
        """``(id, cosine)`` of the nearest active memories with a vector of the current model, best first."""
        vec = self._embed_query(query) if isinstance(query, str) else query
        if vec is None:
            return []
        dim = int(np.asarray(vec).reshape(-1).shape[0])
        cast = sql.SQL("embedding::vector({})").format(sql.Literal(dim))
        stmt = sql.SQL(
            "SELECT v.memory_id, 1 - ({cast} <=> %s::vector({dim})) FROM semantic_vectors v "
            "JOIN semantic_memories m ON m.id = v.memory_id "
            "WHERE v.model = {model} AND v.dim = {dim} AND m.user_id = %s AND m.project_id = %s AND m.agent_id = %s "
            "AND m.status = 'active' ORDER BY {cast} <=> %s::vector({dim}) LIMIT %s").format(
            cast=cast, dim=sql.Literal(dim), model=sql.Literal(self.model))
        literal = _vector_literal(vec)
        with self._conn() as conn:
            self._ensure_index(conn)
            with conn.transaction():
                if exact:
                    conn.execute("SET LOCAL enable_indexscan = off")
                else:
                    conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                    conn.execute("SET LOCAL hnsw.ef_search = 100")
                rows = conn.execute(stmt, (literal, *scope.columns(), literal, limit or self.candidates)).fetchall()
        rows.sort(key=lambda r: -r[1])  # relaxed order: re-sort the few rows returned
        return [(r[0], float(r[1])) for r in rows]

    def search(self, query: str, *, scope: Scope, top_k: int = 5) -> list[SemanticHit]:
        if not (query or "").strip() or top_k <= 0:
            return []
        keyword = self.keyword_candidates(query, scope=scope)
        vector = self.vector_candidates(query, scope=scope)
        fused = rrf_fuse({"keyword": [i for i, _ in keyword], "vector": [i for i, _ in vector]},
                         weights=self.weights, k=self.rrf_k)[:top_k]
        rank, cos = dict(keyword), dict(vector)
        mems = self.get_many([str(f.key) for f in fused], scope=scope)
        hits = []
        for f in fused:
            mem = mems.get(str(f.key))
            if mem is not None and mem.status == "active":
                hits.append(SemanticHit(memory=mem, score=f.score, details=ScoreDetails(
                    keyword_rank=f.ranks.get("keyword"), vector_rank=f.ranks.get("vector"), bm25=rank.get(f.key),
                    cosine=cos.get(f.key), rrf=f.score, stale_model=f.key not in cos and not vector)))
        return hits

    def similar(self, text: str, *, scope: Scope, top_k: int = 5) -> list[SemanticHit]:
        with self._conn() as conn:
            exact = self._by_hash(conn, scope, text_hash(text))
        ranked: list[tuple[str, float]] = [(exact.id, 1.0)] if exact else []
        near = self.vector_candidates(text, scope=scope, limit=top_k + 1)
        if not near and self.last_embed_error:
            near = [(i, 0.0) for i, _ in self.keyword_candidates(text, scope=scope, limit=top_k + 1)]
        ranked = (ranked + [(i, s) for i, s in near if not exact or i != exact.id])[:top_k]
        mems = self.get_many([i for i, _ in ranked], scope=scope)
        return [SemanticHit(memory=mems[i], score=s, details=ScoreDetails(cosine=s)) for i, s in ranked
                if i in mems and mems[i].status == "active"]

    def close(self) -> None:
        self.pool.close()


__all__ = ["PostgresBackend", "open_pool", "redact_url"]
