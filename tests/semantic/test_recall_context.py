"""Recall over sessions reads keyword matches in context (index/context.py): the answer after a question is
recalled, and the question that lent it its score is its keyword evidence."""

from __future__ import annotations

import pytest
from semantic_helpers import ALICE

from pi_memory.index import transaction
from pi_memory.index.indexer import insert_messages
from pi_memory.semantic.recall import recall


def add(conn, key: str, rows: list[tuple[str, str, str]]) -> list[int]:
    """A session of ALICE's project with ``rows`` = (role, kind, text); returns the message ids in order."""
    with transaction(conn):
        sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) "
                           "VALUES ('pi', ?, '/w', ?, 'demo') RETURNING id", (key, ALICE.project_id)).fetchone()[0]
        fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES (?, ?, 0, 0) "
                           "RETURNING id", (f"/s/{key}.jsonl", sid)).fetchone()[0]
        insert_messages(conn, [(sid, fid, f"e{i}", None, i + 1, "2026-11-01T10:00:00.000Z", role, kind, None,
                                "active", text) for i, (role, kind, text) in enumerate(rows)])
    return [r[0] for r in conn.execute("SELECT id FROM messages WHERE session_id = ? ORDER BY id", (sid,))]


@pytest.fixture
def ids(conn, backend):
    first = add(conn, "a", [("user", "message", "what board game should we bring to the convention"),
                            ("assistant", "tool_result", "ls output: games.txt"),
                            ("assistant", "message", "Catan, we played it last year and everyone loved it"),
                            ("user", "message", "great, I will pack it tonight"),
                            ("user", "message", "also remember the snacks")])
    other = add(conn, "b", [("user", "message", "a different session entirely")])
    return first + other


def test_recall_finds_the_answer_after_the_question(conn, backend, ids):
    # "convention board game" matches only the question; its answer (Catan) shares no word with the prompt and
    # comes second through context. Without context the keyword list held the question alone.
    hits = recall(backend, "convention board game", scope=ALICE, top_k=3, include=("sessions",), conn=conn,
                  min_similarity=0.0)
    assert [h.id for h in hits] == ["a#e0", "a#e2", "a#e3"]
    assert hits[1].text == "assistant: Catan, we played it last year and everyone loved it"
    # the answer has no keyword of its own; the question that lent it its score is its evidence
    assert [(h.coverage, h.similarity) for h in hits] == [(1.0, None)] * 3
    default_floor = recall(backend, "convention board game", scope=ALICE, top_k=3, include=("sessions",), conn=conn)
    assert [h.id for h in default_floor] == ["a#e0", "a#e2", "a#e3"]
