"""The session worker (session.py): queued jobs in order, one periodic job on the same thread, failures kept
and survived, a bounded stop; and the MCP server's status resource when a background pass fails."""

from __future__ import annotations

import json
import threading
import time

import anyio
from mcp import Client

from pi_memory.integrations.mcp_server import build_server
from pi_memory.session import AgentSession, Worker


def test_periodic_job_runs_between_queued_jobs_on_one_thread():
    worker, seen = Worker(), []
    worker.every(0.05, lambda: seen.append(("tick", threading.current_thread().name)), "tick")
    worker.submit(lambda: seen.append(("job", threading.current_thread().name)), "job")
    deadline = time.monotonic() + 5
    while sum(1 for kind, _ in seen if kind == "tick") < 3:
        assert time.monotonic() < deadline, seen
        time.sleep(0.01)
    assert worker.stop(5) is True
    count = len(seen)
    time.sleep(0.2)
    assert len(seen) == count  # no periodic run after stop
    assert seen[0] == ("job", "pi-memory-worker")  # queued work first; the first tick is 0.05 s away
    assert {name for _, name in seen} == {"pi-memory-worker"}


def test_a_failing_job_is_kept_and_the_worker_goes_on():
    worker, seen = Worker(), []

    def boom():
        raise RuntimeError("disk on fire")

    worker.every(0.05, boom, "periodic index pass")
    worker.submit(boom, "index catch-up")
    worker.submit(lambda: seen.append("after"), "next")
    time.sleep(0.2)
    assert worker.stop(5) is True
    assert seen == ["after"]
    assert worker.errors[0] == "index catch-up: RuntimeError: disk on fire"
    assert set(worker.errors[1:]) == {"periodic index pass: RuntimeError: disk on fire"}
    assert len(worker.errors) >= 2


def test_stop_is_bounded_by_its_wait():
    worker, release = Worker(), threading.Event()
    worker.submit(lambda: release.wait(10), "slow")
    started = time.monotonic()
    assert worker.stop(0.2) is False
    assert time.monotonic() - started < 1.0
    release.set()


def test_mcp_status_resource_shows_a_failed_pass_and_tools_still_work(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    session = AgentSession(tmp_path)

    def broken_pass():
        raise RuntimeError("the transcript folder vanished")

    monkeypatch.setattr(session, "_catch_up", broken_pass)
    server = build_server(session.memory, session)
    session.start()
    assert session.worker.drain(10)

    async def scenario():
        async with Client(server) as client:
            added = await client.call_tool("memory_add", {"target": "memory", "content": "Use uv"})
            assert added.structured_content["success"] is True
            status = json.loads((await client.read_resource("memory://status")).contents[0].text)
            assert status["dataDir"] == str(tmp_path / "data")
            assert status["worker"] == {"indexEverySeconds": None, "passes": 0, "lastPass": None, "indexedFiles": 0,
                                        "embedded": {"curated": 0, "sessions": 0}, "embedError": None,
                                        "errors": ["index catch-up: RuntimeError: the transcript folder vanished"]}

    try:
        anyio.run(scenario)
    finally:
        assert session.shutdown(5) is True
