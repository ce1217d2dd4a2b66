"""Every read path on a data folder that cannot be written answers from what is there; every write is refused
with the folder, the problem and what to do; nothing in the folder changes. The folder is really read-only (a
tmpfs remounted read-only as root, else chmod: tests/read_only_folder.py) and holds what a folder in use holds:
curated entries, an indexed session, a semantic memory (embedded by the bundled model).

Paths: the CLI (session-search, memory-search, semantic recall / list / search, read, status, learning log), the
MCP server's tools over stdio, the Python API (``open_memory`` and its tools), and an agent session's background
work (index catch-up, live indexing, capture), which is skipped with a log line."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from read_only_folder import TURNS, cli, pi_session, read_only_folder, seed  # noqa: E402

SETTINGS = {"pi-memory": {"recallSources": ["semantic", "curated", "sessions"]}}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """HOME, pi's agent folder (recall over semantic memories, curated entries and sessions) and a project
    folder to run in, all this module's own."""
    base = tmp_path_factory.mktemp("env")
    agent, project = base / "agent", base / "project"
    agent.mkdir()
    project.mkdir()
    (agent / "settings.json").write_text(json.dumps(SETTINGS))
    patch = pytest.MonkeyPatch()
    for name, value in (("HOME", base / "home"), ("PI_CODING_AGENT_DIR", agent), ("CODEX_HOME", base / "codex"),
                        ("XDG_STATE_HOME", base / "state")):
        patch.setenv(name, str(value))
    patch.delenv("PI_MEMORY_DIR", raising=False)
    patch.chdir(project)
    yield base
    patch.undo()


@pytest.fixture(scope="module", params=["mounted read-only", "mode 0555"])
def ro(env, request):
    with read_only_folder(env / request.param.replace(" ", "-"), mount=request.param == "mounted read-only") as made:
        if request.param == "mounted read-only" and not made.mounted:
            pytest.skip("this user may not mount a tmpfs: the mode case covers it")
        seed(made.folder, env / f"sessions-{made.kind}", cwd=str(env / "project"))
        subprocess.run([sys.executable, "-m", "pi_memory", "semantic", "add", "The staging server listens on port "
                        "8443", "--dir", str(made.folder)], check=True, capture_output=True, timeout=120)
        made.freeze()
        made.before = made.state()
        yield made
        assert made.state() == made.before  # after every test of the module: nothing changed, nothing added


def run(ro, *argv: str) -> tuple[int, dict, str]:
    code, data, err = cli([*argv, "--dir", str(ro.folder)])
    assert ro.state() == ro.before
    return code, data, err


@pytest.mark.parametrize(("query", "first"), [
    ("staging port", "Run make deploy; the staging server listens on port 8443."),
    ("invoice rounding", "and the invoice rounding bug?"),
    ("banker's rounding", "Fixed with banker's rounding in totals.py."),
    ("kubernetes", None),
])
def test_session_search_on_a_read_only_copy(ro, query, first, caplog):
    with caplog.at_level(logging.WARNING, logger="pi_memory"):
        code, data, _ = run(ro, "session-search", query)
    assert code == 0 and data["success"] is True, data
    found = [hit["snippet"].replace("**", "") for hit in data["results"]]
    assert (found[0] if found else None) == first, found
    why, todo = ro.parts()
    assert f"{why} pi-memory opened it for reading only: searches and recall answer from what is there; indexing, " \
           f"capture and every other write are skipped. {todo}" in caplog.messages


@pytest.mark.parametrize(("query", "content"), [("build", "the build uses make and the deploy port is 8443"),
                                                ("deploy port", "the build uses make and the deploy port is 8443"),
                                                ("kubernetes", None)])
def test_memory_search_on_a_read_only_copy(ro, query, content):
    code, data, _ = run(ro, "memory-search", query)
    assert code == 0, data
    assert [hit["content"] for hit in data["results"]][:1] == ([content] if content else [])


@pytest.mark.parametrize(("prompt", "kinds"), [
    ("which port does the staging server use?", {"semantic", "curated"}),
    # three words: the entry holding two of them passes ("how do we deploy to staging?" is two words, and since
    # one of two is no evidence alone, the entry "... the deploy port is 8443" was rightly left out of it)
    ("how do we deploy the build to staging?", {"semantic", "curated", "session"}),
    ("what is the capital of Mongolia?", set()),
])
def test_recall_on_a_read_only_copy(ro, prompt, kinds):
    code, data, _ = run(ro, "semantic", "recall", prompt)
    assert code == 0 and data["skipped"] is False, data
    assert kinds <= {hit["kind"] for hit in data["hits"]}, data["hits"]
    if not kinds:
        assert data["hits"] == [] and data["text"] == ""
    else:
        assert data["text"].startswith("[UNTRUSTED MEMORY DATA]")


def test_a_trivial_prompt_is_skipped_as_anywhere(ro):
    code, data, _ = run(ro, "semantic", "recall", "ok")
    assert code == 0 and data["skipped"] is True


def test_listing_and_reading_a_read_only_copy(ro):
    code, data, _ = run(ro, "semantic", "list")
    assert code == 0 and [m["memory"] for m in data["results"]] == ["The staging server listens on port 8443"]
    code, data, _ = run(ro, "semantic", "search", "staging")
    assert code == 0 and data["results"][0]["memory"] == "The staging server listens on port 8443", data
    code, data, _ = run(ro, "read", "memory")
    assert code == 0 and data["entries"] == ["the build uses make and the deploy port is 8443"]
    code, data, _ = run(ro, "status")
    assert code == 0 and data["dataDir"] == str(ro.folder)
    code, data, _ = run(ro, "learning", "log")  # the learning log was never made in this index: read as empty
    assert code == 0 and data["jobs"] == [], data


@pytest.mark.parametrize("argv", [["reindex"], ["index-sessions"], ["sync-markdown"], ["semantic", "reembed"],
                                  ["semantic", "embed-sessions"], ["semantic", "add", "The queue is Redis"]],
                         ids=" ".join)
def test_a_write_on_a_read_only_copy_is_refused_in_words(ro, argv):
    code, data, _ = run(ro, *argv)
    assert code == 1, data
    assert data == {"success": False, "exitCode": 1, "problem": ro.kind, "dataDir": str(ro.folder),
                    "error": ro.refusal()}


def curated_refusal(ro, name: str = "MEMORY.md", for_model: bool = False) -> str:
    """What a curated write into the frozen folder gets, before its Markdown file is touched."""
    why, todo = ro.parts()
    tell = "Retrying will not help; tell the user, who can fix it: " if for_model else ""
    return f"Nothing was saved to {name}: {why[0].lower()}{why[1:]} {tell}{todo}"


@pytest.mark.parametrize(("argv", "name"), [(["add", "memory", "the queue is Redis"], "MEMORY.md"),
                                            (["add", "user", "prefers short answers"], "USER.md"),
                                            (["replace", "memory", "build", "the build uses just"], "MEMORY.md"),
                                            (["remove", "memory", "build"], "MEMORY.md"),
                                            (["add", "failure", "ran the wrong test"], "FAILURES.md")],
                         ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_a_curated_write_on_a_read_only_copy_is_refused_in_words(ro, argv, name):
    code, data, _ = run(ro, *argv)
    assert code == 1 and data["code"] == "read_only" and data["success"] is False, data
    assert data["error"] == curated_refusal(ro, name, for_model=True)  # --json: the tool's result


def test_the_python_api_on_a_read_only_copy(ro, env):
    from pi_memory.index.read_only import read_only
    from pi_memory.runtime import open_memory

    memory = open_memory(env / "project", override_dir=ro.folder)
    try:
        tools = {tool.name: tool for tool in memory.tools()}
        found = tools["session_search"].call({"query": "staging port"})
        assert found.result["success"] is True and found.result["count"] >= 1, found.result
        found = tools["memory_search"].call({"query": "build"})
        assert [h["content"] for h in found.result["results"]] == ["the build uses make and the deploy port is 8443"]
        assert tools["mem0_memory"].call({"action": "search", "query": "staging"}).result["success"] is True
        refused = tools["memory_add"].call({"target": "memory", "content": "the queue is Redis"})
        assert refused.is_error and refused.result["code"] == "read_only"
        assert refused.result["error"] == curated_refusal(ro, for_model=True)
        assert read_only(memory.index()).kind == ro.kind
        preview = memory.semantic().recall_preview("which port does the staging server use?")
        assert "The staging server listens on port 8443" in preview["text"]
    finally:
        memory.close()
    assert ro.state() == ro.before


def test_an_agent_session_skips_its_background_writes(ro, env, caplog, monkeypatch):
    from pi_memory.index import read_only as module
    from pi_memory.runtime import open_memory
    from pi_memory.session import AgentSession

    monkeypatch.setattr(module, "_said", set())
    transcript = pi_session(env / "live" / "--project--" / "s2.jsonl", str(env / "project"), TURNS)
    session = AgentSession(env / "project", memory=open_memory(env / "project", override_dir=ro.folder))
    with caplog.at_level(logging.WARNING, logger="pi_memory"):
        session.start(catch_up=True, dream=False)
        session.after_run(str(transcript), user_text="we moved staging to port 9443",
                          assistant_text="Noted: staging now listens on port 9443.")
        assert session.worker.drain(60)
        outcome = session.recall("which port does the staging server use?")
        finished = session.shutdown(5)
    assert finished and list(session.worker.errors) == [], list(session.worker.errors)
    assert session.indexed_files == 0
    assert [report.skip_rule for report in session.captures] == ["read-only"]  # before any model call
    assert "The staging server listens on port 8443" in outcome.text
    why = {"read_only": "a read-only file system"}.get(ro.kind, "no permission")
    for what in ("indexing session transcripts", "capture"):
        assert f"{what} skipped: the data folder {ro.folder} is open for reading only ({why})" in caplog.messages
    assert ro.state() == ro.before


def test_the_mcp_servers_tools_on_a_read_only_copy(ro, env):
    from mcp import Client, StdioServerParameters

    environ = {**os.environ, "PI_MEMORY_DIR": str(ro.folder), "PI_MEMORY_INDEX_INTERVAL": "0"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "pi_memory.cli", "mcp"], env=environ,
                                   cwd=str(env / "project"))

    async def scenario():
        async with Client(params) as client:
            found = await client.call_tool("session_search", {"query": "invoice rounding"})
            assert found.is_error is False and found.structured_content["count"] >= 1, found.content[0].text
            found = await client.call_tool("memory_search", {"query": "build"})
            assert [h["content"] for h in found.structured_content["results"]] == [
                "the build uses make and the deploy port is 8443"]
            read = await client.call_tool("memory_read", {"target": "memory"})
            assert read.structured_content["entries"] == ["the build uses make and the deploy port is 8443"]
            listed = await client.call_tool("mem0_memory", {"action": "get_all"})
            assert "The staging server listens on port 8443" in listed.content[0].text
            refused = await client.call_tool("memory_add", {"target": "memory", "content": "the queue is Redis"})
            assert refused.is_error and refused.structured_content["code"] == "read_only"
            assert refused.structured_content["error"] == curated_refusal(ro, for_model=True)
            refused = await client.call_tool("mem0_memory", {"action": "add", "text": "The queue is Redis"})
            assert refused.is_error and ro.refusal() in refused.content[0].text, refused.content[0].text

    anyio.run(scenario)
    assert ro.state() == ro.before
