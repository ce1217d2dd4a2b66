"""How the secret scanner runs one row's regex over a text (:mod:`.secrets` holds the rows): where the text
allows it, only near the places a match can be, with the same matches in the same order as ``finditer``.

A row may say, besides its keywords (which only decide whether it runs at all):

* ``hint``: a regex that every match of the row holds (a digit, a colon and 30 token characters for a Telegram
  bot token), written to be found fast. A text without it has no match, so the row is skipped; with it, the
  row runs as before.
* ``anchor``: every match holds one of the row's keywords at most this many characters after its start
  (``refresh_token``: "token" 8 characters in). The regex is tried only at those starts (:func:`anchored`).
* ``near`` = ``(reach, width)``: a match the row's check accepts starts within ``reach`` characters of one of
  its keywords, and every match is ``width`` characters long and stands where it stands whatever the row found
  before it (its look-behind and look-ahead keep two matches from touching). The regex is searched only in
  those stretches (:func:`near`); what it would find elsewhere the check refuses anyway.

Keyword places are looked up in the lower-cased text, which is the text's own places only when lower-casing
kept its length (``İ`` becomes two characters); otherwise the row runs over the whole text. In the folded
text the rows run on, the only characters a case-blind regex reads as an ASCII letter are that letter in
either case (folding turned ``ſ`` and the Kelvin sign into ``s`` and ``K``), so a keyword found by
``str.find`` in the lower-cased text is where the case-blind regex finds it.

``tests/safety/test_secret_spans.py`` and ``tests/safety/test_redact_differential.py`` check that these give
what ``finditer`` over the whole text gives."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol


class Row(Protocol):
    keywords: tuple[str, ...]
    anchor: int | None
    near: tuple[int, int] | None

    @property
    def regex(self) -> re.Pattern[str]: ...

    @property
    def hint_regex(self) -> re.Pattern[str] | None: ...


Places = dict[str, list[int]]


def keyword_places(lowered: str, keywords: tuple[str, ...], seen: Places | None = None) -> list[int]:
    """Every offset of ``lowered`` where one of ``keywords`` starts, in order. ``seen``: each keyword's offsets
    in this text as rows before found them (filled here), so a keyword many rows share is looked for once."""
    places: list[int] = []
    for kw in keywords:
        found = seen.get(kw) if seen is not None else None
        if found is None:
            found = []
            i = lowered.find(kw)
            while i >= 0:
                found.append(i)
                i = lowered.find(kw, i + 1)
            if seen is not None:
                seen[kw] = found
        places.extend(found)
    places.sort()
    return places


def anchored(row: Row, text: str, lowered: str, back: int, seen: Places | None = None) -> Iterator[re.Match[str]]:
    """``row.regex.finditer(text)`` for a row whose matches start at most ``back`` characters before one of its
    keywords: the regex is tried only at those starts, in order, so the leftmost match comes first."""
    regex = row.regex
    pos = tried = 0
    for place in keyword_places(lowered, row.keywords, seen):
        start = max(pos, tried, place - back)
        while start <= place:
            m = regex.match(text, start)
            if m is None:
                start += 1
                continue
            yield m
            pos = start = max(m.end(), start + 1)
        tried = max(tried, place + 1)


def near(row: Row, text: str, lowered: str, reach: int, width: int, seen: Places | None = None
         ) -> Iterator[re.Match[str]]:
    """The matches of ``row.regex`` (all ``width`` characters long, none hiding another) that start within
    ``reach`` characters of one of the row's keywords, in order. Each stretch is searched with its end cut
    ``width + 1`` characters after its last start, so a match that starts in it is read with the character
    after it (its look-ahead), as in the whole text; one that starts past the stretch is not taken."""
    regex, size = row.regex, len(text)
    stretches: list[list[int]] = []
    for place in keyword_places(lowered, row.keywords, seen):
        low, high = max(0, place - reach), place + reach
        if stretches and low <= stretches[-1][1] + 1:
            stretches[-1][1] = max(stretches[-1][1], high)
        else:
            stretches.append([low, high])
    pos = 0
    for low, high in stretches:
        pos, end = max(pos, low), min(size, high + width + 1)
        while (m := regex.search(text, pos, end)) is not None and m.start() <= high:
            yield m
            pos = m.end()


def matches(row: Row, text: str, lowered: str, seen: Places | None = None
            ) -> Iterator[re.Match[str]] | list[re.Match[str]]:
    """The matches of ``row`` in ``text`` (``lowered`` is ``text.lower()``), as ``finditer`` gives them; ``seen``
    as in :func:`keyword_places`, one dict a text."""
    hint = row.hint_regex
    if hint is not None and hint.search(text) is None:
        return []
    if len(lowered) == len(text):
        if row.anchor is not None:
            return anchored(row, text, lowered, row.anchor, seen)
        if row.near is not None:
            return near(row, text, lowered, *row.near, seen)
    return row.regex.finditer(text)
