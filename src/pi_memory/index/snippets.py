"""Snippets: a window of a text around its densest cluster of matches, matches highlighted.

Order of work, so no credential can come out of a snippet (issue 9, item 1): the text is redacted first
(unless the caller says it already is: rows of a finished index are redacted when written,
:mod:`.redaction`), then matches are found and highlighted, then the window is cut, and a window edge that
falls inside a ``[REDACTED:<id>]`` marker moves out of it.

Highlighting:

* Markers are ``**`` pairs. Markdown emphasis already in the text (``**docker**``) is unwrapped first, so a
  snippet's only ``**`` are the highlights: nothing is highlighted twice and a reader (the CLI renders them
  bold) can trust every pair. A ``**`` that is not emphasis (``2**10``) stays as it is.
* A word-index term matches whole words, as the index does: ``a`` is highlighted as the word "a", never the
  letter inside "data"; a prefix term (broadened search, a stem) highlights the whole word it starts
  (``deploy*``: "deployment", never "deploy" and a bare "ment").
  CJK characters are words of their own, so a CJK term needs no boundary. Terms of a trigram index (and
  plain terms) match anywhere.
* ``highlight=False`` (recall's session turns, text a model reads inside a fence): the same window, no
  markers, and the text's own emphasis kept as it was written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pi_memory.index.query import Term
from pi_memory.index.results import HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN
from pi_memory.index.words import CJK_RANGES, HAS_CJK
from pi_memory.safety import redact

_EMPHASIS = re.compile(r"(?<![\w*])\*\*(?=[^\s*])(.+?)(?<=[^\s*])\*\*(?![\w*])", re.DOTALL)
# A letter or digit of a spaced script (CJK characters are words of their own, so they are boundaries). Compiled
# once: inside a per-term pattern (as lookarounds) this class cost 7-20 ms to compile for every new term, which
# was most of a recall's snippet time (benchmarks/semantic_latency.py's recall() rows).
_SPACED_WORD_CHAR = re.compile(f"[^\\W_{CJK_RANGES}]")
_MATCH_CAP = 400
_MARKER = re.compile(r"\[REDACTED:[a-z_]+\]")


def _is_spaced_word_char(text: str, at: int) -> bool:
    return 0 <= at < len(text) and _SPACED_WORD_CHAR.match(text, at) is not None


def _pattern(term: Term) -> tuple[re.Pattern[str], bool, bool]:
    """``(pattern, needs a boundary before, needs one after)``: the boundaries are checked per match
    (:func:`_matches`), not inside the pattern."""
    text = term.text
    before = after = False
    if term.words:
        before = text[:1].isalnum() and not HAS_CJK.match(text[:1])
        after = not term.prefix and text[-1:].isalnum() and not HAS_CJK.match(text[-1:])
    return re.compile(re.escape(text), re.IGNORECASE), before, after


def _matches(text: str, term: Term):
    """The spans of ``term`` in ``text``, left to right, as the lookarounds ``(?<!w)term(?!w)`` would find them
    (``w`` a letter or digit of a spaced script): a match that fails a boundary is retried one character on."""
    pat, before, after = _pattern(term)
    pos = 0
    while (m := pat.search(text, pos)) is not None:
        start, end = m.span()
        if (before and _is_spaced_word_char(text, start - 1)) or (after and _is_spaced_word_char(text, end)):
            pos = start + 1
            continue
        if term.words and term.prefix:  # the whole word it starts is highlighted ("deployment", not "deploy"+"ment")
            while _is_spaced_word_char(text, end):
                end += 1
        yield start, end
        pos = end if end > start else start + 1


def _outside_markers(text: str, start: int, end: int) -> tuple[int, int]:
    """``start``/``end`` moved so that neither falls inside a ``[REDACTED:<id>]`` marker."""
    for m in _MARKER.finditer(text, max(0, start - 40), min(len(text), end + 40)):
        if m.start() < start < m.end():
            start = m.start()
        if m.start() < end < m.end():
            end = m.start() if m.start() > start else m.end()
    return start, end


def make_snippet(text: str, terms: Sequence[Term], chars: int, redacted: bool = False,
                 highlight: bool = True) -> tuple[str, bool]:
    """``chars`` characters of ``text`` around its densest cluster of matches, matches wrapped in ``**``
    (unless ``highlight`` is false: see the module docstring).

    ``redacted``: ``text`` is already redacted (see the module docstring); otherwise it is redacted here.
    Returns ``(snippet, truncated)``; whitespace runs become single spaces, and ``…`` marks a cut at either end.
    """
    if not redacted:
        text = redact(text)
    if highlight and "**" in text:
        text = _EMPHASIS.sub(r"\1", text)
    spans: list[tuple[int, int, int]] = []
    ordered = sorted((t for t in terms if t.text), key=lambda t: -len(t.text))
    for idx, term in enumerate(ordered):
        for start, end in _matches(text, term):
            if end > start:
                spans.append((start, end, idx))
            if len(spans) > _MATCH_CAP:
                break
    if "[REDACTED:" in text:  # a term inside a marker ("key" in [REDACTED:openai_api_key]) is not a match
        hidden = [m.span() for m in _MARKER.finditer(text)]
        spans = [s for s in spans if not any(a <= s[0] < b for a, b in hidden)]
    spans.sort()
    kept: list[tuple[int, int, int]] = []
    for s in spans:  # drop overlaps (a term inside a longer one)
        if not kept or s[0] >= kept[-1][1]:
            kept.append(s)
    marks: list[list[int]] = []  # highlight ranges; touching matches share one pair of markers
    for s, e, _ in kept:
        if marks and marks[-1][1] == s:
            marks[-1][1] = e
        else:
            marks.append([s, e])
    start = 0
    if len(text) > chars and kept:
        best = (-1, -1, 0)
        for s in kept[:100]:
            lo = max(0, min(s[0] - chars // 4, len(text) - chars))
            inside = [k for k in kept if k[0] >= lo and k[1] <= lo + chars]
            key = (len({k[2] for k in inside}), len(inside), -lo)
            if key > best:
                best, start = key, lo
        if start:  # begin at a word boundary when one is near and no match is skipped
            space = text.find(" ", start, start + 20)
            first = next((k[0] for k in kept if k[0] >= start), len(text))
            if 0 <= space < first:
                start = space + 1
    end = min(len(text), start + chars)
    if "[REDACTED:" in text:
        start, end = _outside_markers(text, start, end)
    out: list[str] = []
    pos = start
    for s, e in marks if highlight else ():
        if s < start or e > end or (text[max(0, s - 2) : s] == "**" and text[e : e + 2] == "**"):
            continue  # outside the window, or already between markers of the text's own
        out.append(text[pos:s])
        out.append(HIGHLIGHT_OPEN + text[s:e] + HIGHLIGHT_CLOSE)
        pos = e
    out.append(text[pos:end])
    body = " ".join("".join(out).split())
    truncated = start > 0 or end < len(text)
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else ""), truncated
