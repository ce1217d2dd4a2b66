"""Token budgets stay hard when the provider reports no usage, or usage that cannot be right: each call counts
the larger of the reported usage and the runner's own count of what it sent and received (prompt characters / 4
in, reply characters / 4 out); a count is never negative, and "Today" never goes down."""

from __future__ import annotations

import json
import math

import pytest
from learning_helpers import cli, llm_block, write_settings

from pi_memory.devtools.scripted_llm import LEFT_OUT, Reply
from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import open_index
from pi_memory.index.db import migrate
from pi_memory.learning import Turn, list_jobs, review_session
from pi_memory.learning import log as jlog
from pi_memory.learning.review import REVIEW_REPLY_TOKENS, REVIEW_SYSTEM
from pi_memory.llm.base import MAX_REPORTED_TOKENS, reported_tokens
from pi_memory.runtime import open_memory

TURNS = [Turn("user", "I prefer tabs over spaces, always."), Turn("assistant", "Noted.")]
NOTHING = json.dumps({"operations": [], "note": "nothing worth keeping"})
OUT = math.ceil(len(NOTHING) / 4)  # the reply's 50 characters: 13 tokens
BAD_USAGE = [
    pytest.param(LEFT_OUT, id="no-usage-key"),
    pytest.param(None, id="usage-null"),
    pytest.param({}, id="usage-empty"),
    pytest.param({"prompt_tokens": -5000, "completion_tokens": -100}, id="negative"),
    pytest.param({"prompt_tokens": 12.5, "completion_tokens": 0.5}, id="fractional"),
    pytest.param({"prompt_tokens": "900", "completion_tokens": "lots"}, id="strings"),
    pytest.param({"prompt_tokens": True, "completion_tokens": None}, id="bool-and-null"),
    pytest.param({"prompt_tokens": 1, "completion_tokens": 1}, id="absurdly-small"),
]


def _learner(agent, llm, project, **learning):
    write_settings(agent, llm_block(llm, learning=learning))
    memory = open_memory(project)
    return memory, memory.learner()


def _sent(brain, call: int = 0) -> int:
    """The runner's own count of a call's prompt: its system prompt and the user message, 4 characters a token."""
    return math.ceil((len(REVIEW_SYSTEM) + len(brain.prompts[call][1])) / 4)


@pytest.mark.parametrize("usage", BAD_USAGE)
def test_a_call_without_believable_usage_counts_what_was_sent_and_received(agent, llm, brain, project, usage):
    memory, learner = _learner(agent, llm, project)
    brain.replies.append(Reply(text=NOTHING, usage=usage))
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    assert report.outcome == "nothing" and report.calls == 1
    inp, out = _sent(brain), OUT
    assert (report.input_tokens, report.output_tokens) == (inp, out) and out == 13
    [job] = list_jobs(learner.conn)
    assert (job["inputTokens"], job["outputTokens"], job["tokens"]) == (inp, out, inp + out)
    assert learner.budget_status()["spentToday"] == inp + out


@pytest.mark.parametrize(("usage", "counted"), [
    # more than estimated, yet no more than the prompt's bytes and max_tokens allow: the report stands
    ({"prompt_tokens": 3000, "completion_tokens": 300}, (3000, 300)),
    ({"prompt_tokens": 7, "completion_tokens": 40}, (None, 40)),       # each count on its own
])
def test_a_larger_report_is_kept_count_by_count(agent, llm, brain, project, usage, counted):
    memory, learner = _learner(agent, llm, project)
    brain.replies.append(Reply(text=NOTHING, usage=usage))
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    want = (counted[0] or _sent(brain), counted[1] or OUT)
    assert (report.input_tokens, report.output_tokens) == want
    assert learner.budget_status()["spentToday"] == sum(want)


def test_the_daily_budget_binds_when_the_provider_reports_nothing(agent, llm, brain, project, monkeypatch):
    """The tester's case: `pi-memory review FILE` again and again under dailyTokenBudget 3,000, with replies
    that carry no usage. Before, every run was counted 0 and all ran; "Today" stayed 0."""
    write_settings(agent, llm_block(llm, learning={"dailyTokenBudget": 3000}))
    monkeypatch.chdir(project)
    path = write_pi_session(project / "s.jsonl", project, [(t.role, t.text) for t in TURNS])
    brain.replies.extend(Reply(text=NOTHING, usage=LEFT_OUT) for _ in range(6))
    outcomes = [cli("review", str(path), "--json")[1]["outcome"] for _ in range(6)]
    per_job = _sent(brain) + OUT
    estimate = _sent(brain) + 600 + REVIEW_REPLY_TOKENS  # what each call reserves before it is made
    runs = next(n for n in range(1, 7) if n * per_job + estimate > 3000)  # the run after n is refused
    assert runs == 3 and outcomes == ["nothing"] * runs + ["budget"] * (6 - runs)
    assert len(llm.chat_requests) == runs
    code, text = cli("learning", "log")
    assert code == 0 and f"Today: {runs * per_job:,} of 3,000 tokens" in text
    assert f"{_sent(brain):,} in / {OUT} out" in text


def test_negative_usage_never_lowers_today(agent, llm, brain, project):
    memory, learner = _learner(agent, llm, project)
    other = jlog.start_job(learner.conn, "review", "t", project=None, dry_run=False, model="m")
    jlog.settle(learner.conn, other, 0, 1000, 200, None)
    brain.replies.append(Reply(text=NOTHING, usage={"prompt_tokens": -5000, "completion_tokens": -100}))
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    assert learner.budget_status()["spentToday"] == 1200 + report.input_tokens + OUT
    # the log's own settle never stores a negative count, whoever calls it
    jlog.settle(learner.conn, other, 0, -700, -50, None)
    assert learner.budget_status()["spentToday"] == 1200 + report.input_tokens + OUT
    assert [(j["inputTokens"], j["outputTokens"]) for j in list_jobs(learner.conn)][1] == (1000, 200)


def test_an_old_log_with_negative_counts_is_mended(agent, tmp_path):
    conn = open_index(tmp_path / "index.sqlite3")
    migrate(conn, jlog.LEARNING_MIGRATIONS[:1])  # a log written by the version before learning_002_clean
    job = jlog.start_job(conn, "review", "t", project=None, dry_run=False, model="m")
    conn.execute("UPDATE learning_jobs SET input_tokens = -5000, output_tokens = -100 WHERE id = ?", (job,))
    other = jlog.start_job(conn, "review", "t", project=None, dry_run=False, model="m")
    conn.execute("UPDATE learning_jobs SET input_tokens = 800, output_tokens = 20 WHERE id = ?", (other,))
    assert jlog.spent_today(conn) == 800 + 20 - 5100
    jlog.open_log(conn)
    assert jlog.spent_today(conn) == 820
    assert [(j["inputTokens"], j["outputTokens"]) for j in jlog.list_jobs(conn)] == [(800, 20), (0, 0)]


@pytest.mark.parametrize(("value", "count"), [
    (None, 0), (-1, 0), (-5000, 0), (0, 0), (17, 17), (17.0, 17), (12.5, 0), (float("nan"), 0),
    (float("inf"), 0), ("17", 0), (True, 0), (False, 0), ([3], 0), (10**15, MAX_REPORTED_TOKENS),
])
def test_reported_tokens_reads_only_whole_counts(value, count):
    assert reported_tokens(value) == count


def test_a_call_that_times_out_counts_the_prompt_it_sent(agent, llm, project):
    # the server had the prompt and may bill it: a budget that ignored timed-out calls could be crossed
    import time

    def slow(messages, tools):
        time.sleep(2.5)
        return Reply(text=NOTHING)

    settings = llm_block(llm)
    settings["llm"]["timeoutSeconds"] = 1
    write_settings(agent, settings)
    llm.responder = slow
    learner = open_memory(project).learner()
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    assert report.outcome == "error" and report.calls == 1
    assert report.input_tokens > 0 and report.output_tokens == 0
    [job] = list_jobs(learner.conn)
    assert (job["inputTokens"], job["outputTokens"]) == (report.input_tokens, 0)
    assert learner.budget_status()["spentToday"] == report.input_tokens
