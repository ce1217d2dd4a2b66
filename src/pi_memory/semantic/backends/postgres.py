"""The team store: semantic memories in PostgreSQL with pgvector, shared by any number of ``serve`` processes.

Same contract as the embedded store (:mod:`pi_memory.semantic.backend`): every statement carries the scope
filter, per-id calls look the id up *with* it (another scope's id is "not found"), nothing is erased (delete
marks, update supersedes, history kept), text is cleaned by the same :func:`~pi_memory.semantic.embedded.clean_text`
(credentials redacted, threat scanner) before it is stored. A NUL character (U+0000), which PostgreSQL cannot
keep, is a ``ValueError`` in text, metadata, source or a reason (the REST server's 400); an id holding one is
simply not found. Connections, their time bounds and the pool: :mod:`.pg_connect`.

Search is the embedded store's hybrid: a keyword list (PostgreSQL full-text search, ``simple`` configuration,
any of the query's terms, ranked by ``ts_rank_cd``) and a vector list (pgvector cosine distance over the
model's partial HNSW index, ``hnsw.iterative_scan`` so a scope filter still fills ``top_k``, ``hnsw.ef_search``
set per query with ``SET LOCAL`` from the backend's ``ef_search``), fused by the
same reciprocal rank fusion (:func:`pi_memory.retrieval.fusion.rrf_fuse`). ``exact=True`` on
:meth:`PostgresBackend.vector_candidates` skips the index (the benchmark's recall@10 reference).

Concurrency: no state lives in the process but a connection pool; the unique index on the active hash of a
scope makes two concurrent adds of one fact store it once (the loser reads the winner's row); an update
locks the old row (``FOR UPDATE``) so two updates of one memory cannot both supersede it (the loser gets a
:class:`~pi_memory.semantic.backend.MemoryChangedError`, the REST server's 409). Every query is
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
from pi_memory.semantic.backend import MemoryChangedError, MemoryNotFoundError, count_query
from pi_memory.semantic.backends import pg_schema
from pi_memory.semantic.backends.pg_connect import connection, open_pool, unbounded
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
from pi_memory.semantic.sanitize import (
    check_no_nul,
    check_observed_at,
    clean_metadata,
    clean_reason,
    clean_source,
)
from pi_memory.semantic.terms import keyword_terms

log = logging.getLogger(__name__)

CANDIDATES = 50
COMMON_TERM_ROWS = 1000  # a keyword term in this many rows of a scope is common (see keyword_candidates)
EF_SEARCH = 100  # hnsw.ef_search per query: see docs/architecture.md "Team store: HNSW tuning" for the figures
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


class PostgresBackend:
    """See the module docstring. ``pool``: from :func:`open_pool`; ``embedder``: any
    :class:`pi_memory.embed.Embedder` (its model name and dimension are stored with every vector)."""

    name = "postgres"

    def __init__(self, pool: Any, embedder: Any, *, weights: dict[str, float] | None = None, rrf_k: int = RRF_K,
                 candidates: int = CANDIDATES, ef_search: int = EF_SEARCH,
                 hnsw_build: tuple[int, int] = pg_schema.HNSW_BUILD, common_term_rows: int = COMMON_TERM_ROWS) -> None:
        if not 1 <= int(ef_search) <= 1000:
            raise ValueError(f"hnsw ef_search must be between 1 and 1000 (pgvector's range), not {ef_search}")
        self.pool = pool
        self.embedder = embedder
        self.weights = {"keyword": 1.0, "vector": 1.0, **(weights or {})}
        self.rrf_k = rrf_k
        self.candidates = candidates
        self.ef_search = int(ef_search)  # the candidates HNSW keeps per query: higher = better recall, slower
        self.hnsw_build = hnsw_build  # (m, ef_construction) of the index when this backend creates it
        self.common_term_rows = int(common_term_rows)
        self.last_embed_error: str | None = None
        self._indexed = False
        # on_history(conn, event, memory_id, scope key, related id): called for every history event inside the
        # write's transaction (the team server's audit rows: team_auth.TokenStore.on_history); None: nothing
        self.on_history: Any = None

    @property
    def model(self) -> str:
        return str(self.embedder.model_name)

    @property
    def dim(self) -> int:
        return int(self.embedder.dim)

    def _conn(self):
        return connection(self.pool)

    def _ensure_index(self, conn) -> None:
        if not self._indexed:  # building it over a large table may rightly take longer than a statement may
            with conn.transaction(), unbounded(conn):
                pg_schema.ensure_vector_index(conn, self.model, self.dim, *self.hnsw_build)
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
        if self.on_history is not None:
            self.on_history(conn, event, memory_id, scope.key, related)

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
        cleaned = check_no_nul(clean_text(text), "the memory text")
        check_no_nul(metadata, "metadata")
        check_no_nul(source, "source")
        metadata = clean_metadata(metadata, IDENTITY_KEYS)  # before the duplicate check: a control character is refused
        kept_source = clean_source(source)  # as metadata
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
                                 observed_at=observed_at or now, source=kept_source,
                                 metadata=metadata, hash=digest)
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
        check_no_nul(reason, "the reason")
        if "\x00" in str(memory_id):
            return False  # no stored id holds one
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
        cleaned = check_no_nul(clean_text(text), "the memory text")
        check_no_nul(reason, "the reason")
        digest = text_hash(cleaned)
        old = self.get(memory_id, scope=scope)
        if old is None:
            raise MemoryNotFoundError(f"No active memory {memory_id!r} in scope {scope.key}.")
        if old.status != "active":
            raise MemoryChangedError(memory_id, old.status, old.superseded_by)
        if digest == old.hash:
            return old
        vecs = self._embed([cleaned])
        now = now_iso()
        new = SemanticMemory(text=cleaned, user_id=scope.user_id, project_id=scope.project_id,
                             agent_id=scope.agent_id, created_at=now, updated_at=now, observed_at=now,
                             source=old.source, metadata=old.metadata, hash=digest)
        with self._conn() as conn, conn.transaction():
            locked = conn.execute(f"SELECT status, superseded_by FROM semantic_memories WHERE id = %s AND {SCOPE} "
                                  "FOR UPDATE", (old.id, *scope.columns())).fetchone()
            if locked is None or locked[0] != "active":  # another writer superseded or deleted it meanwhile
                raise MemoryChangedError(memory_id, locked[0] if locked else "deleted", locked[1] if locked else None)
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

    def embed_queued(self, batch: int = 64, limit: int | None = None) -> int:
        """Embed the memories queued in ``pi_memory_reembed`` (their text was redacted at a start, or an import
        copied them without a vector of this model: :mod:`.pg_sweep`, :mod:`.team_import`), at most ``limit``
        of them (oldest first; ``None``: all); returns how many got a vector. When embedding fails they stay
        queued.

        Each batch is claimed in its own transaction (``FOR UPDATE OF q SKIP LOCKED``) and stays claimed while it
        is embedded, until its vectors are stored and its queue rows deleted in that transaction: another
        ``serve`` process on the database skips the claimed rows and takes the next ones, so no row is embedded
        twice. A failed embedding rolls the claim back (the rows wait for the next pass); a process that dies
        mid-batch releases its claim with its connection."""
        done = 0
        while limit is None or done < limit:
            take = batch if limit is None else min(batch, limit - done)
            with self._conn() as conn, conn.transaction():
                rows = conn.execute("SELECT q.memory_id, m.text FROM pi_memory_reembed q JOIN semantic_memories m "
                                    "ON m.id = q.memory_id ORDER BY q.queued_at, q.memory_id LIMIT %s "
                                    "FOR UPDATE OF q SKIP LOCKED", (take,)).fetchall()
                if not rows:
                    break
                vecs = self._embed([text for _id, text in rows])
                if vecs is None:
                    break  # the transaction ends without a write: the claim is released
                for (memory_id, _text), vec in zip(rows, vecs, strict=True):
                    self._store_vector(conn, memory_id, vec)
                conn.execute("DELETE FROM pi_memory_reembed WHERE memory_id = ANY(%s)", ([r[0] for r in rows],))
            done += len(rows)
            if len(rows) < take:
                break
        return done

    def queued_count(self) -> int:
        """Memories waiting in ``pi_memory_reembed`` for a vector of this store's model."""
        with self._conn() as conn:
            return int(conn.execute("SELECT count(*) FROM pi_memory_reembed q JOIN semantic_memories m ON "
                                    "m.id = q.memory_id").fetchone()[0])

    # --- reads ------------------------------------------------------------------------------------------
    def get(self, memory_id: str, *, scope: Scope) -> SemanticMemory | None:
        return self.get_many([str(memory_id)], scope=scope).get(str(memory_id))

    def get_many(self, memory_ids: Sequence[str], *, scope: Scope) -> dict[str, SemanticMemory]:
        ids = [i for i in map(str, memory_ids) if "\x00" not in i]  # no stored id holds a NUL character
        if not ids:
            return {}
        with self._conn() as conn:
            rows = conn.execute(f"SELECT {_COLS} FROM semantic_memories WHERE id = ANY(%s) AND {SCOPE}",
                                (ids, *scope.columns())).fetchall()
        return {r[0]: _row(r) for r in rows}

    def get_all(self, *, scope: Scope, limit: int = 100, include_superseded: bool = False) -> list[SemanticMemory]:
        status = "" if include_superseded else " AND status = 'active'"
        with self._conn() as conn:
            rows = conn.execute(f"SELECT {_COLS} FROM semantic_memories WHERE {SCOPE}{status} "
                                "ORDER BY created_at DESC, pk DESC LIMIT %s",
                                (*scope.columns(), max(0, int(limit)))).fetchall()
        return [_row(r) for r in rows]

    def count(self, *, scope: Scope | None = None, status: str | None = "active") -> int:
        query, args = count_query(SCOPE, scope, status, "%s")
        with self._conn() as conn:
            return int(conn.execute(query, args).fetchone()[0])

    def history(self, memory_id: str, *, scope: Scope) -> list[HistoryEvent]:
        if "\x00" in str(memory_id):
            return []
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
        """``(id, rank)`` of active memories holding any of the query's terms, best first.

        ``ts_rank_cd`` has no inverse document frequency, and ranking every row that holds a common term costs
        time in proportion to the scope (190 ms p50, 950 ms p95 at 100k memories). So the terms are split first:
        a term found in at least ``common_term_rows`` (:data:`COMMON_TERM_ROWS`) rows of the scope is *common* (a capped count, cheap).
        The rare terms are ranked over all their rows (a bounded set); common terms only fill what is left, ranked
        over their newest ``common_term_rows`` rows -- as BM25 would weigh them, rare terms decide (31 ms
        p50, 58 ms p95 at 100k; ``benchmarks/team_server.py``)."""
        terms = [t.replace("-", "") for t in keyword_terms(query) if t.isalnum() or t.replace("-", "").isalnum()]
        if not terms:
            return []
        limit = limit or self.candidates
        where = f"{SCOPE} AND status = 'active' AND tsv @@ to_tsquery('simple', %s)"
        with self._conn() as conn:
            rare, common = [], []
            for t in terms:
                n = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM semantic_memories WHERE {where} LIMIT %s) s",
                                 (*scope.columns(), f"{t}:*", self.common_term_rows)).fetchone()[0]
                (common if n >= self.common_term_rows else rare).append(t)
            rows: list = []
            if rare:
                rows = conn.execute(
                    f"SELECT id, ts_rank_cd(tsv, to_tsquery('simple', %s)) AS r FROM semantic_memories WHERE {where} "
                    "ORDER BY r DESC, pk DESC LIMIT %s",
                    (" | ".join(f"{t}:*" for t in rare), *scope.columns(), " | ".join(f"{t}:*" for t in rare),
                     limit)).fetchall()
            if len(rows) < limit and common:
                tsq = " | ".join(f"{t}:*" for t in common)
                seen = [r[0] for r in rows]
                rows += conn.execute(
                    f"SELECT id, ts_rank_cd(tsv, to_tsquery('simple', %s)) AS r FROM (SELECT id, pk, tsv FROM "
                    f"semantic_memories WHERE {where} ORDER BY pk DESC LIMIT %s) newest WHERE NOT (id = ANY(%s)) "
                    "ORDER BY r DESC, pk DESC LIMIT %s",
                    (tsq, *scope.columns(), tsq, self.common_term_rows, seen, limit - len(rows))).fetchall()
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
                    conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(self.ef_search)))
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


__all__ = ["PostgresBackend", "connection", "open_pool"]
