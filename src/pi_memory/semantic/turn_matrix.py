"""The session-turn matrix, which also knows which message each of its vectors belongs to, so recall's window
cosines (:func:`pi_memory.retrieval.turns_in_context._vectors`) find the vectors of a few hundred turns
without asking the database for their vector rows (about 0.7 ms less CPU a recall over 100k turns;
``docs/architecture.md``, seventh look).

A message id does not name one vector for good: a vector row goes when its message is deleted (ids of the
newest messages are given out again when a transcript is rewritten), when the turn is embedded again
(``INSERT OR REPLACE``: a new row, a larger id) or when redaction or a model prune drops it; the matrix keeps
the old vector until a search reads it back (:mod:`.sources`). So the map ``message id -> vector row id`` is
only trusted together with the index's record of vector rows that went: migration ``semantic_007`` adds
``semantic_turn_vectors_gone`` (``seq`` ``AUTOINCREMENT``, the row's ``id`` and ``message_id``), filled by
triggers on ``semantic_turn_vectors`` whenever a row is deleted (a cascade from ``messages`` included),
updated, or about to be replaced by an insert of the same ``(message_id, model)`` (``REPLACE`` deletes fire no
delete trigger). Every 1,000th record drops those more than 100,000 records old.

The map is brought up to date in steps, each holding the matrix lock from its first read to its last change
(:meth:`TurnMatrix.forget_gone`, then the new rows :func:`.sources.matrix` reads, or the lookup of
:meth:`TurnMatrix.message_rows` on the recall's own connection): the records after the last
one applied drop the entries they name, and rows read since add theirs. A connection outside a transaction
reads what is committed when its statement starts, so one step never sees an older state than the step before
it: a row added to the map was not gone before the records already applied. An entry is used only while its
vector row is still a live row of the matrix (a search may have dropped it).

Where that cannot hold, the map is not used and the turns are looked up in the table as before: the record
table is missing (an index not migrated yet; the map is off until the matrix is loaded again), records were
dropped before this process read them or the table is not the one seen before (another file at the same
path: told apart once a record was applied, by the last record's vector row id), or the connection is inside a transaction (its view may be older than the last step's, or hold writes
that are rolled back later).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from pi_memory.index.semantic_schema import GONE_TABLE
from pi_memory.semantic.vectors import VectorMatrix


class TurnMatrix(VectorMatrix):
    """A :class:`VectorMatrix` of turn vectors (keys: vector row ids) that maps message ids to their live rows
    (module docstring). ``gone_seen``: the last record of ``semantic_turn_vectors_gone`` applied, as
    ``(seq, vector row id)``; ``None`` while the map is off."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self._vid_of: dict[int, int] = {}  # message id -> vector row id
        self.gone_seen: tuple[int, int] | None = None
        self._started = False  # the first step has run (it decides whether the map is on)

    def forget_gone(self, conn: sqlite3.Connection) -> bool:
        """Apply the records of vector rows gone since the last step (the caller holds ``lock``); whether the
        map may be used (and rows read next in this step added to it: :meth:`apply_rows`)."""
        if conn.in_transaction:
            return False
        if not self._started:  # before the first rows are read: deletions from here on are all recorded
            self._started = True
            try:
                last = conn.execute(f"SELECT seq, id FROM {GONE_TABLE} ORDER BY seq DESC LIMIT 1").fetchone()
            except sqlite3.Error:  # not migrated yet: no record of what goes
                return False
            self.gone_seen = (last[0], last[1]) if last else (0, 0)
        if self.gone_seen is None:
            return False
        seq, vid = self.gone_seen
        try:
            rows = conn.execute(f"SELECT seq, id, message_id FROM {GONE_TABLE} WHERE seq >= ? ORDER BY seq",
                                (seq,)).fetchall()
        except sqlite3.Error:
            return self._off()
        if seq and (not rows or rows[0][:2] != (seq, vid)):  # pruned past us, or another file: records missed
            return self._off()
        start = 1 if seq else 0
        for i, (s, gone, mid) in enumerate(rows[start:]):
            if s != seq + 1 + i:
                return self._off()
            if self._vid_of.get(mid) == gone:
                del self._vid_of[mid]
        if len(rows) > start:
            self.gone_seen = (rows[-1][0], rows[-1][1])
        return True

    def _off(self) -> bool:
        self.gone_seen = None
        self._vid_of.clear()
        return False

    def apply_rows(self, rows: Sequence[tuple], mapped: bool) -> tuple[int, int]:
        """:meth:`VectorMatrix.upsert_rows` of ``(id, dim, blob, message_id)`` rows; ``mapped`` (what this step's
        :meth:`forget_gone` said): each row the matrix took becomes its message's entry (the newest row wins)."""
        counts = self.upsert_rows([r[:3] for r in rows])
        if mapped:
            vid_of, live = self._vid_of, self._row
            for vid, _dim, _blob, mid in rows:
                if vid in live and vid > vid_of.get(mid, 0):
                    vid_of[mid] = vid
        return counts

    def current_rows(self, conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, int]:
        """``message id -> vector row id`` of the turns among ``ids`` whose current vector is a live row here,
        after applying the records of rows gone since the last step; ``{}`` when the map cannot be used
        (module docstring)."""
        with self.lock:
            if not self.forget_gone(conn):
                return {}
            vid_of, live = self._vid_of, self._row
            return {m: v for m in ids if (v := vid_of.get(m)) is not None and v in live}

    def message_rows(self, conn: sqlite3.Connection,
                     ids: Sequence[int]) -> tuple[list[int], np.ndarray, list[int]] | None:
        """``(message ids, their vectors, the other ids)``: the turns among ``ids`` whose current vector is a
        live row here, in message id order, with a copy of those rows (read under the lock), and the turns the
        map does not name; ``None`` when the map cannot be used. As :meth:`current_rows`, in one pass."""
        with self.lock:
            if not self.forget_gone(conn):
                return None
            vid_of, live = self._vid_of, self._row
            held: list[int] = []
            rows: list[int] = []
            rest: list[int] = []
            for m in sorted(ids):
                r = live.get(vid_of.get(m, -1))  # -1: never a row id
                if r is None:
                    rest.append(m)
                else:
                    held.append(m)
                    rows.append(r)
            return held, self._buf[np.array(rows, dtype=np.intp)], rest
