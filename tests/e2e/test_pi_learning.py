"""Learning on the real pi CLIs: background review, correction capture, flush at compaction, consolidation on
overflow and dreaming at session start, each with its entry in the learning log."""

from __future__ import annotations

import json
import subprocess
import sys

from pi_memory.devtools.pi_runner import PROVIDER
from pi_memory.devtools.scripted_llm import MODEL_ID, Reply, text_of

MARKS = {"flush": "about to be compacted", "review": "decide what, if anything, is worth remembering",
         "consolidate": "memory store of a coding agent is full", "dream": "memory consolidation pass",
         "refine": "The user just corrected a coding agent"}


class LearningModel:
    """Answers the learning jobs' requests (no tools, a known system prompt); everything else is pi's."""

    def __init__(self, replies: dict[str, dict]):
        self.replies = replies
        self.seen: list[str] = []

    def __call__(self, messages, tools):
        if tools or not messages or messages[0].get("role") not in ("system", "developer"):
            return None
        system = text_of(messages[0]["content"])
        for kind, mark in MARKS.items():
            if mark in system:
                self.seen.append(kind)
                return Reply(text=json.dumps(self.replies.get(kind, {"operations": []})))
        return None


def configure(pi, **learning) -> None:
    pi.sandbox.update_settings({"pi-memory": {"llm": {"fromPi": f"{PROVIDER}/{MODEL_ID}"}, "autoCapture": False,
                                              "autoRecall": False, **learning}})


def learning_log(pi) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "pi_memory.cli", "--json", "learning", "log"], capture_output=True,
                         text=True, env=pi.sandbox.env(), cwd=pi.sandbox.project, timeout=60)
    return json.loads(out.stdout)["jobs"]


def test_review_fires_after_the_configured_turns_and_shows_in_the_next_snapshot(pi) -> None:
    fact = "The staging database is Postgres 16 on port 6543"
    pi.llm.responder = model = LearningModel({"review": {"operations": [
        {"target": "memory", "action": "add", "content": fact}]}})
    configure(pi, nudgeInterval=3, dreaming={"enabled": False})
    pi.run("Staging uses Postgres 16.", "It listens on port 6543.", "Good, carry on.")
    assert model.seen == ["review"]
    assert pi.memory_file.read_text() == fact + "\n"
    pi.run("What do you know?")
    system = [b for b in pi.llm.chat_requests if b.get("tools")][-1]["messages"][0]["content"]
    assert fact in text_of(system)
    [job] = learning_log(pi)
    assert job["kind"] == "review" and job["outcome"] == "ok" and job["writes"][0]["after"] == fact


def test_a_correction_is_saved_in_the_same_session(pi) -> None:
    configure(pi, dreaming={"enabled": False}, reviewEnabled=False)
    pi.llm.responder = LearningModel({})
    pi.run("Install the dependencies.", "no, use pnpm not npm")
    failures = (pi.sandbox.memory_dir / "FAILURES.md").read_text()
    assert failures == "[correction] Use pnpm not npm — Failed: User corrected the agent in project project\n"
    kinds = [j["kind"] for j in learning_log(pi)]
    assert kinds == ["refine", "correction"]


def test_a_compaction_flushes(pi) -> None:
    pi.sandbox.update_settings({"compaction": {"enabled": True, "keepRecentTokens": 10}})
    fact = "Releases are cut every Tuesday"
    pi.llm.responder = model = LearningModel({"flush": {"operations": [
        {"target": "memory", "action": "add", "content": fact}]}})
    configure(pi, flushMinTurns=2, reviewEnabled=False, dreaming={"enabled": False})
    pi.run("We release on Tuesdays.", "Every week.", "/e2e-compact", commands=True)
    assert "flush" in model.seen
    assert fact in pi.memory_file.read_text()
    [job] = [j for j in learning_log(pi) if j["kind"] == "flush"]
    assert job["trigger"] == "compaction" and job["outcome"] == "ok"


def test_an_add_over_the_limit_consolidates_and_succeeds(pi) -> None:
    old = ["Uses uv for envs " + "a" * 40, "Uses uv, never pip " + "b" * 40, "Deploys on Fridays " + "c" * 40]
    pi.memory_file.write_text("\n§\n".join(old) + "\n")
    pi.llm.responder = model = LearningModel({"consolidate": {"operations": [
        {"target": "memory", "action": "replace", "oldText": "never pip", "content": "Uses uv (never pip)"},
        {"target": "memory", "action": "remove", "oldText": "for envs"}]}})
    configure(pi, memoryCharLimit=200, overflowGraceMs=0, reviewEnabled=False, dreaming={"enabled": False})
    new = "Tests run with pytest -q " + "d" * 40
    pi.run("Remember this.\n[tool:memory_add] " + json.dumps({"target": "memory", "content": new}))
    assert model.seen == ["consolidate"]
    assert pi.memory_file.read_text() == "\n§\n".join(["Uses uv (never pip)", old[2], new]) + "\n"
    [job] = learning_log(pi)
    assert job["kind"] == "consolidate" and job["trigger"] == "overflow"
    assert [w["before"] for w in job["writes"]] == [old[1], old[0], None]  # the old text stays in the log
    assert job["writes"][-1]["after"] == new  # the add the overflow waited on is the job's own: its undo takes it back


def test_a_session_start_after_the_gate_opens_dreams_once(pi) -> None:
    fact = "User's name is Dana"
    pi.llm.responder = model = LearningModel({"dream": {"operations": [
        {"target": "user", "action": "add", "content": fact}]}})
    configure(pi, reviewEnabled=False, dreaming={"minTurnsSinceLastRun": 2, "minHoursSinceLastRun": 24})
    pi.run("I am Dana.", "I like short answers.")
    assert model.seen == []  # nothing indexed before this first start: the gate was closed
    pi.run("Hello again.")
    pi.run("And again.")
    assert model.seen == ["dream"]
    assert (pi.sandbox.memory_dir / "USER.md").read_text() == fact + "\n"
    [job] = learning_log(pi)
    assert job["kind"] == "dream" and job["writes"] == [{"target": "user", "store": "USER.md", "action": "add",
                                                          "before": None, "after": fact}]


def test_memory_consolidate_command_runs_the_same_job(pi) -> None:
    old = ["Uses uv for envs", "Uses uv, never pip", "Deploys on Fridays"]
    pi.memory_file.write_text("\n§\n".join(old) + "\n")
    pi.llm.responder = model = LearningModel({"consolidate": {"operations": [
        {"target": "memory", "action": "replace", "oldText": "never pip", "content": "Uses uv (never pip)"},
        {"target": "memory", "action": "remove", "oldText": "for envs"}]}})
    configure(pi, reviewEnabled=False, dreaming={"enabled": False})
    run = pi.run("/memory-consolidate memory")
    assert model.seen == ["consolidate"]
    assert pi.memory_file.read_text() == "Uses uv (never pip)\n§\nDeploys on Fridays\n"
    [job] = learning_log(pi)
    assert job["kind"] == "consolidate" and job["trigger"] == "manual"
    said = f"consolidate memory: ok: MEMORY.md: 58 -> 40 chars; 2 write(s) (undo: pi-memory learning undo {job['id']})"
    assert said in run.stdout + run.stderr  # print mode has no UI: the command writes the line itself
