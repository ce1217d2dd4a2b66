"""In-memory vector matrices for exact nearest-neighbour search, kept in step with SQLite.

One :class:`VectorMatrix` per (scope, model): the float32 vectors of the scope's *active* memories that have a
vector of that model, as rows of one preallocated array (capacity doubles when full, so appends are amortised
O(dim)). Search up to ``EXACT_ROWS`` rows is exact: a float32 matrix-vector product and ``argpartition``.

Larger matrices are searched in two steps (no ANN index): every row also keeps its sign bits (48 bytes for 384
dimensions, 1/32 of the floats), the ``max(MIN_CANDIDATES, rows / CANDIDATE_DIVISOR)`` rows nearest to the
query by Hamming distance of those bits are taken, and those are ranked by exact cosine. Why: the full product
reads the whole matrix (154 MB at 100k rows) and is memory-bound, and numpy's multithreaded OpenBLAS makes it
worse on a busy 2-core machine (threads wait for each other): ``benchmarks/semantic_latency.py`` measured the
vector part at p50 24 ms under load (the embedder evaluation, ``../shared/reference/embedder-eval.md`` §3, had
8.7 ms on an idle machine); the two steps take about 5 ms there. What it costs: the exact top 50 is not always
all among the candidates -- measured with real MiniLM vectors of the benchmark's memories (10k, forced two-step,
5 % candidates): recall@50 0.995, recall@10 1.0 (``tests/semantic/test_vectors.py`` checks it on synthetic
data). The products use ``einsum`` (numpy's own single-threaded loop), not BLAS: for a few thousand rows
OpenBLAS's thread start-up costs more than the work.

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
EXACT_ROWS = 20_000  # up to here the exact product costs about 1.5 ms (einsum, 384-d): not worth approximating
MIN_CANDIDATES = 1000  # rows ranked exactly after the Hamming step, at least...
CANDIDATE_DIVISOR = 20  # ...and 5 % of the rows (recall@50 0.995 on real vectors, module docstring)
_HAMMING_MAX = np.iinfo(np.uint16).max
_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def sign_codes(matrix: np.ndarray) -> np.ndarray:
    """The sign bits of each row of ``matrix`` (``(n, dim)`` float), packed into ``(n, ceil(dim / 64))`` uint64
    (bit set = component > 0; the padding bits are 0)."""
    bits = np.packbits(np.asarray(matrix) > 0, axis=1)
    pad = (-bits.shape[1]) % 8
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    return np.ascontiguousarray(bits).view(np.uint64)


def hamming(codes: np.ndarray, code: np.ndarray) -> np.ndarray:
    """uint16 Hamming distance of each column of ``codes`` (``(words, n)``: :func:`sign_codes` transposed, one
    contiguous row per 64-bit word) to ``code`` (``(words,)``). Word by word, so every step runs over one
    contiguous array (summing 6 bytes per row along the short axis cost twice as much)."""
    dist = np.zeros(codes.shape[1], dtype=np.uint16)
    for word, bits in zip(codes, code, strict=True):
        diff = word ^ bits
        if hasattr(np, "bitwise_count"):  # numpy >= 2.0
            dist += np.bitwise_count(diff)
        else:
            dist += _POPCOUNT8[diff.view(np.uint8)].reshape(-1, 8).sum(axis=1, dtype=np.uint16)
    return dist


class VectorMatrix:
    """The vectors of one (scope, model). ``seq_seen``: highest memory ``seq`` applied from SQLite."""

    def __init__(self, dim: int) -> None:
        self.dim = int(dim)
        self._buf = np.zeros((INITIAL_CAPACITY, self.dim), dtype=np.float32)
        self._codes = np.zeros(((self.dim + 63) // 64, INITIAL_CAPACITY), dtype=np.uint64)  # word-major
        self.exact_rows = EXACT_ROWS
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
        codes = np.zeros((self._codes.shape[0], cap), dtype=np.uint64)
        codes[:, : len(self._ids)] = self._codes[:, : len(self._ids)]
        alive = np.zeros(cap, dtype=bool)
        alive[: len(self._ids)] = self._alive[: len(self._ids)]
        self._buf, self._codes, self._alive = buf, codes, alive

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
        self._codes[:, row] = sign_codes(vec[None, :])[0]
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
        self._codes[:, start : start + len(fresh)] = sign_codes(block).T
        self._alive[start : start + len(fresh)] = True
        for offset, i in enumerate(fresh):
            self._ids.append(ids[i])
            self._row[ids[i]] = start + offset

    def upsert_rows(self, rows: Iterable[tuple[str, int, bytes]]) -> tuple[int, int]:
        """Bulk :meth:`upsert` of ``(id, dim, blob)`` rows as SQLite stores vectors (float32 little-endian,
        ``dim x 4`` bytes). Returns ``(applied, skipped)``.

        A row is skipped -- never raises, so one damaged row cannot break the scope's vector search -- when its
        ``dim`` is not the matrix's (another vector space, never compared), its blob is not ``dim x 4`` bytes
        (truncated or overwritten) or it holds a NaN/infinity. A skipped id that was in the matrix is dropped:
        its stored vector is no longer the one the matrix holds. The backend counts these rows as stale, so
        re-embedding repairs them."""
        fresh: list[tuple[str, bytes]] = []
        skipped: list[str] = []
        for mid, dim, blob in rows:
            ok = dim == self.dim and isinstance(blob, bytes | bytearray | memoryview) and len(blob) == 4 * self.dim
            (fresh.append((mid, bytes(blob))) if ok else skipped.append(mid))
        if fresh:
            block = np.frombuffer(b"".join(blob for _, blob in fresh), dtype="<f4").reshape(len(fresh), self.dim)
            finite = np.isfinite(block).all(axis=1)
            if not finite.all():
                skipped += [mid for (mid, _), good in zip(fresh, finite, strict=True) if not good]
                fresh = [row for row, good in zip(fresh, finite, strict=True) if good]
                block = block[finite]
            if fresh:
                self.upsert_many([mid for mid, _ in fresh], block)
        for mid in skipped:
            self.drop(mid)
        return len(fresh), len(skipped)

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
        codes = np.zeros((self._codes.shape[0], cap), dtype=np.uint64)
        codes[:, : len(ids)] = self._codes[:, keep]
        alive = np.zeros(cap, dtype=bool)
        alive[: len(ids)] = True
        self._buf, self._codes, self._alive, self._ids = buf, codes, alive, ids
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
        rows = self._candidates(q, n, top_k)
        block = self._buf[:n] if rows is None else self._buf[rows]
        scores = np.einsum("ij,j->i", block, q)  # numpy's own loop: no BLAS thread start-up (module docstring)
        alive = self._alive[:n] if rows is None else self._alive[rows]
        if self._dead:
            scores[~alive] = -np.inf
        m = scores.shape[0]
        k = min(top_k, len(self._row), m)
        top = np.argpartition(-scores, k - 1)[:k] if k < m else np.arange(m)
        top = top[np.argsort(-scores[top], kind="stable")]
        found = top if rows is None else rows[top]
        return [(self._ids[r], float(scores[i])) for i, r in zip(top, found, strict=True) if np.isfinite(scores[i])]

    def _candidates(self, q: np.ndarray, n: int, top_k: int) -> np.ndarray | None:
        """Rows to rank exactly: ``None`` for all of them (up to ``exact_rows``), else the nearest by Hamming
        distance of the sign bits (module docstring), in row order."""
        want = max(MIN_CANDIDATES, n // CANDIDATE_DIVISOR, top_k)
        if n <= self.exact_rows or want >= n:
            return None
        dist = hamming(self._codes[:, :n], sign_codes(q[None, :])[0])
        if self._dead:
            dist[~self._alive[:n]] = _HAMMING_MAX
        return np.sort(np.argpartition(dist, want - 1)[:want])
