"""Stored text as a person is shown it, by the CLI's listings and the inspector's pages alike.

A file edited by hand can hold anything: a credential, a control character (``NUL``, an ``ESC`` sequence that
rewrites a terminal line), ten megabytes. What a person is shown of it has credentials redacted (a screen share
or a scrollback is one more place a key would leak from), control characters escaped as ``\\xNN`` and hidden
or line-reordering characters (U+202E, U+200B...) as ``\\uXXXX`` (:func:`pi_memory.curated.entries.printable`,
:mod:`pi_memory.terminal_text`), and, past a bound, only a prefix: cut where it does not end
inside a credential, so redacting the prefix hides all of it, and only that prefix is redacted and escaped (a
whole 10 MB file took seconds on every page). Whoever cuts says so, with the size (:func:`cut_note`).
"""

from __future__ import annotations

from typing import Any

from pi_memory import safety
from pi_memory.curated.entries import printable

MARGIN = 8192  # characters past a cut looked at for a credential the cut would split (a PEM key fits)


def raw_prefix(text: str, limit: int) -> str:
    """At most ``limit`` characters from the start of ``text``, ending before a credential the cut would split."""
    if len(text) <= limit:
        return text
    for span in safety.secret_spans(text[:limit + MARGIN]):
        if span.start < limit < span.end:
            return text[:span.start]
    return text[:limit]


def shown(text: str, limit: int | None = None) -> str:
    """``text`` for a person: redacted, control characters escaped; with ``limit``, only its first ``limit``
    characters (:func:`raw_prefix`), with ``…`` after them when more was left out."""
    part = text if limit is None else raw_prefix(text, limit)
    return printable(safety.redact(part)) + ("…" if len(part) < len(text) else "")


def shown_value(value: Any, limit: int | None = None) -> Any:
    """``value`` (a summary dict, a list) with every string in it :func:`shown` (``limit`` applies to each)."""
    if isinstance(value, str):
        return shown(value, limit)
    if isinstance(value, dict):
        return {k: shown_value(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shown_value(v, limit) for v in value]
    return value


def cut_note(total: int, shown_chars: int, what: str, where: str = "") -> str:
    """The note beside a text cut for display: ``Only the first 20,000 of the body's 10,000,000 characters are
    shown here; the whole text is in <where>.``"""
    return (f"Only the first {shown_chars:,} of {what}'s {total:,} characters are shown here"
            + (f"; the whole text is in {where}." if where else "."))


def cut(text: str, limit: int, what: str, where: str = "") -> tuple[str, str, str | None]:
    """``(raw part, part shown, note)`` of ``text`` cut at ``limit`` characters for a person: the raw part
    (:func:`raw_prefix`, for scanning: nothing past it is scanned), it :func:`shown`, and the :func:`cut_note`
    when something was left out (else ``None``)."""
    part = raw_prefix(text, limit)
    note = cut_note(len(text), len(part), what, where) if len(part) < len(text) else None
    return part, shown(part), note
