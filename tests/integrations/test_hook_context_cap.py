"""Claude Code keeps one hook's ``additionalContext`` whole only up to ``CLAUDE_CONTEXT_CAP`` characters (a longer
one reaches the model as a short preview and a file path). Full stores, two full memory blocks and standing rules
made a session start of about 11,000 characters: the blocks and rules were the part cut. Now a session start
over the cap carries the snapshot alone and the first prompt the run parts (blocks, standing instructions), each
whole in its own reminder; below the cap, and for Codex, nothing changes."""

from __future__ import annotations

import json

import pytest

from pi_memory.integrations import hooks
from pi_memory.integrations.hooks.protocol import CLAUDE_CONTEXT_CAP
from pi_memory.runtime import open_memory
from pi_memory.standing import StandingStore


def context_of(answer: str) -> str | None:
    return json.loads(answer).get("hookSpecificOutput", {}).get("additionalContext")


def start(env, sid: str, host: str = "claude-code") -> str | None:
    payload = {"session_id": sid, "cwd": str(env / "proj"), "source": "startup", "hook_event_name": "SessionStart"}
    return context_of(hooks.run_hook(host, "session-start", json.dumps(payload), ceiling=60))


def prompt(env, sid: str, text: str = "ok", host: str = "claude-code") -> str | None:
    payload = {"session_id": sid, "cwd": str(env / "proj"), "prompt": text}
    return context_of(hooks.run_hook(host, "prompt", json.dumps(payload), ceiling=60))


def fill(env, rules: int) -> None:
    """MEMORY.md and USER.md nearly full, both default blocks full, ``rules`` standing rules."""
    data = env / "data"
    (data / "MEMORY.md").write_text("\n§\n".join(f"Fact {i}: " + "the deploy runs from CI " * 4 for i in range(20))
                                    + "\n", encoding="utf-8")
    (data / "USER.md").write_text("\n§\n".join(f"Preference {i}: " + "short answers please " * 3
                                               for i in range(18)) + "\n", encoding="utf-8")
    memory = open_memory(env / "proj", load=False)
    blocks = memory.blocks()
    blocks.ensure_defaults()
    for key in ("user", "agent"):
        assert blocks.update(key, ("Works on billing in Rust. " * 80)[:1990]).success
    standing = StandingStore.in_data_dir(data)
    for i in range(rules):
        assert standing.add(f"Rule {i}: always run the linter and the unit tests before committing code").success


@pytest.mark.parametrize("rules", [14, 20])
def test_a_start_over_the_cap_sends_the_snapshot_and_the_first_prompt_the_run_parts(env, rules):
    fill(env, rules)
    first = start(env, "c1")
    assert first.startswith("<memory-snapshot>") and first.endswith("</memory-snapshot>")
    assert len(first) <= CLAUDE_CONTEXT_CAP and "<memory-blocks>" not in first
    run = prompt(env, "c1")
    assert "<memory-blocks>" in run and "<standing-instructions>" in run and f"Rule {rules - 1}:" in run
    assert len(run) <= CLAUDE_CONTEXT_CAP and "<memory-snapshot>" not in run
    assert len(first) + 2 + len(run) > CLAUDE_CONTEXT_CAP  # together they were over it
    assert prompt(env, "c1") is None  # the host has them now


def test_a_start_within_the_cap_sends_everything_at_once(env):
    (env / "data" / "MEMORY.md").write_text("Project uses uv, never pip\n", encoding="utf-8")
    StandingStore.in_data_dir(env / "data").add("Always run the linter before committing")
    first = start(env, "c2")
    assert "<memory-snapshot>" in first and "<memory-blocks>" in first and "<standing-instructions>" in first
    assert prompt(env, "c2") is None


def test_codex_gets_everything_at_the_start(env):
    fill(env, 15)
    first = start(env, "x1", host="codex")
    assert "<memory-snapshot>" in first and "<memory-blocks>" in first and len(first) > CLAUDE_CONTEXT_CAP
    assert prompt(env, "x1", host="codex") is None
