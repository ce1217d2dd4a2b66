"""``pi-memory semantic status`` on a small scope: its counts and embedder figures, exactly, and the index opened
without ``quick_check`` (which reads every page, so the time grew with the index up to 32 MiB)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import pi_memory.cli.semantic  # noqa: F401  (registers the "semantic" sub-app)
from pi_memory.cli.app import app


@pytest.fixture
def seeded(tmp_path, monkeypatch, embedder):
    """A scope with memories A (updated: superseded by A2), B (its vector lost: stale), C (deleted)."""
    from pi_memory.index import open_index
    from pi_memory.semantic.config import default_user_id
    from pi_memory.semantic.embedded import EmbeddedBackend
    from pi_memory.semantic.models import Scope

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    scope = Scope.for_project(default_user_id(), project)
    conn = open_index(tmp_path / "data")
    backend = EmbeddedBackend(conn, embedder)
    a, b, c = (backend.add(text, scope=scope) for text in
               ("The team deploys on Fridays.", "Staging uses PostgreSQL 16.", "The CI runs on GitHub Actions."))
    backend.update(a.id, "The team deploys on Thursdays.", scope=scope)
    backend.delete(c.id, scope=scope)
    conn.execute("DELETE FROM semantic_vectors WHERE memory_id = ?", (b.id,))
    conn.close()
    return tmp_path / "data", project


def test_every_figure_is_exact(seeded):
    data, project = seeded
    runner = CliRunner()
    info = json.loads(runner.invoke(app, ["semantic", "status", "--dir", str(data), "--project", str(project),
                                          "--json"]).stdout)
    assert info["memories"] == {"active": 2, "superseded": 1, "deleted": 1}
    assert info["embedder"] == {"model": "all-MiniLM-L6-v2-int8", "staleMemories": 1,
                                "vectorsByModel": {"all-MiniLM-L6-v2-int8": 3}}
    text = runner.invoke(app, ["semantic", "status", "--dir", str(data), "--project", str(project)]).stdout
    lines = text.splitlines()
    assert "memories in this scope: 2 active, 1 superseded, 1 deleted" in lines
    assert "embedder: all-MiniLM-L6-v2-int8; 1 waiting for re-embedding (`pi-memory semantic reembed`)" in lines


def test_the_index_is_not_read_page_by_page(seeded, monkeypatch):
    from pi_memory.index import db

    checks = []
    real = db._check

    def spy(conn, path, check):
        checks.append(check)
        return real(conn, path, check)

    monkeypatch.setattr(db, "_check", spy)
    data, project = seeded
    result = CliRunner().invoke(app, ["semantic", "status", "--dir", str(data), "--project", str(project)])
    assert result.exit_code == 0 and checks == [False]
    result = CliRunner().invoke(app, ["semantic", "list", "--dir", str(data), "--project", str(project)])
    assert result.exit_code == 0 and checks == [False, None]  # other commands: as before (quick_check up to 32 MiB)


def test_a_person_s_status_counts_once(seeded, monkeypatch):
    """The text status read every count twice (once for --json's figures, again for the lines printed): at
    100,000 memories, twice the stale count's index walk and the per-status counts."""
    from pi_memory.semantic.embedded import EmbeddedBackend

    calls = []
    real = EmbeddedBackend.stale_count

    def counted(self):
        calls.append(1)
        return real(self)

    monkeypatch.setattr(EmbeddedBackend, "stale_count", counted)
    data, project = seeded
    result = CliRunner().invoke(app, ["semantic", "status", "--dir", str(data), "--project", str(project)])
    assert result.exit_code == 0, result.output
    assert "embedder: all-MiniLM-L6-v2-int8; 1 waiting for re-embedding (`pi-memory semantic reembed`)" in \
        result.stdout.splitlines()
    assert len(calls) == 1
