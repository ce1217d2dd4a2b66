"""Keyword matches lend part of their score to the turns around them (index/context.py), with a real
index: neighbours are the same session's user/assistant turns, nearest first, tool rows skipped; recall over
sessions finds the answer after a question, with the question as its keyword evidence."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pi_memory.index import transaction
from pi_memory.index.indexer import insert_messages
from pi_memory.retrieval import context as turn_context
from pi_memory.retrieval import session_ranking_in_context
from pi_memory.retrieval.engine import recall
from pi_memory.semantic.models import Scope

PROJECT = "0123456789ab"
SCOPE = Scope(user_id="alice", project_id=PROJECT)


def add(conn, key: str, rows: list[tuple[str, str, str]]) -> list[int]:
    """A session of PROJECT with ``rows`` = (role, kind, text); returns the message ids in order."""
    with transaction(conn):
        sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) "
                           "VALUES ('pi', ?, '/w', ?, 'demo') RETURNING id", (key, PROJECT)).fetchone()[0]
        fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES (?, ?, 0, 0) "
                           "RETURNING id", (f"/s/{key}.jsonl", sid)).fetchone()[0]
        insert_messages(conn, [(sid, fid, f"e{i}", None, i + 1, "2026-11-01T10:00:00.000Z", role, kind, None,
                                "active", text) for i, (role, kind, text) in enumerate(rows)])
    return [r[0] for r in conn.execute("SELECT id FROM messages WHERE session_id = ? ORDER BY id", (sid,))]


@pytest.fixture
def ids(conn):
    first = add(conn, "a", [("user", "message", "what board game should we bring to the convention"),
                            ("assistant", "tool_result", "ls output: games.txt"),
                            ("assistant", "message", "Catan, we played it last year and everyone loved it"),
                            ("user", "message", "great, I will pack it tonight"),
                            ("user", "message", "also remember the snacks")])
    other = add(conn, "b", [("user", "message", "a different session entirely")])
    return first + other


def test_neighbours_are_the_nearest_turns_of_the_same_session(conn, ids):
    q, tool, answer, pack, snacks, other = ids
    near = turn_context.neighbours(conn, [q, answer, other, 10_000], window=2)
    assert near == {q: [answer, pack], answer: [q, pack, snacks], other: [], 10_000: []}
    assert turn_context.neighbours(conn, [answer], window=1) == {answer: [q, pack]}


def test_one_neighbour_each_side_is_the_nearest_turn_in_one_statement(conn, ids):
    q, tool, answer, pack, snacks, other = ids
    assert turn_context.neighbours(conn, [answer], window=1) == {answer: [q, pack]}  # the tool output between is skipped
    assert turn_context.neighbours(conn, [other, 10_000], window=1) == {other: [], 10_000: []}
    assert turn_context.neighbours(conn, [], window=1) == {}
    ok_q, _ok, ok_answer = add(conn, "c", [("user", "message", "which port does the staging proxy listen on"),
                                           ("user", "message", "ok"),
                                           ("assistant", "message", "Port 8443, behind the load balancer")])
    assert turn_context.neighbours(conn, [ok_q], window=1) == {ok_q: [ok_answer]}  # an acknowledgement is not a turn


def test_spread_gives_neighbours_a_share_by_distance(conn, ids):
    q, _tool, answer, pack, snacks, other = ids
    out = turn_context.spread(conn, [(q, 4.0), (other, 1.0)], limit=10, window=2, weight=0.5)
    # a tie keeps the order first seen; lenders: the matches that gave a turn its score, itself first
    assert out == [(q, 4.0, (q,)), (answer, 2.0, (q,)), (other, 1.0, (other,)), (pack, 1.0, (q,))]
    out = turn_context.spread(conn, [(q, 4.0), (snacks, 2.0)], limit=3)
    assert out == [(q, 4.0, (q,)), (answer, 2.5, (q, snacks)), (snacks, 2.0, (snacks,))]
    assert turn_context.spread(conn, [(q, 4.0)], limit=10, weight=0.0) == [(q, 4.0, (q,))]


def test_acknowledgements_lend_and_borrow_nothing(conn):
    q, ok, answer = add(conn, "c", [("user", "message", "which port does the staging proxy listen on"),
                                    ("user", "message", "ok"),
                                    ("assistant", "message", "Port 8443, behind the load balancer")])
    assert turn_context.neighbours(conn, [q], window=1) == {q: [answer]}
    assert turn_context.spread(conn, [(q, 1.0)], limit=5) == [(q, 1.0, (q,)), (answer, 0.5, (q,))]


def test_rank_scores_each_candidate_with_its_window(conn, ids):
    q, tool, answer, pack, snacks, other = ids
    hits = session_ranking_in_context(conn, "convention board game", limit=10, project=PROJECT)
    # the question matches; the turns around it enter through its score and are ranked by their windows, which
    # hold the question's words; the tool output matches "game*" by itself (it lends to the turns around it
    # too) and, not being a turn, has no window; the other session never enters
    assert [h.id for h in hits] == [q, answer, pack, tool]
    assert [h.lenders for h in hits] == [(q, tool), (q, tool), (q, tool), (tool,)]
    assert hits[0].score > hits[1].score == hits[2].score > hits[3].score > 0  # a tie keeps the spread order
    assert session_ranking_in_context(conn, "convention board game", limit=10, project="ffffffffffff") == []
    assert session_ranking_in_context(conn, "zzzq nothing", limit=10, project=PROJECT) == []


def test_recall_finds_the_answer_after_the_question(conn, ids):
    # "convention board game" matches only the question; its answer (Catan) shares no word with the prompt and
    # comes second through context. Without context the keyword list held the question alone.
    backend = SimpleNamespace(embedder=None)  # sessions only, no vectors: the keyword list alone
    hits = recall(backend, "convention board game", scope=SCOPE, top_k=3, include=("sessions",), conn=conn,
                  min_similarity=0.0)
    assert [h.id for h in hits] == ["a#e0", "a#e2", "a#e3"]
    assert hits[1].text == "assistant: Catan, we played it last year and everyone loved it"
    # the answer has no keyword of its own; the question that lent it its score is its evidence
    assert [(h.coverage, h.similarity) for h in hits] == [(1.0, None)] * 3
    default_floor = recall(backend, "convention board game", scope=SCOPE, top_k=3, include=("sessions",), conn=conn)
    assert [h.id for h in default_floor] == ["a#e0", "a#e2", "a#e3"]


def test_a_question_ranked_in_context_leaves_its_fillers_out(conn):
    """Failing input (LoCoMo, issue 13): "What kind of ..." searched ``kind`` and brought in a turn that only
    shares the question's form; read as a question, the fillers are stop words and only the content word counts."""
    add(conn, "f", [("user", "message", "she is always so kind to everyone"),
                    ("user", "message", "the watercolour paintings are finished now")])
    kind, paintings = [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY id")]
    hits = session_ranking_in_context(conn, "What kind of paintings?", limit=10, project=PROJECT, window=0)
    assert [h.id for h in hits] == [paintings]
    from pi_memory.retrieval import session_ranking  # the strict ranking keeps every word of the query
    assert sorted(m for m, _ in session_ranking(conn, "What kind of paintings?", limit=10, project=PROJECT)) == [
        kind, paintings]


def _one_query_per_side(conn, mid: int, window: int, until: str | None) -> list[int]:
    """The reference: what neighbours() returned when it asked two queries per id."""
    turn = "kind = 'message' AND role IN ('user', 'assistant') AND length(text) >= ?"
    sid = conn.execute("SELECT session_id FROM messages WHERE id = ?", (mid,)).fetchone()
    if sid is None:
        return []
    from pi_memory.index.conversation import MIN_TURN_CHARS

    before = [r[0] for r in conn.execute(f"SELECT id FROM messages WHERE session_id = ? AND id < ? AND {turn} "
                                         "ORDER BY id DESC LIMIT ?", (sid[0], mid, MIN_TURN_CHARS, window))]
    later = "" if until is None else " AND (timestamp IS NULL OR timestamp <= ?)"
    after = [r[0] for r in conn.execute(f"SELECT id FROM messages WHERE session_id = ? AND id > ? AND {turn}{later} "
                                        "ORDER BY id LIMIT ?", (sid[0], mid, MIN_TURN_CHARS,
                                                                *(() if until is None else (until,)), window))]
    return before + after


@pytest.mark.parametrize("window", [1, 2, 3])
@pytest.mark.parametrize("until", [None, "2026-11-01T10:00:00.000Z", "2000-01-01T00:00:00.000Z"])
def test_neighbours_in_one_statement_equal_one_query_per_side(conn, window, until):
    rows = []
    for i in range(40):  # turns, tool output, acknowledgements too short to be turns, other roles
        kind = "tool_result" if i % 7 == 3 else "message"
        role = ("user", "assistant", "system")[i % 3] if i % 5 else "user"
        text = "ok" if i % 6 == 4 else f"turn {i} about the deploy pipeline and its staging proxy"
        rows.append((role, kind, text))
    ids = add(conn, "big", rows) + add(conn, "small", [("user", "message", "a session of one turn only")])
    wanted = [*ids, 99_999]
    got = turn_context.neighbours(conn, wanted, window=window, until=until)
    assert got == {m: _one_query_per_side(conn, m, window, until) for m in wanted}


@pytest.mark.parametrize("until", [None, "2026-11-01T10:00:00.000Z"])
def test_the_neighbour_seeks_read_the_partial_index_of_turns(conn, ids, until):
    """Migration 011: each side's seek reads ``messages_turns`` (session, id and time of turns only), not the rows
    in between (tool output); the index's condition and the seek's are one text (``conversation.TURN_SQL``), so editing
    one without the other would show here."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        turn_context.neighbours(conn, [ids[2]], window=2, until=until)
    finally:
        conn.set_trace_callback(None)
    statement = next(s for s in seen if "LIMIT 1 OFFSET" in s)
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + statement)]
    seeks = [p for p in plan if p.startswith("SEARCH n ")]
    assert len(seeks) == 4
    assert all(" INDEX messages_turns (session_id=? AND id" in p for p in seeks), plan
