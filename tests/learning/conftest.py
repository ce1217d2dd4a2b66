"""Fixtures of the learning tests (helpers in ``learning_helpers.py``, put on ``sys.path`` here)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from learning_helpers import Brain  # noqa: E402

from pi_memory.devtools.scripted_llm import ScriptedLLM  # noqa: E402


@pytest.fixture
def brain() -> Brain:
    return Brain()


@pytest.fixture
def llm(brain: Brain) -> Iterator[ScriptedLLM]:
    with ScriptedLLM(responder=brain) as server:
        yield server


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "agent"
    path.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(path))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path
