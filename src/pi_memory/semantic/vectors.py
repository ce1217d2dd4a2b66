"""In-memory vector matrices for nearest-neighbour search, kept in step with SQLite.

One :class:`VectorMatrix` per (scope, model): the float32 vectors of the scope's *active* memories that have a
vector of that model, as rows of one preallocated array (capacity doubles when full, so appends are amortised
O(dim)). Search up to ``EXACT_ROWS`` rows is exact: a float32 matrix-vector product and ``argpartition``.

Larger matrices are searched in three steps (no ANN index), each reading a few bytes per row:

1. every row keeps its sign bits (48 bytes for 384 dimensions, 1/32 of the floats); the
   ``max(MIN_CANDIDATES, rows / CANDIDATE_DIVISOR)`` rows nearest to the query by Hamming distance of those bits
   are the candidates (picked with a histogram of the distances, not a partition of all of them);
2. every row also keeps an int8 copy (per-row scale, 384 bytes a row); the candidates are scored with it and the
   best ``max(RESCORE_MIN, RESCORE_FACTOR x top_k)`` go on;
3. those are ranked by exact float32 cosine, so every score returned is exact.

Why: the full product reads the whole matrix (154 MB at 100k rows) and is memory-bound, and numpy's multithreaded
OpenBLAS makes it worse on a busy 2-core machine (threads wait for each other). Gathering the candidates' float32
rows (5,000 x 1.5 KB at 100k) was most of what was left: on the shared evaluation machine, with other jobs
competing for memory bandwidth, it took 1.5-14 ms where the int8 rows take 1.5 ms (``benchmarks/
semantic_latency.py`` prints the vector part alone). What it costs: the exact top 50 is not always all among the
candidates -- measured with real MiniLM vectors of the benchmark's texts (20k memories, 20k turns, forced
multi-step, 5 % candidates): recall@50 0.998 / 0.995, recall@10 1.0; ``benchmarks/semantic_latency.py`` prints the
recall of its own 100k matrices against a full scan, and ``tests/semantic/test_vectors.py`` checks it on synthetic
data. Step 2 does not change the ranking in practice (int8 error is about 0.003 in cosine, step 3 re-ranks
4x top_k rows); the products use ``einsum`` (numpy's own single-threaded loop), not BLAS: for a few thousand rows
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
RESCORE_MIN = 256  # candidates ranked by exact cosine after the int8 step, at least...
RESCORE_FACTOR = 4  # ...and 4 x top_k
CHUNK_ROWS = 1024  # candidate rows gathered at a time (about 0.4 MB of int8: stays in the CPU cache)
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


def quantize(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(int8 rows, float32 scale per row)`` with ``rows * scale`` close to ``matrix`` (``(n, dim)``): symmetric,
    per row, the largest component mapped to ±127 (a zero row gets scale 0)."""
    m = np.asarray(matrix, dtype=np.float32).reshape(len(matrix), -1)
    peak = np.abs(m).max(axis=1) if m.size else np.zeros(len(m), np.float32)
    scale = (peak / 127.0).astype(np.float32)
    safe = np.where(scale > 0, scale, 1.0).astype(np.float32)
    return np.clip(np.rint(m / safe[:, None]), -127, 127).astype(np.int8), scale


def nearest_rows(dist: np.ndarray, want: int) -> np.ndarray:
    """The ``want`` row numbers with the smallest ``dist`` (unsigned ints), in row order. Ties at the cut keep the
    newest rows (highest numbers). A histogram and two passes instead of a partition of all the distances."""
    cum = np.cumsum(np.bincount(dist))
    cut = int(np.searchsorted(cum, want))  # the smallest distance with at least ``want`` rows at or below it
    rows = np.flatnonzero(dist <= cut)
    extra = rows.size - want
    if extra > 0:  # too many ties at ``cut``: drop the oldest of them
        ties = np.flatnonzero(dist[rows] == cut)
        rows = np.delete(rows, ties[:extra])
    return rows


class VectorMatrix:
    """The vectors of one (scope, model). ``seq_seen``: highest memory ``seq`` applied from SQLite."""

    def __init__(self, dim: int) -> None:
        self.dim = int(dim)
        self._buf = np.zeros((INITIAL_CAPACITY, self.dim), dtype=np.float32)
        self._codes = np.zeros(((self.dim + 63) // 64, INITIAL_CAPACITY), dtype=np.uint64)  # word-major
        self._q8 = np.zeros((INITIAL_CAPACITY, self.dim), dtype=np.int8)  # int8 copy (step 2, docstring)
        self._scale = np.zeros(INITIAL_CAPACITY, dtype=np.float32)
        self._chunk: tuple[np.ndarray, np.ndarray] | None = None  # reused gather buffers (int8, float32)
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
        q8 = np.zeros((cap, self.dim), dtype=np.int8)
        q8[: len(self._ids)] = self._q8[: len(self._ids)]
        scale = np.zeros(cap, dtype=np.float32)
        scale[: len(self._ids)] = self._scale[: len(self._ids)]
        self._buf, self._codes, self._alive, self._q8, self._scale = buf, codes, alive, q8, scale

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
        q8, scale = quantize(vec[None, :])
        self._q8[row], self._scale[row] = q8[0], scale[0]
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
        self._q8[start : start + len(fresh)], self._scale[start : start + len(fresh)] = quantize(block)
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
        q8 = np.zeros((cap, self.dim), dtype=np.int8)
        q8[: len(ids)] = self._q8[keep]
        scale = np.zeros(cap, dtype=np.float32)
        scale[: len(ids)] = self._scale[keep]
        self._buf, self._codes, self._alive, self._ids = buf, codes, alive, ids
        self._q8, self._scale = q8, scale
        self._row = {mid: i for i, mid in enumerate(ids)}
        self._dead = 0

    def rows_of(self, ids: Iterable[str]) -> tuple[list[str], np.ndarray]:
        """``(ids held, their vectors)``: the live rows of ``ids`` that the matrix holds, in the order given, as a
        copy (a caller reads them without the lock)."""
        with self.lock:
            found = [i for i in ids if i in self._row]
            rows = np.fromiter((self._row[i] for i in found), dtype=np.intp, count=len(found))
            return found, self._buf[rows]  # fancy indexing copies

    def search(self, query: np.ndarray, top_k: int, *, exact: bool = False) -> list[tuple[str, float]]:
        """The ``top_k`` live ids by dot product with ``query`` (cosine, for unit vectors), best first.
        ``exact``: scan every row even when the matrix is large (what the benchmark measures recall against)."""
        with self.lock:
            return self._search(query, top_k, exact)

    def _search(self, query: np.ndarray, top_k: int, exact: bool = False) -> list[tuple[str, float]]:
        n = len(self._ids)
        if n == 0 or top_k <= 0 or not self._row:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise ValueError(f"query has {q.shape[0]} dimensions, the matrix {self.dim}")
        rows = None if exact else self._candidates(q, n, top_k)
        block = self._buf[:n] if rows is None else self._buf[rows]
        scores = np.einsum("ij,j->i", block, q)  # numpy's own loop: no BLAS thread start-up (module docstring)
        if self._dead:
            alive = self._alive[:n] if rows is None else self._alive[rows]
            scores[~alive] = -np.inf
        m = scores.shape[0]
        k = min(top_k, len(self._row), m)
        top = np.argpartition(-scores, k - 1)[:k] if k < m else np.arange(m)
        top = top[np.argsort(-scores[top], kind="stable")]
        found = top if rows is None else rows[top]
        ids = self._ids
        return [(ids[r], s) for r, s in zip(found.tolist(), scores[top].tolist(), strict=True) if s > -np.inf]

    def _candidates(self, q: np.ndarray, n: int, top_k: int) -> np.ndarray | None:
        """Rows to rank exactly: ``None`` for all of them (up to ``exact_rows``), else steps 1 and 2 of the module
        docstring (nearest by Hamming distance of the sign bits, then by the int8 copy), in row order."""
        want = max(MIN_CANDIDATES, n // CANDIDATE_DIVISOR, top_k)
        if n <= self.exact_rows or want >= n:
            return None
        dist = hamming(self._codes[:, :n], sign_codes(q[None, :])[0])
        if self._dead:
            dist[~self._alive[:n]] = self._codes.shape[0] * 64 + 1  # beyond any real distance
        rows = nearest_rows(dist, want)
        keep = max(RESCORE_MIN, RESCORE_FACTOR * top_k)
        if keep >= rows.size:
            return rows
        approx = self._approximate(rows, q)
        return np.sort(rows[np.argpartition(-approx, keep - 1)[:keep]])

    def _approximate(self, rows: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Approximate dot products of ``rows`` with ``q`` from the int8 copy, gathered ``CHUNK_ROWS`` at a time
        into reused buffers (the caller holds the lock)."""
        if self._chunk is None:
            self._chunk = (np.empty((CHUNK_ROWS, self.dim), np.int8), np.empty((CHUNK_ROWS, self.dim), np.float32))
        small, wide = self._chunk
        out = np.empty(rows.size, dtype=np.float32)
        for start in range(0, rows.size, CHUNK_ROWS):
            part = rows[start : start + CHUNK_ROWS]
            got = np.take(self._q8, part, axis=0, out=small[: part.size], mode="clip")  # clip: no buffering
            block = wide[: part.size]
            block[...] = got
            np.einsum("ij,j->i", block, q, out=out[start : start + part.size])
        out *= self._scale[rows]
        return out
