"""Correction capture: rules that spot a user correcting the agent, and the rule-based save.

Rules (case-insensitive; each list replaceable in settings, an empty list meaning none):

* negative patterns first, and they win: "no worries", "no problem", "no thanks", "no need" at the start;
  "actually" then looks great / perfect / good / correct / right within 10 characters; "stop" then there /
  here / for now within 5 characters;
* strong patterns always trigger: "don't do that", "not like that", a message starting with "I said" or "I told
  you", "we already discussed", starting with "please don't", starting with "that's not what I";
* weak patterns: a message starting with "no", "wrong", "actually" or "stop" followed by punctuation or a space;
  they trigger only when the rest holds a whole directive word (use, don't, run, install, the, that...).

The saved entry is a ``failure`` entry of category ``correction``: the directive (the message with its leading
"no" / "wrong" / "actually" / "stop" and punctuation removed, credentials replaced by ``[REDACTED:<kind>]``),
reason "User corrected the agent" (in project NAME). :func:`capture` is the one decision: what the capture of a
session saves and what ``pi-memory learning detect`` previews. Every host saves the same entry for the same
message, whether it hands over the message as typed (pi) or with its credentials already redacted (the Claude
Code and Codex hooks keep the prompt that way). An invalid regex in settings is reported once
(:attr:`CorrectionRules.problems`) and skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DEFAULT_NEGATIVE = (
    r"^\s*no\s+(worries|problem|thanks|need)\b",
    r"\bactually\b.{0,10}\b(looks?\s+(great|perfect|good)|perfect|good|correct|right)\b",
    r"\bstop\b.{0,5}\b(there|here|for\s+now)\b",
)
DEFAULT_STRONG = (
    r"\bdon'?t\s+do\s+that\b",
    r"\bnot\s+like\s+that\b",
    r"^\s*i\s+(said|told\s+you)\b",
    r"\bwe\s+already\s+discussed\b",
    r"^\s*please\s+don'?t\b",
    r"^\s*that'?s\s+not\s+what\s+i\b",
)
DEFAULT_WEAK = (r"^\s*(no|wrong|actually|stop)[\s,.!:;-]",)
DEFAULT_DIRECTIVES = (
    "use", "don't", "dont", "do", "try", "make", "run", "install", "add", "remove", "delete", "change", "fix", "put",
    "set", "write", "go", "stop", "start", "the", "that", "this", "it",
)
_LEAD = re.compile(r"^\s*(?:(?:no|nope|wrong|actually|stop)\b[\s,.!:;-]*)+", re.IGNORECASE)
REASON = "User corrected the agent"


@dataclass(frozen=True)
class Detection:
    correction: bool
    directive: str | None = None
    rule: str | None = None  # "strong:<pattern>" | "weak:<pattern>+<word>" | "negative:<pattern>" | None

    def to_dict(self) -> dict:
        return {"correction": self.correction, "directive": self.directive, "rule": self.rule}


@dataclass
class CorrectionRules:
    strong: list[re.Pattern] = field(default_factory=list)
    weak: list[re.Pattern] = field(default_factory=list)
    negative: list[re.Pattern] = field(default_factory=list)
    directives: frozenset[str] = frozenset(DEFAULT_DIRECTIVES)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def from_lists(cls, strong=None, weak=None, negative=None, directives=None) -> CorrectionRules:
        """Rules from settings lists (``None``: the defaults above). Invalid regexes land in ``problems``."""
        rules = cls(directives=frozenset(w.lower() for w in (DEFAULT_DIRECTIVES if directives is None else directives)))
        for name, given, default in (("Strong", strong, DEFAULT_STRONG), ("Weak", weak, DEFAULT_WEAK),
                                     ("Negative", negative, DEFAULT_NEGATIVE)):
            for pattern in default if given is None else given:
                try:
                    getattr(rules, name.lower()).append(re.compile(pattern, re.IGNORECASE))
                except (re.error, TypeError) as exc:
                    rules.problems.append(f"correction{name}Patterns: {pattern!r} is not a valid regular expression "
                                          f"({exc}); it is skipped")
        return rules

    def detect(self, text: str) -> Detection:
        text = (text or "").strip()
        if not text:
            return Detection(False)
        for p in self.negative:
            if p.search(text):
                return Detection(False, None, f"negative:{p.pattern}")
        for p in self.strong:
            if p.search(text):
                return Detection(True, directive(text), f"strong:{p.pattern}")
        for p in self.weak:
            m = p.search(text)
            if not m:
                continue
            rest = text[m.end():].lower()
            hit = next((w for w in re.findall(r"[a-z']+", rest) if w in self.directives), None)
            if hit:
                return Detection(True, directive(text), f"weak:{p.pattern}+{hit}")
        return Detection(False)


@dataclass(frozen=True)
class Capture:
    """What the capture of one user message does: ``entry`` is the FAILURES.md entry it saves (``None``: not a
    correction), ``redacted`` the kinds of credential taken out of it, ``refused`` the finding the store would
    refuse it for (a threat pattern), ``None`` when it would be saved."""

    detection: Detection
    entry: str | None = None
    redacted: tuple[str, ...] = ()
    refused: object | None = None  # pi_memory.safety.Finding


def capture(rules: CorrectionRules, text: str, project: str | None) -> Capture:
    """The rule-based capture of ``text`` (a user message) in ``project`` (``None``: outside a project)."""
    found = rules.detect(text)
    if not found.correction:
        return Capture(found)
    entry, redacted = correction_entry(found.directive or "", project)
    from pi_memory import safety

    return Capture(found, entry, redacted, safety.check_write(entry))


def correction_entry(directive: str, project: str | None) -> tuple[str, tuple[str, ...]]:
    """The FAILURES.md entry saving ``directive``, with its credentials redacted, and their kinds."""
    from pi_memory import safety
    from pi_memory.curated.entries import failure_entry

    redacted = tuple(dict.fromkeys(f.id for f in safety.scan_secrets(directive)))
    # Scoped to the project when there is one: FAILURES.md is one file, so the reason names the project.
    reason = REASON + (f" in project {project}" if project else "")
    return failure_entry(safety.redact(directive) if redacted else directive, "correction", reason), redacted


def directive(text: str) -> str:
    """The message without its leading "no" / "wrong" / "actually" / "stop" (and punctuation), first letter up."""
    rest = _LEAD.sub("", text.strip()).strip() or text.strip()
    rest = re.sub(r"\s+", " ", rest)[:400]
    return rest[:1].upper() + rest[1:]
