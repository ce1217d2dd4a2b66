"""``session_search``'s evidence floor for turns found by meaning alone (fresh-eyes report): once turns had
vectors, a query nothing is about ("zzzqqq xylophone", "*", an AWS-key-looking string) returned the nearest turns,
every one ``match: "meaning"``, with no note; before the turns were embedded the same queries said "No matches".
Such a turn is kept now only when its own cosine meets recall's floor (``recallMinSimilarity``, raised per script:
``retrieval/floors.script_floor``), and the note says which hits were found by meaning alone."""

from __future__ import annotations

import inspect

import pytest
from test_source_vectors import add_session

from pi_memory.retrieval import session_search
from pi_memory.retrieval.floors import DEFAULT_MIN_SIMILARITY
from pi_memory.semantic import sources
from pi_memory.semantic import turn_vectors as tv

PROJECT = "aaaaaaaaaaaa"
TURNS = [("user", "the wifi password for the office is on the fridge"),
         ("assistant", "noted, I will keep it private"),
         ("user", "run celery workers with --concurrency 4 in production"),
         ("assistant", "done, the worker pool restarted cleanly"),
         ("user", "we moved the database to Postgres 16 last week"),
         ("assistant", "I updated the README with the new install steps")]
NO_MATCHES = "No matches. Try fewer or shorter terms, or a different spelling."
NO_WORD = ("The query has no word to search for (only quotes, operators or punctuation). Add a word to search "
           "for.")
NONSENSE = [("zzzqqq xylophone", NO_MATCHES), ("*", NO_WORD), ("what is the capital of France", NO_MATCHES),
            ("NOT", NO_MATCHES), ('"unterminated', NO_MATCHES), ("AKIAIOSFODNN7EXAMPLE", NO_MATCHES)]


@pytest.fixture
def turns(conn, backend, embedder):
    sources.forget()
    add_session(conn, "s1", PROJECT, TURNS)
    tv.embed_turns(conn, embedder)
    yield conn
    sources.forget()


def found(result) -> list[tuple[str, str]]:
    return [(h.entry_id, h.match) for h in result.results]


@pytest.mark.parametrize(("query", "note"), NONSENSE)
def test_a_query_nothing_is_about_finds_nothing_by_meaning(turns, embedder, query, note):
    result = session_search(turns, query, embedder=embedder)
    assert (result.count, result.note) == (0, note)
    # the floor is what left them out: without it the nearest turns come back, each by meaning alone
    off = session_search(turns, query, embedder=embedder, min_similarity=0.0)
    assert off.count > 0 and {h.match for h in off.results} == {"meaning"}


def test_a_turn_near_enough_by_meaning_is_kept_and_said_to_be(turns, embedder):
    """e0 (the wifi password) meets the floor; e1 and e2 are kept as recall keeps them: next to it in the session
    (``context.context_evidence``); the other three are left out."""
    result = session_search(turns, "wireless network credentials", embedder=embedder)
    assert found(result) == [("e0", "meaning"), ("e1", "meaning"), ("e2", "meaning")]
    assert result.note == ("All of these 3 hits were found by meaning alone (match: meaning): no word of the query "
                           "is in them or around them.")
    [one] = session_search(turns, "wireless network credentials", embedder=embedder, limit=1).results
    assert (one.entry_id, one.match) == ("e0", "meaning")
    assert session_search(turns, "wireless network credentials", embedder=embedder, limit=1).note == (
        "This hit was found by meaning alone (match: meaning): no word of the query is in it or around it.")
    assert session_search(turns, "wireless network credentials", embedder=embedder, min_similarity=0.0).count == 6


def test_keyword_hits_keep_their_context_and_lose_the_unrelated_turns(turns, embedder):
    result = session_search(turns, "Postgres database", embedder=embedder)
    assert found(result) == [("e4", "all"), ("e5", "context"), ("e3", "context"), ("e2", "context")]
    assert result.note is None
    off = session_search(turns, "Postgres database", embedder=embedder, min_similarity=0.0)
    assert found(off)[4:] == [("e1", "meaning"), ("e0", "meaning")]
    assert off.note == ("2 of these 6 hits were found by meaning alone (match: meaning): no word of the query is in "
                        "them or around them.")


def test_a_query_in_another_language_keeps_its_keyword_hit_and_its_context_only(turns, embedder):
    """The report's "contraseña wifi": one real hit and nine unrelated turns by meaning. Read as Spanish, a turn it
    finds by meaning alone needs the floor of Latin-script text that is not English (``SCRIPT_FLOORS``)."""
    result = session_search(turns, "contraseña wifi", embedder=embedder)
    assert found(result) == [("e0", "any"), ("e1", "context"), ("e2", "context")]
    off = session_search(turns, "contraseña wifi", embedder=embedder, min_similarity=0.0)
    assert "meaning" in {m for _, m in found(off)}


def test_the_default_floor_is_recalls():
    assert inspect.signature(session_search).parameters["min_similarity"].default == DEFAULT_MIN_SIMILARITY
