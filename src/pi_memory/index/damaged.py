"""Reading a damaged index file (the copy set aside after corruption, :mod:`.db`) for what is still readable.

One place for how the salvage reads (:mod:`.mirror`, :mod:`.salvage`, :mod:`.semantic_schema` use it):

* :func:`open_damaged`: read-only, with ``PRAGMA writable_schema = ON`` so that a damaged ``sqlite_master`` entry of
  one table (a byte of its ``CREATE`` statement) no longer makes every statement fail with "malformed database
  schema": the other tables read as before. ``trusted_schema = OFF``: nothing in that schema runs functions. Text
  that is not UTF-8 comes back with U+FFFD in place of the bytes that cannot be decoded, as elsewhere in
  pi-memory, instead of a ``UnicodeDecodeError`` that ends the whole salvage.
* :func:`read_rows`: every row a query can give before the damage, and whether it gave them all. Any error (SQLite's,
  or Python's decoding of an error message that quotes damaged bytes) ends that query only.
* :func:`table_names`: the tables the schema still names, and whether the whole schema could be read (a table
  missing from a complete schema never existed; one missing from a partial schema may be lost).
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from pi_memory.index.db import open_read_only


def tolerant_text(raw: bytes) -> str:
    """SQLite text as ``str``: bytes that are not UTF-8 become U+FFFD."""
    return raw.decode("utf-8", errors="replace")


def open_damaged(path: Path | str) -> sqlite3.Connection | None:
    """A read-only connection to the damaged file ``path`` (see the module docstring), or ``None`` when it cannot be
    opened at all."""
    src = open_read_only(path)
    if src is None:
        return None
    src.text_factory = tolerant_text
    for pragma in ("writable_schema = ON", "trusted_schema = OFF"):
        with contextlib.suppress(sqlite3.Error):
            src.execute(f"PRAGMA {pragma}")
    return src


def read_rows(src: sqlite3.Connection, sql: str, args: tuple = ()) -> tuple[list[tuple], bool]:
    """The rows ``sql`` gives before any error, and True when it gave them all."""
    rows: list[tuple] = []
    try:
        for row in src.execute(sql, args):
            rows.append(row)
    except Exception:  # damage shows as SQLite errors and as error messages Python cannot decode
        return rows, False
    return rows, True


def table_names(src: sqlite3.Connection) -> tuple[set[str], bool]:
    """The names of the tables the damaged schema still holds, and True when all of it could be read."""
    rows, complete = read_rows(src, "SELECT name FROM sqlite_master WHERE type = 'table'")
    return {str(name) for (name,) in rows}, complete


def describe_error(exc: BaseException) -> str:
    """``Type: message`` of an error, on one line, for a repair message and record."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
