"""A user's machine for the import tests: HOME, pi's agent folder, a cwd, and the CLI run in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    monkeypatch.chdir(elsewhere)
    runner = CliRunner()

    def cli(*args: str) -> dict:
        result = runner.invoke(app, [*args, "--json"], catch_exceptions=False)
        data = json.loads(result.stdout)
        # an import exits 1 when it refused an item (a dry run: would), as `import claude-code-memory` does
        assert result.exit_code == (1 if data.get("refused") else 0), result.stdout
        return data

    return {"home": home, "agent": agent, "data": agent / "memories", "tmp": tmp_path, "cli": cli,
            "runner": runner}
