"""Session turns ranked in context: a keyword match brings in the turns around it, and every candidate is scored
by BM25 over its own text and over its window of neighbouring turns.

In a conversation the words of a question are often in one turn and the answer in the next ("what's your
favourite game?" / "Catan, I love it"). Used by recall before an agent run
(:func:`pi_memory.index.session_ranking_in_context`); ``session_search`` keeps strict matching.

Two steps:

1. **Spread** (:func:`spread`): each match lends ``weight / d`` of its score to the turns ``d <= window`` away,
   so turns without a match of their own become candidates; the best ``limit`` are kept, each with its
   *lenders* (the matches that gave it score: the caller reads keyword evidence from their text too).
2. **Window BM25** (:func:`rank`): every candidate's score = its keyword search score (0 when it came in by
   context) + BM25 of its window (its text and its neighbours', ``window`` turns each side) with the search's
   terms and document frequencies; a candidate that is not a turn (tool output) is its own window.
   This is the query-time form of the context-window key of :class:`pi_memory.retrieval.turns.KeySpec`.

Measured on LoCoMo (``benchmarks/locomo_recall.py --recall``; keyword list of host recall over sessions):
R@10 0.606 without context; spread alone 0.692 (window 1: 0.669; weight 0.3 / 0.7: 0.673 / 0.683); spread +
window BM25: 0.716 (window BM25 alone 0.682; own x2 + window 0.698).

Recall's evidence floor is read in context too (:func:`context_evidence`): a turn without evidence of its own
passes when a turn of its window has a vector at or above the floor.

Neighbours are the nearest turns of the same session by position: rows of kind ``message`` from the user or the
assistant with at least :data:`~pi_memory.index.conversation.MIN_TURN_CHARS` characters (tool output, acknowledgements such as "ok, go
ahead" and other rows in between are skipped), at most ``window`` on each side. The index keeps ``messages``
rows in file order, so ``messages.id`` is the position.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pi_memory.index.conversation import TURN_SQL

WINDOW = 2  # turns on each side that receive a share of a match and form its window (LoCoMo: 1 -> 0.669, 2 -> 0.692)
WEIGHT = 0.5  # share of a match's score its nearest neighbour receives; 1/d of it at distance d
_PIECE_CHARS = 2000  # characters of each turn that count in a window

_TURN = TURN_SQL


@dataclass(frozen=True)
class ContextHit:
    """One turn ranked in context: ``id`` (``messages.id``), ``score`` (higher is better, comparable within one
    ranking), ``lenders``: the keyword matches that brought it in, itself first when it matched; ``near``: its
    :func:`neighbours` (``WINDOW`` each side) as :func:`rank` read them, ``None`` when not read (tool output,
    which has no window, or another ``window``), so a later step over the same turns need not read them again."""

    id: int
    score: float
    lenders: tuple[int, ...]
    near: tuple[int, ...] | None = None


def neighbours(conn: sqlite3.Connection, message_ids: Sequence[int], window: int = WINDOW,
               until: str | None = None) -> dict[int, list[int]]:
    """For each of ``message_ids``: the ids of the nearest ``window`` turns before it and after it in its session,
    nearest first on each side, before-side first (``[]`` for an id no longer in the index). One statement: per
    id and side, ``window`` indexed seeks (the partial index of turns, ``messages_turns``, which also holds the
    timestamp: no row in between is read; ``LIMIT 1 OFFSET k``), where a query per id and
    side cost more than the ranking they serve (2-3 ms a recall at 100k turns). ``until``: turns written after
    it are not neighbours."""
    if window <= 0 or not message_ids:
        return {mid: [] for mid in message_ids}
    after = "" if until is None else " AND (n.timestamp IS NULL OR n.timestamp <= ?)"
    turn = _TURN.replace("kind", "n.kind").replace("role", "n.role").replace("length(text)", "length(n.text)")
    side = ("(SELECT n.id FROM messages n WHERE n.session_id = p.session_id AND n.id {op} p.id AND " + turn
            + "{after} ORDER BY n.id {order} LIMIT 1 OFFSET {k})")
    columns = [side.format(op="<", order="DESC", after="", k=k) for k in range(window)]
    columns += [side.format(op=">", order="ASC", after=after, k=k) for k in range(window)]
    sql = (f"SELECT p.id, {', '.join(columns)} FROM messages p "
           f"WHERE p.id IN ({','.join('?' * len(message_ids))})")
    params = [*(() if until is None else (until,) * window), *message_ids]
    out: dict[int, list[int]] = {mid: [] for mid in message_ids}
    for mid, *near in conn.execute(sql, params):
        out[mid] = [n for n in near if n is not None]
    return out


def context_evidence(conn: sqlite3.Connection | None, failing: Sequence[int], vouching: set[int],
                     until: str | None = None) -> set[int]:
    """The turns among ``failing`` (message ids without evidence of their own for recall's floor) that have a
    turn of ``vouching`` (ids whose vector meets the floor) among their :func:`neighbours` (``WINDOW`` each
    side): the floor read in context, as the ranking is, since the answer to a question that means what the
    prompt means is the next turn. Keyword evidence needs no such step: a turn's coverage already counts the
    matches that lent it its score. One statement; ``set()`` when either set is empty, so a prompt unrelated
    to every turn still passes nothing."""
    if conn is None or not failing or not vouching:
        return set()
    near = neighbours(conn, list(dict.fromkeys(failing)), WINDOW, until)
    lent = {m: vouching.intersection(ns) for m, ns in near.items()}
    lent = {m: vs for m, vs in lent.items() if vs}
    if not lent:
        return set()
    ids = sorted(set(lent) | {v for vs in lent.values() for v in vs})
    stamps = dict(conn.execute(f"SELECT id, timestamp FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids))
    return {m for m, vs in lent.items() if any(near_in_time(stamps.get(m), stamps.get(v)) for v in vs)}


NEAR_HOURS = 48  # a neighbour written further apart in its session (a session resumed days later) vouches for nothing


def near_in_time(a: str | None, b: str | None) -> bool:
    """Whether two turns' timestamps are within :data:`NEAR_HOURS` (``True`` when either is unknown or unreadable):
    a turn next to one about the prompt is its answer when it follows it, not when it was written 11 days later
    ("Did the Lakers win yesterday?" lent yesterday's database turns the evidence of an older turn about a game)."""
    from datetime import datetime

    try:
        gap = abs(datetime.fromisoformat(a) - datetime.fromisoformat(b))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return True
    return gap.total_seconds() <= NEAR_HOURS * 3600


def spread(conn: sqlite3.Connection, ranked: Sequence[tuple[int, float]], limit: int, window: int = WINDOW,
           weight: float = WEIGHT, near: dict[int, list[int]] | None = None,
           until: str | None = None) -> list[tuple[int, float, tuple[int, ...]]]:
    """``ranked`` = ``(message id, score)`` of keyword matches (higher is better) re-ranked with context: each
    turn's score is its own plus ``weight / d`` of the score of every match ``d`` turns away (``d <= window``),
    so a turn without a match of its own can enter. Returns ``(message id, score, lenders)``, best ``limit``
    first, where ``lenders`` are the matches that gave the turn its score (itself first when it matched). Ties
    keep the order first seen. ``weight`` 0 or ``window`` 0: ``ranked`` cut to ``limit``. ``near``: the
    neighbours already known (:func:`neighbours`); the missing ones are looked up and added to it."""
    if weight <= 0 or window <= 0:
        return [(mid, s, (mid,)) for mid, s in list(ranked)[:limit]]
    near = {} if near is None else near
    near.update(neighbours(conn, [mid for mid, _ in ranked if mid not in near], window, until))
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


def _window_row(m: int, text: Mapping[int, str], near: Mapping[int, Sequence[int]]) -> tuple[int, str, int, str]:
    """A BM25 row (:meth:`pi_memory.retrieval.bm25.Engine.score`) of turn ``m``'s text and its neighbours'."""
    joined = "\n".join([text.get(m, ""), *(text.get(n, "") for n in near.get(m, ()))])
    return m, joined, len(joined), ""


class ContextHits(list):
    """:func:`rank`'s hits (:class:`ContextHit`, best first) and ``score_more(conn, ids, near)``: further turns
    scored as its candidates were (:func:`score_turns` with the same terms and document frequencies), for
    recall's turns that only the vector list found (:mod:`pi_memory.retrieval.turns_in_context`)."""

    def __init__(self, hits: Sequence[ContextHit] = (), scorer: Any = None, terms: Sequence[Any] = ()):
        super().__init__(hits)
        self._scorer, self._terms = scorer, list(terms)

    def score_more(self, conn: sqlite3.Connection, ids: Sequence[int],
                   near: Mapping[int, Sequence[int]]) -> dict[int, float]:
        """:func:`score_turns` of ``ids`` with the ranking's BM25 (``{}`` without one)."""
        if self._scorer is None or not ids:
            return {}
        return score_turns(conn, self._scorer, self._terms, ids, near)


def score_turns(conn: sqlite3.Connection, scorer: Any, terms: Sequence[Any], ids: Sequence[int],
                near: Mapping[int, Sequence[int]]) -> dict[int, float]:
    """The score :func:`rank` gives a candidate, for turns the keyword search did not rank: BM25 of the turn's
    own text (a candidate's own score is its search BM25) plus BM25 of its window (``near``: its neighbours),
    with ``scorer``'s document frequencies (the search's: every term's is known by then). Turns matching no
    term score 0. One statement (the texts)."""
    wanted = sorted({*ids, *(n for m in ids for n in near.get(m, ()))})
    text = dict(conn.execute(f"SELECT id, substr(text, 1, {_PIECE_CHARS}) FROM messages "
                             f"WHERE id IN ({','.join('?' * len(wanted))})", wanted))
    alone = scorer.score([_window_row(m, text, {}) for m in ids], list(terms))
    around = scorer.score([_window_row(m, text, near) for m in ids], list(terms))
    return {m: alone.get(m, 0.0) + around.get(m, 0.0) for m in ids}


def rank(conn: sqlite3.Connection, scorer: Any, terms: Sequence[Any], matches: Sequence[tuple[int, float]],
         limit: int, window: int = WINDOW, weight: float = WEIGHT, until: str | None = None) -> ContextHits:
    """Step 2 (module docstring): the best ``limit`` candidates of :func:`spread` over ``matches`` (``(id, BM25)``
    of the keyword search), re-scored as own score + BM25(window text). ``scorer``: the search's engine
    (:class:`pi_memory.retrieval.bm25.Engine`: ``doc_freq(term)``, ``score(rows, terms)``) so both BM25s use
    its document frequencies. Ties keep the spread order. ``until``: turns written after it are left out of
    every window (recall's ``as_of``). The hits keep the scorer (:meth:`ContextHits.score_more`)."""
    known: dict[int, list[int]] = {}
    pool = spread(conn, matches, limit, window, weight, near=known, until=until)  # fills ``known`` for the matches
    if not pool or window <= 0:
        return ContextHits([ContextHit(m, s, lent) for m, s, lent in pool])
    ids = [m for m, _, _ in pool]
    turns = {r[0] for r in conn.execute(f"SELECT id FROM messages WHERE id IN ({','.join('?' * len(ids))}) AND "
                                        f"{_TURN}", ids)}
    known.update(neighbours(conn, [m for m in ids if m in turns and m not in known], window, until))
    near = {m: known[m] for m in ids if m in turns}  # tool output and the like: no window
    wanted = sorted({*ids, *(n for ns in near.values() for n in ns)})
    text = dict(conn.execute(f"SELECT id, substr(text, 1, {_PIECE_CHARS}) FROM messages "
                             f"WHERE id IN ({','.join('?' * len(wanted))})", wanted))
    for t in terms:
        if not getattr(t, "short", False):
            scorer.doc_freq(t)
    window_bm25 = scorer.score([_window_row(m, text, near) for m in ids], list(terms))
    own = dict(matches)  # the keyword search's own score (0 for a turn brought in by context)
    scored = [ContextHit(m, own.get(m, 0.0) + window_bm25.get(m, 0.0), lent,
                         tuple(near[m]) if m in near and window == WINDOW else None) for m, _, lent in pool]
    position = {m: i for i, m in enumerate(ids)}
    return ContextHits(sorted(scored, key=lambda h: (-h.score, position[h.id])), scorer, terms)
