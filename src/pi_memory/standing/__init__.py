"""Standing instructions: ``STANDING.md`` in the data root, rules the user pins for every session.

Public API::

    store = StandingStore.in_data_dir(data_dir)
    store.add("never run find / or other root-wide searches") -> PinResult
    store.list() / store.remove(2) / store.clear()
    parse_rules(text) -> list[str];  fitting(rules) -> how many fit the caps
    rule_findings(rule) -> (threat ids, credential ids);  given(rules) -> those of the rules the agent gets
    duplicates(rules) -> {rule number: the earlier rule it repeats}

Only the user writes the file (CLI ``pi-memory pin``, pi's ``/memory-pin``, an editor); the prompt assembly
(:mod:`pi_memory.prompt`) only reads it.
"""

from pi_memory.standing.store import (
    FILE_NAME,
    LISTED_RULES,
    MAX_CHARS,
    MAX_RULES,
    PinResult,
    StandingStore,
    duplicates,
    fitting,
    given,
    joined_chars,
    normalise_rule,
    parse_rules,
    rule_findings,
)

__all__ = ["FILE_NAME", "LISTED_RULES", "MAX_CHARS", "MAX_RULES", "PinResult", "StandingStore", "duplicates", "fitting",
           "given", "joined_chars", "normalise_rule", "parse_rules", "rule_findings"]
