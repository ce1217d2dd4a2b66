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
