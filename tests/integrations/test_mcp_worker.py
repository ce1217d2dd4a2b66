"""The MCP server's background worker, driven by the official SDK's stdio client against ``pi-memory mcp``:
transcripts written before and while the server runs become searchable and embedded, a failing embedder
leaves keyword search working, and the start/stop lines on standard error are JSON under ``--json``."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from pi_memory.devtools.transcripts import write_pi_session

MODEL = "all-MiniLM-L6-v2-int8"
POSTGRES = "we moved the billing database to Postgres 16 last week"
README = "I updated the README with the new install steps for everyone"
KAFKA = "the ingest service now reads its events from Kafka topics"
WAIT_S = 60.0  # bound on every wait for the worker (the model loads in about a second)


@pytest.fixture
def host(tmp_path: Path) -> dict:
    """An isolated HOME, pi agent folder (semantic recall over curated entries and sessions, no capture), data
    folder and git project; ``env`` for the server process."""
    agent, repo = tmp_path / "agent", tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    agent.mkdir()
    settings = {"pi-memory": {"semantic": {"userId": "alice", "recallSources": ["semantic", "curated", "sessions"],
                                           "autoCapture": False}}}
    (agent / "settings.json").write_text(json.dumps(settings))
    env = {k: v for k, v in os.environ.items() if k not in ("PI_CODING_AGENT_SESSION_DIR", "PI_MEMORY_INDEX_INTERVAL")}
    env.update(HOME=str(tmp_path / "home"), PI_CODING_AGENT_DIR=str(agent), PI_MEMORY_DIR=str(tmp_path / "data"),
               CODEX_HOME=str(tmp_path / "codex"))
    return {"env": env, "agent": agent, "repo": repo, "data": tmp_path / "data", "settings": settings,
            "sessions": agent / "sessions" / "--repo--"}


def params(host: dict, *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "pi_memory.cli", *args], env=host["env"],
                                 cwd=str(host["repo"]))


async def status_of(client: Client) -> dict:
    return json.loads((await client.read_resource("memory://status")).contents[0].text)


async def wait_for(client: Client, done, what: str) -> dict:
    """Poll ``memory://status`` until ``done(status)``; fail after ``WAIT_S`` with the last status."""
    deadline = time.monotonic() + WAIT_S
    while True:
        status = await status_of(client)
        if done(status["worker"]):
            return status
        assert time.monotonic() < deadline, f"{what} not within {WAIT_S} s: {status}"
        await anyio.sleep(0.1)


async def found(client: Client, query: str) -> list[str]:
    result = await client.call_tool("session_search", {"query": query})
    assert result.is_error is False, result.content[0].text
    # the turns holding the query's words (with the embedder on, the engine also lists their neighbours and the
    # turns near in meaning, marked "context" / "meaning"; these tests are about what got indexed)
    return [(hit["role"], hit["sessionId"]) for hit in result.structured_content["results"]
            if hit["match"] not in ("context", "meaning")]


def vectors(data: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``([(turn text, model)], [(curated content, model)])`` as stored, in id order."""
    conn = sqlite3.connect(data / "index.sqlite3")
    try:
        turns = conn.execute("SELECT m.text, v.model FROM semantic_turn_vectors v JOIN messages m "
                             "ON m.id = v.message_id ORDER BY m.id").fetchall()
        curated = conn.execute("SELECT m.content, v.model FROM semantic_curated_vectors v JOIN memories m "
                               "ON m.id = v.memory_id ORDER BY m.id").fetchall()
        return turns, curated
    finally:
        conn.close()


def json_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def test_worker_indexes_and_embeds_transcripts_at_start_and_while_running(host, tmp_path):
    write_pi_session(host["sessions"] / "a.jsonl", host["repo"], [("user", POSTGRES), ("assistant", README),
                                                                 ("user", "ok, go ahead")], session_id="sa")
    errlog = tmp_path / "stderr.txt"

    async def scenario():
        with errlog.open("w") as err:
            transport = stdio_client(params(host, "--json", "mcp", "--index-interval", "0.5"), errlog=err)
            async with Client(transport) as client:
                status = await wait_for(client, lambda w: w["embedded"]["sessions"] == 2, "catch-up")
                assert status["worker"]["errors"] == [] and status["worker"]["embedError"] is None
                assert status["worker"]["indexEverySeconds"] == 0.5
                assert status["dataDir"] == str(host["data"])
                assert await found(client, "Postgres") == [("user", "sa")]
                assert vectors(host["data"]) == ([(POSTGRES, MODEL), (README, MODEL)], [])  # "ok, go ahead": too short

                # while the server runs: a new transcript and a curated entry
                add = await client.call_tool("memory_add", {"target": "memory", "content": "Deploys need a green CI run"})
                assert add.structured_content["success"] is True
                write_pi_session(host["sessions"] / "b.jsonl", host["repo"], [("user", KAFKA)], session_id="sb")
                status = await wait_for(client, lambda w: w["embedded"]["sessions"] == 3, "the periodic pass")
                assert status["worker"]["indexedFiles"] == 2 and status["worker"]["embedded"]["curated"] == 1
                assert status["worker"]["passes"] >= 2 and status["worker"]["errors"] == []
                assert await found(client, "Kafka") == [("user", "sb")]
                assert vectors(host["data"]) == ([(POSTGRES, MODEL), (README, MODEL), (KAFKA, MODEL)],
                                                 [("Deploys need a green CI run", MODEL)])

    anyio.run(scenario)
    started, stopped = json_lines(errlog)
    assert started == {"event": "started", "transport": "stdio", "dataDir": str(host["data"]),
                       "tools": ["memory_add", "memory_replace", "memory_remove", "memory_read", "session_search",
                                 "memory_search", "updateMemory", "skill_manage", "mem0_memory"],
                       "indexIntervalSeconds": 0.5, "semantic": started["semantic"]}
    assert started["semantic"].startswith("semantic memory: on")
    assert stopped["event"] == "stopped" and stopped["workerFinished"] is True
    assert stopped["worker"]["embedded"] == {"curated": 1, "sessions": 3}


def test_broken_embedder_keeps_keyword_search_and_is_reported_once(host, tmp_path):
    settings = host["settings"]
    settings["pi-memory"]["semantic"]["embedder"] = {"modelPath": str(tmp_path / "no-such-model")}
    (host["agent"] / "settings.json").write_text(json.dumps(settings))
    write_pi_session(host["sessions"] / "a.jsonl", host["repo"], [("user", POSTGRES)], session_id="sa")
    errlog = tmp_path / "stderr.txt"

    async def scenario():
        with errlog.open("w") as err:
            async with Client(stdio_client(params(host, "mcp", "--index-interval", "0.2"), errlog=err)) as client:
                status = await wait_for(client, lambda w: w["passes"] >= 3, "three index passes")
                assert status["worker"]["embedded"] == {"curated": 0, "sessions": 0}
                assert status["worker"]["embedError"].startswith(
                    "EmbeddingError: [local] Embedding failed: the embedding model file is missing: ")
                assert status["worker"]["errors"] == []
                assert await found(client, "Postgres") == [("user", "sa")]

    anyio.run(scenario)
    assert vectors(host["data"]) == ([], [])
    text = errlog.read_text()
    assert text.count("not embedded:") == 1, text
    assert text.splitlines()[0].startswith("pi-memory mcp: 9 tools on stdio, data in ")


def test_index_interval_zero_turns_background_indexing_off(host, tmp_path):
    write_pi_session(host["sessions"] / "a.jsonl", host["repo"], [("user", POSTGRES)], session_id="sa")
    host["env"]["PI_MEMORY_INDEX_INTERVAL"] = "0"

    async def scenario():
        async with Client(params(host, "mcp")) as client:
            await anyio.sleep(1.0)  # what a catch-up would need to find one small file
            status = await status_of(client)
            assert status["worker"] == {"indexEverySeconds": None, "passes": 0, "lastPass": None, "indexedFiles": 0,
                                        "embedded": {"curated": 0, "sessions": 0}, "embedError": None, "errors": []}
            assert await found(client, "Postgres") == []

    anyio.run(scenario)
