"""Helpers shared by the semantic tests (imported as ``semantic_helpers``: conftest.py puts this folder on
``sys.path``, since ``--import-mode=importlib`` cannot import conftest itself)."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from pi_memory.devtools.scripted_llm import Reply, ScriptedLLM, text_of
from pi_memory.semantic.models import Scope, normalise_text

ALICE = Scope(user_id="alice", project_id="aaaaaaaaaaaa")
ALICE_OTHER_PROJECT = Scope(user_id="alice", project_id="bbbbbbbbbbbb")
ALICE_EXACT = Scope(user_id="alice")
ALICE_AGENT = Scope(user_id="alice", project_id="aaaaaaaaaaaa", agent_id="reviewer")
BOB = Scope(user_id="bob", project_id="aaaaaaaaaaaa")
ALL_SCOPES = [ALICE, ALICE_OTHER_PROJECT, ALICE_EXACT, ALICE_AGENT, BOB]


class RenamedEmbedder:
    """The bundled model under another name: a "different model" for model-switch tests (same vectors)."""

    def __init__(self, inner: Any, name: str, dim_scale: float = 1.0) -> None:
        self.inner = inner
        self.model_name = name
        self.dim = inner.dim

    def embed(self, texts):
        return self.inner.embed(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


class BrokenEmbedder:
    """An embedder whose server is down."""

    model_name = "broken-model"
    dim = 384

    def embed(self, texts):
        from pi_memory.embed import EmbeddingError

        raise EmbeddingError("the embedding server refused the connection", provider="openai-compatible")

    def embed_query(self, text):
        return self.embed([text])[0]


def unit(dim: int = 384, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


# --- the scripted model ---------------------------------------------------------------------------------------
EXTRACT_MARK = "pick out the facts"
DECIDE_MARK = "long-term memory up to date"


def default_decisions(payload: dict) -> dict:
    """A simple, deterministic "model": NOOP for a fact an existing memory states word for word, else ADD."""
    existing = {normalise_text(m["text"]) for m in payload["existing_memories"]}
    return {"decisions": [
        {"fact": f["fact"], "event": "NOOP" if normalise_text(f["text"]) in existing else "ADD",
         "memory_id": None, "text": f["text"]}
        for f in payload["new_facts"]
    ]}


class ScriptedMemoryModel:
    """Answers capture's two calls. Tests queue replies: a dict (sent as JSON), a string (sent verbatim: use
    it for malformed replies) or a callable taking the request's parsed user content (extraction: the turn
    text; decision: the payload dict) and returning one of those. Empty queues: no facts / default decisions."""

    def __init__(self) -> None:
        self.extract: deque[Any] = deque()
        self.decide: deque[Any] = deque()
        self.llm = ScriptedLLM(responder=self._respond)

    def _respond(self, messages: list[dict[str, Any]], _tools: set[str]) -> Reply:
        system = text_of(messages[0].get("content")) if messages and messages[0].get("role") == "system" else ""
        first_user = next(text_of(m.get("content")) for m in messages if m.get("role") == "user")
        if EXTRACT_MARK in system:
            reply = self.extract.popleft() if self.extract else {"facts": []}
            arg: Any = first_user
        elif DECIDE_MARK in system:
            arg = json.loads(first_user)
            reply = self.decide.popleft() if self.decide else default_decisions
        else:
            return Reply(text="unexpected request")
        if callable(reply):
            reply = reply(arg)
        return Reply(text=reply if isinstance(reply, str) else json.dumps(reply))

    # requests the server received
    def bodies(self, mark: str | None = None) -> list[dict[str, Any]]:
        out = []
        for body in self.llm.chat_requests:
            system = text_of(body["messages"][0].get("content"))
            if mark is None or mark in system:
                out.append(body)
        return out

    def all_text(self) -> str:
        return json.dumps(self.llm.chat_requests, ensure_ascii=False)


def decide_with(fn: Callable[[dict], list[dict]]) -> Callable[[dict], dict]:
    """A decision reply built from the payload: ``fn(payload) -> [decision, ...]``."""
    return lambda payload: {"decisions": fn(payload)}


def make_service(project: Any, tmp_path: Any, embedder: Any, model: Any = None, **block: Any) -> Any:
    """A service for ``project`` with user ``alice`` and the settings ``block``, on ``tmp_path / "data"``."""
    from pi_memory.semantic.config import parse_semantic
    from pi_memory.semantic.service import open_semantic

    return open_semantic(parse_semantic({"userId": "alice", **block}), project, data_dir=tmp_path / "data",
                         model=model, embedder=embedder)


def why(subject: str, attribute: str, old: str, new: str) -> dict:
    """The ``reason`` an UPDATE or DELETE decision carries (:class:`pi_memory.semantic.supersession.SupersedeReason`)."""
    return {"subject": subject, "attribute": attribute, "old_value": old, "new_value": new}


def alias_of(payload: dict, text: str) -> str:
    """The id the model was shown for the existing memory whose text is ``text``."""
    for m in payload["existing_memories"]:
        if m["text"] == text:
            return m["id"]
    raise AssertionError(f"{text!r} was not shown to the model: {payload['existing_memories']}")


def insert_turns(conn, project_id: str, rows, session: str = "s1") -> None:
    """Index session ``session`` of ``project_id`` with user turns ``rows`` = ``(entry id, timestamp, text)``."""
    from pi_memory.index.db import transaction
    from pi_memory.index.indexer import insert_messages

    with transaction(conn):
        sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) "
                           "VALUES ('pi', ?, '/w', ?, 'demo') RETURNING id", (session, project_id)).fetchone()[0]
        fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES (?, ?, 0, 0) "
                           "RETURNING id", (f"/{session}", sid)).fetchone()[0]
        insert_messages(conn, [(sid, fid, eid, None, i, stamp, "user", "message", None, "active", text)
                               for i, (eid, stamp, text) in enumerate(rows, 1)])


class TableEmbedder:
    """An embedder reading 4-dimensional vectors from ``table`` (text -> vector): every cosine a test needs is
    written down."""

    model_name, dim = "table-model", 4

    def __init__(self, table: dict):
        self.table = table

    def embed(self, texts):
        return np.stack([self.table[t] for t in texts])

    def embed_query(self, text):
        return self.table[text]
