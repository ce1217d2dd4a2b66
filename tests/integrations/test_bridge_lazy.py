"""``lazyInitialization``: a pi session that never uses memory opens no database and reads no store."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from pi_memory.integrations.pi.bridge import Bridge


def write_pi_session(path: Path, cwd: str, user_texts: list[str], day: str = "2026-11-03") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "session", "version": 3, "id": path.stem, "timestamp": f"{day}T10:00:00.000Z", "cwd": cwd}]
    parent = None
    for n, text in enumerate(user_texts, 1):
        lines.append({"type": "message", "id": f"e{n}", "parentId": parent, "timestamp": f"{day}T10:00:{n:02d}.000Z",
                      "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}})
        parent = f"e{n}"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.fixture
def env(tmp_path, monkeypatch):
    agent = tmp_path / "agent"
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "sessions"))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_MEMORY_CATCH_UP", "0")
    data = tmp_path / "data"
    data.mkdir()
    (data / "MEMORY.md").write_text("Use uv, never pip\n", encoding="utf-8")
    (data / "STANDING.md").write_text("- Answer in English\n", encoding="utf-8")
    return tmp_path


def settings(env, **block):
    (env / "agent" / "settings.json").write_text(json.dumps({"pi-memory": block}))


@pytest.fixture
def reads(monkeypatch):
    """Every curated-store load and every index open, recorded."""
    from pi_memory.curated import MemoryStore
    from pi_memory.index import db

    seen: list[str] = []
    load, open_index = MemoryStore.load_from_disk, db.open_index

    def counted_load(self, *a, **k):
        seen.append("store")
        return load(self, *a, **k)

    def counted_open(*a, **k):
        seen.append("index")
        return open_index(*a, **k)

    monkeypatch.setattr(MemoryStore, "load_from_disk", counted_load)
    monkeypatch.setattr(db, "open_index", counted_open)
    import pi_memory.index as index_pkg

    monkeypatch.setattr(index_pkg, "open_index", counted_open)
    return seen


def ordinary_prompt(b: Bridge) -> None:
    """What the extension sends for a prompt that uses no memory tool."""
    b.learning_status()  # the extension asks at session start
    b.begin_turn()
    b.snapshot()
    b.run_context()
    b.recall(prompt="hello there", state={})
    b.tool_calls(count=2)
    b.after_run(sessionFile=None, userText="hello there", assistantText="hi! how can I help?")


def test_opening_and_an_ordinary_prompt_read_nothing(env, reads):
    settings(env, memoryMode="policy-only", lazyInitialization=True)
    b = Bridge()
    hello = b.hello(cwd=str(env))
    assert hello["lazy"] is True and hello["status"]["text"] == "memory: ready (loads on first use)"
    assert {"memory_add", "memory_search", "session_search", "skill_manage"} <= {t["name"] for t in hello["tools"]}
    ordinary_prompt(b)
    context = b.run_context()["text"]
    assert "Answer in English" in context  # standing instructions work at start
    assert b.snapshot()["text"].startswith("<memory-policy>")
    assert b.skills(action="paths")["paths"][-1].endswith("learn-memory-tool")  # skill discovery at start
    assert reads == [] and not (env / "data" / "index.sqlite3").exists()
    assert b.flush(reason="shutdown")["queued"] is False  # an unused session is not loaded to be closed
    b.shutdown(wait=1)
    assert reads == [] and not (env / "data" / "index.sqlite3").exists()


def test_the_first_memory_operation_loads_and_sees_the_turns_before_it(env, reads):
    settings(env, memoryMode="policy", lazyInitialization=True)
    b = Bridge()
    b.hello(cwd=str(env))
    ordinary_prompt(b)
    reply = b.call_tool(name="memory_read", arguments={"target": "memory"})
    assert reply["isError"] is False and "Use uv, never pip" in reply["text"]
    assert reads.count("store") == 1
    assert b.status()["memoryEntries"] == 1
    status = b.session.learning.status()  # the turn that ended before the load was counted at the load
    assert (status["turnsSinceReview"], status["toolCallsSinceReview"]) == (1, 2)
    b.shutdown(wait=2)


def test_hello_tools_are_the_loaded_tools(env):
    settings(env, memoryMode="policy", lazyInitialization=True)
    lazy = Bridge()
    lazy_tools = lazy.hello(cwd=str(env))["tools"]
    settings(env, memoryMode="policy")
    eager = Bridge()
    assert eager.hello(cwd=str(env))["tools"] == lazy_tools
    eager.shutdown(wait=1)
    lazy.shutdown(wait=1)


def test_snapshot_mode_ignores_lazy(env, reads):
    settings(env, memoryMode="snapshot", lazyInitialization=True)
    b = Bridge()
    assert b.hello(cwd=str(env))["lazy"] is False
    assert "store" in reads and "Use uv, never pip" in b.snapshot()["text"]
    b.shutdown(wait=1)


def test_concurrent_first_uses_share_one_load(env, monkeypatch):
    settings(env, memoryMode="policy", lazyInitialization=True)
    b = Bridge()
    b.hello(cwd=str(env))
    from pi_memory import session as session_mod

    built = []
    real = session_mod.AgentSession.__init__
    gate = threading.Event()

    def slow_init(self, *a, **k):
        built.append(1)
        gate.wait(2)
        real(self, *a, **k)

    monkeypatch.setattr(session_mod.AgentSession, "__init__", slow_init)
    results = []
    threads = [threading.Thread(target=lambda: results.append(
        b.call_tool(name="memory_read", arguments={"target": "memory"})["isError"])) for _ in range(3)]
    for t in threads:
        t.start()
    gate.set()
    for t in threads:
        t.join(10)
    assert built == [1] and results == [False, False, False]
    b.shutdown(wait=1)


def test_a_failed_load_is_retried_by_the_next_operation(env, monkeypatch):
    settings(env, memoryMode="policy", lazyInitialization=True)
    b = Bridge()
    b.hello(cwd=str(env))
    from pi_memory import session as session_mod

    real = session_mod.AgentSession.__init__
    calls = []

    def flaky(self, *a, **k):
        calls.append(1)
        if len(calls) == 1:
            raise OSError("the data folder is on a share that is not mounted yet")
        real(self, *a, **k)

    monkeypatch.setattr(session_mod.AgentSession, "__init__", flaky)
    first = b.handle(json.dumps({"id": 1, "method": "call_tool",
                                 "params": {"name": "memory_read", "arguments": {"target": "memory"}}}))
    assert "not mounted yet" in first["error"]["message"] and not b.loaded
    second = b.call_tool(name="memory_read", arguments={"target": "memory"})
    assert second["isError"] is False and len(calls) == 2
    b.shutdown(wait=1)


def test_anchor_search_works_without_loading(env, reads):
    settings(env, memoryMode="policy", lazyInitialization=True, sessionSearch={"variant": "anchors"})
    path = write_pi_session(env / "sessions" / "--w--" / "s.jsonl", "/w", ["we chose postgres for the queue"])
    b = Bridge()
    b.hello(cwd=str(env))
    reply = b.call_tool(name="session_search", arguments={"all": ["postgres"]})
    assert reply["text"].startswith(f"count: 1\n{path}:2 user")
    assert reads == [] and not b.loaded
    b.shutdown(wait=1)


def test_enough_turns_for_a_flush_load_memory_at_shutdown(env, reads):
    settings(env, memoryMode="policy", lazyInitialization=True, flushMinTurns=2)
    b = Bridge()
    b.hello(cwd=str(env))
    ordinary_prompt(b)
    ordinary_prompt(b)
    b.flush(reason="shutdown")
    assert b.loaded and "store" in reads
    b.shutdown(wait=1)


MODEL = {"provider": "openai-compatible", "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "apiKey": "k"}


def test_a_correction_with_a_model_loads_memory_so_it_is_saved(env, reads):
    settings(env, memoryMode="policy", lazyInitialization=True, llm=MODEL)
    b = Bridge()
    b.hello(cwd=str(env))
    b.after_run(userText="hello there", assistantText="hi")
    assert not b.loaded and reads == []
    b.after_run(userText="No, that is wrong. Use pnpm, not npm.", assistantText="Sorry, pnpm it is.")
    assert b.loaded and "store" in reads
    assert b.session.learning.status()["turnsSinceReview"] == 2  # both waiting turns were handled
    b.shutdown(wait=1)


def test_a_correction_without_a_model_loads_nothing(env, reads):
    settings(env, memoryMode="policy", lazyInitialization=True)
    b = Bridge()
    b.hello(cwd=str(env))
    b.after_run(userText="No, that is wrong. Use pnpm, not npm.", assistantText="Sorry.")
    assert not b.loaded and reads == []
    b.shutdown(wait=1)


def test_a_due_review_loads_memory(env, reads):
    settings(env, memoryMode="policy", lazyInitialization=True, llm=MODEL, nudgeInterval=3)
    b = Bridge()
    b.hello(cwd=str(env))
    for n in range(2):
        b.after_run(userText=f"question {n}", assistantText="answer")
    assert not b.loaded
    b.after_run(userText="question 2", assistantText="answer")
    assert b.loaded
    b.shutdown(wait=1)


def test_project_listing_and_preview_do_not_load(env, reads):
    settings(env, memoryMode="policy", lazyInitialization=True)
    b = Bridge()
    b.hello(cwd=str(env))
    assert b.command(name="projects")["text"]
    preview = b.command(name="preview")
    assert "policy" in preview["text"] and not b.loaded and reads == []
    b.command(name="preview", args="what do we use?")  # recall for a prompt needs the stores
    assert b.loaded
    b.shutdown(wait=1)
