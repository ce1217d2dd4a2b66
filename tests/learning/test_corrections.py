"""Correction rules (reference §2.9 examples), settings overrides, the rule-based save and its refinement."""

from __future__ import annotations

import pytest
from learning_helpers import llm_block, write_settings

from pi_memory.learning import CorrectionRules, Turn, refine_correction, save_correction
from pi_memory.runtime import open_memory

RULES = CorrectionRules.from_lists()


@pytest.mark.parametrize(("text", "directive"), [
    ("no, use yarn instead", "Use yarn instead"),
    ("NO, USE PNPM NOT NPM", "USE PNPM NOT NPM"),
    ("Actually, run the tests with -x", "Run the tests with -x"),
    ("I told you to use pnpm", "I told you to use pnpm"),
    ("please don't touch the lockfile", "Please don't touch the lockfile"),
    ("we already discussed this: tabs", "We already discussed this: tabs"),
])
def test_corrections_are_detected_with_their_directive(text, directive):
    found = RULES.detect(text)
    assert found.correction is True and found.directive == directive


@pytest.mark.parametrize("text", ["no just kidding", "yes, do that", "please continue", "no worries, thanks",
                                  "no problem", "actually looks great", "actually, that's perfect", "stop there",
                                  "stop for now", "nothing to add", ""])
def test_non_corrections(text):
    assert RULES.detect(text).correction is False


def test_lists_are_replaceable_and_an_invalid_regex_is_reported_and_skipped():
    rules = CorrectionRules.from_lists(strong=[r"^nope\b", "(unclosed"], weak=[], negative=[], directives=[])
    assert rules.detect("nope, tabs").correction is True
    assert rules.detect("no, use yarn").correction is False  # weak list emptied
    assert rules.problems == ["correctionStrongPatterns: '(unclosed' is not a valid regular expression "
                              "(missing ), unterminated subpattern at position 0); it is skipped"]


def test_rule_based_save_needs_no_model_and_refinement_replaces_it(agent, llm, brain, project):
    write_settings(agent, {})
    memory = open_memory(project)
    report = save_correction(memory.learner(), RULES.detect("no, use pnpm not npm"), session_id="s")
    assert report.outcome == "ok"
    saved = "[correction] Use pnpm not npm — Failed: User corrected the agent in project repo"
    assert memory.store.read("failure").entries == [saved]
    write_settings(agent, llm_block(llm))
    learner = open_memory(project).learner()
    brain.replies.append({"operations": [{"target": "failure", "action": "add", "category": "correction",
                                          "content": "Use pnpm for installs in this repo, never npm",
                                          "reason": "npm broke the lockfile"}]})
    turns = [Turn("user", "install deps"), Turn("assistant", "running npm install"),
             Turn("user", "no, use pnpm not npm")]
    refined = refine_correction(learner, saved, turns, session_id="s")
    assert refined.outcome == "ok" and [w.action for w in refined.writes] == ["replace"]
    assert learner.store.read("failure").entries == [
        "[correction] Use pnpm for installs in this repo, never npm — Failed: npm broke the lockfile"]
