"""Recall's ``dated`` list (engine ``_dated_list``, ``turns_in_context.dated_turns``): when the prompt names a date,
the turns written inside its window that neither the keyword nor the vector list brought into the pool are ranked
on their own (nearest by their own vector, then as the pool is ranked) and fused as one more list with the weight
of the ``sessions`` list; they are dated, so they pass the floor as every candidate inside a window does. Vectors
come from a table, so every cosine is known exactly."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from semantic_helpers import ALICE, TableEmbedder

from pi_memory.index import transaction
from pi_memory.index.indexer import insert_messages
from pi_memory.retrieval import turns_in_context
from pi_memory.retrieval.engine import DEFAULT_WEIGHTS, recall
from pi_memory.semantic import sources
from pi_memory.semantic import turn_vectors as tv
from pi_memory.semantic.embedded import EmbeddedBackend

AS_OF = "2026-12-01T10:00:00.000Z"
PROMPT = "what did we say about the cache on November 20?"
UNDATED = "what did we say about the cache?"
OLD = [f"the cache layer needs work, note {i}" for i in range(6)]  # 2026-11-01, session s1: the pool's turns
NOV20 = ["we agreed to keep sessions in redis", "and to expire them after a day"]  # 2026-11-20, session s2


def _v(c: float) -> np.ndarray:
    """A unit vector whose cosine with the prompts' vector is ``c``."""
    return np.asarray([c, np.sqrt(1 - c * c), 0, 0], dtype=np.float32)


CJK_PROMPTS = ["11月20日我们关于缓存说了什么？", "11月20日にキャッシュについて何を話した？", "11天前关于缓存说了什么？",
               "11월 20일에 캐시에 대해 뭐라고 했어?"]  # November 20th 2026: 11 days before AS_OF
CJK_UNDATED = "我们关于缓存说了什么？"
VECTORS = {PROMPT: _v(1.0), UNDATED: _v(1.0), **{t: _v(0.9 - 0.05 * i) for i, t in enumerate(OLD)},
           NOV20[0]: _v(0.5), NOV20[1]: _v(0.3), CJK_UNDATED: _v(1.0), **dict.fromkeys(CJK_PROMPTS, _v(1.0))}


def _session(conn, key: str, stamp: str, texts: list[str]) -> None:
    sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) "
                       "VALUES ('pi', ?, '/w', ?, 'demo') RETURNING id", (key, ALICE.project_id)).fetchone()[0]
    fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES (?, ?, 0, 0) "
                       "RETURNING id", (f"/{key}.jsonl", sid)).fetchone()[0]
    insert_messages(conn, [(sid, fid, f"{key}e{i}", None, i + 1, stamp, "user", "message", None, "active", text)
                           for i, text in enumerate(texts)])


@pytest.fixture
def turns(conn):
    sources.forget()
    with transaction(conn):
        _session(conn, "s1", "2026-11-01T10:00:00.000Z", OLD)
        _session(conn, "s2", "2026-11-20T10:00:00.000Z", NOV20)
    embedder = TableEmbedder(VECTORS)
    backend = EmbeddedBackend(conn, embedder)  # creates the vector tables
    tv.embed_turns(conn, embedder)
    yield backend
    sources.forget()


def test_the_windows_turns_the_pool_lacks_are_one_more_list(conn, turns):
    # a pool of 2 keyword and 2 nearest candidates holds only "cache" turns of November 1st; November 20th's two
    # turns (cosine 0.5 and 0.3, no word of the prompt) come in through the dated list, nearest first
    hits = recall(turns, PROMPT, scope=ALICE, top_k=8, include=("sessions",), conn=conn, as_of=AS_OF, candidates=2)
    dated = [h for h in hits if "dated" in h.ranks]
    assert [(h.id, h.ranks["dated"], h.dated) for h in dated] == [("s2#s2e0", 1, True), ("s2#s2e1", 2, True)]
    assert [round(h.similarity, 2) for h in dated] == [0.5, 0.3]  # 0.3 is under the floor: the date keeps it
    assert all("sessions" not in h.ranks and "dates" not in h.ranks for h in dated)
    first = next(h for h in hits if h.ranks.get("sessions") == 1)
    assert dated[0].score == pytest.approx(first.score) == pytest.approx(DEFAULT_WEIGHTS["dated"] / 61)
    rest = [h for h in hits if "dated" not in h.ranks]  # the pool: November 1st's turns, outside the window
    assert rest and all(h.id.startswith("s1#") and "sessions" in h.ranks and not h.dated for h in rest)


@pytest.mark.parametrize("prompt", CJK_PROMPTS)
def test_a_chinese_japanese_or_korean_date_brings_in_that_days_turns(conn, turns, prompt):
    # no word of the prompt is in any turn: November 20th's turns come in through the dated list, as in English
    hits = recall(turns, prompt, scope=ALICE, top_k=8, include=("sessions",), conn=conn, as_of=AS_OF, candidates=2)
    dated = [h for h in hits if h.id.startswith("s2#")]
    assert [(h.id, h.ranks.get("dated"), h.dated) for h in dated] == [("s2#s2e0", 1, True), ("s2#s2e1", 2, True)]
    first = next(h for h in hits if h.ranks.get("sessions") == 1)
    assert dated[0].score == pytest.approx(first.score) == pytest.approx(DEFAULT_WEIGHTS["dated"] / 61)
    undated = recall(turns, CJK_UNDATED, scope=ALICE, top_k=8, include=("sessions",), conn=conn, as_of=AS_OF,
                     candidates=2)
    assert not any(h.id.startswith("s2#") for h in undated)
    # the whole project in the pool: the day's turns are boosted to the top by the dates list and pass the CJK
    # floor (0.75) that their cosines (0.5, 0.3) miss; without the date they are not returned
    pooled = recall(turns, prompt, scope=ALICE, top_k=8, include=("sessions",), conn=conn, as_of=AS_OF)
    assert [(h.id, "dates" in h.ranks) for h in pooled[:2]] == [("s2#s2e0", True), ("s2#s2e1", True)]
    assert not any("dates" in h.ranks for h in pooled[2:])
    assert not any(h.id.startswith("s2#") for h in recall(turns, CJK_UNDATED, scope=ALICE, top_k=8,
                                                          include=("sessions",), conn=conn, as_of=AS_OF))
    early = recall(turns, prompt, scope=ALICE, top_k=8, include=("sessions",), conn=conn,
                   as_of="2026-11-15T00:00:00.000Z", candidates=2)  # "11天前" is then November 4th
    assert not any(h.id.startswith("s2#") for h in early)


def test_without_a_date_or_before_the_day_there_is_no_dated_list(conn, turns):
    undated = recall(turns, UNDATED, scope=ALICE, top_k=8, include=("sessions",), conn=conn, as_of=AS_OF,
                     candidates=2)
    assert undated and not any(h.id.startswith("s2#") or "dated" in h.ranks for h in undated)
    early = recall(turns, PROMPT, scope=ALICE, top_k=8, include=("sessions",), conn=conn,
                   as_of="2026-11-15T00:00:00.000Z", candidates=2)  # November 20th 2026 had not come yet
    assert not any(h.id.startswith("s2#") or "dated" in h.ranks for h in early)


def test_a_pool_turn_inside_the_window_is_not_listed_twice(conn, turns):
    hits = recall(turns, PROMPT, scope=ALICE, top_k=8, include=("sessions",), conn=conn, as_of=AS_OF)
    inside = [h for h in hits if h.id.startswith("s2#")]
    assert [h.id for h in inside] == ["s2#s2e0", "s2#s2e1"]  # the whole project fits in the pool of 50
    assert all("dates" in h.ranks and "dated" not in h.ranks for h in inside)


def test_dated_turns_reads_the_window_newest_first_up_to_its_cap(conn, turns, monkeypatch):
    qvec = VECTORS[PROMPT]
    window = [(date(2026, 11, 19), date(2026, 11, 21))]
    # the project's turn matrix as a recall's vector list leaves it loaded: not loaded, nothing is ranked
    assert turns_in_context.dated_turns(conn, PROMPT, window, qvec, "table-model", AS_OF, ALICE.project_id) == []
    sources.matrix(conn, "sessions", "table-model", 4, ALICE.project_id)
    window = [(date(2026, 11, 19), date(2026, 11, 21))]
    ids = {text: mid for mid, text in conn.execute("SELECT id, text FROM messages")}
    found = turns_in_context.dated_turns(conn, PROMPT, window, qvec, "table-model", AS_OF, ALICE.project_id)
    assert [(r.id, round(r.cosine, 2)) for r in found] == [(ids[NOV20[0]], 0.5), (ids[NOV20[1]], 0.3)]
    both = [(date(2026, 10, 31), date(2026, 11, 2)), *window]
    assert len(turns_in_context.dated_turns(conn, PROMPT, both, qvec, "table-model", AS_OF, ALICE.project_id)) == 8
    assert turns_in_context.dated_turns(conn, PROMPT, window, qvec, "table-model", "2026-11-19T00:00:00.000Z",
                                        ALICE.project_id) == []
    assert turns_in_context.dated_turns(conn, PROMPT, window, qvec, "table-model", AS_OF, "another") == []
    assert turns_in_context.dated_turns(conn, PROMPT, window, None, "table-model", AS_OF, ALICE.project_id) == []
    monkeypatch.setattr(turns_in_context, "DATED_NEAREST", 1)
    one = turns_in_context.dated_turns(conn, PROMPT, window, qvec, "table-model", AS_OF, ALICE.project_id)
    assert [r.id for r in one] == [ids[NOV20[0]]]
    monkeypatch.setattr(turns_in_context, "DATED_MAX_ROWS", 1)  # same timestamp: the row read first is kept
    assert len(turns_in_context.dated_turns(conn, PROMPT, window, qvec, "table-model", AS_OF, ALICE.project_id)) == 1


def test_a_window_on_the_last_day_a_date_can_hold_reads_that_day(conn, turns):
    end = ["the cache was flushed at the very end of time", "and warmed again right after"]
    VECTORS.update({end[0]: _v(0.8), end[1]: _v(0.7), "what did we say about the cache yesterday?": _v(1.0),
                    "what did we say about the cache today?": _v(1.0)})
    with transaction(conn):
        _session(conn, "s9", "9999-12-31T08:00:00.000Z", end)
    tv.embed_turns(conn, turns.embedder)
    sources.matrix(conn, "sessions", "table-model", 4, ALICE.project_id)
    ids = {text: mid for mid, text in conn.execute("SELECT id, text FROM messages")}
    found = turns_in_context.dated_turns(conn, PROMPT, [(date(9999, 12, 31), date.max)], VECTORS[PROMPT],
                                         "table-model", "9999-12-31T23:59:59.999Z", ALICE.project_id)
    assert [r.id for r in found] == [ids[end[0]], ids[end[1]]]  # 9999-12-31 + 1 day does not exist
    for prompt in ("what did we say about the cache yesterday?", "what did we say about the cache today?"):
        hits = recall(turns, prompt, scope=ALICE, top_k=8, include=("sessions",), conn=conn,
                      as_of="9999-12-31T23:00:00.000Z", candidates=2)  # was an OverflowError
        # turns of the day asked on: inside both windows (yesterday's by its margin) and boosted, but a day alone
        # passes the floor only before that day (dates.floor_windows): they pass by their own evidence ("cache")
        assert [h.id for h in hits if h.dated] == [] and "s9#s9e0" in [h.id for h in hits]
        assert all(h.ranks.get("dates") or h.ranks.get("dated") for h in hits if h.id.startswith("s9#"))
