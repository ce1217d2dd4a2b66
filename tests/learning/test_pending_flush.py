"""A flush refused at pi's shutdown (a budget, a model that did not answer) lost its mark with the process: the
session's last messages were never reviewed. The flush now keeps its mark in the index (``learning_pending``)
until the session is reviewed to its end, and the next session of the project reviews what is left at its start."""

from __future__ import annotations

import socket

import pytest
from learning_helpers import llm_block, write_settings

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.session import AgentSession

FIRST = [("user", "I am Dana and I prefer short answers"), ("assistant", "Noted, Dana."),
         ("user", "The CI runs on Buildkite"), ("assistant", "Ok."), ("user", "Release every Tuesday"),
         ("assistant", "Ok.")]
OTHER = [("user", "We deploy with Argo"), ("assistant", "Ok."), ("user", "Tabs, not spaces"), ("assistant", "Ok.")]
GOOD = {"operations": [{"target": "project", "action": "add", "content": "CI runs on Buildkite"}]}
CALM = {"nudgeInterval": 50, "flushMinTurns": 1, "dreaming": {"enabled": False}}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _end(project, path, turns: int = 1) -> dict:
    """A session of ``turns`` turns over ``path`` ending as pi ends one: the shutdown flush, then shutdown."""
    session = AgentSession(project)
    for n in range(turns):
        session.after_run(str(path), f"turn {n}")
    assert session.flush("shutdown", str(path), wait=20)["queued"]
    job = session.learning_status()["jobs"][-1]
    session.shutdown()
    return job


def _next_session(project) -> AgentSession:
    session = AgentSession(project)
    session.start(catch_up=False)
    assert session.worker.drain(30)
    return session


def _pending_rows(project) -> list[tuple]:
    from pi_memory.index import open_index

    session = AgentSession(project)
    conn = open_index(session.memory.settings.data_dir)
    try:
        return conn.execute("SELECT session_file, reviewed, reason, outcome FROM learning_pending").fetchall()
    finally:
        conn.close()
        session.shutdown()


@pytest.mark.parametrize(("learning", "replies", "outcome"), [
    ({"jobTokenBudget": 300}, [], "budget"),
    ({"dailyTokenBudget": 1_000}, [], "budget"),
    ({}, ["no json here", "still none", "{not: json}"], "invalid_output"),
])
def test_a_shutdown_flush_that_did_not_run_is_reviewed_by_the_next_session(agent, llm, brain, project, learning,
                                                                          replies, outcome):
    write_settings(agent, llm_block(llm, learning=learning, **CALM))
    path = write_pi_session(project / "s.jsonl", project, FIRST)
    brain.replies.extend(replies)
    assert _end(project, path)["outcome"] == outcome
    assert _pending_rows(project) == [(str(path), 0, "shutdown", outcome)]
    write_settings(agent, llm_block(llm, **CALM))  # the cause goes away (a new day, a model that answers)
    brain.replies.clear()
    brain.replies.append(GOOD)
    later = _next_session(project)
    job = later.learning_status()["jobs"][-1]
    assert (job["kind"], job["outcome"]) == ("flush", "ok")
    prompt = brain.prompts[-1][1]
    assert "I am Dana and I prefer short answers" in prompt and "Release every Tuesday" in prompt
    assert later.memory.store.read("project").entries == ["CI runs on Buildkite"]
    assert later.learning_status()["pendingFlushes"] == 0
    later.shutdown()
    assert _pending_rows(project) == []


def test_a_shutdown_flush_met_by_a_dead_server_is_kept_until_it_answers(agent, llm, brain, project):
    port = _closed_port()
    write_settings(agent, {"llm": {"provider": "openai-compatible", "baseUrl": f"http://127.0.0.1:{port}/v1",
                                   "model": "fake-model", "timeoutSeconds": 10}, **CALM})
    path = write_pi_session(project / "s.jsonl", project, FIRST)
    assert _end(project, path)["outcome"] == "error"
    again = _next_session(project)  # the server is still down: tried, kept
    assert again.learning_status()["jobs"][-1]["outcome"] == "error"
    assert again.learning_status()["pendingFlushes"] == 1
    again.shutdown()
    assert _pending_rows(project) == [(str(path), 0, "shutdown", "error")]
    write_settings(agent, llm_block(llm, **CALM))
    later = _next_session(project)
    assert later.learning_status()["jobs"][-1]["outcome"] == "nothing"
    assert "I am Dana and I prefer short answers" in brain.prompts[-1][1]
    later.shutdown()
    assert _pending_rows(project) == []


def test_only_what_the_earlier_reviews_left_is_read(agent, llm, brain, project):
    """The mark a review moved during the session is the one kept: the next session reads only what came after."""
    write_settings(agent, llm_block(llm, nudgeInterval=1, flushMinTurns=1, dreaming={"enabled": False}))
    path = write_pi_session(project / "s.jsonl", project, FIRST)
    session = AgentSession(project)
    for text in ("a", "b", "c"):
        session.after_run(str(path), text)
    assert session.worker.drain(20) and session.learning.reviewed == 6
    write_pi_session(path, project, FIRST + OTHER)
    session.memory.learning.jobs.job_token_budget = 300
    session.after_run(str(path), "d")
    assert session.flush("shutdown", str(path), wait=20)["queued"]
    assert session.learning_status()["jobs"][-1]["outcome"] == "budget"
    session.shutdown()
    assert _pending_rows(project) == [(str(path), 6, "shutdown", "budget")]
    later = _next_session(project)
    prompt = brain.prompts[-1][1]
    assert "We deploy with Argo" in prompt and "I am Dana" not in prompt
    later.shutdown()
    assert _pending_rows(project) == []


def test_a_session_file_that_is_gone_is_dropped_with_a_warning(agent, llm, brain, project, caplog):
    write_settings(agent, llm_block(llm, learning={"jobTokenBudget": 300}, **CALM))
    path = write_pi_session(project / "s.jsonl", project, FIRST)
    assert _end(project, path)["outcome"] == "budget"
    path.unlink()
    write_settings(agent, llm_block(llm, **CALM))
    later = _next_session(project)
    assert brain.prompts == [] and later.learning_status()["pendingFlushes"] == 0
    later.shutdown()
    assert _pending_rows(project) == []
    assert f"learning: {path} is gone, so the messages its session's end left unreviewed (from message 1) cannot be " \
           "reviewed" in caplog.text


def test_another_projects_session_does_not_review_it(agent, llm, brain, project, tmp_path):
    import subprocess

    write_settings(agent, llm_block(llm, learning={"jobTokenBudget": 300}, **CALM))
    path = write_pi_session(project / "s.jsonl", project, FIRST)
    assert _end(project, path)["outcome"] == "budget"
    write_settings(agent, llm_block(llm, **CALM))
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    subprocess.run(["git", "init", "-q", str(elsewhere)], check=True)
    other = _next_session(elsewhere)
    assert brain.prompts == []  # its facts would go to the wrong project store
    other.shutdown()
    assert _pending_rows(project) == [(str(path), 0, "shutdown", "budget")]


def test_a_compaction_flush_keeps_no_row(agent, llm, brain, project):
    """Compaction: the process goes on and its next review reads from the mark; nothing is kept for later."""
    write_settings(agent, llm_block(llm, learning={"jobTokenBudget": 300}, **CALM))
    path = write_pi_session(project / "s.jsonl", project, FIRST)
    session = AgentSession(project)
    session.after_run(str(path), "a")
    assert session.flush("compaction", str(path), wait=20)["queued"]
    session.shutdown()
    assert _pending_rows(project) == []


def test_a_hook_session_end_flush_refused_is_reviewed_at_the_next_host_sessions_first_turn(agent, llm, brain, project,
                                                                                           tmp_path, monkeypatch):
    """Claude Code and Codex: a session-end flush is a job of its own; the next host session's first turn job
    reviews what it left (a session start hook has no time for a model call)."""
    from pi_memory.integrations.hooks import background

    for name in ("HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    write_settings(agent, llm_block(llm, learning={"jobTokenBudget": 300}, **CALM))
    path = write_pi_session(project / "s.jsonl", project, FIRST)
    job = {"host": "claude-code", "sessionId": "h1", "cwd": str(project), "transcript": str(path),
           "userText": "turn", "assistantText": "Ok."}
    background.run({**job, "event": "stop"})
    background.run({**job, "event": "session-end"})
    assert _pending_rows(project) == [(str(path), 0, "shutdown", "budget")]
    write_settings(agent, llm_block(llm, **CALM))
    other = write_pi_session(project / "t.jsonl", project, OTHER, session_id="02bb")
    background.run({**job, "sessionId": "h2", "transcript": str(other), "event": "stop"})
    assert any("I am Dana and I prefer short answers" in user for _system, user in brain.prompts)
    assert _pending_rows(project) == []
