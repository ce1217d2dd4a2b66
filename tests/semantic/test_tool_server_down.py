"""What the model reads from `mem0_memory` when the team server is down or hung (a tester's findings): the
error said "start it with `pi-memory serve` or switch the semantic backend to embedded" plus
"ConnectError: [Errno 111]", and a hung server cost 30 s a call with a text naming `GET /health` and asking to
retry. The model now reads what happened and what to do (carry on without team memory, tell the user, no
retry); the how-to-fix detail goes to the log, and a server found not answering is not waited for again by the
next calls of the same session for 30 s."""

from __future__ import annotations

import logging
import socket
import time

import httpx
import pytest

from pi_memory.semantic.backends.rest_client import RestBackend, ServerTimeoutError, ServerUnreachableError
from pi_memory.semantic.config import parse_semantic
from pi_memory.semantic.models import Scope
from pi_memory.semantic.service import open_semantic
from pi_memory.tools.semantic import SERVER_DOWN, MemoryToolArgs, create_semantic_tools

CALLS = [{"action": "search", "query": "release day"}, {"action": "add", "text": "Releases are on Thursdays"},
         {"action": "get_all"}, {"action": "delete", "memoryId": "abc123"}]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def hung():
    """A server on 127.0.0.1 that takes connections (the kernel's backlog) and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def _tool(url: str, tmp_path, timeout_ms: int = 30_000):
    settings = parse_semantic({"backend": {"type": "self-hosted", "baseUrl": url, "apiKey": "t",
                                           "requestTimeoutMs": timeout_ms}, "userId": "alice"})
    service = open_semantic(settings, tmp_path, data_dir=tmp_path / "data", model=None, background_reembed=False,
                            warm=False)
    return service, create_semantic_tools(service, force=True)[0].handler


def test_a_server_that_is_down_is_told_to_the_model_in_its_words(tmp_path, caplog):
    service, run = _tool(f"http://127.0.0.1:{_free_port()}", tmp_path)
    try:
        with caplog.at_level(logging.WARNING, logger="pi_memory.tools.semantic"):
            for call in CALLS:
                assert run(MemoryToolArgs.model_validate(call)) == {
                    "success": False, "action": call["action"], "code": "server_down", "error": SERVER_DOWN}
    finally:
        service.close()
    assert SERVER_DOWN == (
        "The team memory server is not working right now, so mem0_memory cannot be used; nothing was read or "
        "changed. Carry on with the task without team memory, and tell the user that the team memory server is "
        "not answering. Do not call mem0_memory again for now.")
    assert "start it with `pi-memory serve`" in caplog.records[0].getMessage()


def test_a_hung_server_costs_one_wait_then_the_next_calls_answer_at_once(tmp_path, hung):
    service, run = _tool(hung, tmp_path, timeout_ms=1000)
    try:
        took = []
        for call in CALLS:
            started = time.monotonic()
            assert run(MemoryToolArgs.model_validate(call))["error"] == SERVER_DOWN
            took.append(time.monotonic() - started)
    finally:
        service.close()
    assert 0.9 < took[0] < 3 and max(took[1:]) < 0.2, took


def test_the_remembered_failure_says_so_and_ends_with_the_window(hung):
    backend = RestBackend(hung, "t", timeout=0.5, down_window=1.0)
    scope = Scope(user_id="alice")
    with pytest.raises(ServerTimeoutError) as first:
        backend.search("x", scope=scope)
    assert str(first.value) == (f"the memory server at {hung} did not answer GET /health within 0.5 s; it may be "
                                "overloaded -- retry, or raise the timeout")
    started = time.monotonic()
    with pytest.raises(ServerTimeoutError) as again:
        backend.search("x", scope=scope)
    assert time.monotonic() - started < 0.1
    assert str(again.value) == str(first.value) + " (not asked again for 1 s)"
    time.sleep(1.1)
    started = time.monotonic()
    with pytest.raises(ServerTimeoutError):
        backend.search("x", scope=scope)
    assert time.monotonic() - started >= 0.45  # asked again once the window ended
    backend.close()


@pytest.mark.parametrize("status", [502, 503, 504])
def test_a_server_without_its_database_is_told_as_down(tmp_path, status):
    from pi_memory.tools.semantic import handle

    transport = httpx.MockTransport(lambda request: httpx.Response(status, json={"error": "the team database "
                                                                                 "cannot be reached (x)"}))
    backend = RestBackend("http://127.0.0.1:9", "t", transport=transport)
    settings = parse_semantic({"backend": {"type": "self-hosted", "baseUrl": "http://127.0.0.1:9"}, "userId": "a"})
    service = open_semantic(settings, tmp_path, backend=backend, model=None, background_reembed=False, warm=False)
    try:
        assert handle(service, MemoryToolArgs(action="get_all")) == {
            "success": False, "action": "get_all", "code": "server_down", "error": SERVER_DOWN}
    finally:
        service.close()


def test_a_refused_connection_remembered_is_still_unreachable():
    def refuse(request):
        raise httpx.ConnectError("[Errno 111] Connection refused")

    backend = RestBackend("http://127.0.0.1:9", "t", transport=httpx.MockTransport(refuse), connect_retries=0)
    for _ in range(2):
        with pytest.raises(ServerUnreachableError):
            backend.get_all(scope=Scope(user_id="alice"))


def test_recall_before_a_run_says_the_tools_words_when_the_team_server_stops(pg_url, embedder, tmp_path, caplog):
    """A tester's finding: recall before a run said nothing to the model when the team server was down (the
    mem0_memory tool did). A real team server on PostgreSQL answers a recall, then stops: the next recall gives
    the model the same advice as the tool, the fix goes to the log, and the next recall of the process does not
    ask the server again for the down window."""
    import uuid

    from pi_memory.semantic.backend import RECALL_SERVER_DOWN, SERVER_DOWN_ADVICE, SERVER_DOWN_STATE
    from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
    from pi_memory.semantic.backends.rest_app import create_app
    from pi_memory.semantic.backends.rest_runner import ServerThread

    pool = open_pool(pg_url, max_size=2)
    user = "recall-" + uuid.uuid4().hex[:6]
    server = ServerThread(create_app(lambda: PostgresBackend(pool, embedder), None)).start()
    settings = parse_semantic({"backend": {"type": "self-hosted", "baseUrl": server.url}, "userId": user})
    service = open_semantic(settings, tmp_path, data_dir=tmp_path / "data", model=None, background_reembed=False,
                            warm=False)
    try:
        service.add("The staging database is restored every Sunday night")
        before = service.recall_for_prompt("when is the staging database restored?")
        assert before.reason == "ok" and "restored every Sunday night" in before.text
        server.stop()
        with caplog.at_level(logging.WARNING, logger="pi_memory.semantic.service"):
            down = service.recall_for_prompt("when is the staging database restored?")
        assert (down.text, down.reason) == (RECALL_SERVER_DOWN, "server_down")
        assert RECALL_SERVER_DOWN.startswith(SERVER_DOWN_STATE) and SERVER_DOWN_ADVICE in SERVER_DOWN
        assert SERVER_DOWN_ADVICE in RECALL_SERVER_DOWN
        assert [r.getMessage() for r in caplog.records] == [
            f"semantic recall went without team memory: the memory server at {server.url} is not reachable "
            f"({down.error.split('reachable (', 1)[1]}"]
        assert "start it with `pi-memory serve`" in down.error
        started = time.monotonic()
        again = service.recall_for_prompt("who restores the staging database?")
        assert again.text == RECALL_SERVER_DOWN and time.monotonic() - started < 0.1
        assert again.error.endswith(" s)") and "(not asked again for " in again.error
    finally:
        service.close()
        server.stop()
        pool.close()
