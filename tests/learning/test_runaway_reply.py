"""A runaway model reply is refused before any of it is applied: 1.19 MB with 20,000 operations took 36.7 s to
apply, then advised a consolidation. A reply of more than 200 operations, or of more than 16 characters a token
of the call's max_tokens, ends the job "invalid_output" at once (no second call), with nothing written."""

from __future__ import annotations

import json
import time

from learning_helpers import cli, llm_block, write_settings

from pi_memory.devtools.scripted_llm import LEFT_OUT, Reply
from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.learning import Turn, list_jobs, review_session
from pi_memory.learning.runner import CHARS_PER_REPLY_TOKEN, MAX_JOB_OPERATIONS
from pi_memory.runtime import open_memory

TURNS = [Turn("user", "I prefer tabs."), Turn("assistant", "Noted.")]


def _said(chars: int, operations: int | None, max_tokens: int = 1_200) -> str:
    held = f"{chars:,} characters" + (f" with {operations:,} operations" if operations else "")
    return (f"the model ran away: its reply was {held}, far more than a reply to this job may hold (at most 200 "
            f"operations and {max_tokens * 16:,} characters, for a reply of {max_tokens:,} tokens), so none of it was "
            "applied and nothing was written. A model that loops, or a server that ignores max_tokens, answers like "
            "this; another model (pi-memory.llm) would help")


def _adds(n: int) -> dict:
    return {"operations": [{"target": "memory", "action": "add", "content": f"Fact number {i} " + "x" * 30}
                           for i in range(n)]}


def test_the_tester_s_20000_operations_are_refused_at_once(agent, llm, brain, project):
    write_settings(agent, llm_block(llm))
    learner = open_memory(project).learner()
    text = json.dumps(_adds(20_000))
    assert len(text) > 1_000_000
    brain.replies.append(Reply(text=text, usage=LEFT_OUT))
    started = time.perf_counter()
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    assert time.perf_counter() - started < 20  # ~5 s here, most of it the scripted server sending 1.2 MB
    assert (report.outcome, report.calls, report.writes) == ("invalid_output", 1, [])
    assert report.message.startswith(_said(len(text), 20_000) + "; token count: the reply was ")
    assert learner.store.read("memory").entries == []
    [job] = list_jobs(learner.conn)
    assert job["outcome"] == "invalid_output" and job["detail"].startswith("the model ran away: its reply was ")


def test_201_short_operations_are_too_many_though_the_reply_is_small(agent, llm, brain, project):
    write_settings(agent, llm_block(llm))
    learner = open_memory(project).learner()
    ops = {"operations": [{"target": "user", "action": "remove", "oldText": "x"}] * (MAX_JOB_OPERATIONS + 1)}
    text = json.dumps(ops)
    assert len(text) < 1_200 * CHARS_PER_REPLY_TOKEN
    brain.replies.append(Reply(text=text))
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    assert (report.outcome, report.message) == ("invalid_output", _said(len(text), 201) + "; token count: the reply "
                                                f"was {len(text):,} characters (about {-(-len(text) // 4):,} tokens), "
                                                "far more than the 1,200 tokens the request allowed: the server "
                                                "ignored max_tokens; counted 1,200")


def test_200_operations_within_the_size_are_applied_as_any_reply(agent, llm, brain, project):
    write_settings(agent, llm_block(llm))
    learner = open_memory(project).learner()
    ops = {"operations": [{"target": "user", "action": "remove", "oldText": "x"}] * MAX_JOB_OPERATIONS}
    brain.replies.append(ops)
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    assert report.outcome == "refused"  # not a runaway: the store's own refusal (no entry holds "x")
    assert report.message.startswith("the model's answer could not be applied: it names the entry to remove by 'x'")


def test_a_long_note_alone_is_a_runaway_too(agent, llm, brain, project):
    write_settings(agent, llm_block(llm))
    learner = open_memory(project).learner()
    text = json.dumps({"operations": [], "note": "z" * 20_000})
    brain.replies.append(Reply(text=text))
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    assert report.outcome == "invalid_output" and report.message.startswith(_said(len(text), None) + "; ")


def test_the_cli_exits_1_and_writes_nothing(agent, llm, brain, project, monkeypatch):
    write_settings(agent, llm_block(llm))
    monkeypatch.chdir(project)
    path = write_pi_session(project / "s.jsonl", project, [("user", "I prefer tabs"), ("assistant", "ok")])
    text = json.dumps(_adds(2_000))
    brain.replies.append(Reply(text=text))
    code, data = cli("review", str(path), "--json")
    assert (code, data["outcome"], data["writes"], data["calls"]) == (1, "invalid_output", [], 1)
    assert data["message"].startswith(_said(len(text), 2_000))
