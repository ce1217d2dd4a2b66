"""A job that never called the model, or whose calls never reached it, said "0 spent" or "tokens: 0 in / 0 out",
which a person reads as "it ran and cost nothing". It now says the model was not called (or not reached), why,
and what to do: the setting to raise, or when the day's budget comes back."""

from __future__ import annotations

import socket
import time

import pytest
from learning_helpers import llm_block, write_settings
from typer.testing import CliRunner

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.learning import Turn, list_jobs, review_session
from pi_memory.learning import log as jlog
from pi_memory.runtime import open_memory

TURNS = [Turn("user", "I prefer tabs over spaces, always."), Turn("assistant", "Noted.")]
CHAT = [("user", "I prefer tabs over spaces, always."), ("assistant", "Noted.")]
REVIEW_ADVICE = "raise it, or lower reviewRecentMessages so a review reads fewer messages"


def _learner(agent, llm, project, **learning):
    write_settings(agent, llm_block(llm, learning=learning))
    return open_memory(project).learner()


@pytest.mark.parametrize("budget", [300, 1_000, 2_000])
def test_a_job_over_its_budget_before_its_first_call_says_the_model_was_not_called(agent, llm, project, budget):
    learner = _learner(agent, llm, project, jobTokenBudget=budget)
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    needs = int(report.message.split("needs about ")[1].split(" tokens")[0].replace(",", ""))
    assert needs > budget and (report.outcome, report.calls, llm.chat_requests) == ("budget", 0, [])
    assert report.message == (
        f"not run, the model was not called: its first call needs about {needs:,} tokens, more than the job budget "
        f"allows (learning.jobTokenBudget = {budget:,} tokens, for each job); {REVIEW_ADVICE}")
    [job] = list_jobs(learner.conn)
    assert (job["detail"], job["calls"], job["inputTokens"], job["outputTokens"]) == (report.message, 0, 0, 0)


@pytest.mark.parametrize(("spent", "state"), [
    (5_000, "is used up (5,000 tokens spent today)"),
    (4_900, "has 100 tokens left today (4,900 spent), too few for the next call (about {needs:,})"),
])
def test_a_job_the_days_budget_refused_says_the_model_was_not_called_and_when_it_comes_back(
        agent, llm, project, spent, state):
    learner = _learner(agent, llm, project, dailyTokenBudget=5_000)
    done = jlog.start_job(learner.conn, "review", "t", project=None, dry_run=False, model="m")
    jlog.settle(learner.conn, done, 0, spent - 16, 16, None)
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    assert (report.outcome, report.calls, llm.chat_requests) == ("budget", 0, [])
    needs = int(report.message.split("(about ")[1].split(")")[0].replace(",", "")) if "about" in report.message else 0
    assert report.message == (
        f"not run, the model was not called: the daily learning budget (learning.dailyTokenBudget = 5,000 tokens) "
        f"{state.format(needs=needs)}; it resets at {jlog.next_reset()} (UTC midnight), or raise "
        "learning.dailyTokenBudget to run jobs before then")
    assert learner.budget_status()["lastRefusal"].startswith("review not run: the daily learning budget")


def test_a_job_past_its_time_before_its_first_call_says_the_model_was_not_called(agent, llm, project):
    learner = _learner(agent, llm, project, jobTimeoutSeconds=5)
    learner.clock = lambda: time.monotonic() - 60  # the job's deadline has passed when it asks the model
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    assert (report.outcome, report.calls, llm.chat_requests) == ("timeout", 0, [])
    assert report.message == ("not run, the model was not called: the job ran past learning.jobTimeoutSeconds = 5 "
                              "(raise it to give jobs more time)")


def test_a_budget_refusal_after_a_call_keeps_its_figures(agent, llm, brain, project):
    """A job refused before its second call did call the model: its message says what it spent, not "not run"."""
    learner = _learner(agent, llm, project, jobTokenBudget=300)
    first = review_session(learner, TURNS, trigger="t", session_id=None).message
    needs = int(first.split("needs about ")[1].split(" tokens")[0].replace(",", ""))
    learner.settings.jobs.job_token_budget = budget = needs + 100  # the first call fits, its re-ask does not
    brain.replies.append("no json here")
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    spent = report.input_tokens + report.output_tokens
    assert (report.outcome, report.calls, len(llm.chat_requests)) == ("budget", 1, 1) and spent > 0
    assert report.message.startswith(f"the job budget (learning.jobTokenBudget = {budget:,} tokens) would be "
                                      f"exceeded: {spent:,} spent, the next call needs about ")
    assert report.message.endswith(f"; it applies to each job ({REVIEW_ADVICE})")


@pytest.mark.parametrize(("calls", "inp", "out", "said"), [
    (0, 0, 0, "the model was not called"),
    (1, 0, 0, "1 call(s) tried, none reached the model, so no tokens were spent"),
    (3, 0, 0, "3 call(s) tried, none reached the model, so no tokens were spent"),
    (1, 1_234, 48, "1 call(s), 1,234 in / 48 out"),
    (2, 10, 0, "2 call(s), 10 in / 0 out"),
])
def test_calls_are_said_without_zero_tokens(calls, inp, out, said):
    from pi_memory.learning.wording import calls_said

    assert calls_said(calls, inp, out) == said


def _cli(*args: str) -> tuple[int, str, str]:
    from pi_memory.cli.app import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_cli_says_a_dead_server_was_never_reached(agent, project, monkeypatch, tmp_path):
    port = _closed_port()
    write_settings(agent, {"llm": {"provider": "openai-compatible", "baseUrl": f"http://127.0.0.1:{port}/v1",
                                   "model": "fake-model", "timeoutSeconds": 10}})
    monkeypatch.chdir(project)
    session = write_pi_session(tmp_path / "s.jsonl", project, CHAT)
    code, out, err = _cli("review", str(session))
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f"review: error (job 1): the model call failed: The model server at http://127.0.0.1:{port}/v1 refused the "
        "connection (nothing is listening there). Start the server, or change the \"pi-memory\" → \"llm\" settings "
        "(or the pi models.json provider they point at).",
        "model calls: 1 tried, none reached the model, so no tokens were spent"]
    code, out, err = _cli("learning", "log")
    assert code == 0 and "0 in / 0 out" not in out
    assert "\n  fake-model: 1 call(s) tried, none reached the model, so no tokens were spent, " in out


def test_the_cli_says_a_refused_job_did_not_call_the_model(agent, llm, project, monkeypatch, tmp_path):
    write_settings(agent, llm_block(llm, learning={"jobTokenBudget": 300}))
    monkeypatch.chdir(project)
    session = write_pi_session(tmp_path / "s.jsonl", project, CHAT)
    code, out, err = _cli("review", str(session))
    needs = int(err.split("needs about ")[1].split(" tokens")[0].replace(",", ""))
    assert (code, out) == (1, "") and err.splitlines() == [
        f"review: budget (job 1): not run, the model was not called: its first call needs about {needs:,} tokens, "
        f"more than the job budget allows (learning.jobTokenBudget = 300 tokens, for each job); {REVIEW_ADVICE}"]
    code, out, _ = _cli("learning", "log")
    [row] = [line for line in out.splitlines() if line.startswith("#1 ")]
    assert row.endswith(f"review [manual] budget: not run, the model was not called: its first call needs about "
                        f"{needs:,} tokens, more than the job budget allows (learning.jobTokenBudget = 300 tokens, "
                        f"for each job); {REVIEW_ADVICE}")
    assert "call(s)" not in out and llm.chat_requests == []


@pytest.mark.parametrize(("job", "said"), [
    ({"calls": 1, "inputTokens": 0, "outputTokens": 0},
     "fake-model: 1 call(s) tried, none reached the model, so no tokens were spent, 43 ms"),
    ({"calls": 2, "inputTokens": 1_500, "outputTokens": 48}, "fake-model: 2 call(s), 1,500 in / 48 out, 43 ms"),
])
def test_the_inspector_says_a_dead_server_was_never_reached(job, said):
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    from pi_memory.integrations.inspector.render import TEMPLATES

    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True))
    row = {"id": 6, "kind": "review", "trigger": "manual", "startedAt": "2026-12-05T11:57:17Z", "outcome": "error",
           "dryRun": False, "undoneAt": None, "detail": "the model call failed", "model": "fake-model",
           "costUsd": None, "durationMs": 43.0, "writes": [], **job}
    html = env.get_template("_jobs.html").render(jobs=[row], learner=True, report=None, status="")
    assert f'<div class="muted">{said}</div>' in html
