"""What the inspector shows a person of stored text: credentials redacted wherever text is rendered (curated
entries, memory blocks, standing rules, skills, refusals), a note on each item saying what the scanners found
and what to do, and a key (a hash of the text) standing for an entry in the edit and remove forms, so a page
never carries an entry's raw text.

The files hold what they hold (a hand edit may have put a key or a password there); the page is one more place
it would leak from (a screen share, a screenshot, the browser's memory), as search, recall and the snapshot
already redact. An entry holding a credential gets an empty edit box: its shown text is redacted, and writing
that back would silently replace the secret with ``[REDACTED:...]``; the person types the entry again.

Every text goes through :mod:`pi_memory.shown_text`, as the CLI's listings do: control characters escaped
(``\\xNN``: a ``NUL`` or an escape sequence never reaches the page raw), and a long text cut for display with a
note giving its size. Only what is shown is redacted and scanned for the notes, so a page answers at once
whatever a hand edit made of a file (a 10 MB skill body took 14 s per load, and its view sent 10 MB): a skill's
body past the body limit is shown up to it (the limit :func:`pi_memory.skills.checks.form_problems` refuses it
for), a block's value up to the larger of its limit and 20,000 characters (:func:`pi_memory.blocks.person.shown_limit`), at most :data:`SHOWN_ENTRIES`
entries of a store, :data:`SHOWN_RULES` standing rules (the agent never gets more).
"""

from __future__ import annotations

import hashlib
from typing import Any

from pi_memory import safety
from pi_memory.blocks.person import shown_limit
from pi_memory.shown_text import cut, raw_prefix, shown, shown_value
from pi_memory.skills import checks
from pi_memory.skills.document import MAX_BODY, MAX_DESCRIPTION
from pi_memory.standing import MAX_CHARS, MAX_RULES, OVER_CHARS, OVER_COUNT, WITHHELD, duplicate_words, reach

SHOWN_CHARS = MAX_BODY  # characters of one text shown (and scanned for its notes): a skill body's limit
SHOWN_ENTRIES = 200  # entries of one curated store shown (a hand-made file can hold 100,000)
SHOWN_RULES = MAX_RULES  # standing rules shown: the agent is given at most these

SECRET_NOTE = "holds a credential ({ids}): remove it or replace it with where the secret lives"
THREAT_NOTE = "reads like an instruction to the model ({ids})"
SKILL_THREAT = "; pi leaves the skill out and `pi-memory skills export` refuses it"
RULE_THREAT = "; the agent is not given this rule (it gets a note that a rule was withheld)"  # only a rule the
# prompt would otherwise hold: one past a cap or repeating another gets no note of its own (its reach note says why)
BLANK_SECRET = ("This entry holds a credential, so its text is not put in this box: type the entry again without "
                "the secret (say where the secret lives instead), or remove it.")
BLANK_CONTROL = ("This entry holds control characters (shown as \\xNN), so its text is not put in this box: type the "
                 "entry again without them, or remove it.")
BLANK_LONG = "This entry is too long to edit here ({chars:,} characters): edit {file}, or remove it."


def entry_key(text: str) -> str:
    """The key of an entry in a form: 16 hex digits of its text's SHA-256."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _ids(findings) -> str:
    return ", ".join(dict.fromkeys(f.id for f in findings))


def notes(text: str, prefix: str = "", threat: str = "") -> list[str]:
    """What the scanners find in ``text``, for a person: ``holds a credential (...): ...``, ``reads like an
    instruction to the model (...)`` (each after ``prefix``, e.g. ``"its description "``; ``threat`` after the
    latter: what follows from it)."""
    out = []
    if secrets := safety.scan_secrets(text):
        out.append(prefix + SECRET_NOTE.format(ids=_ids(secrets)))
    if threats := safety.scan_threats(text):
        out.append(prefix + THREAT_NOTE.format(ids=_ids(threats)) + threat)
    return [n[0].upper() + n[1:] for n in out]


def entry(text: str, file: str = "") -> dict[str, Any]:
    """One curated entry for a page: ``text`` (:func:`~pi_memory.shown_text.shown`, cut at :data:`SHOWN_CHARS`),
    ``key``, ``secret`` (it holds a credential), ``blank`` (why the edit box stays empty: writing the shown text
    back would change the entry) and ``notes`` (of the shown part)."""
    part = raw_prefix(text, SHOWN_CHARS)
    redacted = safety.redact(part)
    text_shown = shown(text, SHOWN_CHARS)
    blank = None
    if len(part) < len(text):
        blank = BLANK_LONG.format(chars=len(text), file=file or "the file")
    elif redacted != part:
        blank = BLANK_SECRET
    elif text_shown != text:
        blank = BLANK_CONTROL
    return {"text": text_shown, "key": entry_key(text), "secret": redacted != part, "blank": blank,
            "notes": notes(part)}


def entries(texts: list[str], file: str) -> tuple[list[dict[str, Any]], str | None]:
    """The first :data:`SHOWN_ENTRIES` of a store's entries for a page (:func:`entry`), and a note when there
    are more."""
    more = len(texts) - SHOWN_ENTRIES
    note = (f"Only the first {SHOWN_ENTRIES} of its {len(texts):,} entries are shown here; the whole store is in "
            f"{file}." if more > 0 else None)
    return [entry(t, file) for t in texts[:SHOWN_ENTRIES]], note


def block(b, left_out: str | None = None) -> dict[str, Any]:
    """A memory block (:class:`pi_memory.blocks.store.Block`) for a page: value and description shown (cut, with
    a note, past the larger of its limit and :data:`SHOWN_CHARS`), notes of the shown part; ``left_out``: why the
    blocks' budget leaves it out of the prompt (:func:`pi_memory.blocks.budget.left_out_reason`), if it does."""
    value, shown_value_text, value_cut = cut(b.value, shown_limit(b), "its value", str(b.path))
    description, shown_description, cut_description = cut(b.description, MAX_DESCRIPTION,
                                                                 "its description", str(b.path))
    return {"key": b.key, "scope": b.scope, "usage": b.usage, "chars": b.chars, "limit": b.limit,
            "shadowed": b.shadowed, "left_out": left_out, "description": shown_description, "value": shown_value_text,
            "problems": [shown(p, SHOWN_CHARS) for p in b.problems],
            "cut": [n for n in (value_cut, cut_description) if n],
            "notes": notes(value) + notes(description, "its description ")}


def pins(result) -> dict[str, Any]:
    """Standing instructions (a :class:`pi_memory.standing.PinResult`) for a page: the first
    :data:`SHOWN_RULES` rules shown with their notes (a rule that reads like an instruction to the model is
    withheld from the agent; one past a cap or repeating an earlier rule is not given: the prompt's own reading,
    :func:`pi_memory.standing.reach`), ``more``: how many are left out; the refusal, message and
    problems shown as every text."""
    rules = result.rules[:SHOWN_RULES]
    rows = reach(result.rules)
    return {"rules": [{"text": shown(r, SHOWN_CHARS), "key": entry_key(r),
                       "notes": notes(raw_prefix(r, SHOWN_CHARS), threat=RULE_THREAT if row.why == WITHHELD else "")
                       + _reach_notes(row, rows)}
                      for r, row in zip(rules, rows, strict=True)],
            "count": len(result.rules), "more": len(result.rules) - len(rules), "chars": result.chars,
            "error": shown(result.error or "", SHOWN_CHARS), "message": shown(result.message or "", SHOWN_CHARS),
            "problems": [shown(p, SHOWN_CHARS) for p in result.problems]}


def _reach_notes(row, rows) -> list[str]:
    """What :func:`pi_memory.standing.reach` (the prompt's reading, as ``pin list`` says it) adds to a rule's
    scanner notes: past a cap, a repeat of an earlier rule."""
    out = []
    if row.why in (OVER_CHARS, OVER_COUNT):
        cap = f"{MAX_CHARS:,} characters" if row.why == OVER_CHARS else f"{MAX_RULES} rules"
        out.append(f"Not given to the agent: past the cap of {cap} for all the rules together")
    if row.duplicate_of:
        words = duplicate_words(row.duplicate_of, row.why, rows[row.duplicate_of - 1].why)
        out.append(words[0].upper() + words[1:])
    return out


def result(outcome) -> Any:
    """A store's result for a page (a ``MemoryResult`` worded for a person, or a plain dict), its texts
    redacted: a refusal may quote the text it was given or found."""
    if isinstance(outcome, dict):
        return safety.redact_value(outcome)
    update = {k: safety.redact_value(getattr(outcome, k)) for k in ("message", "error", "notice", "matches")}
    return outcome.model_copy(update=update)


def skill_notes(skill) -> list[str]:
    """What a host could not load of a skill and what the scanners find in it
    (:func:`pi_memory.skills.checks.problems`, which scans no part past its limit), part by part."""
    out = []
    for p in checks.problems(skill):
        part = p.where + " "
        if p.invalid or p.unscanned:
            out.append(part + " and ".join(x for x in (p.invalid, p.unscanned) if x) + SKILL_THREAT)
        if p.secrets:
            out.append(part + SECRET_NOTE.format(ids=", ".join(p.secrets)))
        if p.threats:
            out.append(part + THREAT_NOTE.format(ids=", ".join(p.threats)) + SKILL_THREAT)
    return [n[0].upper() + n[1:] for n in out]


def skill(s) -> dict[str, Any]:
    """A skill (:class:`pi_memory.skills.Skill`) for the list: its summary as the CLI's ``skills list`` shows it
    (:func:`pi_memory.shown_text.shown_value`), with its notes."""
    return {**shown_value(s.summary(), MAX_DESCRIPTION), "notes": skill_notes(s)}


def skill_view(store, skill_id: str) -> dict[str, Any]:
    """One skill for a page, as ``store.view(skill_id)`` gives it but with its body cut at :data:`SHOWN_CHARS`
    (``note`` says so, with its size), every text shown as in the list, and the skill's notes."""
    found = store.find(skill_id)
    if isinstance(found, dict):
        return shown_value(found, SHOWN_CHARS)
    if found.doc is None:
        return {"success": False, "error": shown(found.error or "unreadable", SHOWN_CHARS),
                "skill": shown_value(found.summary(), MAX_DESCRIPTION)}
    _, content, note = cut(found.doc.body, SHOWN_CHARS, "the body", str(found.path))
    return {"success": True, "skill": shown_value(found.summary(), MAX_DESCRIPTION), "content": content,
            "note": note, "notes": skill_notes(found)}
