"""A tester's findings on `pi-memory hook`: an unknown event, an unknown host or a wrong number of arguments
exited 2, which Claude Code and Codex read as "block" (the prompt dropped); a state folder that cannot be written
cost every session its snapshot without a word; invalid pi-memory settings turned memory off without a visible
sign. Now: exit 0 with `{}` and a log line; the snapshot all the same, with a `systemMessage`; a `systemMessage`
naming the settings file and field, once per host session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_memory.integrations import hooks
from pi_memory.integrations.hooks import protocol

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

LAUNCH = [sys.executable, "-c", "import sys; sys.argv[0]='pi-memory'; from pi_memory.launch import main; main()"]
USAGE = ("usage: pi-memory hook HOST EVENT  (reads the host's hook JSON on standard input)\n"
         "  HOST: claude-code, codex\n  EVENT: session-start, prompt, pre-compact, stop, session-end\n")


def run(args: list[str], stdin: str = "{}", env_: dict | None = None, launch: list[str] = LAUNCH):
    return subprocess.run([*launch, *args], input=stdin, capture_output=True, text=True, timeout=60, env=env_)


@pytest.mark.parametrize(("args", "why"), [
    (["hook", "claude-code", "PostToolUse"],
     "unknown hook event 'PostToolUse': use one of session-start, prompt, pre-compact, stop, session-end"),
    (["hook", "codex", "Notification"],
     "unknown hook event 'Notification': use one of session-start, prompt, pre-compact, stop, session-end"),
    (["hook", "cursor", "session-start"], "unknown host 'cursor': pi-memory has hooks for claude-code, codex"),
    (["hook", "claude-code"], "expected HOST EVENT, got 1 argument(s)"),
    (["hook"], "expected HOST EVENT, got 0 argument(s)"),
    (["hook", "claude-code", "prompt", "extra"], "expected HOST EVENT, got 3 argument(s)"),
])
@pytest.mark.parametrize("launch", [LAUNCH, [sys.executable, "-m", "pi_memory.cli"]], ids=["console", "typer"])
def test_a_hook_the_command_does_not_know_answers_empty_and_exits_0(env, args, why, launch):
    done = run(args, launch=launch)
    assert (done.returncode, done.stdout, done.stderr) == (0, "{}\n", f"pi-memory hook: {why}; answered {{}}\n{USAGE}")
    log = (env / "state" / "hooks.log").read_text(encoding="utf-8")
    assert log.endswith(f"] hook {' '.join(args[1:])}: {why}; answered {{}}\n")


def test_help_still_prints_the_usage(env):
    done = run(["hook", "--help"])
    assert (done.returncode, done.stdout) == (0, USAGE)


# -- a state folder that cannot be written ----------------------------------------------------------------------

def unwritable_state(env, monkeypatch):
    """A state folder below a file: every write to it fails (also as root, where a mode of 0555 would not)."""
    (env / "blocker").write_text("not a folder")
    state = env / "blocker" / "state"
    monkeypatch.setenv("PI_MEMORY_STATE_DIR", str(state))
    return state


def test_an_unwritable_state_folder_still_gives_the_snapshot_and_says_so(env, monkeypatch, capsys):
    (env / "data" / "MEMORY.md").write_text("Project uses uv, never pip\n", encoding="utf-8")
    state = unwritable_state(env, monkeypatch)
    note = (f"pi-memory cannot write its state folder {state} ({state}: Not a directory), "
            "so a resumed session may not get the same snapshot and the hook log is not kept; memory itself works. "
            f"Give your user write access to it (e.g. `sudo chown -R $USER {state}`) or set $PI_MEMORY_STATE_DIR.")
    payload = json.dumps({"session_id": "s1", "cwd": str(env / "proj"), "source": "startup"})
    answer = json.loads(hooks.run_hook("claude-code", "session-start", payload, ceiling=60))
    assert "Project uses uv, never pip" in answer["hookSpecificOutput"]["additionalContext"]  # was: {}
    assert answer["systemMessage"] == note
    assert capsys.readouterr().err == note + "\n"
    prompt = json.dumps({"session_id": "s1", "cwd": str(env / "proj"), "prompt": "ok"})
    assert "systemMessage" not in json.loads(hooks.run_hook("claude-code", "prompt", prompt, ceiling=60) or "{}")
    assert capsys.readouterr().err == note + "\n"  # told on standard error at every hook, shown once per start
    stop = json.dumps({"session_id": "s1", "cwd": str(env / "proj"), "transcript_path": "/x.jsonl"})
    assert hooks.run_hook("codex", "stop", stop, ceiling=60) == "{}"
    assert not state.exists()


def test_a_read_only_state_folder_still_gives_the_snapshot(env, monkeypatch):
    """The tester's case: the folder exists but cannot be written (a read-only mount here; root ignores modes)."""
    from read_only_folder import read_only_folder

    (env / "data" / "MEMORY.md").write_text("still here\n", encoding="utf-8")
    with read_only_folder(env / "ro") as ro:
        if ro.kind != "read_only" and os.geteuid() == 0:
            pytest.skip("a read-only state folder needs a read-only mount here (root writes through a mode of 0555)")
        ro.freeze()
        monkeypatch.setenv("PI_MEMORY_STATE_DIR", str(ro.folder))
        payload = json.dumps({"session_id": "s1", "cwd": str(env / "proj"), "source": "startup"})
        answer = json.loads(hooks.run_hook("claude-code", "session-start", payload, ceiling=60))
    assert "still here" in answer["hookSpecificOutput"]["additionalContext"]
    assert answer["systemMessage"].startswith(f"pi-memory cannot write its state folder {ro.folder} (")


def test_the_console_script_gives_the_snapshot_with_an_unwritable_state_folder(env, monkeypatch):
    (env / "data" / "MEMORY.md").write_text("via the console script\n", encoding="utf-8")
    state = unwritable_state(env, monkeypatch)
    monkeypatch.setenv("PI_MEMORY_HOOK_CEILING_S", "60")
    payload = json.dumps({"session_id": "c1", "cwd": str(env / "proj"), "source": "startup"})
    done = run(["hook", "codex", "session-start"], payload)
    answer = json.loads(done.stdout)
    assert done.returncode == 0 and "via the console script" in answer["hookSpecificOutput"]["additionalContext"]
    assert answer["systemMessage"].startswith(f"pi-memory cannot write its state folder {state} (")
    assert done.stderr == answer["systemMessage"] + "\n"


# -- invalid pi-memory settings ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("settings", "why"), [
    ({"pi-memory": {"memoryCharLimit": "abc"}}, "memoryCharLimit: Input should be a valid integer."),
    ({"pi-memory": {"userCharLimit": -5}}, "userCharLimit: Input should be greater than 0."),
])
def test_invalid_settings_are_shown_to_the_user_once_per_session(env, monkeypatch, settings, why):
    agent = env / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    message = {"systemMessage": f'pi-memory is off in this session: Invalid "pi-memory" settings in '
                                f"{agent / 'settings.json'}: {why} Fix that, then start a new session."}
    start = json.dumps({"session_id": "s1", "cwd": str(env / "proj"), "source": "startup"})
    prompt = json.dumps({"session_id": "s1", "cwd": str(env / "proj"), "prompt": "which port does the API use?"})
    assert json.loads(hooks.run_hook("claude-code", "session-start", start, ceiling=60)) == message  # was: {}
    assert hooks.run_hook("claude-code", "prompt", prompt, ceiling=60) == "{}"  # once per session
    other = json.dumps({"session_id": "s2", "cwd": str(env / "proj"), "prompt": "which port does the API use?"})
    assert json.loads(hooks.run_hook("codex", "prompt", other, ceiling=60)) == message  # a session not told yet
    assert hooks.run_hook("codex", "prompt", other, ceiling=60) == "{}"
    assert "answered empty after an error: SettingsError" in (env / "state" / "hooks.log").read_text(encoding="utf-8")


def test_system_message_goes_only_where_the_hosts_accept_it():
    assert json.loads(protocol.answer("session-start", None, "m")) == {"systemMessage": "m"}
    assert json.loads(protocol.answer("prompt", "ctx", "m")) == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ctx"}, "systemMessage": "m"}
    assert protocol.answer("stop", None, "m") == "{}"


def test_a_context_past_claude_codes_cap_is_cut_to_it_and_said(env, monkeypatch):
    """It was only logged, and Claude Code gave the model a preview and a file path (tests/integrations/
    test_hook_context_cap.py has the snapshots)."""
    from pi_memory.integrations.hooks import snapshot_over_cap

    monkeypatch.setattr("pi_memory.integrations.hooks.handlers.handle", lambda *a, **k: "x" * 10_001)
    answer = json.loads(hooks.run_hook("claude-code", "session-start", "{}", ceiling=60))
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= 10_000 and context.endswith(" characters of this text. Read the whole text with the "
                                                       "memory tools before relying on what is missing.]")
    left = 10_001 - context.index("\n")
    assert context.split("\n")[1].startswith(f"[… {left:,} more characters of this text are not shown here")
    assert answer["systemMessage"] == snapshot_over_cap(10_001, left)
    assert (env / "state" / "hooks.log").read_text(encoding="utf-8").endswith(
        f"] claude-code session-start: {snapshot_over_cap(10_001, left)}\n")


def test_a_prompt_answer_past_the_cap_is_only_logged(env, monkeypatch):
    """A prompt's answer is kept within the cap by its handler (recall trimmed by rank); were one over it, a cut
    could split its fence, so it goes as it is and is logged."""
    monkeypatch.setattr("pi_memory.integrations.hooks.handlers.handle", lambda *a, **k: "y" * 10_001)
    answer = json.loads(hooks.run_hook("claude-code", "prompt", "{}", ceiling=60))
    assert answer["hookSpecificOutput"]["additionalContext"] == "y" * 10_001 and "systemMessage" not in answer
    assert (env / "state" / "hooks.log").read_text(encoding="utf-8").endswith(
        "] claude-code prompt: the context is 10001 characters; Claude Code keeps 10000 in the model's context and "
        "shows it the rest as a file\n")
