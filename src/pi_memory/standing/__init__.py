"""Standing instructions: ``STANDING.md`` in the data root, rules the user pins for every session.

Public API::

    store = StandingStore.in_data_dir(data_dir)
    store.add("never run find / or other root-wide searches") -> PinResult
    store.list() / store.remove(2) / store.clear()
    store.remove(2, 5)  # several at once, numbered as the listing numbers them
    store.remove_rule(text)  # by its text (a page that may be out of date: never another rule)
    parse_rules(text) -> list[str];  fitting(rules) -> how many fit the caps
    rule_key(rule) -> what makes two rules the same (case and trailing punctuation aside)
    rule_findings(rule) -> (threat ids, credential ids);  duplicates(rules) -> {rule number: the earlier rule}
    reach(rules) -> per listed rule: whether the agent gets it and why not (the prompt, pin list, insights)

Only the user writes the file (CLI ``pi-memory pin``, pi's ``/memory-pin``, an editor); the prompt assembly
(:mod:`pi_memory.prompt`) only reads it.
"""

from pi_memory.standing.reach import (
    DUPLICATE,
    LISTED_RULES,
    MAX_CHARS,
    MAX_RULES,
    OVER_CHARS,
    OVER_COUNT,
    WITHHELD,
    Reach,
    duplicate_words,
    duplicates,
    fitting,
    joined_chars,
    reach,
    reach_data,
    rule_findings,
    rule_key,
)
from pi_memory.standing.store import FILE_NAME, PinResult, StandingStore, normalise_rule, parse_rules

__all__ = ["DUPLICATE", "FILE_NAME", "LISTED_RULES", "MAX_CHARS", "MAX_RULES", "OVER_CHARS", "OVER_COUNT", "WITHHELD",
           "PinResult", "Reach", "StandingStore", "duplicate_words", "duplicates", "fitting", "joined_chars", "normalise_rule",
           "parse_rules", "reach", "reach_data", "rule_findings", "rule_key"]
