"""In-memory vector matrices for exact nearest-neighbour search, kept in step with SQLite.

One :class:`VectorMatrix` per (scope, model): the float32 vectors of the scope's *active* memories that have a
vector of that model, as rows of one preallocated array (capacity doubles when full, so appends are amortised
O(dim)). Search is a float32 matrix-vector product and ``argpartition``: exact, no ANN index. The embedder
evaluation (``../shared/reference/embedder-eval.md`` §3) measured this at 0.3 ms for 10k and 8.7 ms for 100k
384-d vectors on 2 cores; an ANN index is only worth it past about 500k vectors.

Keeping it in sync (see :class:`~pi_memory.semantic.embedded.EmbeddedBackend`):

* every insert or status change of a memory row sets its ``seq`` to the table's next value (inside the write
  transaction, so ``seq`` is strictly increasing across processes);
* writes made through this process update the matrix directly (``upsert`` / ``drop``);
* before every search the backend reads the rows of the scope with ``seq`` above the last one seen -- one
  indexed query, usually empty -- so writes by other processes (another pi session, the CLI) are applied
  incrementally instead of reloading the scope. Applying a change twice is harmless.

Removed rows are masked (score −inf) and compacted away when they exceed a quarter of the rows. Each matrix has
its own lock, so a search (the matmul, which releases the GIL) can run while the database is busy elsewhere.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import numpy as np

INITIAL_CAPACITY = 1024
COMPACT_FRACTION = 0.25


class VectorMatrix:
    """The vectors of one (scope, model). ``seq_seen``: highest memory ``seq`` applied from SQLite."""

    def __init__(self, dim: int) -> None:
        self.dim = int(dim)
        self._buf = np.zeros((INITIAL_CAPACITY, self.dim), dtype=np.float32)
        self._alive = np.zeros(INITIAL_CAPACITY, dtype=bool)
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._dead = 0
        self.seq_seen = 0
        self.lock = threading.RLock()

    def __len__(self) -> int:
        """Number of live vectors."""
        return len(self._row)

    def __contains__(self, memory_id: str) -> bool:
        return memory_id in self._row

    def _grow(self, need: int) -> None:
        cap = self._buf.shape[0]
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        buf = np.zeros((cap, self.dim), dtype=np.float32)
        buf[: len(self._ids)] = self._buf[: len(self._ids)]
        alive = np.zeros(cap, dtype=bool)
        alive[: len(self._ids)] = self._alive[: len(self._ids)]
        self._buf, self._alive = buf, alive

    def upsert(self, memory_id: str, vector: np.ndarray) -> None:
        """Add or replace the vector of ``memory_id`` (shape ``(dim,)``, any float dtype)."""
        with self.lock:
            self._upsert(memory_id, vector)

    def _upsert(self, memory_id: str, vector: np.ndarray) -> None:
        vec = np.asarray(vector, dtype=np.float32).reshape(-1)
        if vec.shape[0] != self.dim:
            raise ValueError(f"vector has {vec.shape[0]} dimensions, the matrix {self.dim}")
        row = self._row.get(memory_id)
        if row is None:
            row = len(self._ids)
            self._grow(row + 1)
            self._ids.append(memory_id)
            self._row[memory_id] = row
        self._buf[row] = vec
        self._alive[row] = True

    def upsert_many(self, ids: list[str], matrix: np.ndarray) -> None:
        """Bulk :meth:`upsert` (``matrix`` shape ``(len(ids), dim)``); new ids are copied in one block."""
        with self.lock:
            self._upsert_many(ids, matrix)

    def _upsert_many(self, ids: list[str], matrix: np.ndarray) -> None:
        matrix = np.asarray(matrix, dtype=np.float32).reshape(len(ids), self.dim)
        fresh = [i for i, mid in enumerate(ids) if mid not in self._row]
        for i, mid in enumerate(ids):
            if mid in self._row:
                self._upsert(mid, matrix[i])
        if not fresh:
            return
        block = matrix if len(fresh) == len(ids) else matrix[fresh]
        start = len(self._ids)
        self._grow(start + len(fresh))
        self._buf[start : start + len(fresh)] = block
        self._alive[start : start + len(fresh)] = True
        for offset, i in enumerate(fresh):
            self._ids.append(ids[i])
            self._row[ids[i]] = start + offset

    def upsert_rows(self, rows: Iterable[tuple[str, int, bytes]]) -> int:
        """Bulk :meth:`upsert` of ``(id, dim, blob)`` rows as SQLite stores vectors (float32 little-endian,
        ``dim x 4`` bytes). Rows of another dimension are skipped (another model's space, never compared).
        Returns the rows applied."""
        fresh = [(mid, blob) for mid, dim, blob in rows if dim == self.dim]
        if fresh:
            block = np.frombuffer(b"".join(blob for _, blob in fresh), dtype="<f4").reshape(len(fresh), self.dim)
            self.upsert_many([mid for mid, _ in fresh], block)
        return len(fresh)

    def drop(self, memory_id: str) -> None:
        """Remove ``memory_id`` (superseded, deleted, or its vector is of another model now)."""
        with self.lock:
            self._drop(memory_id)

    def _drop(self, memory_id: str) -> None:
        row = self._row.pop(memory_id, None)
        if row is None:
            return
        self._alive[row] = False
        self._dead += 1
        if self._dead > COMPACT_FRACTION * max(1, len(self._ids)):
            self._compact()

    def _compact(self) -> None:
        n = len(self._ids)
        keep = np.flatnonzero(self._alive[:n])
        ids = [self._ids[i] for i in keep]
        cap = max(INITIAL_CAPACITY, 1 << max(0, int(len(ids) * 1.5) - 1).bit_length())
        buf = np.zeros((cap, self.dim), dtype=np.float32)
        buf[: len(ids)] = self._buf[keep]
        alive = np.zeros(cap, dtype=bool)
        alive[: len(ids)] = True
        self._buf, self._alive, self._ids = buf, alive, ids
        self._row = {mid: i for i, mid in enumerate(ids)}
        self._dead = 0

    def search(self, query: np.ndarray, top_k: int) -> list[tuple[str, float]]:
        """The ``top_k`` live ids by dot product with ``query`` (cosine, for unit vectors), best first."""
        with self.lock:
            return self._search(query, top_k)

    def _search(self, query: np.ndarray, top_k: int) -> list[tuple[str, float]]:
        n = len(self._ids)
        if n == 0 or top_k <= 0 or not self._row:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise ValueError(f"query has {q.shape[0]} dimensions, the matrix {self.dim}")
        scores = self._buf[:n] @ q
        if self._dead:
            scores[~self._alive[:n]] = -np.inf
        k = min(top_k, len(self._row))
        top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self._ids[i], float(scores[i])) for i in top if np.isfinite(scores[i])]
