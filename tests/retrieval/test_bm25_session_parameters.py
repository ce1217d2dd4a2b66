"""BM25 over session messages uses k1 = 0.9, b = 0.4 (retrieval/bm25.py, ``Corpus.k1`` / ``Corpus.b``), memories
keep k1 = 1.2, b = 0.75: the same rows and term score as the formula says for each corpus."""

from __future__ import annotations

import math

import pytest

from pi_memory.index import open_index
from pi_memory.index.query import Term
from pi_memory.retrieval.bm25 import MEMORIES, MESSAGES, Engine


@pytest.fixture
def conn(tmp_path):
    c = open_index(tmp_path / "data")
    yield c
    c.close()


def expected(tf: int, length: int, avgdl: float, k1: float, b: float, total: int, n: float) -> float:
    idf = math.log(1.0 + (total - n + 0.5) / (n + 0.5))
    return idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * length / avgdl))


def test_session_messages_saturate_sooner_and_normalise_length_less(conn):
    short = "Catan night on Friday"  # 21 characters, one occurrence
    long = "Catan, Catan and Catan again: we played it all weekend at the cabin by the lake"  # 79, three
    rows = [(1, short, len(short), ""), (2, long, len(long), "")]
    term = Term("catan", words=True)
    avgdl = (len(short) + len(long)) / 2
    assert (MESSAGES.k1, MESSAGES.b, MEMORIES.k1, MEMORIES.b) == (0.9, 0.4, 1.2, 0.75)
    for corpus in (MESSAGES, MEMORIES):
        eng = Engine(conn, corpus, [], [])  # an empty index: total 1, the term's frequency unknown (common)
        got = eng.score(rows, [term])
        assert got[1] == pytest.approx(expected(1, len(short), avgdl, corpus.k1, corpus.b, 1, 1.0), rel=1e-12)
        assert got[2] == pytest.approx(expected(3, len(long), avgdl, corpus.k1, corpus.b, 1, 1.0), rel=1e-12)
    messages = Engine(conn, MESSAGES, [], []).score(rows, [term])
    memories = Engine(conn, MEMORIES, [], []).score(rows, [term])
    # three occurrences in a text 3.8 times as long: 1.23 times the short one's score for turns (its length
    # counts less), 1.07 for memories
    assert messages[2] / messages[1] == pytest.approx(1.2348, abs=1e-4)
    assert memories[2] / memories[1] == pytest.approx(1.0661, abs=1e-4)
