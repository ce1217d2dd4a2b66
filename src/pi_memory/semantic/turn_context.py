"""Context for keyword-found session turns: a match lends part of its score to the turns around it.

In a conversation the words of a question are often in one turn and the answer in the next ("what's your
favourite game?" / "Catan, I love it"), so a turn is ranked by its own match plus a share of its neighbours'.
This is the query-time form of the context window the turn index gives each turn's key
(:class:`pi_memory.retrieval.turns.KeySpec`): on LoCoMo (``benchmarks/locomo_recall.py --recall``) the keyword
list of recall over sessions went from R@10 0.606 to 0.692 with ``window=2, weight=0.5`` (window 1: 0.669;
weight 0.3 / 0.7 at window 2: 0.673 / 0.683); a neighbour at distance ``d`` receives ``weight / d`` of the
match's score.

Neighbours are the nearest turns of the same session by position: rows of kind ``message`` from the user or the
assistant with at least :data:`~pi_memory.semantic.turn_vectors.MIN_TURN_CHARS` characters (tool output,
acknowledgements such as "ok, go ahead" and other rows in between are skipped), at most ``window`` on each side. The session
search index keeps ``messages`` rows in file order, so ``messages.id`` is the position.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Sequence

from pi_memory.semantic.turn_vectors import MIN_TURN_CHARS

WINDOW = 2  # turns on each side that receive a share of a match (LoCoMo: 1 -> 0.669, 2 -> 0.692 R@10)
WEIGHT = 0.5  # share of a match's score its nearest neighbour receives; 1/d of it at distance d

_SIDE = ("SELECT id FROM messages WHERE session_id = ? AND id {op} ? AND kind = 'message' "
         f"AND role IN ('user', 'assistant') AND length(text) >= {MIN_TURN_CHARS} ORDER BY id {{order}} LIMIT ?")


def neighbours(conn: sqlite3.Connection, message_ids: Sequence[int], window: int = WINDOW) -> dict[int, list[int]]:
    """For each of ``message_ids``: the ids of the nearest ``window`` turns before it and after it in its session,
    nearest first on each side, before-side first (``[]`` for an id no longer in the index). Two small indexed
    queries per id (``messages_session``)."""
    if window <= 0 or not message_ids:
        return {mid: [] for mid in message_ids}
    session_of = dict(conn.execute(f"SELECT id, session_id FROM messages WHERE id IN ({','.join('?' * len(message_ids))})",
                                   list(message_ids)))
    before, after = _SIDE.format(op="<", order="DESC"), _SIDE.format(op=">", order="ASC")
    out: dict[int, list[int]] = {}
    for mid in message_ids:
        sid = session_of.get(mid)
        if sid is None:
            out[mid] = []
            continue
        out[mid] = [r[0] for r in conn.execute(before, (sid, mid, window))]
        out[mid] += [r[0] for r in conn.execute(after, (sid, mid, window))]
    return out


def spread(conn: sqlite3.Connection, ranked: Sequence[tuple[int, float]], limit: int, window: int = WINDOW,
           weight: float = WEIGHT) -> list[tuple[int, float, tuple[int, ...]]]:
    """``ranked`` = ``(message id, score)`` of keyword matches (higher is better) re-ranked with context: each
    turn's score is its own plus ``weight / d`` of the score of every match ``d`` turns away (``d <= window``),
    so a turn without a match of its own can enter. Returns ``(message id, score, lenders)``, best ``limit``
    first, where ``lenders`` are the matches that gave the turn its score (itself first when it matched): its
    keyword evidence is read from their text too. Ties keep the order first seen. ``weight`` 0 or ``window`` 0:
    ``ranked`` cut to ``limit``."""
    if weight <= 0 or window <= 0:
        return [(mid, s, (mid,)) for mid, s in list(ranked)[:limit]]
    near = neighbours(conn, [mid for mid, _ in ranked], window)
    score: dict[int, float] = defaultdict(float)
    lenders: dict[int, list[int]] = defaultdict(list)  # insertion order = order first seen
    for mid, s in ranked:
        score[mid] += s
        lenders[mid].append(mid)
    for mid, s in ranked:
        sides = near.get(mid, [])
        for side in ([n for n in sides if n < mid], [n for n in sides if n > mid]):
            for d, n in enumerate(side, 1):
                score[n] += weight * s / d
                lenders[n].append(mid)
    seen = {mid: i for i, mid in enumerate(lenders)}
    order = sorted(score, key=lambda m: (-score[m], seen[m]))
    return [(m, score[m], tuple(dict.fromkeys(lenders[m]))) for m in order[:limit]]
