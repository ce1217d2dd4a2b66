"""The moment a recall is asked at (``as_of``) and the date windows a prompt names, for :func:`recall`.

* :func:`as_of_iso` -- ``as_of`` (``datetime``, ``date``, ISO text, ``None`` = now) as the stored timestamp
  form (``YYYY-MM-DDTHH:MM:SS.mmmZ``, UTC), so it compares with session and memory timestamps as text. A bare
  date means the end of that day.
* :func:`date_windows` -- the days the prompt is about, as inclusive ``(first, last)`` ranges read against
  ``as_of``, and the prompt with those phrases removed (so "May" or "last week" are not keyword terms that
  every turn saying "may" or "week" would match). Read with rules, in English:

  ======================================  ==================================================================
  phrase                                  window
  ======================================  ==================================================================
  ``today`` / ``yesterday``               that day
  ``two days ago``, ``3 weeks ago``       that day (weeks: the 7 days ending then; months: that month)
  ``last week`` / ``this week``           the previous / current Monday-Sunday week
  ``last month`` / ``this month``         the previous / current calendar month
  ``last year`` / ``this year``           the previous / current calendar year
  ``last Monday``, ``on Friday``          the latest such weekday before ``as_of``'s day
  ``in May``, ``May``                     the latest May that began on or before ``as_of``
  ``May 8``, ``8 May``, ``May 8th``       the latest such day on or before ``as_of``
  ``2023-05-08``, ``May 8, 2023``,        that day / month / year (:func:`pi_memory.retrieval.expand.find_dates`)
  ``May 2023``, ``2023``
  ======================================  ==================================================================

  and in Chinese, Japanese and Korean (:mod:`pi_memory.retrieval.dates_cjk`; its docstring says which
  characters a phrase takes with it and what is not read), each as the English phrase on its right:

  ===============================================================  ==========================================
  phrase                                                           read as
  ===============================================================  ==========================================
  ``今天`` ``今日`` ``本日`` ``今朝`` ``오늘``                      ``today``
  ``昨天`` ``昨日`` ``昨晚`` ``きのう`` ``어제``                    ``yesterday``
  ``前天`` ``一昨日`` ``おととい`` ``그저께``                       ``the day before yesterday``
  ``3天前`` ``3日前`` ``两天前`` ``3일 전`` ``이틀 전``              ``3 days ago`` (``几天前``: a few)
  ``2周前`` ``2週間前`` ``2个星期前`` ``2주 전`` ``일주일 전``        ``2 weeks ago``
  ``2个月前`` ``2ヶ月前`` ``2か月前`` ``2개월 전`` ``두 달 전``        ``2 months ago``
  ``3年前`` ``3년 전``                                              ``3 years ago``
  ``上周`` ``上週`` ``上星期`` ``先週`` ``지난주`` (``上上周``)        ``last week`` (the week before)
  ``本周`` ``这周`` ``今週`` ``이번 주``                             ``this week``
  ``上周五``, ``本周一``, ``上星期三``                              that day of that week
  ``上个月`` ``上個月`` ``上月`` ``先月`` ``지난달``                  ``last month``
  ``这个月`` ``本月`` ``今月`` ``이번 달``                           ``this month``
  ``去年`` ``昨年`` ``작년`` ``지난해`` (``一昨年`` ``재작년``)        ``last year`` (the year before)
  ``今年`` ``올해``                                                 ``this year``
  ``5月`` ``5月份`` ``五月`` ``5월``                                 ``May``
  ``5月8日`` ``5月8号`` ``五月八日`` ``5월 8일``                      ``May 8``
  ``2023年5月8日`` ``2023年5月`` ``2023年`` ``2023년 5월 8일``        ``May 8, 2023``, ``May 2023``, ``2023``
  ===============================================================  ==========================================

  In Russian, German, Spanish, French and Portuguese the same readings come from
  :mod:`pi_memory.retrieval.dates_eu` (``вчера``, ``vor 3 Tagen``, ``la semana pasada``, ``en mai``, ``3 de maio``;
  its docstring has the table).

  Full-width digits (``２０２３年５月８日``) are read as ASCII ones. Not dates: ``2023年度``/``今年度`` (a fiscal
  year: April to March in Japan), a number after a digit, a Latin letter or ``.`` (``v1.5月``), ``3个月``
  without ``前`` (a duration); CJK has no word boundaries, so no ``\\b`` is used there.

  Every window is widened by :data:`MARGIN_DAYS` on each side: people misremember by a day, and a turn
  written just after midnight UTC belongs to the evening before in most time zones. A window never ends after
  ``as_of``'s day (nothing later can be returned anyway).

A bare month name is read as a date only when it is capitalised (``May``, not ``may``) or follows ``in``/
``during``/``since``, so the modal verb is not a date.
"""

from __future__ import annotations

import calendar
import itertools
import re
from datetime import UTC, date, datetime, timedelta

from pi_memory.index.filters import parse_time
from pi_memory.retrieval import dates_cjk, dates_eu
from pi_memory.retrieval.expand import find_dates
from pi_memory.retrieval.spans import Taken

MARGIN_DAYS = 1

_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3}
_NUM = r"(?P<n>\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"
_MONTH_NAMES = {n.lower(): i for i, n in enumerate(calendar.month_name) if n}
_MONTH_NAMES.update({n.lower(): i for i, n in enumerate(calendar.month_abbr) if n and n.lower() != "may"})
_MONTH_NAMES["sept"] = 9
_MON = r"(?P<mon>" + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True)) + r")\.?"
_WEEKDAYS = {n.lower(): i for i, n in enumerate(calendar.day_name)}
_WD = r"(?P<wd>" + "|".join(_WEEKDAYS) + ")"
_DAYNUM = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"

_ABSOLUTE = re.compile(r"\b(?:19|20)\d\d-\d{2}-\d{2}\b|\b" + _MON.replace("?P<mon>", "?:") +
                       r"(?:\s+\d{1,2}(?:st|nd|rd|th)?)?,?\s+(?:19|20)\d\d\b|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?"
                       + _MON.replace("?P<mon>", "?:") + r",?\s+(?:19|20)\d\d\b|\b(?:19|20)\d\d\b", re.IGNORECASE)
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("day", re.compile(r"\b(?P<word>today|yesterday|the day before yesterday)\b", re.IGNORECASE)),
    ("ago", re.compile(rf"\b{_NUM}\s+(?P<unit>day|week|month|year)s?\s+ago\b", re.IGNORECASE)),
    ("rel", re.compile(r"\b(?P<which>last|this|past|previous)\s+(?P<unit>week|month|year)\b", re.IGNORECASE)),
    ("wd", re.compile(rf"\b(?:last|on|this past)\s+{_WD}\b", re.IGNORECASE)),
    ("md", re.compile(rf"\b(?:on\s+)?{_MON}\s+{_DAYNUM}\b(?!,?\s+(?:19|20)\d\d)", re.IGNORECASE)),
    ("dm", re.compile(rf"\b(?:on\s+)?(?:the\s+)?{_DAYNUM}\s+(?:of\s+)?{_MON}\b(?!,?\s+(?:19|20)\d\d)",
                      re.IGNORECASE)),
    ("mon", re.compile(rf"\b(?P<prep>in|during|since|of)\s+{_MON}\b(?!\s+\d)", re.IGNORECASE)),
    ("mon", re.compile(r"\b(?P<cap>(?:January|February|March|April|May|June|July|August|September|October|"
                       r"November|December))\b(?!\s+\d)(?!\s+(?:I|we|you|he|she|they|it|be|the|a|an|not|also|about|through|to|"
                       r"and|or|is|was|will|would|can|could|should|has|had|have|said|says|told|asked|wants|thinks)\b)")),
)


def as_of_iso(as_of: str | date | datetime | None) -> str:
    """``as_of`` in the stored timestamp form (module docstring); ``None`` or blank: now. Raises
    :class:`pi_memory.index.filters.SearchInputError` for text that is not a date or time."""
    if as_of is None or (isinstance(as_of, str) and not as_of.strip()):
        as_of = datetime.now(UTC)
    return str(parse_time(as_of, upper=True))


def _day_of(as_of: str) -> date:
    return date.fromisoformat(as_of[:10])


def _month(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _latest(today: date, month: int, day: int | None) -> tuple[date, date] | None:
    """The latest ``month`` (``day``) that began on or before ``today``."""
    for year in (today.year, today.year - 1, today.year - 2, today.year - 3, today.year - 4):
        try:
            span = (date(year, month, day), date(year, month, day)) if day else _month(year, month)
        except ValueError:  # February 29th outside a leap year
            continue
        if span[0] <= today:
            return span
    return None


def _plain_word(m: re.Match[str]) -> bool:
    """Whether a rule's month is a short form written in lower case ("convert dec 10", "sep 2"): a word, not a
    date (a full name in lower case, "june 5", is still read)."""
    mon = m.groupdict().get("mon")
    return bool(mon) and mon.islower() and mon.rstrip(".") not in ("may", "june", "july")


def _reading(kind: str, m: re.Match[str]) -> tuple[str, int, int | str | None]:
    """An English rule's match as a reading (:func:`_span`)."""
    g = m.groupdict()
    if kind == "day":
        return "ago", {"today": 0, "yesterday": 1, "the day before yesterday": 2}[g["word"].lower()], "day"
    if kind == "ago":
        return "ago", int(g["n"]) if g["n"].isdigit() else _NUMBERS[g["n"].lower()], g["unit"].lower()
    if kind == "rel":
        return "rel", 0 if g["which"].lower() == "this" else 1, g["unit"].lower()
    if kind == "wd":
        return "wd", _WEEKDAYS[g["wd"].lower()], None
    month = _MONTH_NAMES.get((g.get("mon") or g.get("cap") or "may").lower().rstrip("."), 5)
    return "md", month, int(g["day"]) if g.get("day") else None


def _span(reading: tuple[str, int, int | str | None], today: date) -> tuple[date, date] | None:
    """The days of a reading, English or CJK (:func:`pi_memory.retrieval.dates_cjk.readings`): ``("ago", n,
    unit)``, ``("rel", back, unit)`` (the calendar unit ``back`` units before the current one), ``("wkday",
    back, weekday)`` (that day of that Monday-Sunday week), ``("wd", weekday, None)`` (the latest such day
    before today), ``("md", month, day or None)``, ``("ymd", year, (month, day or None))``."""
    kind, n, unit = reading
    if kind == "ago":
        if unit == "day":
            d = today - timedelta(days=n)
            return d, d
        if unit == "week":
            end = today - timedelta(weeks=n)
            return end - timedelta(days=6), end + timedelta(days=3)
        months = today.year * 12 + today.month - 1 - (n if unit == "month" else 12 * n)
        if unit == "year":
            return date(months // 12, 1, 1), date(months // 12, 12, 31)
        return _month(months // 12, months % 12 + 1)
    if kind == "rel":
        if unit == "week":
            monday = today - timedelta(days=today.weekday()) - timedelta(weeks=n)
            return monday, monday + timedelta(days=6)
        if unit == "month":
            months = today.year * 12 + today.month - 1 - n
            return _month(months // 12, months % 12 + 1)
        year = today.year - n
        return date(year, 1, 1), date(year, 12, 31)
    if kind == "wkday":  # 上周五: Friday of the week ``n`` weeks back
        d = today - timedelta(days=today.weekday()) - timedelta(weeks=n) + timedelta(days=unit)
        return d, d
    if kind == "ymd":  # a month (day) of a year named with it (dates_eu: "im März 2019")
        month, day = unit
        if day is None:
            return _month(n, month)
        return (date(n, month, day), date(n, month, day)) if day <= calendar.monthrange(n, month)[1] else None
    if kind == "wd":
        back = (today.weekday() - n) % 7 or 7
        d = today - timedelta(days=back)
        return d, d
    return _latest(today, n, unit if isinstance(unit, int) else None)


# A number of four digits is a year only after a word that says so ("in 2023", "since 2019", "the 2022 audit"
# is not read): "error code 2026", "port 2026", "fix JIRA-2026" are no dates, and a year that holds the day asked
# on would let everything of this year past recall's floor.
_YEAR_CUE = re.compile(r"(?:\b(?:in|during|since|from|of|before|after|until|till|by|around|throughout|year|early|"
                       r"late|mid|spring|summer|autumn|fall|winter)\s+|年|년)$", re.IGNORECASE)


def _loose_year(span: tuple[date, date], loose: set[str], kept: set[str]) -> bool:
    """Whether ``span`` is the whole year of a four-digit number with no cue (``loose``: those numbers) and of no
    date read otherwise (``kept``: the text of the absolute dates that stay)."""
    first, last = span
    if (first.month, first.day, last.month, last.day) != (1, 1, 12, 31):
        return False
    year = str(first.year)
    return year in loose and not any(year in k for k in kept)


_CUE_REACH = 64  # characters before a number searched for its cue: the longest cue word and a run of spaces


def _year_cue_before(text: str, at: int) -> bool:
    """Whether a cue that makes a four-digit number a year ends right before ``at`` (``_YEAR_CUE``). Only the
    last ``_CUE_REACH`` characters are searched (the whole text before each number: quadratic in a long prompt)."""
    return _YEAR_CUE.search(text, max(0, at - _CUE_REACH), at) is not None


class Window(tuple):
    """A date window: the inclusive ``(first, last)`` days, compared and unpacked as that pair, and
    ``holds_today``: it was read from a phrase placing the question in the present ("today", "this week", "this
    month", "this year", "今天", "이번 주"), which says when the user asks rather than what about. A date
    or month named outright ("in August 2023", "in December") is not such a phrase, even when the day asked on
    falls inside it. Recall lets a day alone past its floor only in a window that does not hold today
    (:func:`pi_memory.retrieval.engine.recall`)."""

    holds_today: bool
    core: tuple[date, date]  # the days the phrase names, before the margin is added: what the prompt asks about

    def __new__(cls, first: date, last: date, *, holds_today: bool = False,
                core: tuple[date, date] | None = None) -> Window:
        window = super().__new__(cls, (first, last))
        window.holds_today = holds_today
        window.core = core or (first, last)
        return window


def date_windows(prompt: str, as_of: str) -> tuple[list[Window], str]:
    """``(windows, rest)``: the date windows ``prompt`` names read against ``as_of`` (the form of
    :func:`as_of_iso`), widened and capped as the module docstring says, most specific first (each a
    :class:`Window`), and the prompt with the date phrases blanked out. ``([], prompt)`` when it names none."""
    text = prompt or ""
    today = _day_of(as_of)
    found: list[tuple[date, date]] = []
    now: set[tuple[date, date]] = set()  # the spans read from "today" / "this week|month|year" (Window.holds_today)
    taken = Taken(len(text))
    matches = list(_ABSOLUTE.finditer(text))
    loose = {m.span() for m in matches if m.group().isdigit() and not _year_cue_before(text, m.start())}
    absolute = [m.span() for m in matches if m.span() not in loose] + [s for s, _ in dates_cjk.absolute(text)]
    if absolute:
        kept = {m.group() for m in matches if m.span() not in loose}
        years = {text[a:b] for a, b in loose}
        found += [span for span in find_dates(text) if not _loose_year(span, years, kept)]
        for a, b in absolute:
            taken.add(a, b)
    seen = set(found)
    english = ((m.span(), _reading(kind, m)) for kind, pattern in _RULES for m in pattern.finditer(text)
               if not _plain_word(m))
    for (start, end), reading in itertools.chain(english, dates_cjk.readings(text), dates_eu.readings(text)):
        if taken.overlaps(start, end):
            continue
        try:
            span = _span(reading, today)
        except (OverflowError, ValueError):  # "3 years ago" asked as of the year 2: before the calendar
            span = None
        if span is not None and span not in seen:
            seen.add(span)
            found.append(span)
        if span is not None and reading[:2] in (("ago", 0), ("rel", 0)):
            now.add(span)
        taken.add(start, end)
    margin = timedelta(days=MARGIN_DAYS)
    windows: list[Window] = []
    for first, last in found:
        if first > today:
            continue
        lo = first - margin if first - date.min >= margin else date.min  # no overflow at the calendar's ends
        hi = today if last >= today else min(last + margin, today)
        window = Window(lo, hi, holds_today=(first, last) in now, core=(first, min(last, today)))
        if window not in windows:
            windows.append(window)
    if not windows:
        return windows, text
    return windows, " ".join(taken.blank(text).split())


# Words that ask what went on without saying what about ("what happened", "what did we do", "what did we decide",
# "recap", "进展",
# "何があった", "무슨 일"). A prompt holding one of them and, once its date phrases and these are gone, nothing but stop
# words asks for the window itself ("what happened this week?", "what did we do today?", "今天做了什么？"); "how are
# you today?" or "what should I do today?" hold none and ask nothing of the past.
_ACTIVITY = re.compile(
    r"(?i)\b(?:did\s+(?:we|i|you|they)\s+(?:decide|agree(?:\s+on)?|discuss|say|talk(?:\s+about)?|change|plan|"
    r"settle\s+on|choose|pick)|happen(?:ed|s)?|did|done|worked|work(?:ed)?\s+on|talked|discussed|decided|said|changed|agreed|"
    r"went|(?:get|got)\s+done|accomplish(?:ed)?|finish(?:ed)?|summar(?:y|ize|ise)|recap|progress|new|going\s+on|"
    r"earlier|so\s+far|anything|everything"
    # Russian, German, Spanish, French, Portuguese (the languages of dates_eu): happened, did, discussed, decided
    r"|произошло|случилось|было|сделали|делали|обсуждали|решили|passiert|gemacht|getan|besprochen|beschlossen"
    r"|entschieden|erledigt|pasó|hicimos|hablamos|discutimos|decidimos|novedades|passé|fait|faits|discuté|décidé"
    r"|aconteceu|fizemos|falamos|novidades"
    r"|hecho|haben|hat|habt|avons|avez|ont|hemos|han|ha)\b|"  # and the auxiliaries of those questions
    r"发生|做了|干了|讨论|决定|聊了|进展|哪些工作|什么事|何を|何が|した|やった|話した|決めた|あった|進捗|"
    r"무엇을|무슨\s*일|뭐|뭘|했|있었|일어났")


# Words that ask what was decided ("what did we decide about caching last week?", "which database did we choose?"):
# the answer is a turn of the window that says so in its own words ("we agreed to drop redis and keep an in-process
# LRU"), which may share no word with the prompt and sit at a cosine no higher than an unrelated turn's.
_DECISION = re.compile(
    r"(?i)\b(?:decid\w*|decision\w*|agree[ds]?|agreement|settled?\s+on|cho(?:se|ose|osing|sen|ice)|conclu\w*|"
    r"went\s+with|land(?:ed)?\s+on|end(?:ed)?\s+up|решили|договорились|выбрали|beschlossen|entschieden|vereinbart|"
    r"decidimos|acordamos|elegimos|décidé|convenu|choisi|decidiu|escolhemos)\b|决定|决策|定了|決めた|決定|결정")


# What a turn recording a decision says: the words of _DECISION, or a first person settling on something ("let's go
# with pnpm", "we'll keep the LRU", "going with option B", "we switched to uv").
_DECIDED = re.compile(
    r"(?i)\b(?:let'?s|let\s+us|we'?ll|we\s+will|we\s+are|we'?re|i'?ll)\s+(?:go\s+with|use|keep|drop|switch|move|stick|"
    r"stay|pick|take)\b|\b(?:going|went)\s+with\b|\bwe\s+(?:switched|moved|dropped|picked|kept)\b")


def asks_decision(rest: str) -> bool:
    """Whether ``rest`` (a prompt without its date phrases) asks what was decided (``_DECISION``)."""
    return _DECISION.search(rest) is not None


def states_decision(text: str) -> bool:
    """Whether ``text`` (a turn, a memory) records a decision (``_DECISION``, ``_DECIDED``)."""
    return _DECISION.search(text or "") is not None or _DECIDED.search(text or "") is not None


def what_went_on(rest: str) -> str | None:
    """``rest`` (a prompt without its date phrases) without the words that ask what went on (``_ACTIVITY``), or
    ``None`` when it holds none of them."""
    left, found = _ACTIVITY.subn(" ", rest)
    return left if found else None


def floor_windows(windows: list[Window], as_of: str, *, bare: bool) -> list[tuple[date, date]]:
    """The days inside which a candidate's day alone passes recall's evidence floor: the windows asked about as
    past (not :attr:`Window.holds_today`), ending the day before ``as_of``'s (their one-day margin reaches it, and
    "what did we do yesterday?" is not answered by what was stored today), and, when the prompt asks nothing but
    what went on (``bare``: :func:`what_went_on`), the windows holding today as they are."""
    asked = _day_of(as_of)
    out: list[tuple[date, date]] = []
    for w in windows:
        if w.holds_today:
            if bare:
                out.append((w[0], w[1]))
        elif w[0] < asked:
            out.append((w[0], min(w[1], asked - timedelta(days=1))))
    return out


def asked_days(keys: list[str], days: dict[str, str], windows: list[Window]) -> list[str]:
    """Of ``keys`` (each dated by ``days``, all inside ``windows``), those on the day a window's phrase names, in
    the order given; the margin days' only when none is on such a day. "Two days ago" asks about one day: the day
    on each side is in the window for a misremembered day or a time zone: its candidates stay (with evidence of
    their own they pass the floor) but are not ranked up, nor let pass by their day alone, unless the day asked
    has nothing. A window of several days ("this week", "in May") keeps its margin: where a week starts, or a
    month ends in the user's time zone, is what the margin is for."""
    asked = [w.core if w.core[0] == w.core[1] else tuple(w) for w in windows]
    named = [key for key in keys if in_windows(days.get(key, ""), asked)]
    return named or keys


def in_windows(day: str, windows: list[tuple[date, date]]) -> bool:
    """Whether ``day`` (``YYYY-MM-DD...``; ``""`` for undated) falls inside one of ``windows``."""
    if not windows or len(day) < 10:
        return False
    try:
        d = date.fromisoformat(day[:10])
    except ValueError:
        return False
    return any(a <= d <= b for a, b in windows)


def is_after(when: str, as_of: str) -> bool:
    """Whether the timestamp ``when`` (any ISO form; ``""``: undated, never after) is later than ``as_of``
    (:func:`as_of_iso`). An unreadable timestamp counts as undated."""
    if not when:
        return False
    if len(when) == 24 and when.endswith("Z"):  # the stored form: compare as text
        return when > as_of
    try:
        return str(parse_time(when)) > as_of
    except ValueError:
        return False
