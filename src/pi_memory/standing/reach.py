"""Which standing rules reach the agent, and why the others do not: the one reading ``pin list``, ``insights``
and the prompt (:func:`pi_memory.prompt.standing_text`) share, so the three always agree.

* :func:`rule_key`: when two rules are the same rule (``pin add`` refuses one, a listing marks one): the same
  text once case, Unicode composition and trailing punctuation are set aside ("Never push to MAIN!" repeats
  "Never push to main").
* :func:`fitting`: how many leading rules fit both caps (:data:`MAX_RULES` rules, :data:`MAX_CHARS` characters
  of the rules joined with ``"\\n"``); the rest are left out of the prompt.
* :func:`reach`: per listed rule (the first :data:`LISTED_RULES`), whether the agent gets it and if not why:
  past the count cap, past the character cap, a duplicate of an earlier rule (the prompt gives each rule once),
  or withheld (it matches a threat pattern; the prompt gives a marker instead). A rule the agent gets may still
  have a credential redacted (``secrets``).
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

from pi_memory import safety

MAX_RULES = 20
MAX_CHARS = 2000
LISTED_RULES = MAX_RULES  # rules a listing shows: the agent never gets more

OVER_COUNT = "over_count"
OVER_CHARS = "over_chars"
DUPLICATE = "duplicate"
WITHHELD = "withheld"


def rule_key(rule: str) -> str:
    """What makes two rules the same rule: the text composed (NFC), case-folded, whitespace collapsed and
    trailing punctuation (``.``, ``!``, ``;``, ``…``, any Unicode punctuation) dropped. A rule that is only
    punctuation keeps it (``"..."`` is not the empty rule)."""
    text = " ".join(unicodedata.normalize("NFC", rule).casefold().split())
    end = len(text)
    while end and (unicodedata.category(text[end - 1]).startswith("P") or text[end - 1].isspace()):
        end -= 1
    return text[:end] or text


def fitting(rules: list[str]) -> int:
    """How many leading rules fit both caps (the rest are left out of a prompt)."""
    total = 0
    for i, rule in enumerate(rules):
        total += len(rule) + (1 if i else 0)
        if i >= MAX_RULES or total > MAX_CHARS:
            return i
    return len(rules)


def joined_chars(rules: list[str]) -> int:
    return len("\n".join(rules))


@functools.lru_cache(maxsize=256)  # rules rarely change between runs; the scan is the costly part
def rule_findings(rule: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(threat pattern ids, credential ids)`` the scanners find in ``rule``: a rule with a threat is withheld
    from the agent, credentials are redacted."""
    threats = tuple(dict.fromkeys(f.id for f in safety.scan_threats(rule)))
    secrets = tuple(dict.fromkeys(f.id for f in safety.scan_secrets(rule)))
    return threats, secrets


def duplicates(rules: list[str]) -> dict[int, int]:
    """Of the listed rules (the first :data:`LISTED_RULES`), each that repeats an earlier one (the same
    :func:`rule_key`: what ``pin add`` refuses as a duplicate): its number -> the earlier rule's."""
    first: dict[str, int] = {}
    found: dict[int, int] = {}
    for number, rule in enumerate(rules[:LISTED_RULES], 1):
        found_at = first.setdefault(rule_key(rule), number)
        if found_at != number:
            found[number] = found_at
    return found


def duplicate_words(of: int, why: str | None, original_why: str | None) -> str:
    """For a person (``pin list``, ``insights``, the inspector): what a rule repeating rule ``of`` comes to, its own
    ``why`` and rule ``of``'s beside it. The agent gets such a rule once, as rule ``of``, unless rule ``of`` is
    withheld (then it gets that rule's note and neither text) or the repeat is past a cap anyway."""
    words = f"duplicate of rule {of} (the same text, case and trailing punctuation aside)"
    if why in (OVER_CHARS, OVER_COUNT):
        return words
    if original_why == WITHHELD:
        return words + f": the agent gets neither (rule {of} is withheld)"
    return words + f": the agent gets it once, as rule {of}"


@dataclass(frozen=True)
class Reach:
    """One listed rule: ``why`` is ``None`` when the agent gets it (redacted when ``secrets``), else
    :data:`OVER_COUNT`, :data:`OVER_CHARS`, :data:`DUPLICATE` (of rule ``duplicate_of``) or :data:`WITHHELD`
    (``threats``), the first that applies in that order. ``threats`` is set whatever ``why`` is: a person is
    never shown such a rule without its mark."""

    number: int
    rule: str
    why: str | None
    threats: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    duplicate_of: int | None = None

    @property
    def given(self) -> bool:
        return self.why is None


def reach(rules: list[str]) -> list[Reach]:
    """:class:`Reach` of each of the first :data:`LISTED_RULES` rules (every later rule is past the count cap;
    nothing scans them)."""
    fit = fitting(rules)
    repeats = duplicates(rules)
    out = []
    for number, rule in enumerate(rules[:LISTED_RULES], 1):
        threats, secrets = rule_findings(rule)
        if number > fit:
            why: str | None = OVER_COUNT if number > MAX_RULES else OVER_CHARS
        elif number in repeats:
            why = DUPLICATE
        elif threats:
            why = WITHHELD
        else:
            why = None
        out.append(Reach(number, rule, why, threats, secrets, repeats.get(number)))
    return out


def reach_data(rules: list[str]) -> dict:
    """The reading as data (``pin list --json``, ``insights --json``, and what their text is rendered from):
    ``reach`` one row per listed rule, ``{"rule", "why", "threats", "credentials", "duplicateOf"}`` (``why``
    ``None``: the agent gets it); ``given`` how many the agent gets; and, for a quick look, ``withheld`` the
    numbers of the listed rules matching a threat pattern, ``redacted`` those holding a credential,
    ``duplicates`` ``{"rule", "of"}``."""
    found = reach(rules)
    return {"withheld": [r.number for r in found if r.threats],
            "redacted": [r.number for r in found if r.secrets],
            "duplicates": [{"rule": r.number, "of": r.duplicate_of} for r in found if r.duplicate_of],
            "given": sum(1 for r in found if r.given),
            "reach": [{"rule": r.number, "why": r.why, "threats": list(r.threats), "credentials": list(r.secrets),
                       "duplicateOf": r.duplicate_of} for r in found]}
