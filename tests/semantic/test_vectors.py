"""``VectorMatrix``: the exact search and the two-step search of large matrices (sign-bit Hamming candidates,
then exact cosine), on seeded synthetic vectors."""

from __future__ import annotations

import numpy as np
import pytest

from pi_memory.semantic import vectors
from pi_memory.semantic.vectors import VectorMatrix, hamming, sign_codes


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_sign_codes_and_hamming_exact_values():
    m = np.array([[0.5, -1.0, 2.0] + [0.0] * 61 + [1.0], [-1.0] * 65], dtype=np.float32)  # 65-d: two words
    codes = sign_codes(m)
    assert codes.shape == (2, 2) and codes.dtype == np.uint64
    assert [int(b) for b in np.unpackbits(codes.view(np.uint8)[0])[:8]] == [1, 0, 1, 0, 0, 0, 0, 0]
    assert int(np.unpackbits(codes.view(np.uint8)[0])[64]) == 1  # the 65th component, in the second word
    assert hamming(codes.T, codes[1]).tolist() == [3, 0]
    assert hamming(codes.T, codes[0]).tolist() == [0, 3]


def test_hamming_without_bitwise_count_gives_the_same(monkeypatch):
    rng = np.random.default_rng(1)
    codes = sign_codes(rng.standard_normal((50, 384)))
    expected = hamming(codes.T, codes[7]).tolist()
    monkeypatch.delattr(np, "bitwise_count", raising=False)  # numpy < 2.0: the byte-table fallback
    assert hamming(codes.T, codes[7]).tolist() == expected and expected[7] == 0
    assert expected == [int(np.unpackbits((c ^ codes[7]).view(np.uint8)).sum()) for c in codes]


@pytest.fixture
def big() -> tuple[VectorMatrix, np.ndarray]:
    """3,000 vectors in 100 clusters of 30 (like facts about 100 topics), 384-d; row i is in cluster i % 100."""
    rng = np.random.default_rng(7)
    centers = unit(rng.standard_normal((100, 384)))
    vecs = unit(centers[np.arange(3000) % 100] + 0.6 * unit(rng.standard_normal((3000, 384))))
    matrix = VectorMatrix(384)
    matrix.upsert_many([f"m{i}" for i in range(len(vecs))], vecs)
    return matrix, centers


def test_two_step_search_finds_what_the_exact_search_finds(big):
    matrix, centers = big
    rng = np.random.default_rng(8)
    queries = unit(centers[:20] + 0.6 * unit(rng.standard_normal((20, 384))))
    exact = [matrix.search(q, 10) for q in queries]
    matrix.exact_rows = 0  # force the two steps (1,000 of 3,000 rows ranked exactly)
    two_step = [matrix.search(q, 10) for q in queries]
    assert two_step == exact == [matrix.search(q, 10, exact=True) for q in queries]
    assert all(int(i[1:]) % 100 == c for c, hits in enumerate(two_step) for i, _ in hits)  # the query's cluster


def test_two_step_search_skips_removed_rows(big, monkeypatch):
    matrix, centers = big
    matrix.exact_rows = 0
    monkeypatch.setattr(vectors, "MIN_CANDIDATES", 10)
    matrix.drop("m5")
    hits = matrix.search(centers[5], 200)  # 200 candidates (the larger of top_k and 3,000 / 20)
    assert "m5" not in {i for i, _ in hits} and len(hits) == 200
    assert hits[0][0] != "m5" and all(np.isfinite(s) for _, s in hits)


def test_quantize_exact_values():
    q8, scale = vectors.quantize(np.array([[0.5, -1.0, 0.25], [0.0, 0.0, 0.0]], dtype=np.float32))
    assert q8.dtype == np.int8 and q8.tolist() == [[64, -127, 32], [0, 0, 0]]  # 63.5 rounds to even: 64
    assert scale.tolist() == [pytest.approx(1 / 127), 0.0]


def test_nearest_rows_keeps_the_newest_ties_in_row_order():
    dist = np.array([3, 1, 2, 1, 0, 1], dtype=np.uint16)
    assert vectors.nearest_rows(dist, 3).tolist() == [3, 4, 5]  # 0 at row 4, then the newest two of the 1s
    assert vectors.nearest_rows(dist, 4).tolist() == [1, 3, 4, 5]
    assert vectors.nearest_rows(dist, 5).tolist() == [1, 2, 3, 4, 5]
    assert vectors.nearest_rows(np.zeros(4, dtype=np.uint16), 2).tolist() == [2, 3]


def test_int8_step_keeps_the_exact_ranking_and_scores(big, monkeypatch):
    matrix, centers = big
    rng = np.random.default_rng(9)
    queries = unit(centers[20:40] + 0.6 * unit(rng.standard_normal((20, 384))))
    exact = [matrix.search(q, 10) for q in queries]
    matrix.exact_rows = 0
    monkeypatch.setattr(vectors, "RESCORE_MIN", 30)  # 1,000 candidates -> 40 by int8 -> 10 by exact cosine
    approx_calls = []
    real = matrix._approximate
    monkeypatch.setattr(matrix, "_approximate", lambda rows, q: approx_calls.append(len(rows)) or real(rows, q))
    assert [matrix.search(q, 10) for q in queries] == exact
    assert approx_calls == [1000] * 20


def test_int8_step_skips_removed_rows_and_follows_updates(big, monkeypatch):
    matrix, centers = big
    matrix.exact_rows = 0
    monkeypatch.setattr(vectors, "RESCORE_MIN", 1)
    for i in range(0, 3000, 100):  # every row of cluster 0 but m0 removed, m0 moved onto cluster 7's centre
        if i:
            matrix.drop(f"m{i}")
    matrix.upsert("m0", centers[7])
    hits = matrix.search(centers[0], 5)
    assert not {f"m{i}" for i in range(100, 3000, 100)} & {i for i, _ in hits}
    top = matrix.search(centers[7], 3)
    assert top[0] == ("m0", pytest.approx(1.0, abs=1e-5))


def test_three_step_recall_against_a_full_scan():
    """20k rows in 200 clusters, queries near a cluster centre: the top 10 of the three steps against a full scan
    (real MiniLM vectors: module docstring of :mod:`pi_memory.semantic.vectors`)."""
    rng = np.random.default_rng(3)
    centers = unit(rng.standard_normal((200, 384)))
    vecs = unit(centers[np.arange(20_000) % 200] + 0.8 * unit(rng.standard_normal((20_000, 384))))
    matrix = VectorMatrix(384)
    matrix.upsert_many([str(i) for i in range(len(vecs))], vecs)
    matrix.exact_rows = 0  # 1,000 candidates by sign bits, 256 by int8, 10 by exact cosine
    queries = unit(centers[:30] + 0.8 * unit(rng.standard_normal((30, 384))))
    found = 0
    for q in queries:
        true = {str(i) for i in np.argsort(-(vecs @ q))[:10]}
        found += len(true & {i for i, _ in matrix.search(q, 10)})
    assert found / 300 >= 0.99
