"""``RestBackend`` against the real server (uvicorn on 127.0.0.1, embedded backend, bundled embedder), against a
Mem0-shaped server that does not check scope, and against nothing at all."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest

from pi_memory.retrieval.engine import recall
from pi_memory.semantic.backend import BackendError, MemoryNotFoundError, SemanticBackend
from pi_memory.semantic.backends.rest_client import RestBackend, ServerUnreachableError
from pi_memory.semantic.backends.rest_server import ServerThread, create_app, embedded_backend_factory
from pi_memory.semantic.models import Scope

TOKEN = "e2e-token-abcdefghijklmnop"
ALICE = Scope(user_id="alice", project_id="proj1")
BOB = Scope(user_id="bob", project_id="proj1")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("server-data")
    with ServerThread(create_app(embedded_backend_factory(data), TOKEN), port=0) as running:
        yield running


@pytest.fixture
def backend(server):
    with RestBackend(server.url, token=TOKEN, timeout=10) as b:
        yield b


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_full_lifecycle_over_http(backend):
    assert isinstance(backend, SemanticBackend) and backend.name == "self-hosted"
    assert backend.server_checks_scope() is True
    mem = backend.add("The team deploys with Helm charts", scope=ALICE, source={"session_id": "s1", "kind": "tool"},
                      metadata={"topic": "deploy", "user_id": "bob"}, observed_at="2026-03-01T10:00:00Z")
    assert mem.scope == ALICE and mem.metadata == {"topic": "deploy"}
    assert mem.source.session_id == "s1" and mem.observed_at == "2026-03-01T10:00:00.000Z"
    assert backend.add("the team deploys with  helm charts", scope=ALICE).id == mem.id  # dedup

    hits = backend.search("how do we deploy", scope=ALICE, top_k=3)
    assert hits and hits[0].memory.id == mem.id and hits[0].score > 0
    assert backend.similar("deployment with Helm", scope=ALICE)[0].memory.id == mem.id
    assert backend.get(mem.id, scope=ALICE).text == "The team deploys with Helm charts"

    new = backend.update(mem.id, "The team deploys with Argo CD", scope=ALICE, reason="switched")
    assert new.id != mem.id and new.text == "The team deploys with Argo CD" and new.scope == ALICE
    old = backend.get(mem.id, scope=ALICE)
    assert old.status == "superseded" and old.superseded_by == new.id
    assert [h.memory.id for h in backend.search("deploy", scope=ALICE)] == [new.id]
    assert [m.id for m in backend.get_all(scope=ALICE)] == [new.id]
    assert {m.id for m in backend.get_all(scope=ALICE, include_superseded=True)} == {mem.id, new.id}

    history = backend.history(new.id, scope=ALICE)
    assert [e.event for e in history] == ["ADD", "UPDATE", "SUPERSEDE"]
    assert history[1].old_text == "The team deploys with Helm charts" and history[1].reason == "switched"

    assert backend.delete(new.id, scope=ALICE, reason="obsolete") is True
    assert backend.delete(new.id, scope=ALICE) is False
    assert backend.get(new.id, scope=ALICE).status == "deleted"
    assert backend.search("deploy", scope=ALICE) == []
    assert [e.event for e in backend.history(new.id, scope=ALICE)][-1] == "DELETE"
    with pytest.raises(MemoryNotFoundError):
        backend.update(new.id, "again", scope=ALICE)


def test_other_scopes_see_nothing(backend):
    mem = backend.add("Alice keeps the release checklist in NOTES.md", scope=ALICE)
    assert backend.get(mem.id, scope=BOB) is None
    assert backend.search("release checklist", scope=BOB) == []
    assert backend.get_all(scope=BOB) == []
    assert backend.history(mem.id, scope=BOB) == []
    assert backend.delete(mem.id, scope=BOB) is False
    with pytest.raises(MemoryNotFoundError):
        backend.update(mem.id, "Bob was here", scope=BOB)
    assert backend.get(mem.id, scope=Scope(user_id="alice")) is None  # scopes are exact
    assert backend.get(mem.id, scope=ALICE).text == "Alice keeps the release checklist in NOTES.md"


def test_composite_user_ids_name_the_same_scope(server, backend):
    mem = backend.add("Composite ids share memories with run ids", scope=ALICE)
    with RestBackend(server.url, token=TOKEN, composite_user_id=True) as seed_style:
        assert seed_style.get(mem.id, scope=ALICE).id == mem.id


def test_wrong_token_and_input_errors(server, monkeypatch):
    monkeypatch.delenv("PI_MEMORY_SERVER_TOKEN", raising=False)
    with RestBackend(server.url, token="nope") as wrong, pytest.raises(BackendError, match="token"):
        wrong.search("x", scope=ALICE)
    with RestBackend(server.url) as none, pytest.raises(BackendError, match="401"):
        none.get_all(scope=ALICE)
    monkeypatch.setenv("PI_MEMORY_SERVER_TOKEN", TOKEN)
    with RestBackend(server.url) as from_env:
        assert from_env.get_all(scope=Scope(user_id="nobody")) == []
        with pytest.raises(ValueError):
            from_env.add("   ", scope=ALICE)
    with pytest.raises(ValueError, match="http"):
        RestBackend("127.0.0.1:8765")


def test_dead_server_is_a_clear_fast_error():
    port = free_port()
    backend = RestBackend(f"http://127.0.0.1:{port}", token="t", timeout=2)
    started = time.monotonic()
    with pytest.raises(ServerUnreachableError) as caught:
        backend.search("anything", scope=ALICE)
    assert time.monotonic() - started < 3
    message = str(caught.value)
    assert f"127.0.0.1:{port}" in message and "not reachable" in message
    assert "pi-memory serve" in message and "embedded" in message


@pytest.mark.parametrize("error,attempts,kind,needle", [
    (httpx.ConnectError("connection refused"), 3, ServerUnreachableError, "not reachable"),
    (httpx.ConnectTimeout("timed out"), 1, ServerUnreachableError, "not reachable"),
    (httpx.ReadTimeout("timed out"), 1, BackendError, "did not answer"),
])
def test_only_connect_failures_are_retried(error, attempts, kind, needle):
    calls = []

    def fail(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise error

    backend = RestBackend("http://memory.test", transport=httpx.MockTransport(fail))
    with pytest.raises(kind, match=needle):
        backend.get_all(scope=ALICE)
    assert len(calls) == attempts


def test_serve_in_a_subprocess(tmp_path):
    """``serve()`` itself: a real process, stopped with SIGTERM. Its standard error holds only our sentences
    (uvicorn's INFO lines were mixed in before: its log level is "warning" unless the caller asks)."""
    port = free_port()
    code = ("from pi_memory.semantic.backends.rest_server import serve; "
            f"serve(port={port}, token={TOKEN!r}, data_dir={str(tmp_path)!r})")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "server exited"
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)
        with RestBackend(f"http://127.0.0.1:{port}", token=TOKEN) as backend:
            mem = backend.add("Served from a subprocess", scope=ALICE)
            assert backend.search("subprocess", scope=ALICE)[0].memory.id == mem.id
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=15)
    assert f"http://127.0.0.1:{port}" in stderr.decode()
    assert "token: the one given" in stderr.decode() and TOKEN not in stderr.decode()
    assert "INFO" not in stderr.decode() and "Uvicorn" not in stderr.decode()


# --- a Mem0-shaped server: no scope checks on id routes, minimal add answers, in-place updates -----------------
class FakeMem0:
    """Just enough of Mem0's OSS server (v1.x shapes) to exercise the client's own scope checks."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.history: dict[str, list[dict[str, Any]]] = {}
        self.deleted: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self.bodies: list[str] = []

    def put(self, memory_id: str, text: str, **ids: str) -> None:
        self.items[memory_id] = {"id": memory_id, "memory": text, "hash": "md5", "metadata": None,
                                 "created_at": "2026-01-02T03:04:05.123456-07:00", "updated_at": None, **ids}
        self.history[memory_id] = [{"id": "h1", "memory_id": memory_id, "old_memory": None, "new_memory": text,
                                    "event": "ADD", "created_at": "2026-01-02T03:04:05", "is_deleted": 0}]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path, method = request.url.path, request.method
        self.requests.append((method, path))
        self.bodies.append(request.content.decode())
        if path == "/health":
            return httpx.Response(404, json={"detail": "Not Found"})
        if path == "/memories" and method == "POST":
            body = json.loads(request.content)
            ids = {k: body[k] for k in ("user_id", "agent_id", "run_id") if body.get(k)}
            memory_id = f"m{len(self.items) + 1}"
            self.put(memory_id, body["messages"][0]["content"], **ids)
            return httpx.Response(200, json={"results": [{"id": memory_id, "memory": self.items[memory_id]["memory"],
                                                          "event": "ADD"}]})
        if path == "/search":
            body = json.loads(request.content)
            want = body["filters"]  # Mem0 filters match any agent/run when one is left out
            found = [dict(i, score=0.9) for i in self.items.values()
                     if all(i.get(k) == v for k, v in want.items())]
            return httpx.Response(200, json={"results": found})
        if path == "/memories" and method == "GET":
            want = {k: v for k, v in request.url.params.items() if k in ("user_id", "agent_id", "run_id")}
            return httpx.Response(200, json={"results": [i for i in self.items.values()
                                                         if all(i.get(k) == v for k, v in want.items())]})
        memory_id = path.split("/")[2]
        if path.endswith("/history"):
            return httpx.Response(200, json=self.history.get(memory_id, []))
        if method == "GET":
            return httpx.Response(200, json=self.items.get(memory_id))  # no scope check, null when unknown
        if method == "DELETE":
            self.items.pop(memory_id, None)
            self.deleted.append(memory_id)
            return httpx.Response(200, json={"message": "Memory deleted successfully!"})
        if method == "PUT":
            self.items[memory_id]["memory"] = json.loads(request.content)["text"]
            return httpx.Response(200, json={"message": "Memory updated successfully!"})
        return httpx.Response(405, json={"detail": "Method Not Allowed"})


@pytest.fixture
def mem0() -> tuple[FakeMem0, RestBackend]:
    fake = FakeMem0()
    fake.put("alice-1", "Alice likes Rust", user_id="alice", run_id="proj1")
    fake.put("alice-agent", "Alice's reviewer agent note", user_id="alice", run_id="proj1", agent_id="reviewer")
    fake.put("bob-1", "Bob likes Rust too", user_id="bob", run_id="proj1")
    return fake, RestBackend("http://mem0.test", transport=httpx.MockTransport(fake))


def test_mem0_server_foreign_ids_are_hidden_by_the_client(mem0):
    fake, backend = mem0
    assert backend.server_checks_scope() is False
    assert backend.get("bob-1", scope=ALICE) is None
    assert backend.get("alice-agent", scope=ALICE) is None  # Mem0 would match it on user_id + run_id alone
    assert backend.history("bob-1", scope=ALICE) == []
    assert backend.delete("bob-1", scope=ALICE) is False and fake.deleted == []
    with pytest.raises(MemoryNotFoundError):
        backend.update("bob-1", "Bob likes Go", scope=ALICE)
    assert fake.items["bob-1"]["memory"] == "Bob likes Rust too"
    assert ("PUT", "/memories/bob-1") not in fake.requests and ("DELETE", "/memories/bob-1") not in fake.requests
    assert [h.memory.id for h in backend.search("Rust", scope=ALICE)] == ["alice-1"]
    assert [m.id for m in backend.get_all(scope=ALICE)] == ["alice-1"]


def test_mem0_server_own_memories_work(mem0):
    fake, backend = mem0
    mem = backend.add("Alice uses uv", scope=ALICE, metadata={"agent_id": "victim"})
    assert mem.id == "m4" and mem.scope == ALICE and mem.created_at.endswith("Z")
    assert fake.items["m4"].get("agent_id") is None
    got = backend.get("alice-1", scope=ALICE)
    assert got.created_at == "2026-01-02T10:04:05.123Z"  # offsets normalised to UTC
    updated = backend.update("alice-1", "Alice likes Rust and Zig", scope=ALICE)
    assert updated.id == "alice-1" and updated.text == "Alice likes Rust and Zig"  # Mem0 edits in place
    assert [e.event for e in backend.history("alice-1", scope=ALICE)] == ["ADD"]
    assert backend.delete("alice-1", scope=ALICE) is True and fake.deleted == ["alice-1"]


def test_secrets_are_redacted_before_they_leave_the_client(mem0):
    fake, backend = mem0
    mem = backend.add("The staging key is sk-ant-api03-" + "A" * 40, scope=ALICE)
    assert "AAAA" not in fake.items[mem.id]["memory"] and "REDACTED" in fake.items[mem.id]["memory"]
    backend.search("is sk-ant-api03-" + "B" * 40 + " valid", scope=ALICE)
    assert fake.bodies and not any("BBBB" in body for body in fake.bodies)
    backend.update(mem.id, "rotated to sk-ant-api03-" + "C" * 40, scope=ALICE)
    assert "CCCC" not in fake.items[mem.id]["memory"]


def test_recall_floor_reads_the_servers_score_details(backend):
    """Recall through a self-hosted server used to inject its top-k for any prompt: the client dropped the
    server's score details, so the similarity floor had nothing to judge by."""
    scope = Scope(user_id="floor-user", project_id="f1")
    backend.add("User's cat is called Miso.", scope=scope)
    backend.add("Staging runs PostgreSQL 16.", scope=scope)
    [hit, *_] = backend.search("what's my cat's name?", scope=scope, top_k=2)
    assert hit.memory.text == "User's cat is called Miso." and hit.details.cosine > 0.4
    assert hit.details.vector_rank == 1 and hit.details.rrf == hit.score
    assert recall(backend, "write a function that reverses a linked list", scope=scope) == []
    assert [h.text for h in recall(backend, "what's my cat's name?", scope=scope)] == ["User's cat is called Miso."]


def test_requests_above_the_server_caps_are_clamped_not_refused(backend):
    scope = Scope(user_id="clamp", project_id="proj1")
    backend.add("User prefers pnpm over npm", scope=scope)
    assert [h.memory.text for h in backend.search("pnpm", scope=scope, top_k=101)] == ["User prefers pnpm over npm"]
    assert [m.text for m in backend.get_all(scope=scope, limit=5000)] == ["User prefers pnpm over npm"]


def test_observed_at_keeps_its_offset_over_http(backend):
    mem = backend.add("User flew to Osaka.", scope=ALICE, observed_at="2026-03-15T00:30:00+09:00")
    assert mem.observed_at == "2026-03-15T00:30:00.000+09:00" and mem.date == "2026-03-15"
    again = backend.get(mem.id, scope=ALICE)
    assert again.observed_at == "2026-03-15T00:30:00.000+09:00" and again.date == "2026-03-15"
