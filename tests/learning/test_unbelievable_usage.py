"""A server's token counts that cannot be true do not use up the day: output is counted at most at the request's
max_tokens, input at most at one token per byte the request sent (plus the template allowance), a job at most at
its budget, and the job's message says which figure was not believed. The tester's cases: usage of 10^12 prompt
and completion tokens made "Today: 2,000,005,122 of 300,000" and refused every later job; a 2 MB reply to a
request capped at 1,200 output tokens counted 515,727 out."""

from __future__ import annotations

import json
import math

import pytest
from learning_helpers import cli, llm_block, write_settings

from pi_memory.devtools.scripted_llm import LEFT_OUT, Reply
from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.learning import Turn, list_jobs, review_session
from pi_memory.learning import log as jlog
from pi_memory.learning.prompts import LearnReply
from pi_memory.learning.review import REVIEW_REPLY_TOKENS, REVIEW_SYSTEM
from pi_memory.llm.base import prompt_token_bound
from pi_memory.runtime import open_memory

TURNS = [Turn("user", "I prefer tabs over spaces, always."), Turn("assistant", "Noted.")]
NOTHING = json.dumps({"operations": [], "note": "nothing worth keeping"})
HUGE = {"prompt_tokens": 10**12, "completion_tokens": 10**12}


def _bound(llm, call: int = 0) -> int:
    """The most input tokens the request ``call`` could be billed, from what the server received."""
    messages = llm.chat_requests[call]["messages"]
    return prompt_token_bound(messages[1:], messages[0]["content"], LearnReply)


def _sent(brain, call: int = 0) -> int:
    return math.ceil((len(REVIEW_SYSTEM) + len(brain.prompts[call][1])) / 4)


def _doubted_input(bound: int) -> str:
    return (f"the server reported 1,000,000,000 or more input tokens, more than the prompt sent can be (at most "
            f"{bound:,}); not believed, counted {bound:,}")


DOUBTED_OUTPUT = ("the server reported 1,000,000,000 or more output tokens, more than the 1,200 the request allowed "
                  "(max_tokens); not believed, counted 1,200")


def test_a_trillion_tokens_are_not_believed_and_the_next_job_still_runs(agent, llm, brain, project, monkeypatch):
    write_settings(agent, llm_block(llm))
    monkeypatch.chdir(project)
    path = write_pi_session(project / "s.jsonl", project, [(t.role, t.text) for t in TURNS])
    brain.replies.append(Reply(text=NOTHING, usage=HUGE))
    code, data = cli("review", str(path), "--json")
    bound = _bound(llm)
    assert (code, data["outcome"], data["inputTokens"], data["outputTokens"]) == (0, "nothing", bound, 1_200)
    assert data["message"] == f"nothing worth keeping; token count: {_doubted_input(bound)}; {DOUBTED_OUTPUT}"
    code, text = cli("learning", "log")
    assert code == 0 and f"1 call(s), {bound:,} in / 1,200 out" in text
    assert f"Today: {bound + 1_200:,} of 300,000 tokens (resets " in text and "token count: the server" in text
    brain.replies.append(Reply(text=NOTHING))
    code, data = cli("review", str(path), "--json")
    assert (code, data["outcome"], data["message"]) == (0, "nothing", "nothing worth keeping")


@pytest.mark.parametrize("usage", [pytest.param(LEFT_OUT, id="no-usage"),
                                   pytest.param({"prompt_tokens": 10, "completion_tokens": 515_727}, id="reported")])
def test_a_2_mb_reply_counts_the_1200_tokens_the_request_allowed(agent, llm, brain, project, usage):
    write_settings(agent, llm_block(llm))
    learner = open_memory(project).learner()
    text = json.dumps({"operations": [], "note": "z" * 2_000_000})
    brain.replies.append(Reply(text=text, usage=usage))
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    # a reply past 16 characters a token of max_tokens ran away: refused whole (runner.CHARS_PER_REPLY_TOKEN)
    assert (report.outcome, report.input_tokens, report.output_tokens) == ("invalid_output", _sent(brain), 1_200)
    said = ([] if usage is LEFT_OUT else ["the server reported 515,727 output tokens, more than the 1,200 the "
                                          "request allowed (max_tokens); not believed, counted 1,200"])
    said.append(f"the reply was {len(text):,} characters (about {math.ceil(len(text) / 4):,} tokens), far more than "
                "the 1,200 tokens the request allowed: the server ignored max_tokens; counted 1,200")
    assert report.message == (f"the model ran away: its reply was {len(text):,} characters, far more than a reply "
                              "to this job may hold (at most 200 operations and 19,200 characters, for a reply of "
                              "1,200 tokens), so none of it was applied and nothing was written. A model that loops, "
                              "or a server that ignores max_tokens, answers like this; another model (pi-memory.llm) "
                              "would help; token count: " + "; ".join(said))
    assert learner.budget_status()["spentToday"] == _sent(brain) + 1_200
    [job] = list_jobs(learner.conn)
    assert (job["inputTokens"], job["outputTokens"]) == (_sent(brain), 1_200)


def test_a_reply_a_little_over_max_tokens_by_the_estimate_is_counted_at_it_without_a_word(agent, llm, brain,
                                                                                           project):
    """chars / 4 is an estimate: a reply of 1,300 estimated tokens may well be 1,200 real ones."""
    write_settings(agent, llm_block(llm))
    learner = open_memory(project).learner()
    text = json.dumps({"operations": [], "note": "ok " + "y" * 5_000})
    brain.replies.append(Reply(text=text, usage=LEFT_OUT))
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    assert math.ceil(len(text) / 4) == 1_259 and report.output_tokens == 1_200
    assert "token count" not in report.message


@pytest.mark.parametrize("usage", [pytest.param(LEFT_OUT, id="no-usage"), pytest.param(HUGE, id="huge")])
def test_2_mb_replies_that_never_validate_count_the_cap_each(agent, llm, brain, project, usage):
    """A rejected reply was counted by its text cut at 2,000 characters (500 tokens), whatever it was."""
    write_settings(agent, llm_block(llm))
    learner = open_memory(project).learner()
    brain.replies.extend(Reply(text="z" * 2_000_000, usage=usage) for _ in range(3))
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    assert (report.outcome, report.calls, report.output_tokens) == ("invalid_output", 3, 3 * REVIEW_REPLY_TOKENS)
    echoed = [m for m in llm.chat_requests[2]["messages"] if m["role"] == "assistant"]
    assert [len(m["content"]) for m in echoed] == [2_000, 2_000]  # what goes back to the model is cut
    sent = [math.ceil((len(REVIEW_SYSTEM) + sum(len(m["content"]) for m in llm.chat_requests[i]["messages"][1:])) / 4)
            for i in range(3)]
    assert "the server ignored max_tokens; counted 1,200" in report.message
    if usage is LEFT_OUT:
        assert report.input_tokens == sum(sent)
        assert learner.budget_status()["spentToday"] == sum(sent) + 3 * 1_200 < 24_000
        return
    # each prompt counted at its bound, and the third call at what was left of the job's 24,000
    bounds = [_bound(llm, i) for i in range(3)]
    assert sum(bounds) + 3 * 1_200 > 24_000 and report.input_tokens + report.output_tokens == 24_000
    left = 24_000 - bounds[0] - bounds[1] - 2 * 1_200
    assert (f"the call was counted {bounds[2] + 1_200:,} tokens, more than the {left:,} left of the job's budget "
            "(learning.jobTokenBudget = 24,000); counted") in report.message
    assert learner.budget_status()["spentToday"] == 24_000


def test_a_job_never_counts_past_its_budget(agent, llm, brain, project):
    write_settings(agent, llm_block(llm, learning={"jobTokenBudget": 4_000}))
    learner = open_memory(project).learner()
    brain.replies.append(Reply(text=NOTHING, usage=HUGE))
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    bound = _bound(llm)
    assert bound + 1_200 > 4_000 and (report.input_tokens, report.output_tokens) == (2_800, 1_200)
    assert report.message == (f"nothing worth keeping; token count: {_doubted_input(bound)}; {DOUBTED_OUTPUT}; the "
                              f"call was counted {bound + 1_200:,} tokens, more than the 4,000 left of the job's budget "
                              "(learning.jobTokenBudget = 4,000); counted 4,000")
    assert learner.budget_status()["spentToday"] == 4_000


def test_an_honest_report_within_the_bound_stands(agent, llm, brain, project):
    write_settings(agent, llm_block(llm))
    learner = open_memory(project).learner()
    brain.replies.append(Reply(text=NOTHING, usage={"prompt_tokens": 10**12, "completion_tokens": 1}))
    review_session(learner, TURNS, trigger="t", session_id=None)
    bound = _bound(llm)
    brain.replies.append(Reply(text=NOTHING, usage={"prompt_tokens": bound, "completion_tokens": 1_200}))
    report = review_session(learner, TURNS, trigger="t", session_id=None)
    assert (report.input_tokens, report.output_tokens, report.message) == (bound, 1_200, "nothing worth keeping")


def test_a_full_store_refusal_does_not_send_a_person_to_consolidate_when_the_day_has_no_room(agent, llm, project):
    """It said "Make room first (`pi-memory consolidate memory`, ...)" when the day's budget could not run one."""
    from pi_memory.learning.runner import PlannedOp

    write_settings(agent, llm_block(llm, memoryCharLimit=60, learning={"dailyTokenBudget": 10_000}))
    memory = open_memory(project)
    learner = memory.learner()
    memory.store.add("memory", "Builds with make and ships on fridays")
    add = [PlannedOp(target="memory", action="add", content="Deploys run from the ops laptop only")]
    _, _, outcome, message = learner.apply(add, dry=False)
    full = "MEMORY.md would hold 76 of its 60 characters after this job's writes, so nothing was written."
    assert (outcome, message) == ("refused", f"{full} Make room first (`pi-memory consolidate memory`, or `pi-memory "
                                             "remove memory TEXT`), or raise memoryCharLimit in settings")
    other = jlog.start_job(learner.conn, "review", "t", project=None, dry_run=False, model="m")
    jlog.settle(learner.conn, other, 0, 7_000, 1_000, None)
    _, _, outcome, message = learner.apply(add, dry=False)
    assert (outcome, message) == ("refused", (
        f"{full} Make room by hand (`pi-memory remove memory TEXT`), or raise memoryCharLimit in settings; "
        f"`pi-memory consolidate memory` needs about 2,310 tokens of the daily learning budget, which has 2,000 left "
        f"until it resets at {jlog.next_reset()}"))


def test_the_consolidation_estimate_covers_the_job_s_fixed_part():
    from pi_memory.learning.consolidate import CONSOLIDATE_REPLY_TOKENS, SYSTEM
    from pi_memory.learning.runner import estimate_tokens
    from pi_memory.learning.wording import CONSOLIDATION_TOKENS, consolidation_tokens

    assert estimate_tokens(SYSTEM) + 600 + CONSOLIDATE_REPLY_TOKENS <= CONSOLIDATION_TOKENS
    assert consolidation_tokens(37) == 2_310
