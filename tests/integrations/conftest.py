"""Shared fixtures of the host-integration tests (and ``team_socket``, a team server on 127.0.0.1 that hangs,
answers or dribbles: ``tests/team_sockets.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: team_sockets

from team_sockets import team_socket  # noqa: E402,F401


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A temporary HOME, data root and hook state folder, and a project ``proj`` (a git root) under
    ``tmp_path`` (returned)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PI_MEMORY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (tmp_path / "data").mkdir()
    return tmp_path


@pytest.fixture
def home(tmp_path, monkeypatch):
    """For the imports of the hosts' memories: a temporary HOME (no CLAUDE_CONFIG_DIR / CODEX_HOME) and a
    project ``proj`` (a git root, with a folder ``sub``) under ``tmp_path`` (returned)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / "sub").mkdir()
    return tmp_path


@pytest.fixture
def install_home(tmp_path, monkeypatch):
    """For the host installs: a temporary HOME (returned, made) and hook state folder, no CLAUDE_CONFIG_DIR /
    CODEX_HOME, and no codex binary on PATH (so Codex trust is not recorded)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_MEMORY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def make_bridge(tmp_path, monkeypatch):
    """A factory of in-process pi bridges: ``make_bridge(settings, cwd=None)`` gives a
    :class:`~pi_memory.integrations.pi.bridge.Bridge` greeted in ``cwd`` (default ``tmp_path``), with pi's
    ``settings.json`` holding ``{"pi-memory": settings}``, the data root ``tmp_path/mem`` and no session catch-up;
    each is shut down after the test."""
    import json

    from pi_memory.integrations.pi.bridge import Bridge

    made = []

    def make(settings: dict, cwd: Path | None = None) -> Bridge:
        agent = tmp_path / "agent"
        agent.mkdir(exist_ok=True)
        (agent / "settings.json").write_text(json.dumps({"pi-memory": settings}))
        monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
        monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "mem"))
        monkeypatch.setenv("PI_MEMORY_CATCH_UP", "0")
        bridge = Bridge()
        bridge.hello(cwd=str(cwd or tmp_path))
        made.append(bridge)
        return bridge

    yield make
    for bridge in made:
        bridge.shutdown(wait=1)
