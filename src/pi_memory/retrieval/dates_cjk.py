"""Chinese, Japanese and Korean date phrases, read with rules: the absolute ones for
:func:`pi_memory.retrieval.expand.find_dates`, the rest for :func:`pi_memory.retrieval.dates.date_windows` (which
reads them against ``as_of`` with the English rules' windows and margin; the table is in its docstring).

* :func:`absolute` -- dates with a year: ``2023年5月8日`` (``号``/``號`` too), ``2023年5月``, ``2023年``,
  ``2023년 5월 8일``, ``2023년 5월``, ``2023년``, as ``(span, (first, last))``. A day that does not exist
  (``2023年2月30日``) gives its month, a month that does not exist its year (English: the year).
* :func:`readings` -- phrases that need ``as_of``, as ``(span, reading)``: ``("ago", n, unit)`` (``n`` days,
  weeks, months or years back; ``今天`` is 0 days back), ``("rel", back, unit)`` (the calendar week, month or
  year ``back`` of them before the current one), ``("wkday", back, weekday)`` (``上周五``: that day of that
  Monday-Sunday week, Monday 0) and ``("md", month, day or None)`` (the latest such day or month on or before
  ``as_of``).

CJK is written without spaces, so no pattern uses ``\\b``: a number must not follow a digit, a Latin letter,
``.``, ``-``, ``/``, ``_``, ``:``, a Chinese numeral or ``年``/``년`` (so ``v1.5月``, ``15月``, ``第5月`` and a
day after a year that is not read are no dates), Korean words must not follow a Hangul syllable, and a few
words that hold a date word are excluded by their next character (``上周期``, ``这周围``, ``登上月球``,
``오늘날``). Full-width digits (``２０２３年``) are read as ASCII ones (the text is translated character for
character, so spans are those of the text as given); months, days and counts may be Chinese numerals
(``五月八日``, ``两个月前``; ``几``/``数``/``며칠``/``몇``, "a few", are 3 as English "few").

A phrase's own parts are taken with it so that no fragment is left to become a keyword term
(:mod:`pi_memory.retrieval.lang` reads every content character of CJK text): ``号``, ``份`` (``5月份``), the
``前``/``以前``/``之前``/``ほど前`` of an ago phrase, ``末`` of ``上周末``, ``年底``/``年初`` of ``去年底``, and
around-words after a date (``左右``, ``頃``, ``ごろ``, ``以来``, ``上旬``/``中旬``/``下旬``, ``初``, ``底``,
``末``...). A lone ``前``/``后`` after a date (``5月前``: before May, or ``5月前端``?) stays in the text.

Not read (no window, the words stay keyword terms): fiscal years (``2023年度``, ``今年度``, ``2023년도``:
April to March in Japan, the calendar year elsewhere, so which days is unclear), decades (``2020年代``), years
of two digits or Chinese numerals (``23年``, ``二〇二三年``), era years (``令和5年``), a day without its month
(``8日``, ``8号``: also "8 days"), a weekday without its week (``星期一``, ``周五``, ``先週の月曜日``,
``월요일``), ``前年`` (the year before last in
Chinese, the previous year in Japanese) and future words (``明天``, ``来週``, ``내일``).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from datetime import date

_FULL_WIDTH = str.maketrans("０１２３４５６７８９", "0123456789")
_CN_DIGITS = {"〇": 0, "零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9, "几": 3, "幾": 3, "数": 3, "數": 3, "몇": 3}
_KO_NUMBERS = {"한": 1, "두": 2, "세": 3, "네": 4, "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9, "열": 10}
_KO_DAYS = {"이틀": (2, "day"), "사흘": (3, "day"), "며칠": (3, "day"), "일주일": (1, "week")}
_UNITS = {"天": "day", "日": "day", "일": "day", "周": "week", "週": "week", "週間": "week", "星期": "week",
          "礼拜": "week", "禮拜": "week", "주": "week", "주일": "week", "月": "month", "개월": "month",
          "달": "month", "年": "year", "년": "year", "해": "year"}

_CN = "[一二三四五六七八九]?十[一二三四五六七八九]?|[一二三四五六七八九]"  # 1..99 (months and days: 1..31)
_MD = rf"(?:[0-9]{{1,2}}|{_CN})"
_GUARD = r"(?<![0-9A-Za-z._:/\\\-年년〇零一二三四五六七八九十两兩百千万萬几幾数數第每个個])(?<!년 )"
_KO_GUARD = "(?<![가-힣0-9])"
_AROUND = ("(?:上旬|中旬|下旬|以前|以后|以後|以来|以來|之前|之后|之後|前後|前后|左右|前半|後半|初め|頃|ごろ|"
           "[初底末])?")
_DAY_MARK = "[日号號일]"
_COUNTER = "(?:个|個|ヶ|ケ|か|カ|ヵ|箇)"
_KO_AFTER = "(?=$|[^가-힣]|에|쯤|의|까지|부터|은|는|도)"  # a Korean date word then a particle or nothing

_ABSOLUTE = re.compile(
    rf"{_GUARD}(?P<year>(?:19|20)[0-9]{{2}})\s?[年년](?![度도代대])"
    rf"(?:\s?(?P<month>{_MD})\s?[月월]份?(?:\s?(?P<day>{_MD})\s?{_DAY_MARK})?)?{_AROUND}")
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("md", re.compile(rf"{_GUARD}(?P<month>{_MD})\s?[月월]\s?(?P<day>{_MD})\s?{_DAY_MARK}{_AROUND}")),
    ("ago", re.compile(rf"{_GUARD}(?<![月월])(?P<n>[0-9]{{1,3}}|{_CN}|[两兩几幾数數])\s?"
                       rf"(?P<unit>天|日(?!間)|週間?|周|{_COUNTER}?(?:星期|礼拜|禮拜)|{_COUNTER}月|年)\s?"
                       "(?:[之以]|ほど|くらい|ぐらい)?前(?:左右)?")),
    ("ago", re.compile(rf"{_KO_GUARD}(?:(?P<word>이틀|사흘|며칠|일주일)|(?P<n>[0-9]{{1,3}}|몇)\s?"
                       r"(?P<unit>주일|개월|일|주|달|년)|(?P<ko>다섯|여섯|일곱|여덟|아홉|한|두|세|네|열)\s?"
                       rf"(?P<kounit>개월|달|주|해))\s?전{_KO_AFTER}")),
    ("day", re.compile("(?P<word>大前天|前天|一昨日|おととい|昨天|昨日|昨晚|昨夜|昨晩|きのう|今天|今日|本日|今朝|"
                       f"今早上|今早)|{_KO_GUARD}(?P<ko>오늘(?!날)|어제|어저께|그저께)")),
    ("week", re.compile("(?<![马馬登爬])(?P<w>上上|先々|先先|上|先|本|这|這|今)(?<!日本)(?:个|個)?"
                        "(?:周|週|星期|礼拜|禮拜)(?![期年刊围圍边邊转轉到全长長岁歲游遊波])"
                        "(?:末|(?P<wd>[二三四五六日]|一(?![直起些样樣定般切共致])))?")),
    ("week", re.compile(rf"{_KO_GUARD}(?P<w>지지난|지난|저번|이번)\s?주(?![주간제식소요장인체택])말?")),
    ("month", re.compile("(?<![马馬登爬日])(?P<w>上上|先々|先先|上|先|本|这|這|今)(?:个|個)?月(?![球亮光饼餅曜])"
                         "[份底末初]?")),
    ("month", re.compile(rf"{_KO_GUARD}(?P<w>지지난|지난|저번|이번)\s?달(?![력성러려])")),
    ("year", re.compile("(?<![过過])(?P<w>一昨|去|昨|今)年(?!度)[底末初]?")),
    ("year", re.compile(rf"{_KO_GUARD}(?P<w>재작년|작년|지난\s?해|올해|금년){_KO_AFTER}")),
    ("mon", re.compile(rf"{_GUARD}(?P<month>{_MD})\s?[月월]份?(?!\s?[0-9一二三四五六七八九十])(?!曜){_AROUND}")),
)
_BACK = {"上上": 2, "先々": 2, "先先": 2, "지지난": 2, "上": 1, "先": 1, "지난": 1, "저번": 1, "本": 0, "这": 0,
         "這": 0, "今": 0, "이번": 0, "一昨": 2, "재작년": 2, "去": 1, "昨": 1, "작년": 1, "지난해": 1,
         "올해": 0, "금년": 0}
_DAYS_BACK = {"大前天": 3, "前天": 2, "一昨日": 2, "おととい": 2, "그저께": 2, "昨天": 1, "昨日": 1, "昨晚": 1,
              "昨夜": 1, "昨晩": 1, "きのう": 1, "어제": 1, "어저께": 1}


def _number(text: str) -> int:
    """``text`` (ASCII digits or a Chinese numeral up to 99) as an int."""
    if text.isdigit():
        return int(text)
    tens, ten, ones = text.partition("十")
    if not ten:
        return _CN_DIGITS[text]
    return (_CN_DIGITS[tens] if tens else 1) * 10 + (_CN_DIGITS[ones] if ones else 0)


def _month_day(month: str, day: str | None) -> tuple[int, int | None] | None:
    """``(month, day)`` when such a day (in a leap year) or month exists."""
    m = _number(month)
    if not 1 <= m <= 12:
        return None
    if day is None:
        return m, None
    d = _number(day)
    return (m, d) if 1 <= d <= calendar.monthrange(2024, m)[1] else None


def _range(year: int, month: str | None, day: str | None) -> tuple[date, date]:
    """The most specific range of ``year`` (``month``, ``day``) that exists."""
    md = _month_day(month, day) if month else None
    if md is None and month and day:
        md = _month_day(month, None)
    if md is None:
        return date(year, 1, 1), date(year, 12, 31)
    m, d = md
    if d is None or (m == 2 and d == 29 and not calendar.isleap(year)):
        return date(year, m, 1), date(year, m, calendar.monthrange(year, m)[1])
    return date(year, m, d), date(year, m, d)


def absolute(text: str) -> list[tuple[tuple[int, int], tuple[date, date]]]:
    """The dates with a year in ``text`` (module docstring), in order: ``(span, (first day, last day))``."""
    plain = (text or "").translate(_FULL_WIDTH)
    return [(m.span(), _range(int(m["year"]), m["month"], m["day"])) for m in _ABSOLUTE.finditer(plain)]


def _reading(kind: str, m: re.Match[str]) -> tuple[str, int, int | str | None] | None:
    g = m.groupdict()
    if kind in ("md", "mon"):
        md = _month_day(g["month"], g.get("day"))
        return ("md", *md) if md else None
    if kind == "day":
        word = g["word"] or g["ko"]
        return "ago", _DAYS_BACK.get(word, 0), "day"
    if kind == "ago":
        if g.get("word"):
            n, unit = _KO_DAYS[g["word"]]
            return "ago", n, unit
        if g.get("ko"):
            return "ago", _KO_NUMBERS[g["ko"]], _UNITS[g["kounit"]]
        return "ago", _number(g["n"]), _UNITS[g["unit"].lstrip("个個ヶケかカヵ箇")]
    if g.get("wd"):
        return "wkday", _BACK[g["w"]], "一二三四五六日".index(g["wd"])
    return "rel", _BACK["".join(g["w"].split())], kind


def readings(text: str) -> Iterator[tuple[tuple[int, int], tuple[str, int, int | str | None]]]:
    """The phrases of ``text`` that are read against ``as_of`` (module docstring), rule by rule: ``(span,
    reading)``; the caller skips a span that overlaps one it has taken already."""
    plain = (text or "").translate(_FULL_WIDTH)
    for kind, pattern in _RULES:
        for m in pattern.finditer(plain):
            reading = _reading(kind, m)
            if reading is not None:
                yield m.span(), reading
