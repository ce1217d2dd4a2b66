"""`serve import` of rows without a vector of the server's model (a tester's finding: `--from-jsonl` of rows
without `vectors` said "1 vector" with no warning, and after a server restart those memories still had no
vector, so they were never found by meaning and always ranked below embedded memories, even for a search in
their own words). They are queued in `pi_memory_reembed`, which `serve` embeds when it opens the store, and
the summary says so with true counts."""

from __future__ import annotations

import json
import uuid

import pytest

from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.backends.team_import import import_rows, jsonl_rows
from pi_memory.semantic.backends.team_server import open_team
from pi_memory.semantic.models import Scope


@pytest.fixture(scope="module")
def store(pg_url, embedder):
    pool = open_pool(pg_url, max_size=2)
    yield PostgresBackend(pool, embedder)
    pool.close()


@pytest.fixture
def cli(invoke_cli, pg_url):
    def run(*args: str):
        return invoke_cli("serve", *args, "--database-url", pg_url)

    return run


def _row(mid: str, user: str, text: str, **extra) -> dict:
    return {"id": mid, "user_id": user, "text": text, "status": "active", "created_at": "2026-01-05T10:00:00.000Z",
            "updated_at": "2026-01-05T10:00:00.000Z", "observed_at": "2026-01-05T10:00:00.000Z", **extra}


def _write(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _vectors(store, ids) -> dict[str, list[str]]:
    with store.pool.connection() as conn:
        rows = conn.execute("SELECT memory_id, model FROM semantic_vectors WHERE memory_id = ANY(%s) "
                            "ORDER BY memory_id, model", (list(ids),)).fetchall()
    found: dict[str, list[str]] = {i: [] for i in ids}
    for memory_id, model in rows:
        found[memory_id].append(model)
    return found


def _queued(store, ids) -> list[str]:
    with store.pool.connection() as conn:
        return [r[0] for r in conn.execute("SELECT memory_id FROM pi_memory_reembed WHERE memory_id = ANY(%s) "
                                           "ORDER BY memory_id", (list(ids),))]


def test_rows_without_a_vector_are_queued_said_and_embedded_when_serve_opens_the_store(store, cli, tmp_path,
                                                                                      embedder, pg_url):
    user = "vec-" + uuid.uuid4().hex[:8]
    scope = Scope(user_id=user)
    coffee = store.add("The office coffee machine is broken", scope=scope)  # an add: embedded at once
    staging, tabs, other = f"{user}-staging", f"{user}-tabs", f"{user}-other"
    rows = [_row(staging, user, "The staging database runs on PostgreSQL 16"),
            _row(tabs, user, "Priya prefers tabs over spaces for indentation", vectors=[]),
            _row(other, user, "Lunch is served at noon on Fridays",
                 vectors=[{"model": "another-model", "dim": 2, "vector": [0.5, 0.5]}])]
    result = cli("import", "--from-jsonl", _write(tmp_path / "rows.jsonl", rows))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "copied 3 memories (0 history events, 1 vector); 0 were already there. 3 memories had no vector of this "
        f"server's embedding model ({embedder.model_name}): they are queued, and `pi-memory serve` embeds them (a "
        "running server within 30 s, 256 a pass; otherwise when it starts); until then a search finds them by their words only."]
    ids = [other, staging, tabs]
    assert _queued(store, ids) == ids
    assert _vectors(store, ids) == {other: ["another-model"], staging: [], tabs: []}

    team = open_team(pg_url)  # what `serve` does at start
    team.close()
    assert _queued(store, ids) == []
    assert _vectors(store, ids) == {other: sorted(["another-model", embedder.model_name]), staging: [embedder.model_name],
                                    tabs: [embedder.model_name]}
    for query, expected in (("what SQL engine version powers our pre-production environment", staging),
                            ("which whitespace character does she indent code with", tabs),
                            ("staging database PostgreSQL", staging)):
        hits = store.search(query, scope=scope, top_k=4)
        assert hits[0].memory.id == expected, (query, [(h.memory.text, h.score) for h in hits])
    assert coffee.id in [h.memory.id for h in store.search("the espresso maker does not work", scope=scope)][:1]


def test_the_report_counts_queued_rows_and_only_vectors_really_stored(store, tmp_path, embedder):
    user = "vcount-" + uuid.uuid4().hex[:8]
    vec = [0.0] * embedder.dim
    vec[0] = 1.0
    same = {"model": embedder.model_name, "dim": embedder.dim, "vector": vec}
    rows = [_row(f"{user}-1", user, "Deploys happen on Tuesdays", vectors=[same, same]),  # one stored, not two
            _row(f"{user}-2", user, "The wiki lives on Confluence"),
            _row(f"{user}-3", user, "The VPN is WireGuard", status="superseded")]
    report = import_rows(store, jsonl_rows(__import__("pathlib").Path(_write(tmp_path / "c.jsonl", rows))))
    assert (report.memories, report.vectors, report.queued) == (3, 1, 2)
    assert report.to_dict()["queued"] == 2
    assert _queued(store, [f"{user}-1", f"{user}-2", f"{user}-3"]) == [f"{user}-2", f"{user}-3"]
    assert report.summary() == (
        "copied 3 memories (0 history events, 1 vector); 0 were already there. 2 memories had no vector of this "
        f"server's embedding model ({embedder.model_name}): they are queued, and `pi-memory serve` embeds them (a "
        "running server within 30 s, 256 a pass; otherwise when it starts); until then a search finds them by their words only.")


def test_a_running_server_embeds_an_import_without_a_restart_a_capped_pass_at_a_time(pg_url, embedder):
    """A tester's finding: rows an import queued waited for the next `serve` start. The server that runs (what
    `serve` starts: Team.start_reembed) embeds them, at most `cap` a pass."""
    import time

    from pg_fixture import own_database

    with own_database(pg_url, "reembed") as url:
        team = open_team(url)  # an empty queue: nothing to embed at the start
        other = open_pool(url, max_size=1)  # `serve import` from another process
        passes: list[tuple[int, int]] = []
        try:
            team.start_reembed(every=0.2, cap=2, report=lambda done, left: passes.append((done, left)))
            user = "run-" + uuid.uuid4().hex[:8]
            texts = ["The staging database runs on PostgreSQL 16", "Priya prefers tabs over spaces for indentation",
                     "Lunch is served at noon on Fridays", "The on-call rotation changes every Monday",
                     "Release notes are written in the wiki"]
            report = import_rows(PostgresBackend(other, embedder),
                                 [(f"row {i}", _row(f"{user}-{i}", user, t)) for i, t in enumerate(texts)])
            assert report.queued == 5
            deadline = time.monotonic() + 30
            # The pass that empties the queue commits before it reports: wait for its report, not for the queue.
            while not (passes and passes[-1][1] == 0) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert passes == [(2, 3), (2, 1), (1, 0)]
            assert team.backend.queued_count() == 0
            ids = [f"{user}-{i}" for i in range(5)]
            assert _vectors(team.backend, ids) == {i: [embedder.model_name] for i in ids}
            hits = team.backend.search("which whitespace character does she indent code with", scope=Scope(user_id=user))
            assert hits[0].memory.id == f"{user}-1"
        finally:
            team.close()
            other.close()
        assert not team.reembed._thread.is_alive()  # stopped with the server
