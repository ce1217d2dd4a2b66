"""An acronym in a prompt ("how is our CI configured?") names what it asks about. It was under the keyword terms'
three characters, so the prompt's evidence was "configur" alone: a tester saw a VPN memory saying "configured"
injected and the CI memory left out; "what does the VM run?" and "is the QA env up?" brought turns that "run
pytest" or set ENV. An acronym is now a term of two units, found as a whole word (:mod:`pi_memory.retrieval.lang`); a hyphenated
word is found however a text joins its parts."""

from __future__ import annotations

import pytest
from semantic_helpers import ALICE

from pi_memory.retrieval.engine import recall
from pi_memory.retrieval.lang import evidence_terms

MEMORIES = ["We configured the office VPN with WireGuard", "Our CI runs on GitHub Actions with pytest",
            "the test job runs pytest on every push", ".env holds ENV=staging for the deploy script",
            "The QA environment is at qa.example.com", "The build VM runs Ubuntu 24.04 with 8 cores"]


@pytest.mark.parametrize(("prompt", "answer"), [
    ("how is our CI configured?", "Our CI runs on GitHub Actions with pytest"),
    ("what does the VM run?", "The build VM runs Ubuntu 24.04 with 8 cores"),
    ("is the QA env up?", "The QA environment is at qa.example.com"),
])
def test_a_prompt_naming_an_acronym_recalls_what_holds_it_not_what_holds_its_verb(backend, prompt, answer):
    for text in MEMORIES:
        backend.add(text, scope=ALICE)
    assert [h.text for h in recall(backend, prompt, scope=ALICE)] == [answer]


@pytest.mark.parametrize(("prompt", "words", "acronyms"), [
    ("how is our CI configured?", ("configur", "ci"), {"ci"}),
    ("how is our AWS configured?", ("aws", "configur"), {"aws"}),
    ("where are the PRs reviewed", ("review", "pr"), {"pr"}),  # the plural is the acronym's
    ("S3 bucket policy", ("bucket", "policy", "s3"), {"s3"}),
    ("wie ist die CI konfiguriert?", ("konfiguriert", "ci"), {"ci"}),
    ("HOW IS OUR CI CONFIGURED", ("configur",), set()),  # a shout has no acronyms to tell apart
    ("is it OK to deploy to the US region at 5 PM?", ("deploy", "region"), set()),  # words also written in capitals
    ("how do I configure vim?", ("configure", "vim"), set()),
    ("is ticket OPS-4821 blocked", ("ticket", "ops-4821", "block"), set()),  # part of a ticket id, not an acronym
])
def test_which_words_of_a_prompt_are_acronyms(prompt, words, acronyms):
    evidence = evidence_terms(prompt)
    assert evidence.words == words
    assert {evidence.words[i] for i in evidence.acronyms} == acronyms
    assert evidence.total == len(words) + len(acronyms)


@pytest.mark.parametrize(("prompt", "text", "coverage"), [
    ("how is our CI configured?", "We configured the office VPN with WireGuard", 1 / 3),
    ("how is our CI configured?", "Our CI runs on GitHub Actions", 2 / 3),
    ("how is our CI configured?", "the CIs are configured per repo", 1.0),
    ("how is our CI configured?", "a city we configured", 1 / 3),  # a whole word only
    ("la configuración de la CI", "la città", 0.0),  # also in a prompt read as Spanish
    ("la configuración de la CI", "la CI corre en GitHub", 2 / 3),
    ("where are the PRs reviewed", "PR review happens on Fridays", 1.0),
])
def test_an_acronym_weighs_two_units_and_is_found_as_a_whole_word(prompt, text, coverage):
    assert evidence_terms(prompt).coverage(text) == pytest.approx(coverage)


# A hyphenated word is found however a text joins its parts (a tester: "was war mit dem Import-Job?" injected
# nothing although the turn said "nightly import job"; `session-search Import-Job` found it)
@pytest.mark.parametrize(("prompt", "text", "coverage"), [
    ("was war mit dem Import-Job?", "the nightly import job failed at 02:10", 1.0),
    ("the import-job failed", "the nightly import job failed", 1.0),
    ("the import-job failed", "the nightly import-job failed", 1.0),
    ("the import-job failed", "important jobs failed", 0.5),  # the parts must follow each other
    ("e-mail setup", "email setup", 1.0),
    ("Import-Job kaputt", "nightly import job broke", 0.5),
])
def test_a_hyphenated_word_is_found_spelt_with_a_space_or_joined(prompt, text, coverage):
    assert evidence_terms(prompt).coverage(text) == pytest.approx(coverage)


def test_a_german_prompt_with_a_hyphenated_word_recalls_the_turn_spelt_apart(conn, backend, embedder):
    from semantic_helpers import insert_turns

    from pi_memory.semantic import turn_vectors

    insert_turns(conn, ALICE.project_id, [("imp", "2026-12-03T10:00:00.000Z",
                                            "the nightly import job failed at 02:10, the importer now retries twice")])
    turn_vectors.backfill(conn, embedder)
    hits = recall(backend, "was war mit dem Import-Job?", scope=ALICE, include=("sessions",),
                  conn=conn, as_of="2026-12-05T10:00:00.000Z")
    assert [h.id for h in hits] == ["s1#imp"]
