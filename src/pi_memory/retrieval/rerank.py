"""Re-scoring a fused candidate list with a second, precomputed vector key (no model call at query time).

No cross-encoder is available offline here (its weights would have to come from a model hub), so re-ranking
uses what is: the bundled MiniLM bi-encoder, with a *different key* from the one that produced the candidate
list. The first-stage vector key carries a context window (good for finding the neighbourhood); the re-rank
key is the turn alone with its speaker and date (good for telling which turn of the neighbourhood answers).
Both sets of vectors are computed when turns are added, so re-ranking costs one matrix-vector product over
the candidates and reuses the query embedding.

:func:`blend` mixes the first-stage scores with the re-rank cosines: each is min-max normalised over the
candidates (:func:`pi_memory.retrieval.fusion.minmax`) and combined as ``(1 - weight) * first + weight *
cosine``. Candidates past ``depth`` keep their order below the re-scored ones.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from pi_memory.retrieval.fusion import minmax

__all__ = ["blend", "cosines", "rescore", "session_support"]


def cosines(query: np.ndarray, vectors: np.ndarray, rows: Sequence[int]) -> np.ndarray:
    """Cosine of the (unit) query with the (unit) rows ``rows`` of ``vectors``."""
    if not len(rows):
        return np.zeros(0, dtype=np.float32)
    return vectors[np.asarray(rows, dtype=np.int64)] @ query


def rescore(rows: Sequence[int], query: np.ndarray, vectors: np.ndarray) -> list[tuple[int, float]]:
    """``(row, cosine)`` of the candidate ``rows`` under ``vectors``, best first: a ranked list over the
    candidate pool that :mod:`pi_memory.retrieval.fusion` fuses with the first-stage lists."""
    sims = cosines(query, vectors, rows)
    order = np.argsort(-sims, kind="stable")
    return [(int(rows[i]), float(sims[i])) for i in order]


def blend(
    ranked: Sequence[tuple[int, float]],
    query: np.ndarray,
    vectors: np.ndarray,
    *,
    weight: float = 0.5,
    depth: int = 50,
) -> list[tuple[int, float]]:
    """Re-rank the first ``depth`` of ``ranked`` (``(row, score)`` best first) by a blend of their score and
    their cosine with ``query`` under ``vectors`` (module docstring). ``weight`` 0 keeps the order, 1 ranks by
    the cosine alone. Returns ``(row, blended score)`` for the re-ranked head, then the tail unchanged."""
    if weight <= 0 or depth <= 0 or not ranked:
        return list(ranked)
    head, tail = list(ranked[:depth]), list(ranked[depth:])
    rows = [row for row, _ in head]
    first = minmax({row: score for row, score in head})
    second = minmax(dict(zip(rows, cosines(query, vectors, rows).tolist(), strict=True)))
    mixed = [(row, (1.0 - weight) * first[row] + weight * second[row]) for row in rows]
    mixed.sort(key=lambda item: -item[1])  # stable: the first stage breaks ties
    floor = min((s for _, s in mixed), default=0.0)
    return mixed + [(row, min(score, floor)) for row, score in tail]


def session_support(ranked: Sequence[tuple[int, float]], session_of: Sequence[Hashable], weight: float
                    ) -> list[tuple[int, float]]:
    """Re-rank ``(row, score)`` pairs (scores >= 0) by session support (module docstring); ``session_of[row]``
    is the row's session. ``weight`` 0 returns the pairs unchanged; ties keep their order."""
    if weight <= 0 or not ranked:
        return list(ranked)
    best: dict[Hashable, float] = {}
    for row, score in ranked:
        session = session_of[row]
        best[session] = max(best.get(session, 0.0), score)
    top = max(best.values())
    if top <= 0:
        return list(ranked)
    lifted = [(row, score * (1.0 + weight * best[session_of[row]] / top)) for row, score in ranked]
    return sorted(lifted, key=lambda item: -item[1])
