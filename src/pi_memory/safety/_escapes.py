"""What an escaped string says, for the secret scanner: a text with JSON-style backslash escapes read the way a
parser would read it, with a map from its offsets back to the escaped text's.

Why: an agent's tool call is stored as compact JSON (pi's ``toolCall`` arguments, Claude Code's ``tool_use``
input), so a config file it writes is an escaped string inside it: ``{\\"password\\": \\"x\\"}``, or a YAML /
INI body whose line breaks are the two characters ``\\n``; once more escaped when that JSON is itself quoted
(``\\\\\\"password\\\\\\"``). The scanner's rows read a label, a quote or a line break where the text holds a
backslash first, and a vendor prefix right after ``\\n`` sits after the letter ``n``. So :func:`views` gives the
text with its escapes decoded, level by level (at most :data:`MAX_LEVELS`: each level is a text quoted once
more), and :mod:`.secrets` scans each view too and maps what it finds back to the text itself.

The escapes decoded: ``\\"`` ``\\'`` ``\\\\`` ``\\/`` ``\\n`` ``\\r`` ``\\t`` ``\\b`` ``\\f`` and ``\\uXXXX`` (a
surrogate pair as one character). A text that holds none of them has no view. Decoding a text that was never
escaped (a Windows path ``C:\\new``, a regex ``\\bword\\b``) gives a garbled view, which only adds a place to look:
the text itself is scanned as before."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from itertools import accumulate
from operator import add

from ._text import _fold_char

MAX_LEVELS = 3
_ESCAPE_SPLIT = re.compile(r"(\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
                           r"|u[0-9a-fA-F]{4}|[\"'\\/nrtbf]))")  # a surrogate pair first, then one \u, then the rest
_SIMPLE_ESCAPE = re.compile(r"\\([\"'\\/nrtbf])")
_UNICODE = re.compile(r"\\u[0-9a-fA-F]{4}")
_SIMPLE = {'"': '"', "'": "'", "\\": "\\", "/": "/", "n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}


class Unescaped:
    """One decoded view: ``text``, and :meth:`outer`, an offset of it as an offset of the text it came from."""

    __slots__ = ("text", "chars", "_at", "_shift")

    def __init__(self, text: str, at: list[int], shift: list[int] | None, chars: frozenset[str]) -> None:
        self.text = text
        self.chars = chars  # the characters the escapes stand for
        self._at = at  # the decoded offset of each escape's character, ascending
        self._shift = shift  # how many characters the escapes up to and including each one saved (None: one each)

    def windows(self, reach: int) -> list[tuple[int, int]]:
        """The stretches of the decoded text within ``reach`` characters of an escape's character, merged and in
        order: the only places where the decoded text reads differently from the escaped one."""
        at = self._at
        if not at:
            return []
        # A stretch ends where the next escape lies more than 2 * reach + 1 characters further on.
        gap = 2 * reach + 1
        cuts = [i for i, (a, b) in enumerate(zip(at[:-1], at[1:], strict=True), 1) if b - a > gap]
        firsts, lasts = [0, *cuts], [*(i - 1 for i in cuts), len(at) - 1]
        end_of_text = len(self.text)
        return [(max(0, at[f] - reach), min(end_of_text, at[k] + reach + 1))
                for f, k in zip(firsts, lasts, strict=True)]

    def outer(self, offset: int) -> int:
        """Where the boundary ``offset`` of the decoded text lies in the escaped text (a character that came
        from an escape spans the whole escape)."""
        k = bisect_left(self._at, offset)
        if self._shift is None:
            return offset + k
        return offset + (self._shift[k - 1] if k else 0)


def unescape(text: str) -> Unescaped | None:
    """``text`` with its escapes decoded, or ``None`` when it holds none."""
    if "\\" not in text:
        return None
    if "\\u" in text and _UNICODE.search(text):
        return _unescape_any(text)
    # Only two-character escapes: split in one pass (every escape saves one character).
    parts = _SIMPLE_ESCAPE.split(text)
    if len(parts) == 1:
        return None
    pieces, chars = parts[0::2], [_SIMPLE[c] for c in parts[1::2]]
    return Unescaped(_joined(parts, chars), _escape_offsets(pieces), None, frozenset(chars))


def _unescape_any(text: str) -> Unescaped | None:
    parts = _ESCAPE_SPLIT.split(text)  # the text between escapes, and each escape whole
    if len(parts) == 1:
        return None
    pieces, escapes = parts[0::2], parts[1::2]
    chars = [_SIMPLE[e[1]] if len(e) == 2 else _wide(e) for e in escapes]
    saved = list(accumulate(len(e) - 1 for e in escapes))
    return Unescaped(_joined(parts, chars), _escape_offsets(pieces), saved, frozenset(chars))


def _joined(parts: list[str], chars: list[str]) -> str:
    """The decoded text: ``parts`` (text, escape, text, …, text, as ``re.split`` gives them) with each escape
    replaced by its character (one list and one ``join``: much faster than joining a chain of pairs)."""
    out = parts[:]
    out[1::2] = chars
    return "".join(out)


def _escape_offsets(pieces: list[str]) -> list[int]:
    """The decoded offset of each escape's character, from the texts between the escapes."""
    return list(map(add, accumulate(map(len, pieces[:-1])), range(len(pieces) - 1)))


def _wide(escape: str) -> str:
    """The character of a ``\\uXXXX`` escape, or of a surrogate pair written as two."""
    if len(escape) == 6:
        return chr(int(escape[2:], 16))
    return chr(0x10000 + ((int(escape[2:6], 16) - 0xD800) << 10) + int(escape[8:], 16) - 0xDC00)


def views(text: str) -> list[tuple[str, list[Unescaped]]]:
    """Each decoded level of ``text`` (the first level first) with the chain of views that leads to it from
    ``text``: map an offset of the level back with ``outer`` of each view of the chain, the last one first."""
    out: list[tuple[str, list[Unescaped]]] = []
    chain: list[Unescaped] = []
    current = text
    for _ in range(MAX_LEVELS):
        view = unescape(current)
        if view is None:
            break
        chain = [*chain, view]
        out.append((view.text, chain))
        current = view.text
    return out


def still_missing(words: frozenset[str], view: Unescaped) -> frozenset[str]:
    """Of ``words``, missing from the folded, lower-cased text ``view`` was decoded from, those surely missing
    from the folded, lower-cased ``view.text`` too (so a keyword check need not look for them again).

    The decoded text is the pieces of the escaped text between its escapes, in order, with one character for
    each escape. A place of a word in it lies within one piece, which the escaped text holds too, or covers
    the folded form of an escape's character: a word none of whose characters those forms hold is missing
    from the decoded text as well. Not when an escape stands for a character that folding removes (the
    pieces on either side would meet), nor for a word with a sigma (lower-casing reads its neighbours)."""
    seen: set[str] = set()
    for ch in view.chars:
        folded = _fold_char(ch)
        if not folded:
            return frozenset()
        seen.update(folded.lower())
    seen.update("σς")
    return frozenset(word for word in words if seen.isdisjoint(word))


def to_outer(chain: list[Unescaped], start: int, end: int) -> tuple[int, int]:
    """The span ``[start, end)`` of the last view of ``chain`` as a span of the text the chain starts from."""
    for view in reversed(chain):
        start, end = view.outer(start), view.outer(end)
    return start, end


# ---- scanning the views, and joining their findings with the text's own ---------------------------------------
Span = tuple[int, int, int, str]  # (start, end, priority, id), as the secret scanner keeps them

# A view is scanned only within VIEW_REACH characters of its escapes (elsewhere it reads as the text itself), and a
# finding closer than VIEW_MARGIN to a cut edge of such a stretch is left to the scan of the text itself: it lies
# far from every escape, and the secret rows' checks look at most 300 characters around a value.
VIEW_REACH = 2000
VIEW_MARGIN = 400


def view_spans(decoded: str, chain: list[Unescaped], scan: Callable[[str], list[Span]]) -> list[Span]:
    """What ``scan`` finds in the decoded view near its escapes, as spans of the text the ``chain`` starts from
    (sorted, non-overlapping)."""
    found: list[Span] = []
    size = len(decoded)
    for w_start, w_end in chain[-1].windows(VIEW_REACH):
        low = VIEW_MARGIN if w_start else 0
        high = (w_end - w_start) - (VIEW_MARGIN if w_end < size else 0)
        for start, end, prio, ident in scan(decoded[w_start:w_end]):
            if start < low or end > high:
                continue
            raw_start, raw_end = to_outer(chain, w_start + start, w_start + end)
            if not found or raw_start >= found[-1][1]:
                found.append((raw_start, raw_end, prio, ident))
    return found


# What a finding of the text itself may hold beyond the finding of a view it overlaps without being a part of the
# secret: quotes, blanks and escapes ("hunter2\\n" is the value and a line break), or any text an escape parts
# from it ("pw\\nnext" is the value, a line break and the next line's first word).
_JUNK = re.compile(r"(?:\\(?:u[0-9a-fA-F]{4}|.)|[\s\"'`])*+", re.DOTALL)
_ESCAPE_LAST = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)\Z", re.DOTALL)


def _beyond_view(piece: str, after: bool) -> bool:
    """Whether ``piece``, the part of a finding outside the view's finding next to it (``after`` it or before
    it), is no part of a secret."""
    if _JUNK.fullmatch(piece):
        return True
    return piece.startswith("\\") if after else _ESCAPE_LAST.search(piece) is not None


def merge_spans(taken: list[Span], found: list[Span], text: str) -> None:
    """Add ``found`` (the non-overlapping spans of a shallower reading of ``text``) to ``taken`` (those of the
    deeper ones, kept sorted): a span that overlaps none is added; one that overlaps and reaches beyond them only
    by escapes and what an escape parts from them is left out (the decoded reading drew the line there); any
    other is joined with them into one span, so nothing either reading found is left in the clear."""
    for span in found:
        start, end = span[0], span[1]
        j = bisect_left(taken, (start,))
        if j > 0 and taken[j - 1][1] > start:
            j -= 1
        k = j
        while k < len(taken) and taken[k][0] < end:
            k += 1
        if j == k:
            taken.insert(j, span)
            continue
        covered = taken[j:k]
        pos, inside = start, True
        for c_start, c_end, _prio, _ident in covered:
            if c_start > pos:
                inside = inside and _beyond_view(text[pos:c_start], after=pos > start)
            pos = max(pos, c_end)
        if pos < end:
            inside = inside and _beyond_view(text[pos:end], after=True)
        if not inside:
            first = covered[0]
            taken[j:k] = [(min(start, first[0]), max(end, covered[-1][1]), first[2], first[3])]
