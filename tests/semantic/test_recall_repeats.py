"""Near-duplicate memories in one recall (pi_memory.retrieval.repeats): rewordings of a fact go after the other
facts, so the top_k holds different facts first; facts that differ in one value are not repeats."""

from __future__ import annotations

from semantic_helpers import ALICE

from pi_memory.retrieval.engine import recall
from pi_memory.retrieval.repeats import NEAR_DUPLICATE_COSINE, Repeats

PNPM = ["The user prefers pnpm over npm for all JavaScript projects.",
        "For JavaScript projects the user prefers pnpm over npm.",
        "The user prefers pnpm over npm for every JavaScript project.",
        "User prefers pnpm rather than npm in JavaScript projects."]
OTHERS = ["The marketing site is built with SvelteKit and TypeScript.",
          "JavaScript projects use Vitest for unit tests, never Jest.",
          "The user wants commit messages in the imperative mood.",
          "New JavaScript projects get ESLint with the team's shared config.",
          "Node 22 is the version every JavaScript project targets."]


def test_rewordings_of_one_fact_come_after_the_other_facts(backend):
    for text in PNPM + OTHERS:
        backend.add(text, scope=ALICE)
    hits = recall(backend, "set up a new JavaScript project: pnpm or npm? which test runner?", scope=ALICE, top_k=5)
    texts = [h.text for h in hits]
    # the top 5 held three rewordings of the pnpm preference and left the Node version out
    assert texts[0] in PNPM and texts[4] in PNPM, texts
    assert sorted(texts[1:4]) == sorted(OTHERS[1:2] + OTHERS[3:]), texts


def test_repeats_still_fill_slots_nothing_else_would(backend):
    for text in PNPM:
        backend.add(text, scope=ALICE)
    hits = recall(backend, "pnpm or npm for JavaScript projects?", scope=ALICE, top_k=5)
    assert sorted(h.text for h in hits) == sorted(PNPM)  # moved, not dropped


def test_facts_that_differ_in_one_value_are_not_repeats(backend, embedder):
    pairs = [("The API gateway listens on port 8080 in staging.", "The API gateway listens on port 9090 in staging."),
             ("The production database runs PostgreSQL 16.", "The staging database runs PostgreSQL 16."),
             ("Deploys happen on Thursdays.", "Deploys happen on Fridays."),
             ("Production database runs PostgreSQL 16.", "Production database runs PostgreSQL 15.")]
    for first, second in pairs:
        a, b = backend.add(first, scope=ALICE), backend.add(second, scope=ALICE)
        backend.vector_candidates(first, scope=ALICE)  # loads the scope's matrix, as a recall does
        repeats = Repeats(backend, ALICE)
        hit_a, hit_b = (type("Hit", (), {"kind": "semantic", "id": m.id})() for m in (a, b))
        assert repeats.split([hit_a, hit_b]) == ([hit_a, hit_b], []), (first, second)
    vecs = embedder.embed([PNPM[0], PNPM[3]])
    assert float(vecs[0] @ vecs[1]) >= NEAR_DUPLICATE_COSINE  # the measured rewording stays a repeat


def test_a_backend_without_stored_vectors_keeps_its_order():
    class Remote:  # a server's backend: no vectors_of
        pass

    hit = type("Hit", (), {"kind": "semantic", "id": "m1"})()
    assert Repeats(Remote(), ALICE).split([hit, hit]) == ([hit, hit], [])
