"""Snippets: a window of a text around its densest cluster of matches, matches highlighted."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pi_memory.index.query import Term
from pi_memory.index.results import HIGHLIGHT_CLOSE, HIGHLIGHT_OPEN


def make_snippet(text: str, terms: Sequence[Term], chars: int) -> tuple[str, bool]:
    """``chars`` characters of ``text`` around its densest cluster of matches, matches wrapped in ``**``.

    Returns ``(snippet, truncated)``; whitespace runs become single spaces, and ``…`` marks a cut at either end.
    """
    spans: list[tuple[int, int, int]] = []
    ordered = sorted(terms, key=lambda t: -len(t.text))
    for idx, pat in enumerate(re.compile(re.escape(t.text), re.IGNORECASE) for t in ordered):
        for m in pat.finditer(text):
            if m.end() > m.start():
                spans.append((m.start(), m.end(), idx))
            if len(spans) > 400:
                break
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
    out: list[str] = []
    pos = start
    for s, e in marks:
        if s < start or e > end:
            continue
        out.append(text[pos:s])
        out.append(HIGHLIGHT_OPEN + text[s:e] + HIGHLIGHT_CLOSE)
        pos = e
    out.append(text[pos:end])
    body = " ".join("".join(out).split())
    truncated = start > 0 or end < len(text)
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else ""), truncated
