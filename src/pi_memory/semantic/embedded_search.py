"""Search over the embedded backend's memories (mixed into
:class:`~pi_memory.semantic.embedded.EmbeddedBackend`): FTS5 BM25 keyword candidates (:mod:`.keyword`), exact
vector candidates (:mod:`.vectors`), both fused by reciprocal rank fusion (:mod:`.ranking`), and the ``similar``
lookup capture uses to find a fact's earlier versions."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from pi_memory.retrieval.fusion import rrf_fuse
from pi_memory.semantic import keyword
from pi_memory.semantic.models import Scope, ScoreDetails, SemanticHit, text_hash
from pi_memory.semantic.terms import WordTerm
from pi_memory.semantic.vectors import VectorMatrix


class EmbeddedSearch:
    """The search methods; the storage they read (connection, lock, vector cache) is the backend's."""

    conn: sqlite3.Connection
    embedder: Any
    _lock: threading.RLock
    last_embed_error: str | None
    weights: dict[str, float]
    rrf_k: int
    candidates: int
    _matrices: dict[tuple[tuple[str, str, str], str], VectorMatrix]
    _executor: ThreadPoolExecutor | None

    model: Any  # property of the backend: the embedder's model name
    _embed_query: Any
    _matrix: Any
    _fetch: Any
    _by_hash: Any

    # --- search --------------------------------------------------------------------------------------------
    def _plan_terms(self, terms: list[WordTerm]) -> tuple[list[WordTerm], int | None]:
        with self._lock:
            return keyword.plan_terms(self.conn, terms)

    def keyword_candidates(self, query: str, *, scope: Scope, limit: int | None = None,
                           replaced: list[int] | None = None) -> list[tuple[str, float]]:
        """``(id, bm25)`` of the scope's active memories matching any query term, best (lowest bm25) first; see
        :func:`pi_memory.semantic.keyword.keyword_candidates` for how the work is bounded and ``replaced``.

        Through the calling thread's own read connection when there is one (:func:`pi_memory.index.parallel.
        reader`), without the backend's lock: holding it for the whole FTS5 search made the vector search of the
        same recall (:meth:`candidate_lists`), which needs the lock to bring its matrix up to date, wait for the
        keyword search to end instead of running beside it."""
        from pi_memory.index.parallel import reader

        own = reader(self.conn)
        if own is not self.conn:
            return keyword.keyword_candidates(own, query, scope.columns(), limit or self.candidates, replaced)
        with self._lock:
            return keyword.keyword_candidates(self.conn, query, scope.columns(), limit or self.candidates, replaced)

    def vector_candidates(self, query: str | np.ndarray | Future, *, scope: Scope,
                          limit: int | None = None) -> list[tuple[str, float]]:
        """``(id, cosine)`` of the nearest active memories with a vector of the current model, best first.
        ``query`` is text (embedded here), a query vector or a ``Future`` of one (``None`` in it: embedding
        failed). ``[]`` when the embedder fails."""
        vec = self._embed_query(query) if isinstance(query, str) else query
        vec = vec.result() if isinstance(vec, Future) else vec
        if vec is None:
            return []
        with self._lock:
            matrix = self._matrix(scope)
        return matrix.search(vec, limit or self.candidates)  # outside the connection lock: see .vectors

    def vectors_of(self, ids: list[str], *, scope: Scope) -> dict[str, np.ndarray]:
        """The stored vectors (current model) of the memories ``ids`` that have one, from the scope's matrix when it
        is loaded (``{}`` when not: a search loads it); recall compares its hits with them
        (:mod:`pi_memory.retrieval.repeats`)."""
        with self._lock:
            matrix = self._matrices.get((scope.columns(), self.model))
        if matrix is None or not ids:
            return {}
        found, rows = matrix.rows_of(ids)
        return dict(zip(found, rows, strict=True))

    def warm(self, scope: Scope) -> None:
        """Load the scope's vector matrix now (about 30 ms per 1,000 memories) so the first search is fast."""
        with self._lock:
            self._matrix(scope)

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pi-memory-vector")
            return self._executor

    def candidate_lists(self, query: str, *, scope: Scope, limit: int | None = None,
                        query_vector: np.ndarray | Future | None = None, replaced: list[int] | None = None,
                        ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """``(keyword, vector)`` candidate lists (see the two methods). The query embedding and the matmul run
        on a worker thread while the FTS5 query runs here: all three release the GIL, so they overlap.

        ``query_vector``: the query's embedding when the caller computes it once for several vector lists
        (:mod:`.sources`): an array of shape ``(dim,)``, or a ``Future`` of one (``None`` in it: the embedder
        failed, so the vector list is empty). ``replaced``: see :meth:`keyword_candidates`."""
        pending = self._pool().submit(self.vector_candidates, query if query_vector is None else query_vector,
                                      scope=scope, limit=limit)
        keyword = self.keyword_candidates(query, scope=scope, limit=limit, replaced=replaced)
        return keyword, pending.result()

    def search(self, query: str, *, scope: Scope, top_k: int = 5) -> list[SemanticHit]:
        """Hybrid search: FTS5 BM25 candidates and vector candidates fused by RRF (:mod:`.ranking`)."""
        if not (query or "").strip() or top_k <= 0:
            return []
        keyword, vector = self.candidate_lists(query, scope=scope)
        fused = rrf_fuse({"keyword": [i for i, _ in keyword], "vector": [i for i, _ in vector]},
                         weights=self.weights, k=self.rrf_k)[:top_k]
        bm25, cos = dict(keyword), dict(vector)
        with self._lock:
            mems = self._fetch([str(f.key) for f in fused], scope)
            matrix = self._matrices.get((scope.columns(), self.model))
        hits = []
        for f in fused:
            mem = mems.get(str(f.key))
            if mem is None or mem.status != "active":
                continue
            details = ScoreDetails(keyword_rank=f.ranks.get("keyword"), vector_rank=f.ranks.get("vector"),
                                   bm25=bm25.get(f.key), cosine=cos.get(f.key), rrf=f.score,
                                   stale_model=matrix is None or mem.id not in matrix)
            hits.append(SemanticHit(memory=mem, score=f.score, details=details))
        return hits

    def similar(self, text: str, *, scope: Scope, top_k: int = 5) -> list[SemanticHit]:
        """Exact (normalised) matches first, then vector neighbours; keyword matches when the embedder
        fails. ``score``: cosine (1.0 for an exact match; BM25 rank order otherwise)."""
        with self._lock:
            exact = self._by_hash(scope, text_hash(text))
        ranked: list[tuple[str, float]] = [(exact.id, 1.0)] if exact else []
        near = self.vector_candidates(text, scope=scope, limit=top_k + 1)
        if not near and self.last_embed_error:
            near = [(i, 0.0) for i, _ in self.keyword_candidates(text, scope=scope, limit=top_k + 1)]
        ranked += [(i, s) for i, s in near if not exact or i != exact.id]
        ranked = ranked[:top_k]
        with self._lock:
            mems = self._fetch([i for i, _ in ranked], scope)
        return [SemanticHit(memory=mems[i], score=s, details=ScoreDetails(cosine=s)) for i, s in ranked
                if i in mems and mems[i].status == "active"]
