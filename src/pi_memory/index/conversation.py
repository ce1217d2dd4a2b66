"""The conversation around one indexed message: the rows before and after it in its session, in file order.

For a person reading a search hit or the turn a memory came from (the memory inspector). ``messages.id`` is the
position in the session's file (rows are written in file order), so a window is two small indexed queries. Text
is stored redacted; while migration 008 is still redacting an old index, each row is redacted here.
"""

from __future__ import annotations

import sqlite3

from pi_memory.index.redaction import redaction_pending
from pi_memory.safety import redact

WINDOW = 3  # rows on each side
#: A session turn is a ``message`` row of the user or the assistant with at least this many characters; shorter
#: ones are acknowledgements and one-word answers ("ok, go ahead"). Recall's context windows and the turn
#: vectors count only turns.
MIN_TURN_CHARS = 24
#: The SQL condition of a turn (unqualified column names). The partial index ``messages_turns`` (migration 011)
#: has exactly this condition, so recall's neighbour seeks (:func:`pi_memory.retrieval.context.neighbours`) read
#: that index alone instead of each row in between (tool output included) for its kind, role and length.
TURN_SQL = f"kind = 'message' AND role IN ('user', 'assistant') AND length(text) >= {MIN_TURN_CHARS}"

_COLUMNS = "m.id, m.role, m.kind, m.tool_name, m.timestamp, m.entry_id, m.line, m.text, s.session_key, s.source, f.path"
_FROM = "FROM messages m JOIN sessions s ON s.id = m.session_id JOIN session_files f ON f.id = m.file_id"


def find_message(conn: sqlite3.Connection, *, session: str | None = None, entry_id: str | None = None,
                 file: str | None = None, line: int | None = None) -> int | None:
    """The ``messages.id`` of a message named by its session key and entry id, or by its file and line."""
    if session is not None and entry_id is not None:
        row = conn.execute(f"SELECT m.id {_FROM} WHERE s.session_key = ? AND m.entry_id = ? ORDER BY m.id LIMIT 1",
                           (session, entry_id)).fetchone()
    elif file is not None and line is not None:
        row = conn.execute(f"SELECT m.id {_FROM} WHERE f.path = ? AND m.line = ? ORDER BY m.id LIMIT 1",
                           (file, line)).fetchone()
    elif session is not None:  # the session's first message
        row = conn.execute(f"SELECT m.id {_FROM} WHERE s.session_key = ? ORDER BY m.id LIMIT 1", (session,)).fetchone()
    else:
        return None
    return row[0] if row else None


def conversation_around(conn: sqlite3.Connection, message_id: int, window: int = WINDOW) -> list[dict]:
    """The message ``message_id`` and up to ``window`` rows of its session on each side, oldest first; each a
    dict (``id``, ``role``, ``kind``, ``toolName``, ``timestamp``, ``entryId``, ``line``, ``text``, ``session``,
    ``source``, ``file``, ``focus``: True for the message itself). ``[]`` when it is not in the index."""
    row = conn.execute("SELECT session_id FROM messages WHERE id = ?", (message_id,)).fetchone()
    if row is None:
        return []
    before = conn.execute(f"SELECT {_COLUMNS} {_FROM} WHERE m.session_id = ? AND m.id < ? ORDER BY m.id DESC "
                          "LIMIT ?", (row[0], message_id, window)).fetchall()
    after = conn.execute(f"SELECT {_COLUMNS} {_FROM} WHERE m.session_id = ? AND m.id >= ? ORDER BY m.id LIMIT ?",
                         (row[0], message_id, window + 1)).fetchall()
    pending = redaction_pending(conn)
    keys = ("id", "role", "kind", "toolName", "timestamp", "entryId", "line", "text", "session", "source", "file")
    rows = []
    for r in [*reversed(before), *after]:
        item = dict(zip(keys, r, strict=True))
        if pending:
            item["text"] = redact(item["text"])
        item["focus"] = item["id"] == message_id
        rows.append(item)
    return rows
