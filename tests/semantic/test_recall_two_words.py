"""A prompt of two words: one of them alone is no evidence. Half the prompt's keyword units let a text past recall's
floor, and for two words half is one: a tester's "how do I configure vim?" injected turns of a session about
credentials because one said "configured", and "what's the release process?" a turn about an in-process cache. Such
a text now needs both words, or one with three quarters of the floor's cosine (the partial rule)."""

from __future__ import annotations

import pytest
from semantic_helpers import ALICE, insert_turns

from pi_memory.retrieval.engine import MIN_KEYWORD_COVERAGE, keywords_needed, recall
from pi_memory.retrieval.lang import evidence_terms
from pi_memory.semantic import turn_vectors

TURNS = {  # cosines with the bundled model: each under the partial rule's 0.30 for the prompts it does not answer
    "ssh": "I configured the ssh agent to forward keys only to the bastion",
    "vault": "the deploy token is stored in the vault under ci/deploy",
    "lru": "we keep an in-process LRU cache for the hot keys",
    "release": "the release process: tag the commit, build the wheel, publish it to the index",
    "redis": "we chose redis for the session cache because it expires keys by itself",  # 0.39 for "pick redis"
}


@pytest.fixture
def turns(conn, backend, embedder):
    for i, (key, text) in enumerate(TURNS.items()):  # a session each: no turn lends another its evidence
        insert_turns(conn, ALICE.project_id, [(key, f"2026-11-0{i + 1}T10:00:00.000Z", text)], session=f"s{i}")
    turn_vectors.backfill(conn, embedder)
    return backend


@pytest.mark.parametrize(("prompt", "ids"), [
    ("how do I configure vim?", []),  # "configured" alone, cosine 0.09
    ("what's the release process?", ["s3#release"]),  # both words; the in-process cache turn (0.14) is not
    ("why did we pick redis?", ["s4#redis"]),  # one word and cosine 0.39: the partial rule
])
def test_one_word_of_two_lets_nothing_in_without_some_meaning(conn, turns, prompt, ids):
    hits = recall(turns, prompt, scope=ALICE, include=("sessions",), conn=conn, as_of="2026-12-05T10:00:00.000Z")
    assert [h.id for h in hits] == ids


@pytest.mark.parametrize(("prompt", "needed"), [
    ("how do I configure vim?", 1.0),
    ("what's the release process?", 1.0),
    ("redis", MIN_KEYWORD_COVERAGE),  # one word: the text holds all of it or nothing
    ("which redis version runs on staging", MIN_KEYWORD_COVERAGE),
    ("how is our CI configured?", MIN_KEYWORD_COVERAGE),  # an acronym weighs two: three units
    ("what did we decide in May?", MIN_KEYWORD_COVERAGE),  # the date counts in the total
    ("机房在哪个城市", MIN_KEYWORD_COVERAGE),
])
def test_which_prompts_need_all_their_keywords(prompt, needed):
    from pi_memory.retrieval import dates

    windows, rest = dates.date_windows(prompt, "2026-12-05T10:00:00.000Z")
    terms = evidence_terms(prompt)
    if windows:  # as recall reads it: the date words count twice in the total
        from dataclasses import replace

        rest_terms = evidence_terms(rest)
        terms = replace(rest_terms, unmatched=2 * max(0.0, terms.total - rest_terms.total))
    assert keywords_needed(terms) == needed
