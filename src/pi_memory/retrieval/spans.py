"""Character spans of a text already taken by one reading, so that another reading does not use them again
(:func:`pi_memory.retrieval.expand.find_dates`, :func:`pi_memory.retrieval.dates.date_windows`).

One byte per character of the text: asking whether ``[start, end)`` overlaps a taken span costs the span's
length, not the number of spans taken. A list of spans checked one by one made a 100 KB prompt full of dates
take 16-49 s to read (every reading compared with every earlier one).
"""

from __future__ import annotations

_FREE, _TAKEN = 0, 1


class Taken:
    """The taken characters of a text of ``size`` characters."""

    def __init__(self, size: int) -> None:
        self._marks = bytearray(size)

    def overlaps(self, start: int, end: int) -> bool:
        """Whether any character of ``[start, end)`` is taken."""
        return self._marks.find(_TAKEN, start, end) >= 0

    def add(self, start: int, end: int) -> None:
        """Take the characters of ``[start, end)``."""
        self._marks[start:end] = b"\x01" * (end - start)

    def blank(self, text: str) -> str:
        """``text`` (the text these spans are of) with each taken character replaced by a space."""
        return "".join(" " if mark else ch for ch, mark in zip(text, self._marks, strict=True))
