"""Query expansion without model calls: what a question asks for, read with rules.

:func:`expand_query` turns a question into an :class:`ExpandedQuery`:

* **terms**: content words, lower-cased, stop words and question fillers removed ("what", "did", "kind
  of"...), possessives and contractions cut (``Melanie's`` -> ``melanie``, ``we'd`` -> ``we``; ``won't`` stays), each with a light stem (:func:`light_stem`:
  ``paintings`` -> ``paint``, ``camping`` -> ``camp``); ``fts`` is their OR as an FTS5 expression,
  every term quoted so no user text is read as FTS5 syntax;
* **speakers**: which of the conversation's speakers the question names (whole word, case-insensitive,
  possessive allowed, plus any ``aliases`` such as nicknames). On LoCoMo 96% of the evidence turns of a
  question that names one speaker were said by that speaker, so :mod:`.hybrid` favours their turns;
* **temporal**: the question asks for a time ("when...", "what year", "how long ago", "which month"...); such
  questions are answered by turns that carry a time expression (:func:`pi_memory.retrieval.turns.time_cue`);
* **dates**: explicit dates in the question (``October 13, 2023``, ``13 October 2023``, ``May 2023``,
  ``2022``, ``2023-05-08``; ``2023年5月8日``, ``2023년 5월``: :mod:`.dates_cjk`) as inclusive day ranges, so turns of sessions near them can be favoured
  (time-aware query expansion, LongMemEval §5, with rules instead of a model).

:func:`first_person` rewrites a question about a named speaker the way that speaker would have said it
("What instruments does Melanie play?" -> "What instruments does I play?"): people talk about themselves in
the first person, so the rewritten question's embedding sits nearer their own turns than one that carries
their name (which pulls towards turns *addressed* to them: "Thanks, Melanie!"). Grammar is not repaired; a
bi-encoder does not need it.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from pi_memory.index.query import QUESTION_STOP_WORDS, light_stem
from pi_memory.retrieval import dates_cjk
from pi_memory.retrieval.spans import Taken

__all__ = ["STOP_WORDS", "ExpandedQuery", "expand_query", "find_dates", "first_person", "is_temporal", "light_stem"]

#: Words dropped from a question before keyword search (function words and question fillers; the same set a
#: question read by the host's searches drops, :data:`pi_memory.index.query.QUESTION_STOP_WORDS`).
STOP_WORDS = QUESTION_STOP_WORDS

_CONTRACTION = re.compile(r"(?:'(?:s|d|ve|ll|re|m))+$|'$")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_TEMPORAL = re.compile(
    r"^\s*when\b|\bwhat (?:year|month|day|date|time|week|season)\b|\bwhich (?:year|month|day|date|week|season)\b|"
    r"\bhow long(?: ago)?\b|\bhow many (?:years|months|weeks|days|times)\b|\bsince when\b|\bwhat age\b|"
    r"\bhow old\b|\b(?:first|last) time\b",
    re.IGNORECASE,
)
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MON = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DATE_PATTERNS = (
    re.compile(r"\b(?P<iso>(?:19|20)\d\d-\d{2}-\d{2})\b"),
    re.compile(rf"\b{_MON}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),  # October 13, 2023
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+{_YEAR}\b", re.IGNORECASE),  # 13 October, 2023
    re.compile(rf"\b{_MON},?\s+{_YEAR}\b", re.IGNORECASE),  # May 2023
    re.compile(rf"\b{_YEAR}\b"),  # 2022
)


@dataclass(frozen=True)
class ExpandedQuery:
    """A question read for retrieval (module docstring). ``text`` is the question as given."""

    text: str
    terms: tuple[str, ...] = ()
    speakers: tuple[str, ...] = ()
    temporal: bool = False
    dates: tuple[tuple[date, date], ...] = field(default=())

    def singled_out(self, speakers: Sequence[str]) -> tuple[str, ...]:
        """The speakers the question names when it names some of ``speakers`` but not all (the question is
        then about what they said); ``()`` when it names none or every one of them."""
        named = tuple(s for s in self.speakers if s in speakers)
        return named if len(named) < len(set(speakers)) else ()

    @property
    def fts(self) -> str:
        """FTS5 MATCH text: the terms ORed, each quoted; ``""`` when there is none."""
        return " OR ".join('"' + t.replace('"', '""') + '"' for t in self.terms)


def is_temporal(question: str) -> bool:
    """True when the question asks for a time (when, what year, how long ago, which month...)."""
    return bool(_TEMPORAL.search(question or ""))


def _range(year: int, month: int | None = None, day: int | None = None) -> tuple[date, date] | None:
    try:
        if month is None:
            return date(year, 1, 1), date(year, 12, 31)
        if day is None:
            return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
        d = date(year, month, day)
        return d, d
    except ValueError:
        return None


def find_dates(text: str) -> list[tuple[date, date]]:
    """Explicit dates in ``text`` as inclusive ``(first day, last day)`` ranges, most specific first; a part
    of the text used by one pattern is not read again by a vaguer one (``May 2023`` inside ``8 May 2023``).
    Chinese, Japanese and Korean dates with a year (``2023年5月8日``, ``2023년 5월``) are read by
    :func:`pi_memory.retrieval.dates_cjk.absolute`."""
    text = text or ""
    found: list[tuple[date, date]] = []
    seen: set[tuple[date, date]] = set()
    taken = Taken(len(text))
    cjk = dates_cjk.absolute(text)  # 2023年5月8日, 2023년 5월: before the English year, which "2023 年" holds
    for (a, b), _ in cjk:
        taken.add(a, b)
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            if taken.overlaps(m.start(), m.end()):
                continue
            groups = m.groupdict()
            if groups.get("iso"):
                y, mo, d = (int(x) for x in groups["iso"].split("-"))
                span = _range(y, mo, d)
            else:
                month = _MONTHS.get((groups.get("mon") or "").lower().rstrip("."))
                day = int(groups["day"]) if groups.get("day") else None
                span = _range(int(groups["year"]), month, day)
            if span:  # a date said again is taken too: else "May 2023" and "2023" were read from its copy
                taken.add(m.start(), m.end())
                if span not in seen:
                    seen.add(span)
                    found.append(span)
    if not cjk:
        return found
    found += [span for span in dict.fromkeys(span for _, span in cjk) if span not in seen]
    return sorted(found, key=lambda s: 0 if s[0] == s[1] else 1 if s[0].month == s[1].month else 2)


def _names(speakers: Iterable[str], aliases: Mapping[str, Sequence[str]] | None) -> dict[str, str]:
    """lower-cased name or alias -> speaker."""
    out: dict[str, str] = {}
    for speaker in speakers:
        if speaker:
            out[speaker.lower()] = speaker
            first = speaker.split()[0].lower()
            out.setdefault(first, speaker)
    for speaker, names in (aliases or {}).items():
        for name in names:
            out.setdefault(name.lower(), speaker)
    return out


def expand_query(
    question: str,
    speakers: Iterable[str] = (),
    *,
    aliases: Mapping[str, Sequence[str]] | None = None,
    stem: bool = True,
    stop_words: frozenset[str] = STOP_WORDS,
) -> ExpandedQuery:
    """Read ``question`` for retrieval (module docstring). ``speakers``: the names of the conversation's
    speakers; ``aliases``: extra names per speaker. Never raises for any text."""
    text = question or ""
    names = _names(speakers, aliases)
    named: list[str] = []
    terms: list[str] = []
    for raw in _WORD.findall(text):
        word = raw.lower().replace("’", "'")
        word = _CONTRACTION.sub("", word) or word
        if word in names:
            if names[word] not in named:
                named.append(names[word])
            terms.append(word)  # names stay searchable: other people are named in turns too
            continue
        if word in stop_words or len(word) < 2:
            continue
        terms.append(word)
        if stem:
            stemmed = light_stem(word)
            if stemmed != word:
                terms.append(stemmed)
    unique = tuple(dict.fromkeys(terms))
    return ExpandedQuery(text=text, terms=unique, speakers=tuple(named), temporal=is_temporal(text),
                         dates=tuple(find_dates(text)))


def first_person(question: str, speakers: Iterable[str]) -> str:
    """``question`` with each of ``speakers`` (full name or first name, whole word, any case) written in the
    first person: a possessive (``Melanie's``) becomes ``my``, the name alone ``I``; spaces are collapsed.
    Longer names are replaced first, so ``Ann Lee`` wins over ``Ann``."""
    names = {name for speaker in speakers if speaker for name in (speaker, speaker.split()[0])}
    text = question or ""
    for name in sorted(names, key=len, reverse=True):
        quoted = re.escape(name)
        text = re.sub(rf"\b{quoted}['’]s?(?![\w'’])", "my", text, flags=re.IGNORECASE)
        text = re.sub(rf"\b{quoted}\b", "I", text, flags=re.IGNORECASE)
    return " ".join(text.split())
