"""What gets indexed for one conversation turn: the *key* text that is embedded and full-text indexed.

A turn's stored value stays the turn itself; only its key is enriched (the "fact-augmented key" idea of
LongMemEval, Wu et al. 2024, without the model call: here the extra fields are metadata we already have).
A key is built from, in this order:

* the session **date** in brackets, ``[8 May 2023]`` (day, month name, year: the words people use in
  questions such as "in May 2023"); weekday optional;
* the **speaker** name, ``Melanie:``;
* the turn **text**, plus ``[image: <caption>]`` when the turn shared a picture with a caption;
* a **context window** of neighbouring turns of the same session (``before`` turns ahead of it, ``after``
  turns behind it), each ``Speaker: text`` cut to ``neighbour_chars`` characters, after ``|``.

Windows never cross a session boundary. Measured effects on LoCoMo are printed by
``benchmarks/locomo_recall.py --ablations``.

:func:`time_cue` says whether a text carries a time expression ("yesterday", "last week", "in 2022",
"on Friday", a month name...); :mod:`.hybrid` uses it to favour such turns for "when" questions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

__all__ = ["KeySpec", "Turn", "as_date", "build_keys", "format_date", "key_fields", "time_cue", "turn_key"]

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

_TIME_WORDS = (
    r"yesterday|today|tonight|tomorrow|ago|recently|lately|last|next|earlier|later|since|weekend|"
    r"week|weeks|month|months|year|years|morning|afternoon|evening|night|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"january|february|march|april|june|july|august|september|october|november|december|"
    r"spring|summer|autumn|fall|winter|christmas|thanksgiving|easter|halloween|birthday|anniversary"
)
_TIME_CUE = re.compile(rf"\b(?:{_TIME_WORDS})\b|\b(?:19|20)\d\d\b|\b\d{{1,2}}/\d{{1,2}}\b|\bmay \d", re.IGNORECASE)


@dataclass(frozen=True)
class Turn:
    """One conversation turn as the retrieval layer sees it.

    ``id``: unique within its group (e.g. a LoCoMo ``dia_id`` or a pi entry id). ``text``: what was said.
    ``speaker``: display name (``""`` when unknown). ``when``: the session's date or time (``date``,
    ``datetime`` or ISO text; ``None`` when unknown). ``session``: turns with the same value form one session,
    in order (windows stay inside it). ``caption``: a description of a shared image, if any.
    """

    id: str
    text: str
    speaker: str = ""
    when: date | datetime | str | None = None
    session: str = ""
    caption: str = ""

    @property
    def day(self) -> date | None:
        return as_date(self.when)


@dataclass(frozen=True)
class KeySpec:
    """Which fields go into a key (module docstring). ``KeySpec()`` is the plain turn text."""

    speaker: bool = False
    date: bool = False
    weekday: bool = False
    caption: bool = True
    before: int = 0
    after: int = 0
    neighbour_chars: int = 200
    neighbour_speaker: bool = True

    @classmethod
    def window(cls, n: int, **fields: bool) -> KeySpec:
        """Speaker and date on, ``n`` neighbours each side (``fields`` override)."""
        return cls(**{"speaker": True, "date": True, "before": n, "after": n, **fields})


def as_date(value: date | datetime | str | None) -> date | None:
    """A calendar day from a ``date``, a ``datetime`` or ISO text (``2023-05-08``, ``2023-05-08T13:56:00Z``)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    text = str(value).strip()
    match = re.match(r"(\d{4})-(\d{2})-(\d{2})", text)
    if not match:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def format_date(day: date, weekday: bool = False) -> str:
    """``8 May 2023`` (``Monday 8 May 2023`` with ``weekday``)."""
    text = f"{day.day} {MONTHS[day.month - 1]} {day.year}"
    return f"{WEEKDAYS[day.weekday()]} {text}" if weekday else text


def time_cue(text: str) -> bool:
    """True when ``text`` contains a time expression (a relative day, a weekday, a month, a year...)."""
    return bool(_TIME_CUE.search(text or ""))


def _body(turn: Turn, spec: KeySpec, speaker: bool) -> str:
    text = " ".join((turn.text or "").split())
    if spec.caption and turn.caption:
        text = f"{text} [image: {' '.join(turn.caption.split())}]".strip()
    if speaker and turn.speaker:
        text = f"{turn.speaker}: {text}"
    return text


def _clip(text: str, limit: int) -> str:
    if limit <= 0 or len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return (cut or text[:limit]) + "…"


def key_fields(turns: Sequence[Turn], index: int, spec: KeySpec) -> tuple[str, str, str]:
    """The three parts of the key of ``turns[index]`` (``turns``: the whole group, in order):
    ``own`` (the turn's text and image caption), ``context`` (the window of neighbours, ``Speaker: text``
    each, joined by ``|``) and ``meta`` (speaker and date, as the spec asks). The FTS5 table keeps them as
    separate columns so BM25 can weigh them apart (BM25F-style)."""
    turn = turns[index]
    meta = []
    day = turn.day
    if spec.date and day is not None:
        meta.append(f"[{format_date(day, spec.weekday)}]")
    if spec.speaker and turn.speaker:
        meta.append(f"{turn.speaker}:")
    context = []
    for offset in [*range(-spec.before, 0), *range(1, spec.after + 1)]:
        j = index + offset
        if 0 <= j < len(turns) and turns[j].session == turn.session:
            context.append(_clip(_body(turns[j], spec, spec.neighbour_speaker), spec.neighbour_chars))
    return _body(turn, spec, False), " | ".join(context), " ".join(meta)


def turn_key(turns: Sequence[Turn], index: int, spec: KeySpec) -> str:
    """The key of ``turns[index]`` as one text (what gets embedded): ``[date] Speaker: text | context``."""
    own, context, meta = key_fields(turns, index, spec)
    text = f"{meta} {own}".strip()
    return f"{text} | {context}" if context else text


def build_keys(turns: Sequence[Turn], spec: KeySpec) -> list[str]:
    """Keys of every turn of one group (turns in conversation order)."""
    return [turn_key(turns, i, spec) for i in range(len(turns))]
