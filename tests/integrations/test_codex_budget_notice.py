"""A Codex session start longer than the budget Codex gives our hook (2,500 tokens for an entry written by an earlier
pi-memory, or a number set by hand) reaches the model as its beginning and end and a file path: the person is told
in the start's systemMessage what happened and what to do. With the 0 an install now writes, nothing is said."""

from __future__ import annotations

import json

import pytest

from pi_memory.integrations import hooks

COMMAND = "/venv/bin/pi-memory hook codex session-start"


@pytest.fixture
def codex_env(env, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(env / "codex"))
    (env / "codex").mkdir()
    return env


def entry(limit: object = "absent") -> dict:
    handler = {"type": "command", "command": COMMAND, "timeout": 10}
    return handler if limit == "absent" else {**handler, "additionalContextLimit": limit}


def write_hooks(env, handler: dict) -> None:
    users = {"type": "command", "command": "/usr/local/bin/greet", "additionalContextLimit": 100}
    doc = {"hooks": {"SessionStart": [{"hooks": [users]}, {"hooks": [handler]}]}}
    (env / "codex" / "hooks.json").write_text(json.dumps(doc), encoding="utf-8")


def start(env, sid: str) -> dict:
    payload = {"session_id": sid, "cwd": str(env / "proj"), "source": "startup", "hook_event_name": "SessionStart"}
    return json.loads(hooks.run_hook("codex", "session-start", json.dumps(payload), ceiling=60))


def fill(env, entries: int) -> None:
    settings = env / "home" / ".pi" / "agent" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"pi-memory": {"memoryCharLimit": 20000}}), encoding="utf-8")
    (env / "data" / "MEMORY.md").write_text("\n§\n".join(
        f"Fact {i:02d}: the deploy of service {i} runs from CI on the main branch every night" for i in range(entries))
        + "\n", encoding="utf-8")


def tokens(text: str) -> int:
    return -(-len(text.encode("utf-8")) // 4)


def test_a_start_over_codexs_budget_for_our_hook_tells_the_person_what_to_do(codex_env):
    env = codex_env
    fill(env, 150)  # about 12,000 characters
    write_hooks(env, entry())  # as an earlier pi-memory installed it
    answer = start(env, "a1")
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert "Fact 00:" in context and "Fact 149:" in context and tokens(context) > 2_500  # handed over whole
    assert answer["systemMessage"] == (
        f"pi-memory: this session start is about {tokens(context):,} tokens, more than the 2,500 Codex keeps whole "
        "for pi-memory's hook, so the agent gets only its beginning and end and a file path. The hooks were "
        "installed by an earlier pi-memory; run `pi-memory install codex` again to have it arrive whole.")
    write_hooks(env, entry(3000))  # a number of the person's (the user's own 100 is not ours)
    answer = start(env, "a2")
    assert answer["systemMessage"] == (
        f"pi-memory: this session start is about {tokens(context):,} tokens, more than the 3,000 Codex keeps whole "
        "for pi-memory's hook, so the agent gets only its beginning and end and a file path. That limit is the "
        f"\"additionalContextLimit\" of the hook's entry in {env / 'codex' / 'hooks.json'}: raise it (0 keeps "
        "everything), then trust the hook again in Codex's /hooks.")
    write_hooks(env, entry(0))  # what an install writes now
    assert "systemMessage" not in start(env, "a3")
    write_hooks(env, entry(10_000))
    assert "systemMessage" not in start(env, "a4")
    write_hooks(env, entry())
    fill(env, 3)  # a short start fits the 2,500 tokens
    assert "systemMessage" not in start(env, "a5")
