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
index; on 3.42.0 and later the same loop stopped at 65 levels. So, on such a SQLite (:data:`LEVELS_BOUNDED` false):

* :func:`settle` uses positive merges only, of levels holding two segments or more (no level is added): in a
  test of 20,000 single-row writes, 5.7 segments on average against 13 with FTS5's own merging;
* :func:`optimize` (bulk passes, compaction: each adds up to two levels there) is skipped on an index over
  :data:`REPAIR_AT` levels, which the next open rebuilds;
* :func:`repair_levels`, at every writable open, rebuilds an index whose levels are over :data:`REPAIR_AT` from
  the rows it indexes, one already broken too (its structure record is emptied first: FTS5 will not even drop a
  table it cannot read). An index below :data:`REPAIR_AT` levels is left as it is: only an optimize adds levels
  now, two at a time, and only after a bulk pass or a compaction. A large ``messages_fts`` is not rebuilt in one
  go, which took 33-36 s at 1M messages, longer than a host waits for its start: it comes back empty but for
  its newest :data:`REFILL_ROWS` messages, and each index pass (:func:`after_pass`) puts back more for about
  :data:`REFILL_SECONDS`, newest first, one transaction per batch. Meanwhile the messages not yet back are never
  deleted from it (deleting a row a contentless table lacks would damage it): the ``messages`` triggers act
  only on ids at or above the refill's mark (``meta`` key :data:`REFILL_KEY`), and the writer leaves
  new rows below it to the refill (:func:`refill_mark`).
"""

from __future__ import annotations

import logging
import sqlite3
import time

log = logging.getLogger(__name__)

REFILL_KEY = "words_refill_below"
"""``meta`` key set while ``messages_fts`` is refilled after a repair, newest messages first: the messages with
smaller ids are not in the word index yet (the ``messages`` triggers of :mod:`.schema` leave them alone)."""

LEVELS_BOUNDED = sqlite3.sqlite_version_info >= (3, 42, 0)
SEGMENT_CAP = 4  # segments a small write leaves alone; over it, it does a bounded merge
MERGE_PAGES = 500  # FTS5 pages one bounded merge writes at most (about 30 ms of work)
REPAIR_AT = 1000  # an index with more levels is rebuilt at open (FTS5 fails at 2,000; nothing here adds levels now)
REFILL_ROWS = 20_000  # messages put back into a rebuilt messages_fts per transaction (about 0.7 s)
REFILL_SECONDS = 5.0  # how long one index pass goes on with such a refill
_STRUCTURE_ROWID = 10  # the ``<table>_data`` row holding the index's structure record
_V2_MARK = b"\xff\x00\x00\x01"  # a structure record in FTS5's second format starts (after the cookie) with this

WHAT = {"messages_fts": "past sessions", "memories_fts": "curated memories", "semantic_words": "semantic memories"}

# Each word index and the rows it indexes (rowid, text), as the triggers and writers fill it.
SOURCES = {
    "messages_fts": "SELECT id, coalesce(fts_text, text) FROM messages",
    "memories_fts": "SELECT id, pm_fts_form(content || char(10) || ifnull(failure_reason, '')) FROM memories",
    "semantic_words": "SELECT pk, pm_fts_form(text) FROM semantic_memories",
}


def refill_mark(conn: sqlite3.Connection) -> int | None:
    """The id below which messages are not back in ``messages_fts`` yet (a refill under way), else ``None``."""
    row = conn.execute("SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?", (REFILL_KEY,)).fetchone()
    return row[0] if row else None


def not_back(conn: sqlite3.Connection) -> int:
    """How many messages a refill under way has still to put back into ``messages_fts`` (0: none)."""
    mark = refill_mark(conn)
    return 0 if mark is None else conn.execute("SELECT count(*) FROM messages WHERE id < ?", (mark,)).fetchone()[0]


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
    when freed text must leave the file), inside the caller's transaction. Where this SQLite adds levels at each
    optimize (module docstring), an index already over :data:`REPAIR_AT` levels is left as it is: the next
    writable open rebuilds it from its rows (:func:`repair_levels`), which drops those tokens too. (Rebuilding
    here held the write lock for 50 s at 1M messages; an optimize below that takes 2 s.)"""
    found = structure(conn, table)
    if not LEVELS_BOUNDED and found is not None and found[0] >= REPAIR_AT:
        log.info("%s not merged: %d levels; the next open rebuilds it", table, found[0])
        return
    conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")


def _recreate(conn: sqlite3.Connection, table: str) -> None:
    """Drop ``table`` and create it empty again (the caller's transaction). A table FTS5 can no longer read (over
    its level limit) cannot be dropped as it is -- dropping connects to it first -- so its structure record is
    replaced by an empty one beforehand (a new cookie, so no connection keeps the old one). The triggers that
    write to it name it and keep working."""
    create = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = ?", (_STRUCTURE_ROWID,)).fetchone()
    if row is not None and row[0] is not None and len(row[0]) >= 4:
        cookie = (int.from_bytes(bytes(row[0])[:4], "big") + 1) % 2**32
        conn.execute(f"UPDATE {table}_data SET block = ? WHERE id = ?",
                     (cookie.to_bytes(4, "big") + b"\x00\x00\x00", _STRUCTURE_ROWID))
    conn.execute(f"DROP TABLE {table}")
    conn.execute(create[0])


def after_pass(conn: sqlite3.Connection, added: bool) -> None:
    """The end of an index pass: a bounded merge when a small pass ``added`` rows (:func:`settle`), and the next
    part of a refill under way (:func:`refill`)."""
    from pi_memory.index.db import transaction

    if added:
        with transaction(conn):  # a bounded step towards fewer segments (nothing to do when there are few)
            settle(conn, "messages_fts")
    refill(conn)


def _refill_batch(conn: sqlite3.Connection, rows: int) -> int:
    """Put the next ``rows`` messages (newest first, below the refill's mark) back into ``messages_fts`` and lower
    the mark; at the end the mark goes. Returns the messages put back. The caller holds a write transaction."""
    below = refill_mark(conn)
    if below is None:
        return 0
    low = conn.execute("SELECT min(id), count(*) FROM (SELECT id FROM messages WHERE id < ? ORDER BY id DESC "
                       "LIMIT ?)", (below, rows)).fetchone()
    if not low[1]:
        conn.execute("DELETE FROM meta WHERE key = ?", (REFILL_KEY,))
        return 0
    conn.execute(f"INSERT INTO messages_fts(rowid, text) {SOURCES['messages_fts']} WHERE id >= ? AND id < ?",
                 (low[0], below))
    conn.execute("UPDATE meta SET value = ? WHERE key = ?", (str(low[0]), REFILL_KEY))
    return int(low[1])


def refill(conn: sqlite3.Connection, seconds: float | None = REFILL_SECONDS) -> int | None:
    """Go on with a refill of ``messages_fts`` (:func:`repair_levels`) for about ``seconds`` (``None``: to the
    end), one transaction per :data:`REFILL_ROWS` messages so other writers get their turn. Returns the messages
    put back, ``None`` when no refill is under way."""
    from pi_memory.index.db import transaction

    if refill_mark(conn) is None:
        return None
    done, until = 0, (time.monotonic() + seconds) if seconds is not None else None
    while until is None or time.monotonic() < until:
        with transaction(conn):
            n = _refill_batch(conn, REFILL_ROWS)
            if not n:  # whole again: one segment, as after a bulk pass
                optimize(conn, "messages_fts")
        done += n
        if not n:
            log.info("the word index messages_fts is whole again")
            break
    return done


def _repaired_words(table: str, levels: int, left: int) -> str:
    """What a person reads after :func:`repair_levels` rebuilt ``table`` (``left``: messages not back yet)."""
    state = (f"had gone past a limit of SQLite {sqlite3.sqlite_version} ({levels:,} FTS5 levels; it allows 2,000), "
             "so searching it failed" if levels > 2000 else
             f"was close to a limit of SQLite {sqlite3.sqlite_version} ({levels:,} of the 2,000 FTS5 levels it "
             "allows)")
    rest = (f": the newest messages are searchable again at once, and the {left:,} older ones come back over the "
            "next indexing passes (`pi-memory index-sessions` brings them all back now)." if left else ".")
    return (f"The search index of {WHAT[table]} {state}; an earlier pi-memory had left it there. It was rebuilt"
            + rest)


def messages_left(data_dir) -> int | None:
    """How many messages a refill under way has still to put back into ``messages_fts`` (``None``: no refill, or
    the index cannot be read), read through a read-only connection: for ``pi-memory status``."""
    from pathlib import Path

    from pi_memory.index.db import open_read_only

    path = Path(data_dir) / "index.sqlite3"
    if not path.is_file():
        return None
    src = open_read_only(path, timeout=1)
    if src is None:
        return None
    try:
        return not_back(src) if refill_mark(src) is not None else None
    except (sqlite3.Error, UnicodeDecodeError):  # damaged (a schema entry that is not text): the next open repairs
        return None
    finally:
        src.close()


def repair_levels(conn: sqlite3.Connection) -> list[str]:
    """Rebuild each word index whose level count is over :data:`REPAIR_AT` (module docstring); returns the tables
    rebuilt. Cheap when there is nothing to do: one small read per table. ``messages_fts`` comes back at once
    with its newest :data:`REFILL_ROWS` messages, and :func:`refill` (every index pass) puts back the rest, so an
    open never waits for a whole large index; the others are small and refilled here."""
    from pi_memory.index.db import transaction

    done = []
    for table in SOURCES:
        found = structure(conn, table)
        if found is None or found[0] <= REPAIR_AT:
            continue
        with transaction(conn):
            found = structure(conn, table)  # again under the write lock: another process may have done it
            if found is None or found[0] <= REPAIR_AT:
                continue
            _recreate(conn, table)
            left = 0
            if table == "messages_fts":  # the newest now, the rest by refill (module docstring)
                top = conn.execute("SELECT ifnull(max(id), 0) FROM messages").fetchone()[0]
                conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (REFILL_KEY, str(top + 1)))
                _refill_batch(conn, REFILL_ROWS)
                left = not_back(conn)
                if not left:  # it all came back in the first batch
                    conn.execute("DELETE FROM meta WHERE key = ?", (REFILL_KEY,))
            else:  # small: refilled here
                conn.execute(f"INSERT INTO {table}(rowid, text) {SOURCES[table]}")
        log.warning("%s", _repaired_words(table, found[0], left))
        done.append(table)
    return done
