"""Claude Code keeps one hook's ``additionalContext`` whole only up to ``CLAUDE_CONTEXT_CAP`` characters (a longer
one reaches the model as a short preview and a file path). Full stores, two full memory blocks and standing rules
made a session start of about 11,000 characters: the blocks and rules were the part cut. Now a session start
over the cap carries the snapshot alone and the first prompt the run parts (blocks, standing instructions), each
whole in its own reminder; below the cap, and for Codex, nothing changes."""

from __future__ import annotations

import json
import re

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


# A frozen snapshot over the cap on its own (character limits raised far above the defaults) was only logged: Claude
# Code gave the model a short preview and a file path. It is now cut to the cap, each store keeping its start and a
# note the model reads, and the person is told (systemMessage at the start, `pi-memory status`).
def big_stores(env, memory: int, user: int, entry: str = "the deploy runs from CI and ships on Tuesdays") -> None:
    agent = env / "home" / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"pi-memory": {"memoryCharLimit": 60_000,
                                                                   "userCharLimit": 60_000}}), encoding="utf-8")
    data = env / "data"
    (data / "MEMORY.md").write_text("\n§\n".join(f"Fact {i}: {entry}" for i in range(memory)) + "\n", encoding="utf-8")
    (data / "USER.md").write_text("\n§\n".join(f"Preference {i}: short answers" for i in range(user)) + "\n",
                                  encoding="utf-8")


def start_answer(env, sid: str, host: str = "claude-code") -> dict:
    payload = {"session_id": sid, "cwd": str(env / "proj"), "source": "startup", "hook_event_name": "SessionStart"}
    return json.loads(hooks.run_hook(host, "session-start", json.dumps(payload), ceiling=60))


NOTE = re.compile(r"\[… ([\d,]+) more characters of this store are not shown here: the host keeps at most 10,000 "
                  r"characters of this text\. Read the whole store with the memory_read tool before relying on what "
                  r"is missing\.\]")


@pytest.mark.parametrize(("memory", "user", "cut"), [
    (400, 5, ["MEMORY"]),          # one long store: the short one stays whole
    (400, 600, ["MEMORY", "USER"]),  # both long: both cut, fairly
    (260, 260, ["MEMORY", "USER"]),
])
def test_a_snapshot_over_the_cap_is_cut_store_by_store_with_a_note_and_the_person_told(env, memory, user, cut):
    from pi_memory.integrations.hooks import snapshot_over_cap
    from pi_memory.integrations.hooks.protocol import claude_length
    from pi_memory.prompt import memory_part

    big_stores(env, memory, user)
    whole = memory_part(open_memory(env / "proj")).text
    answer = start_answer(env, "big")
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert claude_length(context) <= CLAUDE_CONTEXT_CAP < claude_length(whole)  # before: all of it, over the cap
    assert context.startswith("<memory-snapshot>") and context.endswith("</memory-snapshot>")
    assert "MEMORY (your notes)" in context and "USER PROFILE (who the user is)" in context
    assert "Fact 0: " in context and "Preference 0: " in context  # each store keeps its start
    notes = NOTE.findall(context)
    assert len(notes) == len(cut)
    if cut == ["MEMORY"]:
        assert f"Preference {user - 1}: short answers" in context
    from pi_memory.curated.snapshot_fit import SEPARATOR

    left = 0
    def stores(text: str) -> list[str]:
        return [b.removesuffix("</memory-snapshot>").removesuffix("\n") for b in text.split(SEPARATOR)[1:]]

    for was, got in zip(stores(whole), stores(context), strict=True):
        if (found := NOTE.search(got)) is None:
            assert got == was
            continue
        kept = got[: found.start()].removesuffix("\n")
        assert was.startswith(kept) and was[len(kept):].startswith("\n§\n")  # whole entries from the start
        assert int(found.group(1).replace(",", "")) == len(was) - len(kept)  # what was left out
        left += len(was) - len(kept)
    assert answer["systemMessage"] == snapshot_over_cap(len(whole), left)
    assert answer["systemMessage"].startswith(f"pi-memory: the memory snapshot is {len(whole):,} characters, more "
                                              "than the 10,000 Claude Code keeps whole in a session's start")
    for line in context.splitlines():  # every entry shown is whole
        if line.startswith("Fact "):
            assert line.endswith("Tuesdays"), line


def test_wide_characters_count_twice_against_the_cap(env):
    from pi_memory.integrations.hooks.protocol import claude_length

    big_stores(env, 300, 3, entry="deploy 🚀🚀🚀 on Tuesdays 🚀🚀")
    context = start_answer(env, "wide")["hookSpecificOutput"]["additionalContext"]
    assert claude_length(context) <= CLAUDE_CONTEXT_CAP < claude_length(context) + context.count("🚀")
    assert len(NOTE.findall(context)) == 1


def test_codex_still_gets_the_whole_snapshot(env):
    big_stores(env, 400, 5)
    answer = start_answer(env, "cx", host="codex")
    assert "systemMessage" not in answer and not NOTE.search(answer["hookSpecificOutput"]["additionalContext"])
    assert "Fact 399: " in answer["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize(("installed", "memory"), [(True, 400), (True, 3), (False, 400)])
def test_status_warns_when_claude_code_sessions_get_the_snapshot_cut(env, monkeypatch, installed, memory):
    from typer.testing import CliRunner

    from pi_memory.cli.app import app
    from pi_memory.integrations.hooks import snapshot_over_cap
    from pi_memory.integrations.hooks.protocol import claude_length
    from pi_memory.prompt import memory_part

    big_stores(env, memory, 5)
    if installed:  # what `pi-memory install claude-code` records
        (env / "state" / "installs").mkdir(parents=True)
        (env / "state" / "installs" / "claude-code.json").write_text("{}", encoding="utf-8")
    monkeypatch.chdir(env / "proj")
    chars = claude_length(memory_part(open_memory(env / "proj")).text)
    result = CliRunner().invoke(app, ["status", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    expected = installed and chars > CLAUDE_CONTEXT_CAP
    assert data.get("claudeCodeSnapshot") == ({"chars": chars, "cap": CLAUDE_CONTEXT_CAP} if expected else None)
    said = snapshot_over_cap(chars).removeprefix("pi-memory: ")
    assert (said in data["warnings"]) is expected
    text = CliRunner().invoke(app, ["status"]).stdout
    assert (f"warning: {said}" in text.replace("\n", " ") or f"warning: {said}" in text) is expected


@pytest.mark.parametrize("rest", ["\n\n<memory-blocks>\nnotes\n</memory-blocks>", ""])
def test_only_the_snapshot_is_cut_and_what_follows_it_stays_whole(rest):
    from pi_memory.curated.snapshot import RULE
    from pi_memory.integrations.hooks import fit_context, snapshot_over_cap

    entries = "\n§\n".join(f"Fact {i}: the deploy runs from CI" for i in range(600))
    snapshot = f"<memory-snapshot>\nPreamble.\n\n{RULE}\nMEMORY (your notes) [x]\n{RULE}\n{entries}\n</memory-snapshot>"
    fitted, said = fit_context(snapshot + rest)
    assert len(fitted) <= CLAUDE_CONTEXT_CAP and fitted.endswith("</memory-snapshot>" + rest)
    [left] = NOTE.findall(fitted)
    assert said == snapshot_over_cap(len(snapshot), int(left.replace(",", "")))
