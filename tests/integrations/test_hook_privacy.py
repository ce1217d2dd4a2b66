"""What the hooks keep on disk between processes holds no credential and is the user's alone: the prompt kept
for the turn's capture is redacted, capped and dropped once the capture has it; every state file is 0600 in 0700
folders; the background job's text never goes on a command line (``ps`` shows those to every user); session
files nobody resumed for a month go (a fresh tester found the raw prompt, world-readable, kept forever)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path

from pi_memory.integrations import hooks
from pi_memory.integrations.hooks import handlers, state

KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zT3BlbkFJQw7eRt0yUi3oPa6sDf9gHj2kLz5xCv8bNm1"


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def prompt(env, sid: str, text: str) -> str:
    payload = {"session_id": sid, "cwd": str(env / "proj"), "prompt": text}
    return hooks.run_hook("claude-code", "prompt", json.dumps(payload), ceiling=60)


def test_the_kept_prompt_is_redacted_capped_private_and_dropped_at_stop(env, monkeypatch):
    os.umask(0o022)
    prompt(env, "p1", f"use my key {KEY} to call the api")
    path = state.session_file("claude-code", "p1")
    kept = json.loads(path.read_text(encoding="utf-8"))["lastPrompt"]
    assert KEY not in path.read_text(encoding="utf-8") and kept.startswith("use my key [REDACTED:")
    assert kept.endswith(" to call the api")
    assert mode(path) == 0o600 and mode(path.parent) == 0o700 and mode(state.state_dir() / "hooks") == 0o700
    prompt(env, "p1", "x" * 3_000_000)
    assert len(json.loads(path.read_text(encoding="utf-8"))["lastPrompt"]) == state.PROMPT_KEEP_CHARS
    jobs = []
    monkeypatch.setattr(handlers, "spawn_background", jobs.append)
    assert hooks.run_hook("claude-code", "stop", json.dumps({"session_id": "p1", "cwd": str(env / "proj")})) == "{}"
    assert jobs[0]["userText"] == "x" * state.PROMPT_KEEP_CHARS
    assert json.loads(path.read_text(encoding="utf-8"))["lastPrompt"] is None


def test_a_trivial_prompt_leaves_nothing_to_capture(env):
    (env / "data" / "MEMORY.md").write_text("a fact\n", encoding="utf-8")
    start = {"session_id": "p2", "cwd": str(env / "proj"), "source": "startup"}
    hooks.run_hook("claude-code", "session-start", json.dumps(start), ceiling=60)
    prompt(env, "p2", "which port does the staging database use?")
    prompt(env, "p2", "ok")  # answered from the cache, no scanner loaded: it is not kept at all
    assert json.loads(state.session_file("claude-code", "p2").read_text(encoding="utf-8"))["lastPrompt"] is None


def test_the_background_job_reads_its_turn_from_a_private_file_never_from_its_command_line(env, monkeypatch):
    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda args, **kw: started.append(args))
    handlers.spawn_background({"host": "codex", "event": "stop", "sessionId": "j1", "cwd": str(env),
                               "userText": f"my key is {KEY}", "assistantText": "noted"})
    (args,) = started
    assert args[-2] == "--job-file" and KEY not in " ".join(args) and "noted" not in " ".join(args)
    job_file = args[-1]
    assert mode(job_file) == 0o600 and json.loads(Path(job_file).read_text(encoding="utf-8"))["sessionId"] == "j1"
    assert mode(state.state_dir() / "hooks.log") == 0o600
    from pi_memory.integrations.hooks import background

    monkeypatch.setattr(background, "run", lambda job: started.append(job))
    assert background.main(["--job-file", job_file]) == 0
    assert started[-1]["assistantText"] == "noted" and not os.path.exists(job_file)


def test_session_files_unused_for_a_month_go_at_the_next_new_session(env):
    old, recent = state.session_file("codex", "old"), state.session_file("codex", "recent")
    for path in (old, recent):
        state.write_json(path, {"context": "frozen"})
    month = time.time() - (state.SESSION_KEEP_DAYS + 1) * 86400
    os.utime(old, (month, month))
    hooks.run_hook("codex", "session-start", json.dumps({"session_id": "new", "cwd": str(env / "proj"),
                                                          "source": "startup"}), ceiling=60)
    assert not old.exists() and recent.exists() and state.session_file("codex", "new").exists()
