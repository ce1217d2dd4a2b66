"""Dreaming (gate in the index, cross-process lock, one call over the recent sessions) and the session
triggers (correction capture, review after N turns / M tool calls, flush)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from learning_helpers import llm_block, write_settings

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import index_paths
from pi_memory.learning import gate_check, list_jobs
from pi_memory.learning.dream import dream
from pi_memory.runtime import open_memory
from pi_memory.session import AgentSession

CHAT = [("user", "I am Dana and I prefer short answers"), ("assistant", "Noted, Dana."),
        ("user", "The CI runs on Buildkite"), ("assistant", "Ok."), ("user", "Use ruff for linting"),
        ("assistant", "Will do."), ("user", "Tabs, not spaces"), ("assistant", "Ok."),
        ("user", "Release every Tuesday"), ("assistant", "Ok."), ("user", "thanks"), ("assistant", "Bye.")]
DREAM = {"operations": [{"target": "user", "action": "add", "content": "Name is Dana; prefers short answers"}]}


def _indexed(agent, project, llm, **dreaming):
    write_settings(agent, llm_block(llm, dreaming=dreaming))
    write_pi_session(agent / "sessions" / "p" / "s1.jsonl", project, CHAT, session_id="s1")
    memory = open_memory(project)
    learner = memory.learner()
    index_paths(learner.conn, None)
    return memory, learner


def test_dream_gate_turns_and_hours(agent, llm, brain, project):
    memory, learner = _indexed(agent, project, llm, minTurnsSinceLastRun=7)
    assert gate_check(learner, True) == (False, "6 user turn(s) indexed since the last dream "
                                                "(dreaming.minTurnsSinceLastRun = 7)", 12)
    assert gate_check(learner, False)[1] == "dreaming is off: no model is named (pi-memory.llm)"
    learner.settings.dreaming.min_turns_since_last_run = 5
    brain.replies.append(DREAM)
    report = dream(learner, memory.settings.data_dir, model_named=True)
    assert report.outcome == "ok" and learner.store.read("user").entries == ["Name is Dana; prefers short answers"]
    assert report.calls == 1 and "## Session s1" in brain.prompts[0][1] and "Orient" in brain.prompts[0][0]
    closed = dream(learner, memory.settings.data_dir, model_named=True)
    assert closed.outcome == "closed" and "the last dream was 0.0 h ago" in closed.message
    forced = dream(learner, memory.settings.data_dir, model_named=True, force=True, dry_run=True)
    assert forced.outcome == "nothing" and "no new session messages" in forced.message
    assert [j["kind"] for j in list_jobs(learner.conn)] == ["dream", "dream"]


def test_two_processes_starting_a_dream_at_once_run_exactly_one(agent, llm, brain, project, tmp_path):
    memory, learner = _indexed(agent, project, llm)
    real = brain.__call__

    def slow(messages, tools):
        time.sleep(1.0)
        return real(messages, tools)

    llm.responder = slow
    cmd = [sys.executable, "-m", "pi_memory.cli", "--json", "dream"]
    env = {**os.environ}
    procs = [subprocess.Popen(cmd, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
    assert sorted(o["outcome"] for o in outs) in (["closed", "nothing"], ["locked", "nothing"])
    assert len(llm.chat_requests) == 1
    assert [j["kind"] for j in list_jobs(learner.conn)] == ["dream"]


def _session(agent, llm, project, **extra):
    write_settings(agent, llm_block(llm, **extra))
    return AgentSession(project)


def test_correction_is_saved_by_rule_then_refined_and_rate_limited(agent, llm, brain, project):
    session = _session(agent, llm, project)
    path = write_pi_session(project / "s.jsonl", project, [("user", "install deps"), ("assistant", "npm install"),
                                                           ("user", "no, use pnpm not npm")])
    brain.replies.append({"operations": []})  # refinement keeps the rule's entry
    session.after_run(str(path), "no, use pnpm not npm")
    session.after_run(str(path), "no, use yarn instead")  # within 3 turns: not saved
    assert session.worker.drain(10)
    assert session.memory.store.read("failure").entries == [
        "[correction] Use pnpm not npm — Failed: User corrected the agent in project repo"]
    kinds = [j["kind"] for j in session.learning_status()["jobs"]]
    assert kinds == ["correction", "refine"]
    session.shutdown()


def test_review_fires_after_the_nudge_interval_with_three_user_messages(agent, llm, brain, project):
    session = _session(agent, llm, project, nudgeInterval=3, nudgeToolCalls=100)
    path = write_pi_session(project / "s.jsonl", project, CHAT[:6])
    brain.replies.append({"operations": [{"target": "project", "action": "add", "content": "CI runs on Buildkite"}]})
    for n in range(2):
        session.after_run(str(path), f"question {n}")
    assert session.worker.drain(10) and llm.chat_requests == []
    session.after_run(str(path), "question 3")
    assert session.worker.drain(10) and len(llm.chat_requests) == 1
    assert session.memory.store.read("project").entries == ["CI runs on Buildkite"]
    assert session.learning_status()["turnsSinceReview"] == 0
    session.shutdown()


def test_review_fires_on_tool_calls_and_flush_needs_min_turns(agent, llm, brain, project):
    session = _session(agent, llm, project, nudgeInterval=50, nudgeToolCalls=5, flushMinTurns=2)
    path = write_pi_session(project / "s.jsonl", project, CHAT)
    session.after_run(str(path), "a", tool_calls=2)
    assert session.flush("compaction", str(path)) == {"queued": False, "reason": "1 user turn(s) since the last "
                                                      "review or flush (flushMinTurns = 2)"}
    session.after_run(str(path), "b", tool_calls=2)
    session.after_run(str(path), "c", tool_calls=2)  # 6 tool calls, 3 user messages: review
    assert session.worker.drain(10) and len(llm.chat_requests) == 1
    session.after_run(str(path), "d")
    session.after_run(str(path), "e")
    assert session.flush("compaction", str(path), wait=10) == {"queued": True, "reason": "compaction",
                                                               "finished": True}
    assert [j["kind"] for j in session.learning_status()["jobs"]] == ["review", "flush"]
    session.shutdown()


def test_a_budget_refusal_shows_in_the_session_status(agent, llm, brain, project):
    session = _session(agent, llm, project, nudgeInterval=1, learning={"jobTokenBudget": 300})
    path = write_pi_session(project / "s.jsonl", project, CHAT)
    for text in ("a", "b", "c"):
        session.after_run(str(path), text)
    assert session.worker.drain(10) and llm.chat_requests == []
    status = session.learning_status()
    assert status["jobs"][-1]["outcome"] == "budget"
    assert status["budget"]["lastRefusal"].startswith("review not run: its first call needs about ")
    assert "more than the job budget allows (learning.jobTokenBudget = 300 tokens" in status["budget"]["lastRefusal"]
    assert status["budget"]["spentToday"] == 0 and status["budget"]["resetsAt"].endswith("T00:00:00Z")
    session.shutdown()


def test_dreaming_model_names_a_pi_model(agent, llm, project):
    (agent / "models.json").write_text(json.dumps({"providers": {"local": {
        "baseUrl": llm.base_url, "api": "openai-completions", "apiKey": "x",
        "models": [{"id": "dreamer", "name": "Dreamer"}]}}}))
    write_settings(agent, llm_block(llm, dreaming={"model": "local/dreamer"}))
    memory = open_memory(project)
    model, status = memory.learning_model("dream")
    assert model.model == "dreamer" and status == "learning on: dreamer (from dreaming.model=local/dreamer)"
    assert memory.learning_model("review")[0].model == "fake-model"
    write_settings(agent, llm_block(llm, dreaming={"model": "nodash"}))
    assert open_memory(project).learning_model("dream") == (
        None, "dreaming.model 'nodash' must be provider/model as in pi's models.json")
