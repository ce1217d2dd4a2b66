"""Recall's evidence floor read in context (retrieval/context.py ``context_evidence``): a session turn without
evidence of its own passes when the vector of a turn of its window (two turns each side) meets the floor, since
the answer follows the question that means what the prompt means; a prompt unrelated to every turn still passes
nothing. Vectors come from a table, so every cosine is known exactly."""

from __future__ import annotations

import numpy as np
import pytest
from semantic_helpers import ALICE, TableEmbedder

from pi_memory.index import transaction
from pi_memory.index.indexer import insert_messages
from pi_memory.retrieval import context as turn_context
from pi_memory.retrieval.engine import recall
from pi_memory.semantic import sources
from pi_memory.semantic import turn_vectors as tv
from pi_memory.semantic.embedded import EmbeddedBackend

ASK = "where should we all eat after the offsite"  # shares the prompt's meaning, none of its words
ANSWER = "the Italian place on Main Street, they take groups"
TURNS = [ASK, ANSWER, "great, I will book a table for twelve people", "the CI pipeline is flaky on Windows runners",
         "I pinned the runner image to the previous release", "the release notes still mention the old flag"]
PROMPT = "which restaurant did we pick for the team dinner?"
UNRELATED = "rename this variable to something clearer"


def _v(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


# cosines with PROMPT: ASK 0.90, ANSWER 0.20, the booking 0.10, the rest 0 or below; UNRELATED meets none of them
VECTORS = {PROMPT: _v(1, 0, 0, 0), UNRELATED: _v(0, 0, 0, 1), ASK: _v(0.9, np.sqrt(1 - 0.81), 0, 0),
           ANSWER: _v(0.2, np.sqrt(1 - 0.04), 0, 0), TURNS[2]: _v(0.1, 0, np.sqrt(0.99), 0),
           TURNS[3]: _v(0, 0, 1, 0), TURNS[4]: _v(0, 0.1, 1, 0), TURNS[5]: _v(-0.1, 0, 1, 0)}


@pytest.fixture
def turns(conn):
    sources.forget()
    with transaction(conn):
        sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) "
                           "VALUES ('pi', 's1', '/w', ?, 'demo') RETURNING id", (ALICE.project_id,)).fetchone()[0]
        fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES ('/s1.jsonl', ?, 0, 0) "
                           "RETURNING id", (sid,)).fetchone()[0]
        insert_messages(conn, [(sid, fid, f"e{i}", None, i + 1, "2026-11-01T10:00:00.000Z",
                                "user" if i % 2 == 0 else "assistant", "message", None, "active", text)
                               for i, text in enumerate(TURNS)])
    embedder = TableEmbedder(VECTORS)
    backend = EmbeddedBackend(conn, embedder)  # creates the vector tables
    tv.embed_turns(conn, embedder)
    yield backend
    sources.forget()


def test_a_turn_next_to_one_with_evidence_passes_the_floor(conn, turns):
    off = recall(turns, PROMPT, scope=ALICE, top_k=6, include=("sessions",), conn=conn, min_similarity=0.0)
    assert [h.id for h in off] == ["s1#e0", "s1#e1", "s1#e2", "s1#e3", "s1#e4", "s1#e5"]
    assert [round(h.similarity, 2) for h in off] == [0.9, 0.2, 0.1, 0.0, 0.0, -0.1]
    assert [h.coverage for h in off] == [0.0] * 6  # no word of the prompt in any turn
    # the floor (0.40): ASK passes by its cosine; ANSWER (1 turn after it) and the booking (2 after) pass through
    # it; the CI turns, 3 and more turns away, have nothing to vouch for them
    on = recall(turns, PROMPT, scope=ALICE, top_k=6, include=("sessions",), conn=conn)
    assert [h.id for h in on] == ["s1#e0", "s1#e1", "s1#e2"]


def test_an_unrelated_prompt_still_passes_nothing(conn, turns):
    assert recall(turns, UNRELATED, scope=ALICE, top_k=6, include=("sessions",), conn=conn) == []


def test_context_evidence_is_the_window_of_a_vouching_turn(conn, turns):
    ids = [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY id")]
    assert turn_context.context_evidence(conn, ids[1:], {ids[0]}) == {ids[1], ids[2]}
    assert turn_context.context_evidence(conn, [ids[0], ids[5]], {ids[3]}) == {ids[5]}
    assert turn_context.context_evidence(conn, ids[1:], set()) == set()
    assert turn_context.context_evidence(conn, [], {ids[0]}) == set()
    assert turn_context.context_evidence(None, ids[1:], {ids[0]}) == set()
