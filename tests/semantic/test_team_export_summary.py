"""`pi-memory serve export` says what it wrote (a tester's finding): `serve export -o f.jsonl` printed nothing,
not even with --json, and left out the shared project stores without a word. It now prints the counts and the
path (JSON with --json), and the shared project stores are in the file too, each named with its entries."""

from __future__ import annotations

import json

import pytest

from pg_fixture import own_database
from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.models import Scope


@pytest.fixture
def run(invoke_cli):
    def run(*args: str):
        result = invoke_cli(*args)
        return result.exit_code, result.stdout, " ".join(result.stderr.split())

    return run


@pytest.fixture
def team_db(pg_url, embedder):
    with own_database(pg_url, "export_") as url:
        pool = open_pool(url, max_size=2)
        backend = PostgresBackend(pool, embedder)
        yield url, backend
        pool.close()


def _fill(backend, projects: dict[str, int]) -> None:
    scope = Scope(user_id="alice")
    first = backend.add("The release branch is cut on Thursdays", scope=scope)
    backend.add("CI runs on two cores", scope=scope)
    backend.update(first.id, "The release branch is cut on Wednesdays", scope=scope)
    with backend.pool.connection() as conn:
        for name, n in projects.items():
            conn.execute("INSERT INTO project_stores(project_id, entries, version, updated_at) VALUES "
                         "(%s, %s::jsonb, 1, '2026-01-01T00:00:00Z')", (name, json.dumps([f"entry {i}" for i in
                                                                                           range(n)])))


def test_an_export_to_a_file_says_what_it_wrote_and_names_the_project_stores(run, team_db, tmp_path):
    url, backend = team_db
    _fill(backend, {"web": 1, "acme-api": 3})
    path = tmp_path / "team.jsonl"
    code, stdout, _ = run("serve", "export", "-o", str(path), "--database-url", url)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert code == 0 and len(lines) == 5
    assert lines[3:] == [
        {"project_store": "acme-api", "target": "project", "entries": ["entry 0", "entry 1", "entry 2"], "version": 1,
         "updated_at": "2026-01-01T00:00:00Z", "updated_by": None},
        {"project_store": "web", "target": "project", "entries": ["entry 0"], "version": 1,
         "updated_at": "2026-01-01T00:00:00Z", "updated_by": None}]
    assert " ".join(stdout.split()) == (
        f"exported 3 memories (4 history events, 3 vectors) and 2 shared project stores (acme-api: 3 entries, web: 1 "
        f"entry) to {path}.")


def test_an_export_with_json_reports_counts_and_project_stores(run, team_db, tmp_path):
    url, backend = team_db
    _fill(backend, {"acme-api": 2})
    path = tmp_path / "team.jsonl"
    code, stdout, _ = run("serve", "export", "-o", str(path), "--database-url", url, "--json")
    assert code == 0 and json.loads(stdout) == {
        "path": str(path), "memories": 3, "history": 4, "vectors": 3, "projectStoresIncluded": True,
        "projectStores": [{"project": "acme-api", "entries": 2}]}


def test_an_export_to_standard_output_says_it_on_standard_error(run, team_db):
    url, backend = team_db
    _fill(backend, {})
    code, stdout, stderr = run("serve", "export", "--database-url", url)
    assert code == 0 and [json.loads(line)["text"] for line in stdout.splitlines()] == [
        "The release branch is cut on Thursdays", "CI runs on two cores", "The release branch is cut on Wednesdays"]
    assert stderr == "exported 3 memories (4 history events, 3 vectors) to standard output."


def test_an_export_to_standard_output_with_json_reports_on_standard_error(run, team_db):
    url, backend = team_db
    _fill(backend, {"web": 2})
    code, stdout, stderr = run("serve", "export", "--database-url", url, "--json")
    assert code == 0 and len(stdout.splitlines()) == 4
    assert json.loads(stdout.splitlines()[3])["entries"] == ["entry 0", "entry 1"]
    assert json.loads(stderr) == {"path": None, "memories": 3, "history": 4, "vectors": 3,
                                  "projectStoresIncluded": True, "projectStores": [{"project": "web", "entries": 2}]}
