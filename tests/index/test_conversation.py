"""The rows around one indexed message (the inspector's "turns around a hit")."""

from __future__ import annotations

import pytest

from pi_memory.index import conversation_around, find_message
from pi_memory.index.results import highlight_parts


@pytest.fixture
def session(conn, helpers):
    helpers.add_session(conn, "s1", [{"text": f"turn {n}", "role": "user" if n % 2 else "assistant",
                                      "entry_id": f"e{n}", "line": n + 1} for n in range(1, 10)])
    helpers.add_session(conn, "s2", [{"text": "other session", "entry_id": "e1"}])
    return conn


def test_a_window_of_rows_on_each_side_in_file_order(session) -> None:
    mid = find_message(session, session="s1", entry_id="e5")
    rows = conversation_around(session, mid, window=2)
    assert [r["text"] for r in rows] == ["turn 3", "turn 4", "turn 5", "turn 6", "turn 7"]
    assert [r["focus"] for r in rows] == [False, False, True, False, False]
    assert rows[2]["session"] == "s1" and rows[2]["entryId"] == "e5" and rows[2]["file"] == "/sessions/s1.jsonl"


def test_the_window_stops_at_the_session_edges(session) -> None:
    first = conversation_around(session, find_message(session, session="s1", entry_id="e1"), window=3)
    assert [r["text"] for r in first] == ["turn 1", "turn 2", "turn 3", "turn 4"]
    last = conversation_around(session, find_message(session, session="s1", entry_id="e9"), window=3)
    assert [r["text"] for r in last] == ["turn 6", "turn 7", "turn 8", "turn 9"]
    other = conversation_around(session, find_message(session, session="s2", entry_id="e1"), window=3)
    assert [r["text"] for r in other] == ["other session"]


def test_a_message_is_found_by_file_and_line_or_not_at_all(session) -> None:
    assert find_message(session, file="/sessions/s1.jsonl", line=4) == find_message(session, session="s1",
                                                                                     entry_id="e3")
    assert find_message(session, session="s1") == find_message(session, session="s1", entry_id="e1")
    assert find_message(session, session="nope", entry_id="e1") is None
    assert find_message(session, file="/sessions/s1.jsonl", line=99) is None
    assert find_message(session) is None
    assert conversation_around(session, 10_000) == []


@pytest.mark.parametrize(("snippet", "parts"), [
    ("use **docker** now", [("use ", False), ("docker", True), (" now", False)]),
    ("**a** and **b**", [("a", True), (" and ", False), ("b", True)]),
    ("2**10 is 1024", [("2**10 is 1024", False)]),  # an odd count: the text's own **
    ("plain", [("plain", False)]),
    ("<b>**x**</b>", [("<b>", False), ("x", True), ("</b>", False)]),
])
def test_highlight_parts(snippet, parts) -> None:
    assert highlight_parts(snippet) == parts
