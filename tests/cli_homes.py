"""A temporary HOME for CLI tests (imported by name: ``tests/`` is on ``sys.path`` through the conftest)."""

from __future__ import annotations

from pathlib import Path


def skill_home(tmp_path: Path, monkeypatch) -> tuple[Path, object, object]:
    """A temporary HOME with pi's agent folder (no $PI_MEMORY_DIR), the cwd ``tmp_path``: ``(home, its skill
    store, run(*args) of the CLI)``, for the skill export tests."""
    from typer.testing import CliRunner

    from pi_memory.cli.app import app
    from pi_memory.skills import SkillStore

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home / ".pi" / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, list(args), catch_exceptions=False)

    return home, SkillStore(home / ".pi" / "agent" / "memories"), run


def isolated_cli(tmp_path: Path, monkeypatch):
    """HOME, pi's agent folder, the data root (``tmp_path/mem``) and the hook state folder under ``tmp_path``, the
    cwd ``tmp_path``: ``run(*args)`` of the CLI (its ``Result``)."""
    from typer.testing import CliRunner

    from pi_memory.cli.app import app

    for name, folder in (("HOME", "home"), ("PI_CODING_AGENT_DIR", "agent"), ("PI_MEMORY_DIR", "mem"),
                         ("PI_MEMORY_STATE_DIR", "state")):
        monkeypatch.setenv(name, str(tmp_path / folder))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args), catch_exceptions=False)
