"""`pi-memory serve export` says what it wrote (a tester's finding): `serve export -o f.jsonl` printed nothing,
not even with --json, and left out the shared project stores without a word. It now prints the counts and the
path (JSON with --json) and names the project stores that are not in the file, with how to back them up."""

from __future__ import annotations

import json

import pytest

from pg_fixture import own_database
from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.models import Scope

BACKUP = ('Back them up from the database: pg_dump --data-only --table=project_stores "$PI_MEMORY_DATABASE_URL" > '
          "project-stores.sql (restore with psql into the same schema).")


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
    assert code == 0 and len(path.read_text().splitlines()) == 3
    assert " ".join(stdout.split()) == (
        f"exported 3 memories (4 history events, 3 vectors) to {path}. Not in it: the 2 shared project stores "
        "(acme-api: 3 entries, web: 1 entry); `serve export` copies the semantic memories only. " + BACKUP)


def test_an_export_with_json_reports_counts_and_project_stores(run, team_db, tmp_path):
    url, backend = team_db
    _fill(backend, {"acme-api": 2})
    path = tmp_path / "team.jsonl"
    code, stdout, _ = run("serve", "export", "-o", str(path), "--database-url", url, "--json")
    assert code == 0 and json.loads(stdout) == {
        "path": str(path), "memories": 3, "history": 4, "vectors": 3, "projectStoresIncluded": False,
        "projectStores": [{"project": "acme-api", "entries": 2}]}


def test_an_export_to_standard_output_says_it_on_standard_error(run, team_db):
    url, backend = team_db
    _fill(backend, {})
    code, stdout, stderr = run("serve", "export", "--database-url", url)
    assert code == 0 and [json.loads(line)["text"] for line in stdout.splitlines()] == [
        "The release branch is cut on Thursdays", "CI runs on two cores", "The release branch is cut on Wednesdays"]
    assert stderr == ("exported 3 memories (4 history events, 3 vectors) to standard output. This server has no "
                      "shared project stores (an export would not hold them).")


def test_an_export_to_standard_output_with_json_reports_on_standard_error(run, team_db):
    url, backend = team_db
    _fill(backend, {"web": 2})
    code, stdout, stderr = run("serve", "export", "--database-url", url, "--json")
    assert code == 0 and len(stdout.splitlines()) == 3
    assert json.loads(stderr) == {"path": None, "memories": 3, "history": 4, "vectors": 3,
                                  "projectStoresIncluded": False, "projectStores": [{"project": "web", "entries": 2}]}
