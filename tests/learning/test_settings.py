"""Invalid learning settings said in a person's words: the key, its value, what it must be, its default."""

from __future__ import annotations

import pytest

from pi_memory.learning.settings import LearningSettingsError, parse_learning

END = "Learning jobs are off until it is fixed: correct the value, or remove the key to use its default."


@pytest.mark.parametrize(("block", "problem"), [
    ({"learning": {"jobTokenBudget": "lots"}}, '"learning.jobTokenBudget" is "lots", but it must be a whole number '
                                               '(default 24000)'),
    ({"learning": {"jobTokenBudget": True}}, '"learning.jobTokenBudget" is true, but it must be a whole number '
                                             '(default 24000)'),
    ({"learning": {"maxCallsPerJob": 99}}, '"learning.maxCallsPerJob" is 99, but it must be at most 10 (default 3)'),
    ({"learning": {"dryRun": "yes"}}, '"learning.dryRun" is "yes", but it must be true or false (default false)'),
    ({"memoryOverflowStrategy": "drop"}, '"memoryOverflowStrategy" is "drop", but it must be one of "reject", '
                                         '"fifo-evict" or "auto-consolidate" (default "auto-consolidate")'),
    ({"learning": {"typo": 1}}, '"learning.typo" is not a learning setting (a typo?)'),
    ({"learning": 5}, '"learning" is 5, but it must be an object ({...})'),
    ({"correctionStrongPatterns": [1]}, '"correctionStrongPatterns[0]" is 1, but it must be text'),
    ({"overflowGraceMs": -1}, '"overflowGraceMs" is -1, but it must be at least 0 (default 180000)'),
])
def test_each_invalid_setting_is_named_with_its_value_and_what_it_must_be(block, problem):
    with pytest.raises(LearningSettingsError) as caught:
        parse_learning(block, "/home/u/.pi/agent/settings.json")
    assert str(caught.value) == (f'Invalid learning setting under "pi-memory" in /home/u/.pi/agent/settings.json: '
                                 f"{problem}. {END}")


def test_several_invalid_settings_are_listed_together():
    with pytest.raises(LearningSettingsError) as caught:
        parse_learning({"learning": {"jobTokenBudget": 0, "dryRun": 1}}, "s.json")
    assert str(caught.value) == (
        'Invalid learning settings under "pi-memory" in s.json: "learning.jobTokenBudget" is 0, but it must be more '
        'than 0 (default 24000); "learning.dryRun" is 1, but it must be true or false (default false). Learning '
        "jobs are off until they are fixed: correct the value, or remove the key to use its default.")
