"""Bounds of the numbers a person types (a CLI option, an inspector parameter) before they reach SQLite or a slice.

SQLite stores a 64-bit signed integer: Python hands it any ``int``, and one past :data:`SQLITE_MAX_INT` raises
``OverflowError`` inside the query (``learning undo 99999999999999999999`` printed a 49-line traceback). A number
that can name a row (a job id, a line) is checked with :func:`row_number` first: out of range, it names no row, and
the caller says "no such ..." as it does for any unknown one. A count (``--limit``) gets a maximum of its own.
"""

from __future__ import annotations

SQLITE_MAX_INT = 2**63 - 1  # the largest INTEGER SQLite holds
MAX_LIST_LIMIT = 1_000_000  # --limit of a listing: more rows than any page or terminal shows


def row_number(value: int | None) -> int | None:
    """``value`` when SQLite can hold it (a row id, a line number), else ``None`` (it names no row)."""
    if value is None or not -SQLITE_MAX_INT - 1 <= value <= SQLITE_MAX_INT:
        return None
    return value


def parse_row_number(text: str | None) -> int | None:
    """A whole number typed into a URL parameter, ``None`` when it is empty, not a number or past what SQLite
    holds (digits are read only up to a length that can be in range, so a 100,000-digit value costs nothing)."""
    text = (text or "").strip()
    if not text or len(text) > 21:  # "-9223372036854775808" is 20 characters
        return None
    try:
        return row_number(int(text))
    except ValueError:
        return None
