"""Whether capture may retire an existing memory: the check of an UPDATE or DELETE decision against its pair.

A model that answers DELETE for "User administers the company's GitHub org" against "User works at the
company" (graphiti #1728) would retire a fact that is still true. So a decision that retires a memory must
name the contradiction, as a :class:`SupersedeReason` (``subject``, ``attribute``, ``old_value``,
``new_value``), and :func:`refusal` checks that reason against the two texts, without a model:

1. a reason is given;
2. **grounded**: the subject's words are in both texts, the old value's in the old memory, the new value's in
   the new text (the new fact for DELETE, the merged text for UPDATE); words are compared case-folded, with a
   possessive ``'s`` and a plural ``s`` cut, and one word may be missing from a value of four or more;
3. **a change**: the two values differ;
4. **the same attribute**, one of:

   * an UPDATE that keeps at least :data:`KEEP_SHARE` of the old memory's content words (a refinement: it
     retires nothing that the merged text does not still say);
   * the same frame: each text without its value and the subject is what it says about the subject (the
     attribute: "lives in", "editor is"); their content words overlap by at least :data:`SAME_FRAME`
     (Jaccard), or, when neither has content words left, their remaining words are the same and not empty
     ("The staging database is _");
   * the new text announces a change (:data:`CHANGE_WORDS`: "moved", "switched", "no longer", "not",
     "instead"...), about the same subject.

   A value that swallows the whole predicate ("works at the company" → "administers the company's GitHub
   org") leaves only the subject: no frame, so without a change word the decision is refused.

Otherwise the decision is refused: capture stores the new fact as an ADD, keeps the old memory, logs the
refusal and counts it (``CaptureReport.refused_decisions``). ``benchmarks/supersession_check.py`` measures the
check on a labelled set of pairs (:mod:`benchmarks.supersession_check_data`): real contradictions that must
still supersede, and retirements a mistaken model could ask for. Known limit: two values of a relation that
can hold several ("User has a cat" / "User has a dog" with the frame "has") pass the frame rule.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from pi_memory.index.query import STOP_WORDS

KEEP_SHARE = 2 / 3
SAME_FRAME = 0.6
_TIME_WORDS = frozenset(["now", "currently", "still", "today"])  # "User's manager is now Priya": the same frame
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
CHANGE_WORDS = re.compile(
    r"\b(?:no longer|not any ?more|any ?more|no more|stopped|stops|quit|quits|left|leaves|switched|switches|"
    r"moved|moves|changed|changes|replaced|replaces|instead|used to|formerly|previously|dropped|gave up|"
    r"abandoned|retired|cancel(?:l)?ed|ended|rather than|over|not|never|isn['’]t|aren['’]t|doesn['’]t|don['’]t|"
    r"didn['’]t|won['’]t|no)\b", re.IGNORECASE)


class SupersedeReason(BaseModel):
    """What an UPDATE or DELETE contradicts or refines: the reply's ``reason`` object."""

    subject: str = Field(description="Who or what both texts are about, in the words both use (e.g. \"User\").")
    attribute: str = Field(description="The property whose value changes (e.g. \"city of residence\").")
    old_value: str = Field(description="The old value, quoted from the existing memory.")
    new_value: str = Field(description="The new value, quoted from the new fact.")

    def describe(self) -> str:
        return f"{self.subject}: {self.attribute} {self.old_value!r} → {self.new_value!r}"


def terms(text: str) -> list[str]:
    """Case-folded words with a possessive ``'s`` and a plural ``s`` cut (``User's`` → ``user``); a run of CJK
    characters (written without spaces) gives one term per character."""
    out = []
    for word in _WORD.findall(text or ""):
        if any(ord(ch) >= 0x2E80 for ch in word):
            out.extend(ch for ch in word.casefold() if ch.isalnum())
            continue
        w = re.sub(r"['’]s$", "", word.casefold())
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


def _content(words: list[str]) -> set[str]:
    return {w for w in words if w not in STOP_WORDS}


def grounded(part: str, text: str) -> bool:
    """Whether ``part``'s words are in ``text`` (its content words when it has any; one may be missing from
    four or more)."""
    words = terms(part)
    wanted = _content(words) or set(words)
    if not wanted:
        return False
    missing = len(wanted - set(terms(text)))
    return missing == 0 or (missing == 1 and len(wanted) >= 4)


def _frame(text: str, value: str, subject: set[str]) -> tuple[set[str], set[str]]:
    """What ``text`` says about the subject besides ``value``: (content words, all words)."""
    drop = set(terms(value)) | subject | _TIME_WORDS
    rest = [w for w in terms(text) if w not in drop]
    return _content(rest), set(rest)


def refusal(event: str, old_text: str, new_text: str, reason: SupersedeReason | None) -> str | None:
    """Why an ``event`` (UPDATE / DELETE) retiring ``old_text`` for ``new_text`` is refused, or ``None`` when it
    may go ahead (module docstring). ``new_text``: the new fact (DELETE) or the merged memory (UPDATE)."""
    if reason is None:
        return "no reason named the contradiction"
    for label, part, texts in (("subject", reason.subject, (old_text, new_text)),
                               ("old value", reason.old_value, (old_text,)),
                               ("new value", reason.new_value, (new_text,))):
        if not all(grounded(part, t) for t in texts):
            where = "both texts" if len(texts) == 2 else ("the old memory" if label == "old value" else "the new text")
            return f"the reason's {label} {part[:80]!r} is not in {where}"
    if terms(reason.old_value) == terms(reason.new_value):
        return "the reason's old and new value are the same"
    old_content = _content(terms(old_text))
    if event == "UPDATE" and old_content:
        kept = len(old_content & set(terms(new_text))) / len(old_content)
        if kept >= KEEP_SHARE:
            return None
    subject = set(terms(reason.subject))
    old_attr, old_rest = _frame(old_text, reason.old_value, subject)
    new_attr, new_rest = _frame(new_text, reason.new_value, subject)
    if old_attr or new_attr:
        if len(old_attr & new_attr) / len(old_attr | new_attr) >= SAME_FRAME:
            return None
    elif old_rest and old_rest == new_rest:
        return None
    if CHANGE_WORDS.search(new_text):
        return None
    return (f"the new text does not change {reason.attribute[:80]!r} of the old memory: it says something else "
            f"about {reason.subject[:80]!r}")
