"""Fixtures of the semantic tests: the real bundled embedder, an embedded backend on a temporary index, and a
scripted OpenAI-compatible model server on 127.0.0.1 (started and stopped by each test that uses it)."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from semantic_helpers import ScriptedMemoryModel  # noqa: E402

from pi_memory.embed import get_embedder  # noqa: E402
from pi_memory.index import open_index  # noqa: E402
from pi_memory.semantic.embedded import EmbeddedBackend  # noqa: E402


@pytest.fixture(autouse=True)
def _forget_servers():
    """Each test starts with a process that remembers no memory server (whose tokens, which were down):
    tests reuse addresses such as http://127.0.0.1:9 with other answers."""
    from pi_memory.semantic.backends import rest_memo

    rest_memo.forget()
    yield
    rest_memo.forget()


@pytest.fixture(scope="session")
def embedder():
    return get_embedder()


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    c = open_index(tmp_path / "data")
    yield c
    c.close()


@pytest.fixture
def backend(conn: sqlite3.Connection, embedder) -> EmbeddedBackend:
    return EmbeddedBackend(conn, embedder)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder (a git root) whose scope the service tests use."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def scripted() -> Iterator[ScriptedMemoryModel]:
    model = ScriptedMemoryModel()
    model.llm.start()
    yield model
    model.llm.stop()


@pytest.fixture
def chat_model(scripted: ScriptedMemoryModel):
    from pi_memory.llm.openai_compatible import OpenAICompatibleChatModel

    model = OpenAICompatibleChatModel("fake-model", base_url=scripted.llm.base_url, timeout_s=10, max_retries=0,
                                      json_retries=1)
    yield model
    model.close()




from pg_fixture import pg_server, pg_url  # noqa: E402,F401  (the team-store tests' PostgreSQL)


@pytest.fixture
def invoke_cli(monkeypatch, tmp_path: Path):
    """The CLI run in this process on a temporary agent and data folder, with no database URL from the environment:
    each call returns typer's result (an uncaught exception other than an exit fails the test)."""
    from typer.testing import CliRunner

    from pi_memory.cli.app import app

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("PI_MEMORY_DATABASE_URL", raising=False)

    def invoke(*args: str):
        result = CliRunner().invoke(app, list(args))
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        return result

    return invoke

