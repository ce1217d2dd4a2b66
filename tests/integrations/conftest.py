"""Shared fixtures of the host-integration tests."""

from __future__ import annotations

import pytest


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
