"""The keyword prefilter of the threat and secret tables: which of their rows' keywords a text holds.

Every row of both tables names keywords, and its regex only runs on a text that holds one of them (as a
substring of the lower-cased folded text; ``requires`` words likewise). Testing each row's keywords with ``in``
reads the text once a keyword: about 430 of them, 40 µs for a 60-character memory, 170 ms for a 1 MB text
that holds none of them. :class:`KeywordIndex` finds them in one pass instead:

* one regex over every keyword, written as a prefix tree (``trie_regex``: ``ignor(?:e|ier)?`` rather than
  ``ignore|ignorier|ignor``; sre tries a flat alternation's branches one by one), lists the longest keyword
  that starts at each position; every keyword that starts there is a prefix of it, so its prefixes count too.
  A match consumes one character (the keyword itself sits in a look-ahead inside a look-behind), so keywords
  that overlap ("act" in "react" next to "tell") are all found, and sre jumps between the keywords' first
  characters;
* for texts longer than ``LONG`` characters, where a common keyword can occur tens of thousands of times,
  each keyword is looked for with ``in``, once a text, and only while a row still needs it;
* the regex is compiled (about 6 ms) only once a process has scanned ``WARM`` texts, so a short-lived hook
  that scans a few texts does not pay for it;
* the one pass runs when a table of ``SMALL_TABLE`` keywords or more asks (the threat rows, or ``any``); a
  smaller table (the secret rows, about 100 keywords) looks its own up with ``in`` unless the pass already ran:
  redacting a 700-character text that way costs a quarter of one pass over the keywords of both tables.

Both ways give the same answer (``tests/safety/test_keywords.py``). The text is the folded one the rows run
on, so look-alike letters, full-width forms, invisible characters and case are already normalised when the
keywords are looked for."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Protocol


class Row(Protocol):
    keywords: tuple[str, ...]
    requires: tuple[str, ...]


def trie_regex(words: Iterable[str]) -> str:
    """A regex matching any of ``words``, written as a prefix tree; at one position it matches the longest."""
    root: dict[str, dict] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


class Hits:
    """The keywords one text holds: ``any(words)`` says whether it holds one of ``words``, ``rows(table)`` which
    rows of a table pass the prefilter (their ``keywords`` and, when set, their ``requires``)."""

    __slots__ = ("_lowered", "_found", "_memo", "_index", "_deferred")

    def __init__(self, lowered: str, found: frozenset[str] | None, index: KeywordIndex,
                 deferred: bool = False) -> None:
        self._lowered = lowered
        self._found = found
        self._memo: dict[str, bool] = {}
        self._index = index
        self._deferred = deferred  # the one pass may run, when a big table first asks

    def _one_pass(self) -> frozenset[str] | None:
        """The keywords found in one pass, running it now if it was left for later."""
        if self._deferred:
            self._deferred = False
            self._found = self._index.found(self._lowered)
        return self._found

    @property
    def lowered(self) -> str:
        """The lower-cased text the keywords were looked for in."""
        return self._lowered

    def places(self, words: tuple[str, ...]) -> list[int]:
        """Every offset of the lower-cased text where one of ``words`` starts, in order."""
        lowered, found = self._lowered, set()
        for word in words:
            i = lowered.find(word)
            while i >= 0:
                found.add(i)
                i = lowered.find(word, i + 1)
        return sorted(found)

    def rows(self, table: tuple[Row, ...]) -> list[Row]:
        """The rows of ``table`` (in table order) whose keywords the text holds. With the one-pass answer only
        the rows of the keywords found are looked at; otherwise every row, its keywords until one is there."""
        by_word = self._index.rows_by_word(table)
        found = self._one_pass() if len(by_word) >= self._index.SMALL_TABLE else self._found
        if found is None:
            return [row for row in table
                    if self._holds(row.keywords) and (not row.requires or self._holds(row.requires))]
        places = sorted({i for w in found for i in by_word.get(w, ())})
        return [row for i in places if not (row := table[i]).requires or not found.isdisjoint(row.requires)]

    def any(self, words: tuple[str, ...]) -> bool:
        found = self._one_pass()
        if found is not None:
            return not found.isdisjoint(words)
        return self._holds(words)

    def lacking(self) -> frozenset[str]:
        """The keywords known to be missing from the text: all those the one pass did not find, or those
        ``in`` looked for and did not find."""
        if self._found is not None:
            return self._index.words - self._found
        return frozenset(word for word, hit in self._memo.items() if not hit)

    def lacks(self, words: frozenset[str]) -> None:
        """Take it as known that the text holds none of ``words`` (``in`` will not look for them)."""
        memo = self._memo
        for word in words:
            memo.setdefault(word, False)

    def _holds(self, words: tuple[str, ...]) -> bool:
        """``any`` with ``in``, each word once a text."""
        memo = self._memo
        for word in words:
            hit = memo.get(word)
            if hit is None:
                hit = memo[word] = word in self._lowered
            if hit:
                return True
        return False


class KeywordIndex:
    """Finds which of a fixed set of keywords occur in a lower-cased text (see the module docstring)."""

    WARM = 64
    LONG = 2048
    SMALL_TABLE = 200

    def __init__(self, words: Iterable[str]) -> None:
        self.words = frozenset(words)
        self._texts = 0
        self._tables: dict[int, tuple[tuple[Row, ...], dict[str, tuple[int, ...]]]] = {}

    @functools.cached_property
    def _finder(self) -> tuple[re.Pattern[str], dict[str, tuple[str, ...]]]:
        first = "[" + "".join(re.escape(c) for c in sorted({w[0] for w in self.words})) + "]"
        finder = re.compile(f"{first}(?<=(?=({trie_regex(self.words)})){first})", re.DOTALL)
        prefixes = {w: tuple(w[:i] for i in range(1, len(w) + 1) if w[:i] in self.words) for w in self.words}
        return finder, prefixes

    def hits(self, lowered: str, *, one_pass: bool | None = None) -> Hits:
        """The keywords ``lowered`` holds. ``one_pass`` forces (``True``) or forbids (``False``) the regex;
        by default it is used for texts up to ``LONG`` characters once ``WARM`` texts have been scanned."""
        if one_pass is None:  # the pass itself waits for a table that is worth it (``Hits.rows``)
            self._texts += 1
            return Hits(lowered, None, self, deferred=len(lowered) <= self.LONG and self._texts > self.WARM)
        return Hits(lowered, self.found(lowered) if one_pass else None, self)

    def found(self, lowered: str) -> frozenset[str]:
        """The keywords ``lowered`` holds, found in one pass of the regex."""
        finder, prefixes = self._finder
        return frozenset(p for w in set(finder.findall(lowered)) for p in prefixes[w])

    def rows_by_word(self, table: tuple[Row, ...]) -> dict[str, tuple[int, ...]]:
        """keyword -> the positions of the rows of ``table`` that name it (built once a table)."""
        entry = self._tables.get(id(table))
        if entry is None or entry[0] is not table:
            by_word: dict[str, list[int]] = {}
            for i, row in enumerate(table):
                for word in row.keywords:
                    by_word.setdefault(word, []).append(i)
            entry = self._tables[id(table)] = (table, {w: tuple(v) for w, v in by_word.items()})
        return entry[1]


@functools.cache
def _index() -> KeywordIndex:
    from ._threat_patterns import PATTERNS as THREATS  # the tables import this module's users
    from .secrets import PATTERNS as SECRETS

    return KeywordIndex({w for p in THREATS for w in p.keywords + p.requires} | {w for p in SECRETS for w in p.keywords})


@functools.lru_cache(maxsize=4)
def keyword_hits(folded: str) -> Hits:
    """The keywords of both tables that the folded text ``folded`` holds (cached: the threat and the secret
    scan of one text share it, as they share its folding)."""
    return _index().hits(folded.lower())
