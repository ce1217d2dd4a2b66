"""What a budget refusal advises fits the job and the reason: the per-job refusal names what makes that kind of
job smaller (a consolidation was told to "lower reviewRecentMessages"), and the daily refusal while another job
runs says what was spent and what the running job holds apart (it said "(2,306 spent)" while the log said
"Today: 216")."""

from __future__ import annotations

import re

import pytest
from learning_helpers import cli, llm_block, write_settings

from pi_memory.learning import Turn, review_session
from pi_memory.learning import log as jlog
from pi_memory.learning.runner import job_budget_advice
from pi_memory.runtime import open_memory


@pytest.mark.parametrize(("kind", "advice"), [
    ("review", "raise it, or lower reviewRecentMessages so a review reads fewer messages"),
    ("flush", "raise it, or lower reviewRecentMessages so a review reads fewer messages"),
    ("consolidate", "raise it: a consolidation sends the whole store, so a store this large needs a larger job "
                    "budget; or shorten the store by hand with `pi-memory remove`"),
    ("dream", "raise it, or lower dreaming.maxSessions so a dream reads fewer sessions"),
    ("refine", "raise it"),
])
def test_the_job_budget_advice_fits_the_kind(kind, advice):
    assert job_budget_advice(kind) == advice


def test_a_consolidation_over_the_job_budget_is_not_told_about_reviews(agent, llm, brain, project, monkeypatch):
    write_settings(agent, llm_block(llm, learning={"jobTokenBudget": 1_000}))
    monkeypatch.chdir(project)
    for entry in ("Builds with make", "Deploys on Fridays"):
        assert cli("add", "memory", entry)[0] == 0
    code, data = cli("consolidate", "memory", "--json")
    needs = int(re.search(r"needs about ([\d,]+) tokens", data["message"]).group(1).replace(",", ""))
    assert (code, data["outcome"]) == (1, "budget") and needs > 1_000 and llm.chat_requests == []
    assert data["message"] == (
        f"not run, the model was not called: its first call needs about {needs:,} tokens, more than the job budget "
        "allows (learning.jobTokenBudget = 1,000 tokens, for each job); raise it: a consolidation sends the whole "
        "store, so a store this large needs a larger job budget; or shorten the store by hand with `pi-memory remove`")


@pytest.mark.parametrize(("used", "held", "holders", "state", "wait"), [
    (2_306, 2_090, 1, "has 94 tokens left today (216 spent, 2,090 reserved by a running job), too few for the next "
                      "call (about 2,300)", True),
    (2_400, 2_090, 2, "is used up for now (310 tokens spent today, 2,090 reserved by 2 running jobs)", True),
    (2_400, 0, 0, "is used up (2,400 tokens spent today)", False),
    (1_000, 0, 0, "has 1,400 tokens left today (1,000 spent), too few for the next call (about 2,300)", False),
])
def test_the_daily_refusal_says_spent_and_reserved_apart(used, held, holders, state, wait):
    end = "; a running job gives back what it reserved and did not use when it ends" if wait else ""
    assert jlog.daily_refusal(used, 2_300, 2_400, held, holders) == (
        f"the daily learning budget (learning.dailyTokenBudget = 2,400 tokens) {state}; it resets at "
        f"{jlog.next_reset()} (UTC midnight), or raise learning.dailyTokenBudget to run jobs before then{end}")


def test_a_job_refused_while_another_runs_says_what_the_running_job_holds(agent, llm, brain, project, monkeypatch):
    write_settings(agent, llm_block(llm, learning={"dailyTokenBudget": 2_400}))
    monkeypatch.chdir(project)
    learner = open_memory(project).learner()
    done = jlog.start_job(learner.conn, "review", "t", project=None, dry_run=False, model="m")
    jlog.settle(learner.conn, done, 0, 200, 16, None)
    running = jlog.start_job(learner.conn, "dream", "t", project=None, dry_run=False, model="m")
    jlog.reserve(learner.conn, running, 2_090, 2_400)
    report = review_session(learner, [Turn("user", "I prefer tabs"), Turn("assistant", "ok")], trigger="t",
                            session_id=None)
    assert report.outcome == "budget" and llm.chat_requests == []
    assert report.message.startswith(
        "not run, the model was not called: the daily learning budget (learning.dailyTokenBudget = 2,400 tokens) has "
        "94 tokens left today (216 spent, "
        "2,090 reserved by a running job), too few for the next call (about ")
    assert report.message.endswith("; a running job gives back what it reserved and did not use when it ends")
    status = learner.budget_status()
    assert (status["spentToday"], status["reservedToday"], status["reservingJobs"], status["leftToday"]) == (
        2_306, 2_090, 1, 94)
    code, text = cli("learning", "log")
    assert code == 0 and text.splitlines()[-1] == (
        f"Today: 2,306 of 2,400 tokens, 216 spent and 2,090 reserved by a running job (resets {jlog.next_reset()}); "
        "per job at most 24,000.")
    jlog.finish_job(learner.conn, running, outcome="ok", detail=None, duration_ms=1, writes=[], session_ids=[],
                    entry_ids=[])
    code, text = cli("learning", "log")
    assert text.splitlines()[-1] == f"Today: 216 of 2,400 tokens (resets {jlog.next_reset()}); per job at most 24,000."
