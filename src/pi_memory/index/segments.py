"""Upkeep of the FTS5 word indexes (``messages_fts``, ``memories_fts``, ``semantic_words``): few segments, and a
level count that stays far from FTS5's limit.

Every write transaction adds a segment to an FTS5 index, and FTS5 merges them as it goes (``automerge``: four
segments of one level become one of the next). A query term is looked up in every segment, so reads slow down as
segments pile up: semantic memories written one capture at a time sat at 8-24 segments in a 20,000-row test.
On the ``benchmarks/semantic_latency.py`` database (100k memories in 10 segments, 100k turns in 14), merging
both into one took the keyword searches of a recall from 3.3 to 2.4 ms (memories) and 6.3 to 4.7 ms (turns) of
CPU. Hence :func:`settle` after a small write (a bounded merge, only once the segments are over
:data:`SEGMENT_CAP`) and :func:`optimize` after a bulk one.

SQLite before 3.42 has a defect here: each ``'optimize'``, and each negative ``'merge'`` that ends with one
segment, puts that segment one or two levels higher, and the levels are never given back. At 2,000 levels
(FTS5's limit) every read and write of the index fails with "database disk image is malformed". With SQLite
3.40.1 (Debian 12, and this project's evaluation machine) 1,145 single-row inserts each followed by
``('merge', -500)`` -- what the session indexer did after every small pass, so after every pi run -- broke the
index; 3.42.0 and later keep at most 64 levels. So, on such a SQLite (:data:`LEVELS_BOUNDED` false):

* :func:`settle` uses positive merges only, of levels holding two segments or more (no level is added): in a
  test of 20,000 single-row writes, 5.7 segments on average against 13 with FTS5's own merging;
* :func:`optimize` rebuilds the index from its rows first when it has no room left for more levels
  (:data:`LEVEL_ROOM`);
* :func:`repair_levels`, at every writable open, rebuilds an index whose levels are over :data:`LEVEL_LIMIT` from
  the rows it indexes (one already broken at 2,000 too: its table can still be dropped).
"""

from __future__ import annotations

import logging
import sqlite3

log = logging.getLogger(__name__)

LEVELS_BOUNDED = sqlite3.sqlite_version_info >= (3, 42, 0)
SEGMENT_CAP = 4  # segments a small write leaves alone; over it, it does a bounded merge
MERGE_PAGES = 500  # FTS5 pages one bounded merge writes at most (about 30 ms of work)
LEVEL_LIMIT = 500  # an index with more levels is rebuilt at open (FTS5 fails at 2,000)
LEVEL_ROOM = 100  # below this many levels an old SQLite may still optimize (each adds up to two)
_STRUCTURE_ROWID = 10  # the ``<table>_data`` row holding the index's structure record
_V2_MARK = b"\xff\x00\x00\x01"  # a structure record in FTS5's second format starts (after the cookie) with this

# Each word index and the rows it indexes (rowid, text), as the triggers and writers fill it.
SOURCES = {
    "messages_fts": "SELECT id, coalesce(fts_text, text) FROM messages",
    "memories_fts": "SELECT id, pm_fts_form(content || char(10) || ifnull(failure_reason, '')) FROM memories",
    "semantic_words": "SELECT pk, pm_fts_form(text) FROM semantic_memories",
}


def _varint(blob: bytes, at: int) -> tuple[int, int]:
    """SQLite's big-endian varint at ``at``: ``(value, next offset)``."""
    value = 0
    for n in range(9):
        byte = blob[at]
        at += 1
        if n == 8:
            return (value << 8) | byte, at
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at
    return value, at


def structure(conn: sqlite3.Connection, table: str) -> tuple[int, int] | None:
    """``(levels, segments)`` of the FTS5 index ``table``, read from its structure record; ``None`` when the
    table or the record is missing or unreadable."""
    try:
        row = conn.execute(f"SELECT block FROM {table}_data WHERE id = ?", (_STRUCTURE_ROWID,)).fetchone()
    except sqlite3.OperationalError:
        return None
    blob = bytes(row[0]) if row and row[0] is not None else b""
    try:
        at = 8 if blob[4:8] == _V2_MARK else 4  # a 4-byte cookie first
        levels, at = _varint(blob, at)
        segments, _ = _varint(blob, at)
    except IndexError:
        return None
    return levels, segments


def settle(conn: sqlite3.Connection, table: str, pages: int = MERGE_PAGES) -> None:
    """After a small write (inside its transaction): once ``table`` holds more than :data:`SEGMENT_CAP` segments,
    merge at most ``pages`` pages of it -- towards one segment where SQLite bounds the levels, else only levels
    that hold ``usermerge`` segments (module docstring)."""
    found = structure(conn, table)
    if found is None or found[1] <= SEGMENT_CAP:
        return
    if not LEVELS_BOUNDED:  # merge any level holding two segments (FTS5's default: four)
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('usermerge', 2)")
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)", (-pages if LEVELS_BOUNDED else pages,))


def optimize(conn: sqlite3.Connection, table: str) -> None:
    """Merge ``table`` into one segment, which also drops the tokens of deleted rows (after a bulk write, and
    when freed text must leave the file), inside the caller's transaction. Where this SQLite would add levels
    the index has no room for (module docstring), the index is rebuilt from its rows instead, which does both."""
    found = structure(conn, table)
    if not LEVELS_BOUNDED and found is not None and found[0] >= LEVEL_ROOM:
        rebuild(conn, table)
    conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")


def rebuild(conn: sqlite3.Connection, table: str) -> None:
    """Recreate ``table`` from the rows it indexes (:data:`SOURCES`), inside the caller's transaction. The
    triggers that write to it name it and keep working."""
    create = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    if create is None:
        return
    conn.execute(f"DROP TABLE {table}")
    conn.execute(create[0])
    conn.execute(f"INSERT INTO {table}(rowid, text) {SOURCES[table]}")


def repair_levels(conn: sqlite3.Connection) -> list[str]:
    """Rebuild each word index whose level count is over :data:`LEVEL_LIMIT` (module docstring); returns the
    tables rebuilt. Cheap when there is nothing to do: one small read per table."""
    from pi_memory.index.db import transaction

    done = []
    for table in SOURCES:
        found = structure(conn, table)
        if found is None or found[0] <= LEVEL_LIMIT:
            continue
        with transaction(conn):
            rebuild(conn, table)
        log.warning("rebuilt the word index %s: it had %d levels (SQLite %s fails at 2,000)", table, found[0],
                    sqlite3.sqlite_version)
        done.append(table)
    return done
