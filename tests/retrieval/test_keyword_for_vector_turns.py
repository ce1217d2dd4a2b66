"""Recall's turns that only the vector list found get a keyword score too (retrieval/turns_in_context.py step 1,
retrieval/context.py ``score_turns``): the nearest ``MORE_KEYWORD_TURNS`` of the vector list without one are
scored as the keyword candidates are (BM25 of their own text plus BM25 of their window), so a turn that holds
the question's words but ranked below the keyword search's cut is not left at 0 on the keyword side."""

from __future__ import annotations

import numpy as np
import pytest

from pi_memory.retrieval import context
from pi_memory.retrieval import turns_in_context as tic
from pi_memory.retrieval.context import ContextHit, ContextHits, neighbours

from .test_turns_in_context import DIM, MODEL, add_turns, conn, store  # noqa: F401  (conn: the fixture)


class CountingScorer:
    """A stand-in for the search's BM25: a row's score is how often ``catan`` occurs in its text."""

    def __init__(self):
        self.calls: list[list[int]] = []

    def score(self, rows, terms):
        self.calls.append([r[0] for r in rows])
        return {r[0]: float(r[1].lower().count("catan")) for r in rows}


def test_score_turns_adds_the_own_text_and_the_window_of_two_turns_each_side(conn):  # noqa: F811
    ids = add_turns(conn, ["Catan night is on Friday at my place", "which board game should we bring this time?",
                           "Catan, everyone loved it last year", "I will pack Catan and the expansion, Catan fans",
                           "and remember the snacks for the train ride"])
    near = neighbours(conn, [ids[2]], window=2)
    assert near[ids[2]] == [ids[1], ids[0], ids[3], ids[4]]
    scorer = CountingScorer()
    # own text: 1; window: its own 1 + ids[0] 1 + ids[3] 2 = 4
    assert context.score_turns(conn, scorer, ["catan"], [ids[2]], near) == {ids[2]: 5.0}
    assert context.score_turns(conn, scorer, ["catan"], [ids[1]], {ids[1]: []}) == {ids[1]: 0.0}
    hits = ContextHits([ContextHit(ids[0], 1.0, (ids[0],))], scorer, ["catan"])
    assert hits.score_more(conn, [ids[2]], near) == {ids[2]: 5.0} and hits == [ContextHit(ids[0], 1.0, (ids[0],))]
    assert ContextHits([]).score_more(conn, [ids[2]], near) == {}  # no scorer (no keyword ranking): nothing


def test_rank_gives_the_vector_only_turns_a_keyword_score(conn, monkeypatch):  # noqa: F811
    ids = add_turns(conn, [f"turn number {i} about the board game night" for i in range(6)])
    e = np.eye(DIM, dtype=np.float32)
    store(conn, {m: e[i] for i, m in enumerate(ids)})
    qvec = (e[4] + 1.2 * e[5]) / np.linalg.norm(e[4] + 1.2 * e[5])
    keyword = [(ids[0], 3.0), (ids[1], 1.0)]
    vector = [(ids[5], float(qvec[5])), (ids[4], float(qvec[4]))]  # best cosine first
    asked = []

    def score_more(c, wanted, near):
        asked.append((list(wanted), {m: list(near[m]) for m in wanted}))
        return {ids[4]: 2.0, ids[5]: 0.0}  # ids[5] matches no term: left without a keyword score

    before = {r.id: r.score for r in tic.rank(conn, "game night", keyword, vector, qvec, MODEL)}
    after = {r.id: r.score for r in tic.rank(conn, "game night", keyword, vector, qvec, MODEL, score_more=score_more)}
    assert asked == [([ids[5], ids[4]], {ids[5]: [ids[4], ids[3]], ids[4]: [ids[3], ids[2], ids[5]]})]
    assert max(before, key=before.get) == ids[0] and before[ids[5]] > before[ids[4]]
    assert max(after, key=after.get) == ids[4]  # its keyword score lifts it over the keyword list's best
    # keyword 2.0 between 1.0 and 3.0: min-max 0.5, x 1.5 (KEYWORD_WEIGHT), x 1.2 (one session: full support)
    assert after[ids[4]] - before[ids[4]] == pytest.approx(0.5 * 1.5 * 1.2, abs=1e-9)
    others = [ids[0], ids[1], ids[5]]  # the rest of the pool keeps its scores
    assert [after[m] for m in others] == pytest.approx([before[m] for m in others], abs=1e-9)
    monkeypatch.setattr(tic, "MORE_KEYWORD_TURNS", 1)
    asked.clear()
    tic.rank(conn, "game night", keyword, vector, qvec, MODEL, score_more=score_more)
    assert [w for w, _ in asked] == [[ids[5]]]  # only the nearest vector-only turn is scored
    asked.clear()
    tic.rank(conn, "game night", [], vector, qvec, MODEL, score_more=score_more)
    assert asked == []  # no keyword list: nothing to be comparable with
