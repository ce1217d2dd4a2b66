"""The embedded backend: storage, dedup, supersession, history, isolation between scopes, model switch."""

from __future__ import annotations

import sqlite3

import pytest
from semantic_helpers import (
    ALICE,
    ALICE_AGENT,
    ALICE_EXACT,
    ALICE_OTHER_PROJECT,
    ALL_SCOPES,
    BOB,
    BrokenEmbedder,
    RenamedEmbedder,
)

from pi_memory.index import open_index
from pi_memory.semantic.backend import MemoryNotFoundError, SemanticBackend
from pi_memory.semantic.embedded import EmbeddedBackend, salvage_semantic
from pi_memory.semantic.models import Scope, text_hash
from pi_memory.semantic.terms import WordTerm, word_terms


def test_implements_the_protocol(backend):
    assert isinstance(backend, SemanticBackend)
    assert backend.name == "embedded"


def test_add_stores_text_source_and_vector(backend, conn):
    mem = backend.add("User prefers pnpm over npm.", scope=ALICE, source={"session_id": "s1", "entry_ids": ["e1"]},
                      metadata={"topic": "tools"}, observed_at="2026-03-14T09:00:00.000Z")
    got = backend.get(mem.id, scope=ALICE)
    assert got is not None and got.text == "User prefers pnpm over npm."
    assert got.source.session_id == "s1" and got.source.entry_ids == ["e1"]
    assert got.observed_at == "2026-03-14T09:00:00.000Z"
    assert got.metadata == {"topic": "tools"} and got.status == "active"
    row = conn.execute("SELECT model, dim, length(vector) FROM semantic_vectors WHERE memory_id = ?", (mem.id,)).fetchone()
    assert row == (backend.model, 384, 384 * 4)


def test_add_dedups_normalised_text(backend):
    first = backend.add("User prefers pnpm over npm.", scope=ALICE)
    again = backend.add("  user PREFERS   pnpm over npm. ", scope=ALICE)
    assert again.id == first.id
    assert backend.count(scope=ALICE) == 1
    assert backend.add("User prefers pnpm over npm.", scope=BOB).id != first.id  # other scope: its own copy


def test_add_redacts_credentials_and_ignores_identity_metadata(backend):
    mem = backend.add("Deploy key is api_key=sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0 for prod", scope=ALICE,
                      metadata={"user_id": "bob", "agent_id": "victim", "note": "x"})
    assert "sk-live-9f8e7d6c5b4a" not in mem.text and "[REDACTED" in mem.text
    assert mem.metadata == {"note": "x"}
    assert mem.scope == ALICE
    assert backend.get(mem.id, scope=BOB) is None


def test_add_refuses_empty_and_huge_text(backend):
    with pytest.raises(ValueError):
        backend.add("   ", scope=ALICE)
    with pytest.raises(ValueError, match="at most"):
        backend.add("x" * 5000, scope=ALICE)


def test_search_is_hybrid_and_finds_paraphrases(backend):
    backend.add("User prefers pnpm over npm for JavaScript projects.", scope=ALICE)
    backend.add("The staging database runs PostgreSQL 16.", scope=ALICE)
    backend.add("Releases go out by pushing a git tag; CI builds the container.", scope=ALICE)
    hits = backend.search("which package manager does the user like", scope=ALICE, top_k=3)
    assert hits[0].memory.text.startswith("User prefers pnpm")
    assert hits[0].details.vector_rank == 1
    kw = backend.search("PostgreSQL", scope=ALICE, top_k=1)
    assert kw[0].memory.text.startswith("The staging database") and kw[0].details.keyword_rank == 1
    assert kw[0].score > 0 and kw[0].details.rrf == pytest.approx(kw[0].score)
    assert backend.search("", scope=ALICE) == [] and backend.search("x", scope=ALICE, top_k=0) == []


def test_scope_isolation_everywhere(backend):
    """No query returns another scope's memory; per-id calls on another scope's id look like unknown ids."""
    ids = {}
    for n, scope in enumerate(ALL_SCOPES):
        ids[scope] = backend.add(f"Shared secret project codename is Bluebird {n}.", scope=scope).id
    for scope in ALL_SCOPES:
        own = ids[scope]
        for fn in (lambda s: [h.memory for h in backend.search("codename Bluebird", scope=s, top_k=50)],
                   lambda s: [h.memory for h in backend.similar("codename Bluebird", scope=s, top_k=50)],
                   lambda s: backend.get_all(scope=s, include_superseded=True)):
            found = fn(scope)
            assert [m.id for m in found] == [own]
            assert all(m.scope == scope for m in found)
        assert [i for i, _ in backend.keyword_candidates("Bluebird", scope=scope)] == [own]
        assert [i for i, _ in backend.vector_candidates("Bluebird", scope=scope)] == [own]
        for other, other_id in ids.items():
            if other == scope:
                continue
            assert backend.get(other_id, scope=scope) is None
            assert backend.history(other_id, scope=scope) == []
            assert backend.delete(other_id, scope=scope) is False
            with pytest.raises(MemoryNotFoundError):
                backend.update(other_id, "hijacked", scope=scope)
    # nothing was changed by the refused calls
    for scope, mid in ids.items():
        mem = backend.get(mid, scope=scope)
        assert mem is not None and mem.status == "active" and "hijacked" not in mem.text


def test_exact_scope_drops_the_project_part():
    assert ALICE.key == "alice:project:aaaaaaaaaaaa"
    assert ALICE_EXACT.key == "alice"
    assert ALICE_AGENT.key == "alice:project:aaaaaaaaaaaa:agent:reviewer"
    assert ALICE_OTHER_PROJECT.user_key == "alice:project:bbbbbbbbbbbb"
    with pytest.raises(ValueError):
        Scope(user_id="  ")
    with pytest.raises(ValueError):
        Scope(user_id="a\nb")


def test_update_supersedes_and_history_shows_both(backend):
    old = backend.add("User loves Chinese food.", scope=ALICE, source={"session_id": "s1"})
    new = backend.update(old.id, "User hates Chinese food.", scope=ALICE, reason="changed taste")
    assert new.id != old.id and new.text == "User hates Chinese food."
    stale = backend.get(old.id, scope=ALICE)
    assert stale.status == "superseded" and stale.superseded_by == new.id and stale.superseded_at
    assert stale.text == "User loves Chinese food."  # never erased
    assert [m.id for m in backend.get_all(scope=ALICE)] == [new.id]
    assert {m.id for m in backend.get_all(scope=ALICE, include_superseded=True)} == {old.id, new.id}
    assert all(h.memory.id != old.id for h in backend.search("Chinese food", scope=ALICE, top_k=10))
    for mid in (old.id, new.id):  # the chain is listed from either end
        events = backend.history(mid, scope=ALICE)
        assert [(e.memory_id, e.event) for e in events] == [(old.id, "ADD"), (new.id, "UPDATE"),
                                                            (old.id, "SUPERSEDE")]
        sup = events[-1]
        assert sup.old_text == "User loves Chinese food." and sup.new_text == "User hates Chinese food."
        assert sup.related_id == new.id and sup.reason == "changed taste"
    with pytest.raises(MemoryNotFoundError):  # a superseded memory cannot be updated again
        backend.update(old.id, "again", scope=ALICE)


def test_update_to_an_existing_text_points_at_it(backend):
    a = backend.add("User uses vim.", scope=ALICE)
    b = backend.add("User uses helix.", scope=ALICE)
    target = backend.update(a.id, "user uses HELIX.", scope=ALICE)
    assert target.id == b.id
    assert backend.get(a.id, scope=ALICE).superseded_by == b.id
    assert backend.count(scope=ALICE) == 1
    assert backend.update(b.id, "User uses helix.", scope=ALICE).id == b.id  # same text: nothing to do


def test_delete_marks_and_keeps_history(backend):
    mem = backend.add("User's cat is named Miso.", scope=ALICE)
    assert backend.delete(mem.id, scope=ALICE, reason="wrong") is True
    assert backend.delete(mem.id, scope=ALICE) is False
    got = backend.get(mem.id, scope=ALICE)
    assert got.status == "deleted" and got.text == "User's cat is named Miso."
    assert backend.search("cat Miso", scope=ALICE) == []
    assert [e.event for e in backend.history(mem.id, scope=ALICE)] == ["ADD", "DELETE"]
    assert backend.count(scope=ALICE, status="deleted") == 1


def test_writes_from_another_connection_are_seen(tmp_path, embedder):
    one = EmbeddedBackend(open_index(tmp_path), embedder)
    two = EmbeddedBackend(open_index(tmp_path), embedder)
    a = one.add("The CI runs on GitHub Actions.", scope=ALICE)
    assert [h.memory.id for h in two.search("continuous integration", scope=ALICE)] == [a.id]  # loads matrix
    b = two.add("Deploys use ArgoCD on the staging cluster.", scope=ALICE)
    assert b.id in [i for i, _ in one.vector_candidates("deploy tool", scope=ALICE)]
    c = one.update(a.id, "The CI runs on GitLab CI.", scope=ALICE)
    ids = [i for i, _ in two.vector_candidates("continuous integration", scope=ALICE)]
    assert a.id not in ids and c.id in ids
    two.delete(b.id, scope=ALICE)
    assert b.id not in [i for i, _ in one.vector_candidates("deploy tool", scope=ALICE)]


def test_many_writes_keep_the_matrix_exact(backend, embedder):
    mems = [backend.add(f"Fact number {i} about topic {i % 7}.", scope=ALICE) for i in range(40)]
    backend.search("topic", scope=ALICE)  # matrix built
    for m in mems[:30]:  # enough drops to trigger compaction
        backend.delete(m.id, scope=ALICE)
    live = {m.id for m in mems[30:]}
    got = [i for i, _ in backend.vector_candidates("fact about a topic", scope=ALICE, limit=100)]
    assert set(got) == live


def test_model_switch_keyword_until_reembedded(conn, embedder):
    old = EmbeddedBackend(conn, embedder)
    mem = old.add("The user's laptop runs Fedora Silverblue.", scope=ALICE)
    old.add("Other scope memory about Fedora.", scope=BOB)
    new = EmbeddedBackend(conn, RenamedEmbedder(embedder, "other-model-v2"))
    assert new.stale_count() == 2 and new.models() == {embedder.model_name: 2}
    assert new.vector_candidates("operating system", scope=ALICE) == []  # vectors of another model: not mixed
    hits = new.search("Fedora", scope=ALICE)
    assert [h.memory.id for h in hits] == [mem.id] and hits[0].details.stale_model
    seen = []
    report = new.reembed(lambda done, total: seen.append((done, total)), batch_size=1, prune=True)
    assert (report.embedded, report.remaining, report.pruned) == (2, 0, 2)
    assert seen[0] == (0, 2) and seen[-1] == (2, 2)
    assert new.models() == {"other-model-v2": 2}
    hits = new.search("operating system of the laptop", scope=ALICE)
    assert hits[0].memory.id == mem.id and not hits[0].details.stale_model


def test_background_reembed_thread(conn, embedder):
    EmbeddedBackend(conn, embedder).add("User writes Rust at work.", scope=ALICE)
    new = EmbeddedBackend(conn, RenamedEmbedder(embedder, "bg-model"))
    thread, _stop = new.start_reembed()
    thread.join(timeout=30)
    assert new.stale_count() == 0


def test_embedder_failure_degrades_to_keyword(conn):
    backend = EmbeddedBackend(conn, BrokenEmbedder())
    mem = backend.add("Kafka topics are named team.service.event.", scope=ALICE)  # stored without a vector
    assert backend.last_embed_error and "refused" in backend.last_embed_error
    assert [h.memory.id for h in backend.search("Kafka topics", scope=ALICE)] == [mem.id]
    assert [h.memory.id for h in backend.similar("Kafka topics", scope=ALICE)] == [mem.id]
    report = backend.reembed()
    assert report.error and report.remaining == 1


def test_similar_puts_exact_matches_first(backend):
    backend.add("User likes dark mode in every editor.", scope=ALICE)
    exact = backend.add("User prefers tabs.", scope=ALICE)
    hits = backend.similar("user prefers TABS.", scope=ALICE, top_k=2)
    assert hits[0].memory.id == exact.id and hits[0].score == 1.0
    assert len({h.memory.id for h in hits}) == len(hits)


def test_keyword_terms_are_never_fts_syntax(backend):
    backend.add('He said "NEAR(a b)" AND col:x OR * ^ -minus', scope=ALICE)
    for q in ['"', 'NEAR(', 'col:x', '*', 'a" OR "b', "AND OR NOT", "💥💥💥"]:
        backend.keyword_candidates(q, scope=ALICE)  # no exception
    assert backend.keyword_candidates("NEAR(a", scope=ALICE)


def test_keyword_search_bounds_work_on_large_tables(backend, monkeypatch):
    import pi_memory.semantic.keyword as emb

    monkeypatch.setattr(emb, "KEYWORD_BUDGET", 20)
    texts = [f"User note {i}: common words everywhere." for i in range(60)] + ["User owns a rare axolotl."]
    vecs = __import__("numpy").zeros((len(texts), 384), dtype="float32")
    assert backend.add_many(texts, scope=ALICE, vectors=vecs) == 61
    kept, floor = backend._plan_terms(word_terms("user axolotl"))
    assert kept == [WordTerm(("axolotl",), prefix=True)] and floor is None  # the common term is dropped
    assert [backend.get(i, scope=ALICE).text for i, _ in backend.keyword_candidates("user axolotl", scope=ALICE)] \
        == ["User owns a rare axolotl."]
    kept, floor = backend._plan_terms(word_terms("common"))
    # every term is common: the newest 20 of its 60 rows (rowids 41-60) are scored, as a word (no prefix)
    assert kept == [WordTerm(("common",))] and floor == 41
    assert len(backend.keyword_candidates("common", scope=ALICE, limit=100)) == 20


def test_salvage_copies_memories_and_history(tmp_path, embedder):
    damaged_dir = tmp_path / "old"
    backend = EmbeddedBackend(open_index(damaged_dir), embedder)
    m = backend.add("User's timezone is Europe/Lisbon.", scope=ALICE)
    backend.update(m.id, "User's timezone is Europe/Berlin.", scope=ALICE)
    backend.conn.close()
    fresh = sqlite3.connect(tmp_path / "fresh.sqlite3", isolation_level=None)
    fresh.execute("PRAGMA foreign_keys = ON")
    from pi_memory.index.db import migrate

    migrate(fresh)
    assert salvage_semantic(fresh, damaged_dir / "index.sqlite3") == 2
    restored = EmbeddedBackend(fresh, embedder)
    assert restored.stale_count() == 1  # vectors are recreated by reembed
    assert len(restored.history(m.id, scope=ALICE)) == 3
    assert text_hash("user's timezone is europe/berlin.") == restored.get_all(scope=ALICE)[0].hash
