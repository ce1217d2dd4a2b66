"""session_search's as_of (retrieval/search.py _session_filters): the condition on the time is left out only when
no message is dated after the moment asked about, so the result is the same either way."""

from __future__ import annotations

import pytest

from pi_memory.index import open_index, transaction
from pi_memory.index.indexer import insert_messages
from pi_memory.retrieval import session_search


@pytest.fixture
def conn(tmp_path):
    c = open_index(tmp_path / "data")
    yield c
    c.close()


def add(conn, rows: list[tuple[str | None, str]]) -> None:
    with transaction(conn):
        sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) "
                           "VALUES ('pi', 's', '/w', 'p', 'demo') RETURNING id").fetchone()[0]
        fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES ('/s.jsonl', ?, 0, 0) "
                           "RETURNING id", (sid,)).fetchone()[0]
        insert_messages(conn, [(sid, fid, f"e{i}", None, i + 1, ts, "user", "message", None, "active", text)
                               for i, (ts, text) in enumerate(rows)])


def texts(result) -> list[str]:
    return [h.snippet for h in result.results]


def test_a_message_dated_after_as_of_is_left_out_and_undated_ones_kept(conn):
    add(conn, [("2026-03-01T10:00:00.000Z", "the gateway timeout was raised to 30s"),
               (None, "the gateway runs on port 8443"),
               ("2026-05-01T10:00:00.000Z", "the gateway was replaced by envoy")])
    assert texts(session_search(conn, "gateway", as_of="2026-04-01")) == [
        "the **gateway** runs on port 8443", "the **gateway** timeout was raised to 30s"]
    assert len(session_search(conn, "gateway", as_of="2026-06-01").results) == 3
    assert len(session_search(conn, "gateway").results) == 3  # now: nothing is dated after it


def test_a_message_dated_exactly_at_as_of_is_kept_and_one_a_millisecond_later_is_not(conn):
    add(conn, [("2026-04-01T10:00:00.000Z", "deploy window opens at ten"),
               ("2026-04-01T10:00:00.001Z", "deploy window moved to eleven")])
    assert texts(session_search(conn, "deploy window", as_of="2026-04-01T10:00:00.000Z")) == [
        "**deploy** **window** opens at ten"]


@pytest.mark.parametrize("value", ["99999999d", "9" * 5000 + "d", "999999999w", "9999-12-31T23:00:00-05:00"])
def test_a_time_outside_the_calendar_is_refused_in_words_not_by_a_crash(conn, value):
    from pi_memory.index.filters import SearchInputError

    add(conn, [("2026-11-01T10:00:00.000Z", "the staging database moved")])
    for kwargs in ({"since": value}, {"until": value}, {"as_of": value}):
        with pytest.raises(SearchInputError) as refused:
            session_search(conn, "staging", **kwargs)
        message = str(refused.value)
        assert message.startswith("The time '") and "outside the years 1 to 9999" in message
        assert len(message) < 200  # a long value is shown cut, not echoed whole


def test_years_before_1000_sort_before_later_ones_as_text(conn):
    from pi_memory.index.filters import parse_time

    assert parse_time("0999-01-01") == "0999-01-01T00:00:00.000Z"
    assert parse_time("0001-01-01", upper=True) == "0001-01-01T23:59:59.999Z"
    add(conn, [("2026-11-01T10:00:00.000Z", "the staging database moved")])
    assert texts(session_search(conn, "staging", until="0999-01-01")) == []
    assert texts(session_search(conn, "staging", as_of="0001-01-01")) == []
    assert len(texts(session_search(conn, "staging", since="0999-01-01"))) == 1


def test_an_empty_result_says_why_when_the_terms_are_not_the_reason(conn):
    assert session_search(conn, "staging").note.startswith("No session is indexed yet")
    add(conn, [("2026-11-01T10:00:00.000Z", "the staging database moved")])
    swapped = session_search(conn, "staging", since="2026-11-05", until="2026-11-01")
    assert swapped.count == 0 and swapped.note == (
        "The since time (2026-11-05T00:00:00.000Z) is after the until time (2026-11-01T23:59:59.999Z), so no "
        "message can match. Swap them.")
    future = session_search(conn, "staging", since="2026-11-05", as_of="2026-11-02")
    assert future.note.startswith("The since time (2026-11-05T00:00:00.000Z) is after the moment searched as of")
    assert session_search(conn, "lunch").note == "No matches. Try fewer or shorter terms, or a different spelling."
