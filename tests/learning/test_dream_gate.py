"""The dream gate moves only after a dream that reached the model: `pi-memory dream --force` with nothing new to
read made no call, yet closed the gate for 24 h ("the last dream was 0.0 h ago" once sessions were indexed).
A gate closed for want of indexed turns says how sessions get indexed."""

from __future__ import annotations

from learning_helpers import cli, llm_block, write_settings

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.learning import log as jlog
from pi_memory.learning.dream import gate_name
from pi_memory.runtime import open_memory

CHAT = [("user", "I am Dana and I prefer short answers"), ("assistant", "Noted, Dana."),
        ("user", "The CI runs on Buildkite"), ("assistant", "Ok."), ("user", "Use ruff for linting"),
        ("assistant", "Will do."), ("user", "Tabs, not spaces"), ("assistant", "Ok."),
        ("user", "Release every Tuesday"), ("assistant", "Ok."), ("user", "thanks"), ("assistant", "Bye.")]
DREAM = {"operations": [{"target": "user", "action": "add", "content": "Name is Dana; prefers short answers"}]}
NO_TURNS = ("0 user turn(s) indexed since the last dream (dreaming.minTurnsSinceLastRun = 5); a dream reads only "
            "indexed sessions: `pi-memory index-sessions` indexes the agents' transcripts (`pi-memory "
            "index-sessions PATH` for ones kept elsewhere)")


def _gate(project) -> tuple[str | None, int]:
    return jlog.gate_state(open_memory(project).learner().conn, gate_name(None))


def test_a_forced_dream_with_nothing_to_read_leaves_the_gate_open(agent, llm, brain, project, monkeypatch):
    write_settings(agent, llm_block(llm))
    monkeypatch.chdir(project)
    assert cli("dream", "--json")[1]["message"] == f"not dreaming: {NO_TURNS}"
    code, data = cli("dream", "--force", "--json")
    assert (code, data["outcome"], data["calls"]) == (0, "nothing", 0)
    assert data["message"] == ("no session messages to read yet (run `pi-memory index-sessions` to index past "
                               "sessions)") and llm.chat_requests == []  # never dreamed: no "last dream" to name
    assert _gate(project) == (None, 0)  # no dream reached the model: no time is kept
    write_pi_session(agent / "sessions" / "p" / "s1.jsonl", project, CHAT, session_id="s1")
    brain.replies.append(DREAM)
    code, data = cli("dream", "--json")  # indexes the new session, then the gate is open
    assert (code, data["outcome"], data["calls"]) == (0, "ok", 1)
    assert [w["after"] for w in data["writes"]] == ["Name is Dana; prefers short answers"]
    last_at, mark = _gate(project)
    assert last_at is not None and mark == 12
    code, data = cli("dream", "--json")
    assert (code, data["outcome"]) == (0, "closed") and "the last dream was 0.0 h ago" in data["message"]


def test_a_forced_dream_with_nothing_new_keeps_the_last_dream_s_time(agent, llm, brain, project, monkeypatch):
    write_settings(agent, llm_block(llm, dreaming={"minHoursSinceLastRun": 0}))
    monkeypatch.chdir(project)
    write_pi_session(agent / "sessions" / "p" / "s1.jsonl", project, CHAT, session_id="s1")
    brain.replies.append(DREAM)
    assert cli("dream", "--json")[1]["outcome"] == "ok"
    after_dream = _gate(project)
    code, data = cli("dream", "--force", "--json")
    assert (code, data["outcome"], data["calls"]) == (0, "nothing", 0)
    assert _gate(project) == after_dream
    assert cli("dream", "--json")[1]["message"] == f"not dreaming: {NO_TURNS}"


def test_the_hint_is_only_for_no_turns_at_all(agent, llm, project, monkeypatch):
    write_settings(agent, llm_block(llm))
    monkeypatch.chdir(project)
    write_pi_session(agent / "sessions" / "p" / "s1.jsonl", project, CHAT[:4], session_id="s1")
    code, text = cli("dream")
    assert (code, text) == (0, "dream: closed: not dreaming: 2 user turn(s) indexed since the last dream "
                               "(dreaming.minTurnsSinceLastRun = 5)\n")
