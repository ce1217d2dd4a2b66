"""Compound names (``celery.exceptions.TimeoutError``, ``src/auth/middleware.py``): the word index reads one as
the phrase of its words, so a text naming the words apart ("a celery TimeoutError") held no match and no keyword
evidence. Now a broadened search tries each word, the memories' keyword list has each as a term, and recall's
keyword evidence counts the share of the compound a text holds (all of it with the name itself and half)."""

from __future__ import annotations

import pytest
from semantic_helpers import ALICE, insert_turns

from pi_memory.index.query import compound_parts, plan_query
from pi_memory.retrieval import session_search
from pi_memory.retrieval.engine import keyword_coverage, recall
from pi_memory.retrieval.lang import evidence_terms
from pi_memory.semantic import turn_vectors

TURNS = {
    "celery": "Monday notes: moved the CSV parsing out of the task, renamed the S3 bucket, the nightly import hit a "
              "celery TimeoutError at 02:10 so soft_time_limit is 120 now, and Dana wants the dashboard colours changed",
    "requests": "Release checklist done: changelog written, version bumped to 2.4.1, the webhook sender got a retry "
                "on requests ConnectionError, docs deployed, and the Slack announcement is scheduled",
    "django": "staging had a django OperationalError this morning; the replica was restarted",
    "lunch": "remember to book the team lunch for friday, the thai place on main street",
    "vite": "the frontend build uses vite and pnpm, and the storybook runs on port 6006",
}


@pytest.fixture
def turns(conn):
    for i, (key, text) in enumerate(TURNS.items()):  # a session each: no turn lends another its evidence
        insert_turns(conn, ALICE.project_id, [(key, f"2026-11-0{i + 1}T10:00:00.000Z", text)], session=f"s{i}")
    return conn


@pytest.mark.parametrize(("word", "parts"), [
    ("celery.exceptions.TimeoutError", ["celery", "exceptions", "TimeoutError"]),
    ("src/auth/middleware.py", ["src", "auth", "middleware"]),
    ("node_modules", ["node", "modules"]),
    ("@types/node", ["types", "node"]),
    ("OPS-4821", []),  # a ticket: one word and a number
    ("python3.11", []),
    ("svc_ser29", []),  # a name with a number: its parts are no words of their own
    ("s3_upload_bucket", ["upload", "bucket"]),
    ("soft_time_limit", ["soft", "time", "limit"]),
    ("the_end", []),  # "the" is a stop word: one word left
    ("self-care", []),  # a hyphen joins words of prose: the phrase is the unit
    ("wrong-book", []),
    ("deploy", []),
    ("修改youer服务端", []),
])
def test_compound_parts(word, parts):
    assert [p.lower() for p in compound_parts(word)] == [p.lower() for p in parts]


def test_a_broadened_search_tries_each_word_of_a_compound():
    plan = plan_query("celery.exceptions.TimeoutError again", words=True)
    assert [t.fts() for c in plan.loose for t in c.terms] == [
        '"celery.exceptions.TimeoutError"', '"celery"*', '"exceptions"*', '"timeouterror"*']  # "again": a stop word
    assert [t.fts() for c in plan_query("OPS-4821", words=True).loose for t in c.terms] == []


@pytest.mark.parametrize(("prompt", "text", "coverage"), [
    ("celery.exceptions.TimeoutError again", "the import hit a celery TimeoutError at 02:10", 1.0),
    # the compound weighs two units, "handle" one (a compound is what the prompt is about, as an acronym is)
    ("how do we handle requests.exceptions.ConnectionError", "a retry on requests ConnectionError", 2 / 3),
    ("how do we handle requests.exceptions.ConnectionError", "how do we handle failures", 1 / 3),
    ("celery.exceptions.TimeoutError", "celery exceptions are logged to sentry", 2 / 3),  # not the name itself
    ("celery.exceptions.TimeoutError", "a TimeoutError from the HTTP client", 1 / 3),  # the name, not half
    ("celery.exceptions.TimeoutError", "uses celery.exceptions.TimeoutError", 1.0),  # whole, as before
    ("where is auth.middleware?", "the auth middleware checks the JWT", 1.0),
    ("where is auth.middleware?", "the lunch menu", 0.0),
])
def test_keyword_evidence_of_a_compound(prompt, text, coverage):
    assert keyword_coverage(evidence_terms(prompt), text) == pytest.approx(coverage)


@pytest.mark.parametrize(("query", "found"), [
    ("celery.exceptions.TimeoutError again", ["celery"]),
    ("how did we handle requests.exceptions.ConnectionError?", ["requests"]),
    ("seen django.db.utils.OperationalError before?", ["django"]),
    ("what raises celery.exceptions.SoftTimeLimitExceeded", ["celery"]),
])
def test_session_search_finds_the_words_of_a_compound_named_apart(turns, query, found):
    assert [h.entry_id for h in session_search(turns, query).results] == found


@pytest.mark.parametrize(("prompt", "found"), [
    # cosine 0.19 with its turn: only keyword evidence can bring it, and the compound was one unit not found
    ("how do we handle requests.exceptions.ConnectionError", ["requests"]),
    ("celery.exceptions.TimeoutError again", ["celery"]),
    ("is the lunch on friday", ["lunch"]),
])
def test_recall_brings_a_turn_naming_a_compounds_words_apart(backend, turns, embedder, prompt, found):
    turn_vectors.backfill(turns, embedder)
    hits = recall(backend, prompt, scope=ALICE, include=("sessions",), conn=turns)
    assert [h.id.rsplit("#", 1)[-1] for h in hits] == found


def test_a_memory_naming_a_compounds_words_apart_is_a_keyword_candidate(backend):
    kept = backend.add("The nightly import once died with a celery TimeoutError; soft_time_limit is 120 since.",
                       scope=ALICE).id
    backend.add("Lunch is booked for Friday at the Thai place.", scope=ALICE)
    found = backend.keyword_candidates("celery.exceptions.TimeoutError", scope=ALICE, limit=10)
    assert [mid for mid, _ in found] == [kept]
