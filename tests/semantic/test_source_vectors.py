"""Vector lists of curated entries and session turns in recall (semantic/sources.py, semantic/turn_vectors.py),
with the real bundled embedder: recall by meaning, project isolation, model separation, lazy curated
embedding, the background worker, the CLI backfill and keyword-only recall when there are no vectors."""

from __future__ import annotations

import json
import sqlite3

import pytest
from semantic_helpers import ALICE, ALICE_EXACT, ALICE_OTHER_PROJECT, BrokenEmbedder, RenamedEmbedder
from typer.testing import CliRunner

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import open_index, transaction
from pi_memory.index.indexer import insert_messages
from pi_memory.index.mirror import add_extended
from pi_memory.project import project_id
from pi_memory.retrieval import session_search
from pi_memory.retrieval.engine import recall
from pi_memory.semantic import sources
from pi_memory.semantic import turn_vectors as tv
from pi_memory.semantic.embedded import EmbeddedBackend

SQL_QUESTION = "which SQL engine do we use?"
POSTGRES = "we moved the database to Postgres 16 last week"
OUR_TURNS = [("user", POSTGRES),
             ("assistant", "I updated the README with the new install steps for everyone"),
             ("user", "the CI pipeline is flaky on Windows runners today"),
             ("user", "ok, go ahead")]  # too short for a vector
OTHER_TURNS = [("user", "the other project runs on MySQL 8 in production")]


@pytest.fixture(autouse=True)
def fresh_matrices():
    sources.forget()
    yield
    sources.forget()


def add_session(conn: sqlite3.Connection, key: str, project: str, turns: list[tuple[str, str]]) -> list[int]:
    """A session of ``project`` with one message per turn (entry ids e0, e1, ...); returns the message ids."""
    with transaction(conn):
        sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) "
                           "VALUES ('pi', ?, '/w', ?, 'demo') RETURNING id", (key, project)).fetchone()[0]
        fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES (?, ?, 0, 0) "
                           "RETURNING id", (f"/sessions/{key}.jsonl", sid)).fetchone()[0]
        insert_messages(conn, [(sid, fid, f"e{i}", None, i + 1, f"2026-11-0{1 + i % 9}T10:00:00.000Z", role,
                                "message", None, "active", text) for i, (role, text) in enumerate(turns)])
    return [r[0] for r in conn.execute("SELECT id FROM messages WHERE session_id = ? ORDER BY id", (sid,))]


def vector_rows(conn: sqlite3.Connection, table: str = "semantic_turn_vectors") -> list[tuple]:
    return conn.execute(f"SELECT model, dim FROM {table} ORDER BY id").fetchall()


@pytest.fixture
def sessions(conn, backend):
    add_session(conn, "s1", ALICE.project_id, OUR_TURNS)
    add_session(conn, "s2", ALICE_OTHER_PROJECT.project_id, OTHER_TURNS)
    return conn


def test_turn_is_recalled_by_meaning_without_a_shared_keyword(sessions, backend, embedder):
    conn = sessions
    assert session_search(conn, SQL_QUESTION, project=ALICE.project_id).count == 0  # no keyword in common
    report = tv.embed_turns(conn, embedder, count=True)
    assert (report.embedded, report.remaining, report.error) == (4, 0, None)  # "ok, go ahead" is too short
    assert vector_rows(conn) == [("all-MiniLM-L6-v2-int8", 384)] * 4
    hits = recall(backend, SQL_QUESTION, scope=ALICE, top_k=3, include=("sessions",), conn=conn, min_similarity=0.0)
    assert [(h.kind, h.id, h.ranks) for h in hits] == [
        ("session", "s1#e0", {"sessions": 1}),  # the session list: turn vectors and keywords fused in context
        # both windows hold the Postgres turn (e1's at half weight, e2's two turns away at a quarter); the CI
        # turn is the nearer of the two to the question by itself
        ("session", "s1#e2", {"sessions": 2}),
        ("session", "s1#e1", {"sessions": 3}),
    ]
    assert hits[0].text == f"user: {POSTGRES}" and hits[0].date == "2026-11-01"
    # (min_similarity=0: these tests are about the lists; the evidence floor has its own tests in test_recall)


def test_session_search_with_an_embedder_ranks_turns_as_recall_does(sessions, embedder):
    conn = sessions
    tv.embed_turns(conn, embedder)
    # (min_similarity=0, as recall's test above: the ranking; the floor's own tests: test_session_search_floor.py)
    found = session_search(conn, SQL_QUESTION, project=ALICE.project_id, embedder=embedder, min_similarity=0.0)
    assert [(h.entry_id, h.match) for h in found.results] == [("e0", "meaning"), ("e2", "meaning"), ("e1", "meaning")]
    assert not any("MySQL" in h.snippet for h in found.results)  # another project's turn, nearest by meaning
    assert session_search(conn, SQL_QUESTION, project=ALICE.project_id).count == 0  # no embedder: strict words
    # a keyword match comes first and brings its neighbour, marked as found through it
    near = session_search(conn, "Postgres database", project=ALICE.project_id, embedder=embedder)
    assert [(h.entry_id, h.match) for h in near.results][:2] == [("e0", "all"), ("e1", "context")]
    # quotes (an operator) keep the strict search: only the rows holding the phrase
    quoted = session_search(conn, '"Postgres 16"', project=ALICE.project_id, embedder=embedder)
    assert [(h.entry_id, h.match) for h in quoted.results] == [("e0", "all")]
    # a filter keeps it too
    assert session_search(conn, SQL_QUESTION, project=ALICE.project_id, role="assistant", embedder=embedder).count == 0


def test_session_search_with_a_broken_embedder_is_keyword_ranked_in_context(sessions):
    conn = sessions
    found = session_search(conn, "Postgres database", project=ALICE.project_id, embedder=BrokenEmbedder())
    assert [(h.entry_id, h.match) for h in found.results][:2] == [("e0", "all"), ("e1", "context")]


def test_another_projects_turns_and_entries_never_appear(sessions, backend, embedder):
    conn = sessions
    tv.embed_turns(conn, embedder)
    add_extended(conn, "The billing service stores invoices in MySQL.", target="project", scope="project",
                 project=ALICE_OTHER_PROJECT.project_id)
    add_extended(conn, "Database migrations run with alembic.", target="project", scope="project",
                 project=ALICE.project_id)
    for _ in range(2):  # the first recall embeds the curated entries of its scope, the second reuses them
        ours = recall(backend, SQL_QUESTION, scope=ALICE, top_k=20, include=("sessions", "curated"), conn=conn, min_similarity=0.0)
        assert [h.id for h in ours] == ["2", "s1#e0", "s1#e2", "s1#e1"]
        assert not any("MySQL" in h.text for h in ours)
    theirs = recall(backend, SQL_QUESTION, scope=ALICE_OTHER_PROJECT, top_k=20, include=("sessions", "curated"),
                    conn=conn, min_similarity=0.0)
    assert [h.id for h in theirs] == ["1", "s2#e0"]
    everyone = recall(backend, SQL_QUESTION, scope=ALICE_EXACT, top_k=20, include=("sessions",), conn=conn, min_similarity=0.0)
    assert {h.id for h in everyone} == {"s1#e0", "s1#e1", "s1#e2", "s2#e0"}  # no project: every turn


def test_a_vector_of_another_model_is_not_used(sessions, backend, embedder):
    conn = sessions
    other = RenamedEmbedder(embedder, "another-model")
    assert tv.embed_turns(conn, other).embedded == 4
    add_extended(conn, "Database migrations run with alembic.", target="project", scope="project",
                 project=ALICE.project_id)
    assert tv.embed_curated(conn, other).embedded == 1
    hits = recall(backend, SQL_QUESTION, scope=ALICE, top_k=5, include=("sessions",), conn=conn, min_similarity=0.0)
    assert hits == []  # the only vectors are another model's: not compared, and no keyword matches
    assert tv.count_missing(conn, "sessions", embedder.model_name, ALICE.project_id) == 3
    # curated entries are few: recall embeds the entry with the current model instead of using the old vector
    curated = recall(backend, SQL_QUESTION, scope=ALICE, top_k=5, include=("curated",), conn=conn, min_similarity=0.0)
    assert [(h.id, h.ranks) for h in curated] == [("1", {"curated_vector": 1})]
    assert vector_rows(conn, "semantic_curated_vectors") == [("another-model", 384), ("all-MiniLM-L6-v2-int8", 384)]
    report = tv.embed_turns(conn, embedder, project=ALICE.project_id, count=True)
    assert (report.embedded, report.remaining) == (3, 0)
    assert [h.id for h in recall(backend, SQL_QUESTION, scope=ALICE, top_k=1, include=("sessions",),
                                 conn=conn, min_similarity=0.0)] == ["s1#e0"]
    reports, pruned = tv.backfill(conn, embedder, prune=True)
    assert [r.embedded for r in reports] == [0, 1] and pruned == 5  # s2's turn, then 4 + 1 old vectors
    assert tv.vector_counts(conn) == {"curated": {"all-MiniLM-L6-v2-int8": 1}, "sessions": {"all-MiniLM-L6-v2-int8": 4}}


def test_vectors_of_another_dimension_are_skipped(sessions, backend, embedder):
    conn = sessions
    tv.embed_turns(conn, embedder)
    with transaction(conn):  # a foreign row under our model name with the wrong length is never compared
        conn.execute("UPDATE semantic_turn_vectors SET dim = 8, vector = zeroblob(32) WHERE message_id = "
                     "(SELECT id FROM messages WHERE text = ?)", (POSTGRES,))
    hits = recall(backend, SQL_QUESTION, scope=ALICE, top_k=5, include=("sessions",), conn=conn, min_similarity=0.0)
    assert [h.id for h in hits] == ["s1#e2", "s1#e1"]


def test_each_reader_connection_judges_the_missing_curated_entries_by_its_own_counters(conn, backend):
    # two fresh connections start with the same data_version and total_changes: a state shared between them
    # made the second recall's worker skip the entries the first one had left (the recall workers read through a
    # connection each)
    for n in range(12):
        add_extended(conn, f"Note {n}: the office plant needs water on Mondays.", target="memory", scope="global")
    db = sources.database_file(conn)
    first, second = (sqlite3.connect(f"file:{db}?mode=ro", uri=True) for _ in range(2))
    sources.ensure_curated(first, backend.embedder, ALICE.project_id)
    assert len(vector_rows(conn, "semantic_curated_vectors")) == tv.CURATED_PER_RECALL == 8
    sources.ensure_curated(second, backend.embedder, ALICE.project_id)
    assert len(vector_rows(conn, "semantic_curated_vectors")) == 12
    first.close()
    second.close()


def test_curated_entries_are_embedded_lazily_and_boundedly_at_recall(conn, backend, min_similarity=0.0):
    add_extended(conn, "Deployments go through ArgoCD, never kubectl apply by hand.", target="project",
                 scope="project", project=ALICE.project_id)
    for n in range(12):
        add_extended(conn, f"Note {n}: the office plant needs water on Mondays.", target="memory", scope="global")
    assert vector_rows(conn, "semantic_curated_vectors") == []
    hits = recall(backend, "how do we ship releases to the cluster?", scope=ALICE, top_k=1, include=("curated",),
                  conn=conn, min_similarity=0.0)
    assert len(vector_rows(conn, "semantic_curated_vectors")) == tv.CURATED_PER_RECALL == 8
    assert [(h.kind, h.id, h.ranks) for h in hits] == [("curated", "1", {"curated_vector": 1})]
    recall(backend, "how do we ship releases to the cluster?", scope=ALICE, include=("curated",), conn=conn, min_similarity=0.0)
    assert len(vector_rows(conn, "semantic_curated_vectors")) == 13
    with transaction(conn):  # a changed text is embedded again, never matched with its old vector
        conn.execute("UPDATE memories SET failure_reason = 'it timed out' WHERE id = 1")
    assert tv.has_missing_curated(conn, backend.model, ALICE.project_id)
    recall(backend, "how do we ship releases to the cluster?", scope=ALICE, include=("curated",), conn=conn, min_similarity=0.0)
    assert not tv.has_missing_curated(conn, backend.model, ALICE.project_id)
    text = conn.execute("SELECT text FROM semantic_curated_vectors WHERE memory_id = 1").fetchone()[0]
    assert text == "Deployments go through ArgoCD, never kubectl apply by hand.\nit timed out"


def test_recall_without_vectors_is_keyword_only(sessions, backend, conn, embedder):
    hits = recall(backend, "flaky Windows runners", scope=ALICE, top_k=5, include=("sessions",), conn=conn, min_similarity=0.0)
    # the match, then the turns before it through context (index/context.py; "ok, go ahead" is too short to count)
    in_context = [("s1#e2", {"sessions": 1}), ("s1#e1", {"sessions": 2}), ("s1#e0", {"sessions": 3})]
    assert [(h.id, h.ranks) for h in hits] == in_context
    broken = EmbeddedBackend(conn, BrokenEmbedder())
    tv.embed_turns(conn, embedder)  # vectors exist, but the embedder is down: keyword lists only, no error
    hits = recall(broken, "flaky Windows runners", scope=ALICE, top_k=5, include=("semantic", "sessions", "curated"),
                  conn=conn, min_similarity=0.0)
    assert [(h.id, h.ranks) for h in hits] == in_context
    report = tv.embed_turns(conn, BrokenEmbedder(), count=True)
    assert report.embedded == 0 and report.remaining == 4 and "refused the connection" in report.error


def test_query_is_embedded_once_for_every_vector_list(sessions, embedder, conn):
    class Counting(RenamedEmbedder):
        calls = 0

        def embed_query(self, text):
            Counting.calls += 1
            return super().embed_query(text)

    counting = Counting(embedder, embedder.model_name)
    backend = EmbeddedBackend(conn, counting)
    backend.add("The team standardised on PostgreSQL.", scope=ALICE)
    tv.embed_turns(conn, embedder)
    hits = recall(backend, SQL_QUESTION, scope=ALICE, top_k=3, include=("semantic", "curated", "sessions"),
                  conn=conn, min_similarity=0.0)
    assert Counting.calls == 1
    # "sql" is inside "PostgreSQL", not a word of it: the word index has no keyword match (trigram had one)
    assert [(h.kind, h.ranks) for h in hits][:2] == [("semantic", {"vector": 1}),
                                                         ("session", {"sessions": 1})]


def test_deleted_turns_leave_the_matrix_and_ids_are_not_confused(sessions, backend, embedder):
    conn = sessions
    tv.embed_turns(conn, embedder)
    assert recall(backend, SQL_QUESTION, scope=ALICE, top_k=1, include=("sessions",), conn=conn, min_similarity=0.0)[0].id == "s1#e0"
    with transaction(conn):  # a rewritten transcript: its rows go (the vectors with them), new rows come
        conn.execute("DELETE FROM messages WHERE session_id = (SELECT id FROM sessions WHERE session_key = 's1')")
    assert conn.execute("SELECT count(*) FROM semantic_turn_vectors").fetchone()[0] == 1  # only s2's
    add_session(conn, "s3", ALICE.project_id, [("user", "lunch is at noon on Fridays in the big room")])
    hits = recall(backend, SQL_QUESTION, scope=ALICE, top_k=5, include=("sessions",), conn=conn, min_similarity=0.0)
    assert hits == []  # the new turn has no vector yet; the deleted ones are gone
    tv.embed_turns(conn, embedder)
    hits = recall(backend, SQL_QUESTION, scope=ALICE, top_k=5, include=("sessions",), conn=conn, min_similarity=0.0)
    assert [h.id for h in hits] == ["s3#e0"]


def test_weights_apply_to_the_fused_session_list(sessions, backend, embedder):
    conn = sessions
    tv.embed_turns(conn, embedder)
    hits = recall(backend, SQL_QUESTION, scope=ALICE, top_k=1, include=("sessions",), conn=conn,
                  weights={"sessions": 2.0}, min_similarity=0.0)
    assert hits[0].score == pytest.approx(2.0 / 61)


# --- the background worker and the CLI ------------------------------------------------------------------------
@pytest.fixture
def host(tmp_path, monkeypatch):
    """A project folder, a data folder and pi settings with recall over semantic memories and sessions."""
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"pi-memory": {"semantic": {
        "userId": "alice", "recallSources": ["semantic", "curated", "sessions"], "autoCapture": False,
        "recallMinSimilarity": 0}}}))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    return repo


def test_background_worker_embeds_the_turns_a_run_indexed(host, tmp_path, monkeypatch):
    from pi_memory.session import AgentSession

    monkeypatch.setattr(tv, "TURNS_PER_RUN", 3)
    turns = [("user", f"question number {n} about the payment gateway retries") for n in range(4)]
    turns.append(("assistant", POSTGRES))
    session = AgentSession(host, "01aa")
    try:
        session.memory.store.add("memory", "The staging database is reset every night at 02:00.")
        session.after_run(session_file=str(write_pi_session(tmp_path / "s.jsonl", host, turns)))
        assert session.worker.drain(60) and session.worker.errors == []
        assert session.embedded == {"curated": 1, "sessions": 3}  # the newest 3 of the 5 turns
        conn = open_index(tmp_path / "data")
        embedded = [r[0] for r in conn.execute("SELECT m.text FROM semantic_turn_vectors v JOIN messages m "
                                               "ON m.id = v.message_id ORDER BY m.id")]
        assert embedded == [turns[2][1], turns[3][1], POSTGRES]
        assert conn.execute("SELECT DISTINCT project_id FROM semantic_turn_vectors").fetchall() == [(project_id(host),)]
        conn.close()
        outcome = session.recall(SQL_QUESTION)
        assert outcome.error is None
        assert [(h.kind, h.id) for h in outcome.hits][:2] == [("curated", "1"), ("session", "01aa#e5")]
    finally:
        session.shutdown(5)


def test_cli_embed_sessions_backfills_with_progress(host, tmp_path):
    import pi_memory.cli.semantic  # noqa: F401  (registers the "semantic" sub-app)
    from pi_memory.cli.app import app

    conn = open_index(tmp_path / "data")
    ours = project_id(host)
    add_session(conn, "s1", ours, OUR_TURNS)
    add_session(conn, "s2", ALICE_OTHER_PROJECT.project_id, OTHER_TURNS)
    add_extended(conn, "Database migrations run with alembic.", target="project", scope="project", project=ours)
    runner = CliRunner()
    args = ["semantic", "embed-sessions", "--dir", str(tmp_path / "data"), "--project", str(host)]
    first = runner.invoke(app, [*args, "--limit", "2"])
    assert first.exit_code == 0, first.output
    assert first.stdout.splitlines() == ["curated: 1 embedded with all-MiniLM-L6-v2-int8; 0 remaining",
                                         "sessions: 2 embedded with all-MiniLM-L6-v2-int8; 1 remaining"]
    assert "sessions with all-MiniLM-L6-v2-int8" in first.stderr and "2/3" in first.stderr  # the progress bar
    done = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert done == {"model": "all-MiniLM-L6-v2-int8", "project": ours, "pruned": 0,
                    "curated": {"embedded": 0, "remaining": 0, "error": None},
                    "sessions": {"embedded": 1, "remaining": 0, "error": None}}
    assert conn.execute("SELECT count(*) FROM semantic_turn_vectors").fetchone()[0] == 3  # not the other project's
    every = json.loads(runner.invoke(app, [*args, "--all", "--prune", "--json"]).stdout)
    assert every["sessions"] == {"embedded": 1, "remaining": 0, "error": None} and every["pruned"] == 0
    usage = runner.invoke(app, [*args, "--prune"])
    assert usage.exit_code == 2 and "--prune" in usage.stderr
    conn.close()


def test_service_warm_loads_the_turn_matrix(tmp_path, embedder):
    from pi_memory.semantic.config import parse_semantic
    from pi_memory.semantic.service import open_semantic

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    settings = parse_semantic({"userId": "alice", "recallSources": ["semantic", "sessions"]})
    service = open_semantic(settings, repo, data_dir=tmp_path / "data", model=None, embedder=embedder, warm=False,
                            background_reembed=False)
    add_session(service.conn, "s1", project_id(repo), OUR_TURNS)
    tv.embed_turns(service.conn, embedder)
    service.warm()
    cached = [(key[1:], len(mat)) for key, mat in sources._cache.items()]
    assert cached == [(("sessions", "all-MiniLM-L6-v2-int8", project_id(repo)), 3)]
    service.close()


LONG_TURN = " ".join(["we talked about the weather and lunch plans"] * 20) + " then the Kafka broker rebalanced twice"


def test_keyword_found_turn_shows_the_window_around_the_terms(conn, backend):
    # The keyword list of a recall reads only the winners' rows (session_ranking, then load_turns); a long turn
    # whose match lies past the first 400 characters must still show the match, and so still count as evidence.
    assert len(LONG_TURN) > 800 and LONG_TURN.index("Kafka") > 800
    add_session(conn, "s1", ALICE.project_id, [("user", LONG_TURN), ("user", "ok")])
    hits = recall(backend, "Kafka broker rebalanced", scope=ALICE, top_k=5, include=("sessions",), conn=conn)
    assert [(h.id, h.ranks, h.coverage) for h in hits] == [("s1#e0", {"sessions": 1}, 1.0)]
    assert hits[0].text.startswith("user: …plans we talked") and hits[0].text.endswith(" then the Kafka broker rebalanced twice")  # no highlights
    assert hits[0].date == "2026-11-01"


def test_session_ranking_orders_as_session_search(sessions):
    from pi_memory.retrieval import session_ranking

    for query in ("Windows runners", "database Postgres", "README install", "nothing matches zzzq"):
        full = session_search(sessions, query, limit=10, project=ALICE.project_id)
        ranked = session_ranking(sessions, query, limit=10, project=ALICE.project_id)
        rows = dict(sessions.execute("SELECT id, entry_id FROM messages"))
        assert [rows[mid] for mid, _ in ranked] == [h.entry_id for h in full.results]
        assert [round(score, 4) for _, score in ranked] == [h.score for h in full.results]
    assert session_ranking(sessions, "Postgres", limit=10, project=ALICE_OTHER_PROJECT.project_id) == []


def test_a_vector_found_turn_gets_its_text_when_judged_and_one_deleted_meanwhile_is_left_out(sessions, backend,
                                                                                               embedder, monkeypatch):
    from pi_memory.retrieval import vector_lists

    conn = sessions
    tv.embed_turns(conn, embedder)
    read: list[list[str]] = []
    real = vector_lists.fill_texts

    def deleting_first(c, hits):  # the Postgres turn's transcript is rewritten while the recall runs
        if not read:
            with transaction(conn):
                conn.execute("DELETE FROM messages WHERE text = ?", (POSTGRES,))
        read.append([h.id for h in hits if h.kind == "session" and not h.text])
        real(c, hits)

    monkeypatch.setattr(vector_lists, "fill_texts", deleting_first)
    hits = recall(backend, SQL_QUESTION, scope=ALICE, top_k=3, include=("sessions",), conn=conn, min_similarity=0.0)
    assert "s1#e0" in read[0]  # found by its vector alone, its text not read until judged
    assert [h.id for h in hits] == ["s1#e2", "s1#e1"]  # the deleted turn is not recalled with an empty text
    assert all(h.text.startswith(("user: ", "assistant: ")) and len(h.text) > 12 for h in hits)


def test_only_the_kept_turns_get_a_snippet(conn, backend, monkeypatch):
    # A snippet runs the secret scan over the turn: the turns that fail the evidence floor are read for their
    # coverage and get none. Each turn is alone in its session (no neighbour lends it a match); the query has three
    # keyword terms, and only the first turn holds more than one of them (the others: a third, below the floor).
    from pi_memory.index import snippets
    from pi_memory.retrieval import vector_lists

    turns = ["the Kafka broker rebalanced twice", "Kafka is our queue", "the broker host is old", "we rebalanced"]
    for i, text in enumerate(turns):
        add_session(conn, f"s{i}", ALICE.project_id, [("user", text)])
    made: list[str] = []
    read: list[str] = []
    real_snippet, real_load = snippets.make_snippet, vector_lists.load_turns

    def snippet(text, *args, **kwargs):
        made.append(text)
        return real_snippet(text, *args, **kwargs)

    def load(c, wanted, *args):
        read.extend(wanted)
        return real_load(c, wanted, *args)

    monkeypatch.setattr(snippets, "make_snippet", snippet)
    monkeypatch.setattr(vector_lists, "load_turns", load)
    hits = recall(backend, "Kafka broker rebalanced", scope=ALICE, top_k=5, include=("sessions",), conn=conn)
    assert [(h.id, round(h.coverage, 2), h.text) for h in hits] == [
        ("s0#e0", 1.0, "user: the Kafka broker rebalanced twice")]
    assert sorted(read) == ["t:s0#e0", "t:s1#e0", "t:s2#e0", "t:s3#e0"]
    assert made == ["the Kafka broker rebalanced twice"]
