"""Background job outcomes kept in the index, so every process sees them (issue 9, item 10).

Capture runs on the pi bridge's worker thread; a malformed model reply there used to leave no trace anywhere
else, because its counters lived in that process. Every outcome now goes into ``index.sqlite3``:

* ``job_counts``: ``(job, counter) → value`` running totals (``capture``: ``runs``, ``ok``, ``error``,
  ``skipped``, ``skipped:<rule>``, ``modelCalls``, ``inputTokens``... whatever the caller counts), with the
  time of the last change;
* ``job_outcomes``: the latest :data:`KEEP` outcomes per job: ``at`` (UTC), ``job``, ``outcome`` (ok | error
  | skipped | refused ...), ``project_id``, ``message`` (for a person: the first error, or what was left
  out) and ``data`` (JSON figures).

The tables come from the self-contained migration ``capture_outcomes_001`` (:data:`MIGRATIONS`), applied by
:func:`record` on first use; readers never migrate (a read-only index is read as it is, and a file without
the tables has no outcomes yet). A failure to record is logged, never raised: bookkeeping must not break the
job it reports on. The tables are bookkeeping, not memory: a corruption rebuild of the index starts them
again from zero (:mod:`.salvage` does not copy them).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pi_memory.index.db import migrate, now_iso, transaction
from pi_memory.index.read_only import skipped
from pi_memory.index.schema import Migration

log = logging.getLogger(__name__)

KEEP = 200  # outcomes kept per job (the counts are kept for ever)
MIGRATIONS = [
    Migration(
        "capture_outcomes_001",
        """
        CREATE TABLE job_counts (
            job TEXT NOT NULL,
            counter TEXT NOT NULL,
            value INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (job, counter)
        ) WITHOUT ROWID;
        CREATE TABLE job_outcomes (
            id INTEGER PRIMARY KEY,
            job TEXT NOT NULL,
            outcome TEXT NOT NULL,
            at TEXT NOT NULL,
            project_id TEXT NOT NULL DEFAULT '',
            message TEXT NOT NULL DEFAULT '',
            data TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX job_outcomes_job ON job_outcomes(job, outcome, id);
        """,
    ),
]


@dataclass(frozen=True)
class Outcome:
    """One stored outcome (module docstring)."""

    job: str
    outcome: str
    at: str
    message: str
    project_id: str = ""
    data: Mapping[str, Any] | None = None

    def to_public(self) -> dict[str, Any]:
        return {"job": self.job, "outcome": self.outcome, "at": self.at, "message": self.message,
                "projectId": self.project_id or None, "data": dict(self.data or {})}


def record(conn: sqlite3.Connection, job: str, outcome: str | None, *, counts: Mapping[str, int],
           message: str = "", data: Mapping[str, Any] | None = None, project_id: str | None = None) -> bool:
    """Add ``counts`` to the job's totals and, when ``outcome`` is given, store one outcome row (keeping the
    latest :data:`KEEP` of the job). One transaction. Returns False when it could not be written (logged), or
    on an index opened for reading only (:mod:`.read_only`: skipped, said once)."""
    if skipped(conn, f"recording the {job} outcome"):
        return False
    try:
        migrate(conn, MIGRATIONS)
        at = now_iso()
        with transaction(conn):
            for counter, value in counts.items():
                if value:
                    conn.execute(
                        "INSERT INTO job_counts(job, counter, value, updated_at) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT(job, counter) DO UPDATE SET value = value + excluded.value, "
                        "updated_at = excluded.updated_at", (job, counter, int(value), at))
            if outcome is not None:
                conn.execute(
                    "INSERT INTO job_outcomes(job, outcome, at, project_id, message, data) VALUES (?, ?, ?, ?, ?, ?)",
                    (job, outcome, at, project_id or "", message, json.dumps(dict(data or {}), ensure_ascii=False)))
                conn.execute(
                    "DELETE FROM job_outcomes WHERE job = ? AND id <= "
                    "(SELECT id FROM job_outcomes WHERE job = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
                    (job, job, KEEP))
        return True
    except sqlite3.Error as exc:
        log.warning("could not record the %s outcome in the index: %s", job, exc)
        return False


def _has_tables(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'job_outcomes'").fetchone() \
        is not None


def counts(conn: sqlite3.Connection, job: str) -> dict[str, int]:
    """The job's running totals (``{}`` before the first outcome)."""
    if not _has_tables(conn):
        return {}
    return {c: v for c, v in conn.execute("SELECT counter, value FROM job_counts WHERE job = ? ORDER BY counter",
                                          (job,))}


def latest(conn: sqlite3.Connection, job: str | None = None, outcome: str | None = None, *,
           since: str | None = None, limit: int = 1) -> list[Outcome]:
    """The newest outcomes (newest first), of ``job`` and ``outcome`` when given, at or after ``since``."""
    if not _has_tables(conn):
        return []
    where, args = [], []
    for column, value in (("job", job), ("outcome", outcome)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if since is not None:
        where.append("at >= ?")
        args.append(since)
    sql = ("SELECT job, outcome, at, message, project_id, data FROM job_outcomes"
           + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY id DESC LIMIT ?")
    out = []
    for row in conn.execute(sql, (*args, limit)):
        try:
            data = json.loads(row[5])
        except ValueError:
            data = {}
        out.append(Outcome(row[0], row[1], row[2], row[3], row[4], data))
    return out
