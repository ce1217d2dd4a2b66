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
"no" / "wrong" / "actually" / "stop" and punctuation removed), reason "User corrected the agent". An invalid
regex in settings is reported once (:attr:`CorrectionRules.problems`) and skipped.
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


def directive(text: str) -> str:
    """The message without its leading "no" / "wrong" / "actually" / "stop" (and punctuation), first letter up."""
    rest = _LEAD.sub("", text.strip()).strip() or text.strip()
    rest = re.sub(r"\s+", " ", rest)[:400]
    return rest[:1].upper() + rest[1:]
