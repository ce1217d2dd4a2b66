"""Session turns ranked in context with vectors: the keyword list and the turn-vector list of one recall, fused
over one candidate pool and re-scored with each turn's window of neighbours.

This is the host's form of :class:`pi_memory.retrieval.TurnIndex` (measured by ``benchmarks/locomo_recall.py``):
the index keeps one vector per turn (its own text, :mod:`pi_memory.semantic.turn_vectors`), and what the turn
index gets from embedding a context-window key is computed at query time from the vectors already stored:

1. **Pool**: the keyword candidates read in context (:mod:`pi_memory.retrieval.context`: each with its score)
   and the nearest turn vectors (each with its cosine).
2. **Window cosine**: each candidate's vector plus ``WINDOW_WEIGHT`` times its nearest neighbour turn on each
   side (the neighbours of :func:`pi_memory.retrieval.context.neighbours`), normalised, against the query:
   "what's your favourite game?" / "Catan, I love it" -- the answer's window holds the question's meaning.
3. **Convex fusion** (:func:`pi_memory.retrieval.fusion.convex_fuse`): min-max normalised keyword score
   (``KEYWORD_WEIGHT``), window cosine (``WINDOW_VECTOR_WEIGHT``) and the turn's own cosine
   (``OWN_VECTOR_WEIGHT``); a candidate missing from a list gets 0 from it.
4. **Priors**: a question asking *when* (:func:`pi_memory.retrieval.expand.is_temporal`) lifts turns that carry
   a time expression (:func:`pi_memory.retrieval.turns.time_cue`) by ``TIME_BOOST``; each session's best
   candidate lifts the session's other candidates (:func:`pi_memory.retrieval.rerank.session_support`,
   ``SESSION_BOOST``).

Turns without a vector (not embedded yet) take part by keyword only. Without a query vector (embedder down,
the hook's deadline) the keyword order is kept with the priors applied.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pi_memory.retrieval.expand import is_temporal
from pi_memory.retrieval.fusion import convex_fuse
from pi_memory.retrieval.rerank import session_support
from pi_memory.retrieval.turns import time_cue

KEYWORD_WEIGHT = 1.5
WINDOW_VECTOR_WEIGHT = 1.0
OWN_VECTOR_WEIGHT = 0.25
WINDOW_WEIGHT = 0.5
WINDOW_TURNS = 1
TIME_BOOST = 0.3
SESSION_BOOST = 0.2


@dataclass(frozen=True)
class RankedTurn:
    """One turn of the fused ranking: ``messages.id``, fused ``score`` (higher is better) and the cosine of
    its own vector with the query (``None``: no vector)."""

    id: int
    score: float
    cosine: float | None


def _vectors(conn: sqlite3.Connection, model: str, dim: int, ids: Sequence[int]) -> dict[int, np.ndarray]:
    """The stored vectors of ``model`` and ``dim`` of the turns ``ids`` (a row of another dimension is never
    compared with the query, as in :mod:`pi_memory.semantic.sources`)."""
    if not ids:
        return {}
    rows = conn.execute(
        f"SELECT message_id, vector FROM semantic_turn_vectors WHERE model = ? AND dim = ? AND message_id IN "
        f"({','.join('?' * len(ids))})", [model, dim, *ids])
    return {mid: np.frombuffer(blob, dtype="<f4", count=dim) for mid, blob in rows}


def rank(conn: sqlite3.Connection, query: str, keyword: Sequence[tuple[int, float]],
         vector: Sequence[tuple[int, float]], qvec: np.ndarray | None, model: str | None,
         until: str | None = None) -> list[RankedTurn]:
    """The pool of ``keyword`` (``(message id, score)`` best first) and ``vector`` (``(message id, cosine)``)
    fused and re-scored (module docstring), best first."""
    from pi_memory.retrieval.context import neighbours

    pool = list(dict.fromkeys([m for m, _ in keyword] + [m for m, _ in vector]))
    if not pool:
        return []
    scored: dict[str, dict[int, float]] = {"keyword": dict(keyword)}
    own: dict[int, float] = dict(vector)
    if qvec is not None and model:
        near = neighbours(conn, pool, WINDOW_TURNS, until)
        vecs = _vectors(conn, model, int(qvec.shape[-1]), list({*pool, *(n for ns in near.values() for n in ns)}))
        window: dict[int, float] = {}
        for m in pool:
            v = vecs.get(m)
            if v is None:
                continue
            own.setdefault(m, float(v @ qvec))
            total = v.astype(np.float32).copy()
            for n in near.get(m, []):
                if n in vecs:
                    total += WINDOW_WEIGHT * vecs[n]
            norm = float(np.linalg.norm(total))
            if norm > 0:
                window[m] = float(total @ qvec) / norm
        scored["window"] = window
        scored["own"] = own
    fused = convex_fuse(scored, {"keyword": KEYWORD_WEIGHT, "window": WINDOW_VECTOR_WEIGHT, "own": OWN_VECTOR_WEIGHT})
    if TIME_BOOST and is_temporal(query):
        text = dict(conn.execute(f"SELECT id, text FROM messages WHERE id IN ({','.join('?' * len(pool))})", pool))
        fused = sorted(((m, s * (1.0 + TIME_BOOST) if time_cue(text.get(m, "")) else s) for m, s in fused),
                       key=lambda x: -x[1])
    if SESSION_BOOST:
        session = dict(conn.execute(f"SELECT id, session_id FROM messages WHERE id IN ({','.join('?' * len(pool))})",
                                    pool))
        index = {m: i for i, m in enumerate(pool)}
        rows = [(index[m], s) for m, s in fused]
        fused = [(pool[i], s) for i, s in session_support(rows, [session.get(m) for m in pool], SESSION_BOOST)]
    return [RankedTurn(m, s, own.get(m)) for m, s in fused]
