"""The semantic store's phases of the redaction migration (:mod:`.redaction`): its rows were redacted when
they were written, but only with the patterns the scanner knew then, so a scanner that learns a credential
format redacts them again (``redaction.VERSION``).

* ``semantic`` -- ``semantic_memories``: ``text`` (the word index ``semantic_words`` follows through its update
  trigger), ``hash`` (recomputed: a hash of the plaintext would let a guess be checked), every string of
  ``metadata`` and ``source``; the row's vectors are deleted (embedded from the plaintext; the next recall
  embeds the memory again).
* ``semantic_history`` -- ``old_text``, ``new_text`` and ``reason`` of every event.

Both go in batches of rows by id after ``state.cursor``, each batch one transaction with the cursor (resumable
after a kill, like the messages phase). An index without the semantic tables (no semantic backend ever opened
it) has nothing to do."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from pi_memory.index import segments
from pi_memory.index.text_hash import text_hash
from pi_memory.safety import redact, redact_value


def _has(conn: sqlite3.Connection, table: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None


def _json_redacted(raw: str) -> str:
    """A stored JSON text with every string in it redacted; unreadable JSON is redacted as text."""
    try:
        value: Any = json.loads(raw)
    except ValueError:
        return redact(raw)
    new = redact_value(value)
    return raw if new == value else json.dumps(new, ensure_ascii=False)


def memories_batch(conn: sqlite3.Connection, cursor: int, batch: int) -> tuple[list[tuple], int] | None:
    """The changed ``semantic_memories`` rows of the next batch after ``pk`` ``cursor`` as update parameters,
    and the last ``pk`` read; ``None`` when no row is left."""
    if not _has(conn, "semantic_memories"):
        return None
    rows = conn.execute("SELECT pk, text, metadata, source FROM semantic_memories WHERE pk > ? ORDER BY pk LIMIT ?",
                        (cursor, batch)).fetchall()
    if not rows:
        return None
    changed = []
    for pk, text, metadata, source in rows:
        new = (redact(text), _json_redacted(metadata or "{}"), _json_redacted(source or "{}"))
        if new != (text, metadata or "{}", source or "{}"):
            changed.append((new[0], text_hash(new[0]), new[1], new[2], pk))
    return changed, rows[-1][0]


def apply_memories(conn: sqlite3.Connection, changed: list[tuple]) -> None:
    conn.executemany("UPDATE semantic_memories SET text = ?, hash = ?, metadata = ?, source = ? WHERE pk = ?", changed)
    if changed and _has(conn, "semantic_vectors"):
        conn.executemany("DELETE FROM semantic_vectors WHERE memory_id = (SELECT id FROM semantic_memories "
                         "WHERE pk = ?)", [(row[-1],) for row in changed])


def history_batch(conn: sqlite3.Connection, cursor: int, batch: int) -> tuple[list[tuple], int] | None:
    """Like :func:`memories_batch` for ``semantic_history`` (by ``id``)."""
    if not _has(conn, "semantic_history"):
        return None
    rows = conn.execute("SELECT id, old_text, new_text, reason FROM semantic_history WHERE id > ? ORDER BY id "
                        "LIMIT ?", (cursor, batch)).fetchall()
    if not rows:
        return None
    changed = []
    for rid, old_text, new_text, reason in rows:
        new = tuple(redact(v) if v else v for v in (old_text, new_text, reason))
        if new != (old_text, new_text, reason):
            changed.append((*new, rid))
    return changed, rows[-1][0]


def apply_history(conn: sqlite3.Connection, changed: list[tuple]) -> None:
    conn.executemany("UPDATE semantic_history SET old_text = ?, new_text = ?, reason = ? WHERE id = ?", changed)


def optimize(conn: sqlite3.Connection) -> None:
    """Merge the semantic word index (its deleted tokens go), when the index has it."""
    if _has(conn, "semantic_words"):
        segments.optimize(conn, "semantic_words")
