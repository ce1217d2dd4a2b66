"""Date phrases in Russian, German, Spanish, French and Portuguese, read with rules into the readings of
:func:`pi_memory.retrieval.dates_cjk.readings` (``("ago", n, unit)``, ``("rel", back, unit)``, ``("md", month,
day or None)``), which :func:`pi_memory.retrieval.dates.date_windows` reads against ``as_of`` as it reads the
English ones. Each row as the English phrase on its right:

===============================================================================  ==============================
phrase                                                                           read as
===============================================================================  ==============================
``сегодня`` ``heute`` ``hoy`` ``aujourd'hui`` ``hoje``                          ``today``
``вчера`` ``gestern`` ``ayer`` ``hier`` ``ontem``                               ``yesterday``
``позавчера`` ``vorgestern`` ``anteayer`` ``avant-hier`` ``anteontem``           ``the day before yesterday``
``3 дня назад`` ``vor 3 Tagen`` ``hace 3 días`` ``il y a 3 jours`` ``há 3 dias``  ``3 days ago`` (weeks, months,
                                                                                 years the same way)
``на прошлой неделе`` ``letzte Woche`` ``la semana pasada``                      ``last week`` (month, year:
``la semaine dernière`` ``na semana passada``                                    ``в прошлом месяце``, ``letztes
                                                                                 Jahr``, ``el mes pasado``...)
``на этой неделе`` ``diese Woche`` ``esta semana`` ``cette semaine``             ``this week`` (month, year)
``в мае`` ``im Mai`` ``en mayo`` ``en mai`` ``em maio``                          ``in May``
``3 мая`` ``3. Mai`` ``am 3. Mai`` ``3 de mayo`` ``le 3 mai`` ``3 de maio``      ``May 3``
``в мае 2019 года`` ``im März 2019`` ``3 de mayo de 2021``                        ``May 2019``, ``May 3, 2021``
``в прошлый вторник`` ``letzten Dienstag`` ``letzter Dienstag``                   ``last Tuesday``
``el martes pasado`` ``el último martes`` ``mardi dernier`` ``le mardi passé``
``na terça passada`` ``na última terça`` ``terça-feira passada``
===============================================================================  ==============================

A month name alone is no date (``mars`` is also the planet, ``Mai`` a name): it needs its preposition (``в``/
``во``, ``im``, ``en``, ``em``/``no``) or a day before it (German: ``3. Mai``, with its period), and it is
matched in the case its language writes it (German capitalised; French, Spanish and Portuguese in lower case;
so "3 Mars rovers" is no date). A year after it is kept (``im März 2019``, ``3 de mayo de 2021``,
``в мае 2019 года``): that month of that year. Words are matched whole and in any case; the
preposition of a phrase is taken with it, so it leaves no keyword term behind. Not read: future words
(``завтра``, ``morgen``, ``mañana``, ``demain``, ``amanhã``: ``morgen`` and ``mañana`` are also "morning"),
a weekday without "last" (``am Dienstag``, ``el martes``: it may be the coming one), and years (``2023`` is read by the English rules); ``hier`` in a prompt read as German or Dutch (where it
is "here": :func:`pi_memory.retrieval.lang.languages`).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator

# month names, January first, each in the forms a date takes (ru: nominative, genitive "3 мая", prepositional
# "в мае"); matched with their case: German capitalises its months, French, Spanish and Portuguese write them
# in lower case (so "3 Mars rovers" and "2 Mai Tais" are no dates); Russian in either case
_MONTHS = {
    "ru": ("январ[ьяе]", "феврал[ьяе]", "март[аеу]?", "апрел[ьяе]", "ма[йяе]", "июн[ьяе]", "июл[ьяе]",
           "август[аеу]?", "сентябр[ьяе]", "октябр[ьяе]", "ноябр[ьяе]", "декабр[ьяе]"),
    "de": ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
           "November", "Dezember"),
    "es": ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
           "noviembre", "diciembre"),
    "fr": ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
           "novembre", "décembre"),
    "pt": ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
           "novembro", "dezembro"),
}
_MONTH_FLAGS = {"ru": "(?i:{})", "de": "(?:{})", "es": "(?:{})", "fr": "(?:{})", "pt": "(?:{})"}
_IN = {"ru": "(?i:во?)", "de": "(?i:im)", "es": "(?i:en)", "fr": "(?i:en)", "pt": "(?i:em|no)"}
_DAY_OF = {"ru": "", "de": r"\.", "es": " de", "fr": "", "pt": " de"}  # between a day and its month
_BEFORE_DAY = {"ru": "", "de": "(?:(?i:am) )?", "es": "(?:(?i:el) )?", "fr": "(?:(?i:le) )?",
               "pt": "(?:(?i:em|no) )?(?:dia )?"}
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_WITH_YEAR = {"ru": rf"(?: {_YEAR}(?: года| г\.?)?)?", "de": f"(?: {_YEAR})?", "es": f"(?: de {_YEAR})?",
              "fr": f"(?: {_YEAR})?", "pt": f"(?: de {_YEAR})?"}  # "im März 2019", "3 de mayo de 2021"

_DAYS_BACK = {"сегодня": 0, "heute": 0, "hoy": 0, "aujourd'hui": 0, "hoje": 0,
              "вчера": 1, "gestern": 1, "ayer": 1, "hier": 1, "ontem": 1,
              "позавчера": 2, "vorgestern": 2, "anteayer": 2, "antier": 2, "avant-hier": 2, "anteontem": 2}
# unit words, in the forms a count or "last"/"this" takes
_UNIT_WORDS = {
    "day": "дн[яей]|день|tag(?:en|e)?|d[ií]as?|jours?|dias?",
    "week": "недел[юиье]|нед[ея]ль|wochen?|semanas?|semaines?",
    "month": "месяц(?:а|ев|е)?|monat(?:en|e)?|mes(?:es)?|mois|m[eê]s(?:es)?",
    "year": "год(?:а|у)?|лет|jahr(?:en|e)?|años?|ans?|années?|anos?",
}
_NUMBER_WORDS = {"один": 1, "одну": 1, "два": 2, "две": 2, "три": 3, "четыре": 4, "пять": 5, "einem": 1, "einer": 1,
                 "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "un": 1, "una": 1, "uno": 1, "une": 1, "um": 1,
                 "uma": 1, "dos": 2, "deux": 2, "dois": 2, "duas": 2, "tres": 3, "trois": 3, "três": 3, "cuatro": 4,
                 "quatre": 4, "quatro": 4, "cinco": 5, "cinq": 5, "несколько": 3, "paar": 3, "unos": 3, "unas": 3,
                 "quelques": 3, "alguns": 3, "algumas": 3}
_COUNT = r"(?P<n>\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + ")"


def _alternatives(words: dict[str, str]) -> str:
    return "|".join(f"(?P<{unit}>{pattern})" for unit, pattern in words.items())


_UNITS = _alternatives(_UNIT_WORDS)
_LAST = {  # "last <unit>" (back 1) and "this <unit>" (back 0) phrases, per language
    1: [r"на прошлой неделе|в прошлом (?:месяце|году)",
        r"(?:letzte|vorige|vergangene)[nrs]? (?:woche|monat|jahr)",
        r"(?:la|el) (?:semana|mes|año) pasad[oa]",
        r"la semaine dernière|le mois dernier|l['’](?:année|an) dernier|l['’]année dernière",
        r"(?:na|no) (?:semana|m[eê]s|ano) passad[oa]"],
    0: [r"на этой неделе|в этом (?:месяце|году)",
        r"diese[nrs]? (?:woche|monat|jahr)",
        r"esta semana|este (?:mes|año)",
        r"cette (?:semaine|année)|ce mois(?:-ci)?",
        r"(?:nesta|esta) semana|(?:neste|este) (?:m[eê]s|ano)"],
}
# the unit a "last/this" phrase names, by the word that names it
_LAST_UNIT = re.compile(r"(?P<week>неделе|woche|semana|semaine)|(?P<month>месяце|monat|mes|mois|m[eê]s)|"
                        r"(?P<year>году|jahr|año|année|an|ano)", re.IGNORECASE)


def _month_rules(lang: str, names: tuple[str, ...]) -> list[tuple[str, re.Pattern[str]]]:
    month = _MONTH_FLAGS[lang].format("|".join(f"(?P<m{i}>{name})" for i, name in enumerate(names, 1)))
    year = _WITH_YEAR[lang]
    return [("md", re.compile(rf"(?<![\w.]){_BEFORE_DAY[lang]}(?P<day>\d{{1,2}}){_DAY_OF[lang]} {month}{year}(?!\w)")),
            ("mon", re.compile(rf"(?<!\w){_IN[lang]} {month}{year}(?!\w)"))]


# weekday names, Monday first, in the forms "last <weekday>" takes (ru: accusative "в прошлую среду")
_WEEKDAY_NAMES = {
    "ru": ("понедельник", "вторник", "сред[ау]", "четверг", "пятниц[ау]", "суббот[ау]", "воскресенье"),
    "de": ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "(?:Samstag|Sonnabend)", "Sonntag"),
    "es": ("lunes", "martes", "mi[ée]rcoles", "jueves", "viernes", "s[áa]bado", "domingo"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
    "pt": ("segunda(?:-feira)?", "ter[çc]a(?:-feira)?", "quarta(?:-feira)?", "quinta(?:-feira)?",
           "sexta(?:-feira)?", "s[áa]bado", "domingo"),
}
# "last <weekday>": the latest such day before the day asked on (English "last Tuesday"); a weekday without
# "last" is not read (``am Dienstag``, ``el martes`` may be the coming one)
_LAST_WEEKDAY = {"ru": "(?:в )?прошл(?:ый|ую|ое) {wd}",
                 "de": "(?:am )?(?:letzten|vergangenen|vorigen) {wd}|letzter {wd2}",
                 "es": "(?:el )?(?:{wd} pasado|pasado {wd2})|(?:el )?último {wd3}",
                 "fr": "(?:le )?{wd} (?:dernier|passé)",
                 # "segunda passada" is also "the second pass": Portuguese needs "na"/"no" or the "-feira" form
                 "pt": "n[ao] {wd} passad[ao]|{wd2}-feira passada|n[ao] últim[ao] {wd3}"}


def _weekday_rules() -> list[tuple[str, re.Pattern[str]]]:
    out = []
    for lang, names in _WEEKDAY_NAMES.items():
        wd, wd2, wd3 = ("(?:" + "|".join(f"(?P<{p}{i}>{name})" for i, name in enumerate(names)) + ")"
                        for p in "wvx")
        out.append(("wd", re.compile(r"(?<!\w)(?:" + _LAST_WEEKDAY[lang].format(wd=wd, wd2=wd2, wd3=wd3) + r")(?!\w)",
                                     re.IGNORECASE)))
    return out


_AGO_FORMS = (r"{n} (?:{u}) назад", r"vor {n} (?:{u})", r"hace {n} (?:{u})", r"il y a {n} (?:{u})",
              r"h[áa] {n} (?:{u})")
_DAY_WORDS = "|".join(re.escape(w).replace("'", "['’]") for w in sorted(_DAYS_BACK, key=len, reverse=True))
_RULES: list[tuple[str, re.Pattern[str]]] = [
    *(rule for lang, stems in _MONTHS.items() for rule in _month_rules(lang, stems)),
    *(("ago", re.compile(r"(?<!\w)" + form.format(n=_COUNT, u=_UNITS) + r"(?!\w)", re.IGNORECASE))
      for form in _AGO_FORMS),
    *((f"rel{back}", re.compile(rf"(?<!\w)(?:{'|'.join(patterns)})(?!\w)", re.IGNORECASE))
      for back, patterns in _LAST.items()),
    ("day", re.compile(rf"(?<![\w-])(?:{_DAY_WORDS})(?![\w-])", re.IGNORECASE)),
    *_weekday_rules(),
]


def _reading(kind: str, m: re.Match[str]) -> tuple[str, int, int | str | None] | None:
    g = m.groupdict()
    if kind in ("md", "mon"):
        month = next(int(k[1:]) for k, v in g.items() if v and k[0] == "m" and k[1:].isdigit())
        day = int(g["day"]) if kind == "md" else None
        if day is not None and not 1 <= day <= calendar.monthrange(int(g["year"] or 2024), month)[1]:
            return None
        return ("ymd", int(g["year"]), (month, day)) if g.get("year") else ("md", month, day)
    if kind == "day":
        return "ago", _DAYS_BACK[m.group().lower().replace("’", "'")], "day"
    if kind == "wd":
        return "wd", next(int(k[1:]) for k, v in g.items() if v and k[0] in "wvx" and k[1:].isdigit()), None
    if kind == "ago":
        n = g["n"].lower()
        return "ago", int(n) if n.isdigit() else _NUMBER_WORDS[n], next(u for u in _UNIT_WORDS if g.get(u))
    named = [u for found in _LAST_UNIT.finditer(m.group()) for u, v in found.groupdict().items() if v]
    return "rel", int(kind[3:]), named[0]


def readings(text: str) -> Iterator[tuple[tuple[int, int], tuple[str, int, int | str | None]]]:
    """The phrases of ``text`` read against ``as_of`` (module docstring), rule by rule: ``(span, reading)``; the
    caller skips a span that overlaps one it has taken already."""
    here = None  # "hier" is French "yesterday" and German and Dutch "here"
    for kind, pattern in _RULES:
        for m in pattern.finditer(text or ""):
            if kind == "day" and m.group().lower() == "hier":
                if here is None:
                    from pi_memory.retrieval.lang import languages

                    here = bool({"german", "dutch"} & set(languages(text)))
                if here:
                    continue
            reading = _reading(kind, m)
            if reading is not None:
                yield m.span(), reading
