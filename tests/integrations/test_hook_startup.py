"""What a cold ``pi-memory hook`` process imports before it answers: a session start from the cache, a stop,
and a prompt recall skips load none of the heavy layers (numpy, pydantic, the index, the semantic service,
learning), and the answers are the ones the full path gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from pi_memory.integrations import hooks

HEAVY = ("numpy", "pydantic", "pi_memory.index", "pi_memory.semantic.service", "pi_memory.semantic.recall",
         "pi_memory.learning", "pi_memory.session", "pi_memory.runtime", "pi_memory.config", "mcp", "typer")
PROBE = """
import io, json, sys
sys.stdin = io.StringIO(sys.argv[3])
from pi_memory.integrations.hooks import main
main([sys.argv[1], sys.argv[2]])
heavy = [m for m in json.loads(sys.argv[4]) if m in sys.modules]
sys.stdout.write("\\n" + json.dumps(heavy) + "\\n")
"""


def roomy() -> dict[str, str]:
    """The environment with a hook ceiling no loaded machine reaches: these tests are about what a process
    imports, and a recall cut off at the 2 s ceiling answered nothing (flaky while other jobs ran)."""
    return {**os.environ, "PI_MEMORY_HOOK_CEILING_S": "30"}


def probe(host: str, event: str, payload: dict) -> tuple[str, list[str]]:
    """``(the hook's answer, the heavy modules the process imported)`` of one cold process."""
    done = subprocess.run([sys.executable, "-c", PROBE, host, event, json.dumps(payload), json.dumps(HEAVY)],
                          capture_output=True, text=True, env=roomy(), timeout=60)
    assert done.returncode == 0, done.stderr
    answer, heavy = done.stdout.rstrip("\n").rsplit("\n", 1)
    return answer.strip(), json.loads(heavy)


def start(env, sid: str) -> str:
    payload = {"session_id": sid, "cwd": str(env / "proj"), "source": "startup"}
    return hooks.run_hook("claude-code", "session-start", json.dumps(payload), ceiling=60)


def context_of(answer: str) -> str | None:
    return json.loads(answer).get("hookSpecificOutput", {}).get("additionalContext")


def test_a_trivial_prompt_with_a_current_cache_loads_nothing_heavy(env):
    (env / "data" / "MEMORY.md").write_text("Project uses uv, never pip\n", encoding="utf-8")
    start(env, "s1")
    for prompt in ("ok", "thanks!", "/compact", "", "👍"):
        answer, heavy = probe("claude-code", "prompt", {"session_id": "s1", "cwd": str(env / "proj"),
                                                         "prompt": prompt})
        assert (answer, heavy) == ("{}", [])


def test_session_start_from_the_cache_and_stop_load_nothing_heavy(env):
    first = start(env, "s1")
    answer, heavy = probe("claude-code", "session-start", {"session_id": "s2", "cwd": str(env / "proj")})
    assert (answer, heavy) == (first, [])
    answer, heavy = probe("codex", "stop", {"session_id": "s2", "cwd": str(env / "proj"),
                                            "transcript_path": str(env / "none.jsonl")})
    assert (answer, heavy) == ("{}", [])


def test_a_new_host_session_gets_the_run_parts_from_the_cache_on_a_trivial_prompt(env):
    blocks = context_of(start(env, "s1")).split("\n\n")
    run = "\n\n".join(b for b in blocks if not b.startswith("<memory-snapshot>"))
    payload = {"session_id": "other", "cwd": str(env / "proj"), "prompt": "ok"}
    answer, heavy = probe("codex", "prompt", payload)  # codex never saw them
    assert heavy == [] and context_of(answer) == run and run.startswith("<memory-blocks>")
    assert probe("codex", "prompt", payload) == ("{}", [])  # sent once


def test_without_a_current_cache_a_trivial_prompt_takes_the_full_path_with_the_same_answer(env):
    start(env, "s1")  # creates the default blocks
    (env / "data" / "MEMORY.md").write_text("a new fact\n", encoding="utf-8")  # the cache is out of date
    payload = json.dumps({"session_id": "n1", "cwd": str(env / "proj"), "prompt": "ok"})
    full = context_of(hooks.run_hook("codex", "prompt", payload, ceiling=60))
    start(env, "s2")
    answer, heavy = probe("codex", "prompt", {"session_id": "n2", "cwd": str(env / "proj"), "prompt": "ok"})
    assert heavy == [] and context_of(answer) == full and full.startswith("<memory-blocks>")


def test_a_real_question_still_recalls(env):
    from pi_memory.semantic import open_semantic

    start(env, "s1")
    service = open_semantic(cwd=env / "proj")
    service.add("The staging database listens on port 6543")
    service.close()
    payload = json.dumps({"session_id": "s1", "cwd": str(env / "proj"),
                          "prompt": "which port does the staging database use?"})
    text = context_of(hooks.run_hook("claude-code", "prompt", payload, ceiling=60))
    assert "[UNTRUSTED MEMORY DATA]" in text and "6543" in text


JOBS = ("pi_memory.learning.runner", "pi_memory.learning.prompts", "pi_memory.learning.consolidate",
        "pi_memory.learning.review", "pi_memory.learning.dream", "httpx",
        "pi_memory.learning.corrections")  # the correction rules: about 70 ms of regular expressions to compile


def test_a_real_question_loads_neither_the_learning_jobs_nor_httpx(env):
    """The recall path opened the learning package whole (runner, prompts, every job: ~35 ms) and httpx for a
    team store nobody configured (~100 ms); they load when a job runs or a team store is set, and only then."""
    from pi_memory.semantic import open_semantic

    start(env, "s1")
    service = open_semantic(cwd=env / "proj")
    service.add("The staging database listens on port 6543")
    service.close()
    code = PROBE.replace("json.loads(sys.argv[4])", repr(list(JOBS)))
    payload = {"session_id": "s1", "cwd": str(env / "proj"), "prompt": "which port does the staging database use?"}
    done = subprocess.run([sys.executable, "-c", code, "claude-code", "prompt", json.dumps(payload), "[]"],
                          capture_output=True, text=True, env=roomy(), timeout=60)
    assert done.returncode == 0, done.stderr
    answer, loaded = done.stdout.rstrip("\n").rsplit("\n", 1)
    assert "6543" in context_of(answer.strip()) and json.loads(loaded) == []


def settings(env, block: dict) -> None:
    path = env / "home" / ".pi" / "agent" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pi-memory": block}), encoding="utf-8")


def test_the_prompt_hook_starts_loading_the_bundled_model_only_when_its_recall_will_embed_with_it(env, monkeypatch):
    """The model loads on a thread of its own while the hook imports the recall stack (the two ran one after
    the other: about 0.25 s of the wait); a prompt recall skips, recall off, another embedding provider or a
    session's recall already done start nothing."""
    from pi_memory.integrations.hooks import preload

    proj = env / "proj"
    monkeypatch.setattr(os, "getloadavg", lambda: (os.cpu_count() + 0.5, 0.0, 0.0))  # no core free: no preload
    assert preload.start(proj, "which port does the staging database use?", False) is None
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert preload.start(proj, "ok", False) is None
    assert preload.start(proj, "/compact", False) is None
    for block, config in (({"autoRecall": False}, None), ({"semantic": False}, None),
                          ({"embedder": {"provider": "openai-compatible"}}, None),
                          ({"embedder": {"provider": "onnx"}}, {"provider": "onnx"}), ({}, {})):
        settings(env, block)
        assert preload._bundled_config(proj, False) == config
    settings(env, {"recallFrequency": "session"})
    assert preload._bundled_config(proj, True) is None and preload._bundled_config(proj, False) == {}
    thread = preload.start(proj, "which port does the staging database use?", False)
    thread.join(60)
    from pi_memory.embed import default_embedder

    assert default_embedder().loaded


def test_the_settings_parse_imports_neither_numpy_nor_the_recall_engine_nor_the_scanner():
    """What the prompt hook reads before it can start the model's load: the settings modules only (through
    ``retrieval.engine`` they imported numpy, the scanner and the date parsers: most of the recall path)."""
    code = ("import sys, json; import pi_memory.semantic.config; "
            "print(json.dumps([m for m in ('numpy', 'pi_memory.retrieval.engine', 'pi_memory.safety', "
            "'pi_memory.retrieval.dates', 'pi_memory.retrieval.lang') if m in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == []


def test_a_real_question_loads_the_bundled_model_on_the_preload_thread_and_opens_no_learning_triggers(env):
    """The prompt hook embeds with the model the preload thread loaded (one per process), and opens no learning
    triggers (they built a chat model to say whether one is set; the stop hook's job runs them)."""
    from pi_memory.semantic import open_semantic

    start(env, "s1")
    service = open_semantic(cwd=env / "proj")
    service.add("The staging database listens on port 6543")
    service.close()
    opened = ("import os, threading\nos.getloadavg = lambda: (0.0, 0.0, 0.0)  # a core free, whatever the tests' load\n"
              "import pi_memory.embed.local_onnx as lo\nopened, _open = [], lo.OnnxMiniLM._open\n"
              "lo.OnnxMiniLM._open = lambda self: opened.append(threading.current_thread().name) or _open(self)\n")
    code = opened + PROBE.replace("heavy = [m for m in json.loads(sys.argv[4]) if m in sys.modules]",
                                  "heavy = [m for m in ('pi_memory.learning.triggers',) if m in sys.modules] + opened")
    payload = {"session_id": "s1", "cwd": str(env / "proj"), "prompt": "which port does the staging database use?"}
    done = subprocess.run([sys.executable, "-c", code, "claude-code", "prompt", json.dumps(payload), "[]"],
                          capture_output=True, text=True, env=roomy(), timeout=60)
    assert done.returncode == 0, done.stderr
    answer, loaded = done.stdout.rstrip("\n").rsplit("\n", 1)
    assert "6543" in context_of(answer.strip()) and json.loads(loaded) == ["pi-memory-embedder"]
