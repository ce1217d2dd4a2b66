"""What the inspector shows a person of stored text: credentials redacted wherever text is rendered (curated
entries, memory blocks, standing rules, skills, refusals), a note on each item saying what the scanners found
and what to do, and a key (a hash of the text) standing for an entry in the edit and remove forms, so a page
never carries an entry's raw text.

The files hold what they hold (a hand edit may have put a key or a password there); the page is one more place
it would leak from (a screen share, a screenshot, the browser's memory), as search, recall and the snapshot
already redact. An entry holding a credential gets an empty edit box: its shown text is redacted, and writing
that back would silently replace the secret with ``[REDACTED:...]``; the person types the entry again.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pi_memory import safety
from pi_memory.skills import checks

SECRET_NOTE = "holds a credential ({ids}): remove it or replace it with where the secret lives"
THREAT_NOTE = "reads like an instruction to the model ({ids})"
SKILL_THREAT = "; pi leaves the skill out and `pi-memory skills export` refuses it"


def entry_key(text: str) -> str:
    """The key of an entry in a form: 16 hex digits of its text's SHA-256."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _ids(findings) -> str:
    return ", ".join(dict.fromkeys(f.id for f in findings))


def notes(text: str, prefix: str = "") -> list[str]:
    """What the scanners find in ``text``, for a person: ``holds a credential (...): ...``, ``reads like an
    instruction to the model (...)`` (each after ``prefix``, e.g. ``"its description "``)."""
    out = []
    if secrets := safety.scan_secrets(text):
        out.append(prefix + SECRET_NOTE.format(ids=_ids(secrets)))
    if threats := safety.scan_threats(text):
        out.append(prefix + THREAT_NOTE.format(ids=_ids(threats)))
    return [n[0].upper() + n[1:] for n in out]


def entry(text: str) -> dict[str, Any]:
    """One curated entry for a page: ``text`` (redacted), ``key``, ``secret`` (the edit box stays empty) and
    ``notes``."""
    shown = safety.redact(text)
    return {"text": shown, "key": entry_key(text), "secret": shown != text, "notes": notes(text)}


def block(b) -> dict[str, Any]:
    """A memory block (:class:`pi_memory.blocks.store.Block`) for a page, value and description redacted."""
    return {"key": b.key, "scope": b.scope, "usage": b.usage, "chars": b.chars, "limit": b.limit,
            "shadowed": b.shadowed, "description": safety.redact(b.description), "value": safety.redact(b.value),
            "problems": [safety.redact(p) for p in b.problems],
            "notes": notes(b.value) + notes(b.description, "its description ")}


def pins(result) -> dict[str, Any]:
    """Standing instructions (a :class:`pi_memory.standing.PinResult`) for a page: each rule redacted with its
    notes; the refusal, message and problems redacted."""
    return {"rules": [{"text": safety.redact(r), "notes": notes(r)} for r in result.rules], "chars": result.chars,
            "error": safety.redact(result.error or ""), "message": safety.redact(result.message or ""),
            "problems": [safety.redact(p) for p in result.problems]}


def result(outcome) -> Any:
    """A store's result for a page (a ``MemoryResult`` worded for a person, or a plain dict), its texts
    redacted: a refusal may quote the text it was given or found."""
    if isinstance(outcome, dict):
        return safety.redact_value(outcome)
    update = {k: safety.redact_value(getattr(outcome, k)) for k in ("message", "error", "notice", "matches")}
    return outcome.model_copy(update=update)


def skill_notes(skill) -> list[str]:
    """What the scanners find in a skill (:func:`pi_memory.skills.checks.problems`), part by part."""
    out = []
    for p in checks.problems(skill):
        part = p.where + " "
        if p.secrets:
            out.append(part + SECRET_NOTE.format(ids=", ".join(p.secrets)))
        if p.threats:
            out.append(part + THREAT_NOTE.format(ids=", ".join(p.threats)) + SKILL_THREAT)
    return [n[0].upper() + n[1:] for n in out]


def skill(s) -> dict[str, Any]:
    """A skill (:class:`pi_memory.skills.Skill`) for the list: its summary redacted, with its notes."""
    return {**safety.redact_value(s.summary()), "notes": skill_notes(s)}


def skill_view(store, skill_id: str) -> dict[str, Any]:
    """``store.view(skill_id)`` for a page: every text redacted, the skill's notes added."""
    viewed = safety.redact_value(store.view(skill_id))
    found = store.find(skill_id)
    viewed["notes"] = [] if isinstance(found, dict) else skill_notes(found)
    return viewed
