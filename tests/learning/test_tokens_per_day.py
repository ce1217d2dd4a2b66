"""Tokens per UTC day of the learning log (the inspector's chart)."""

from __future__ import annotations

from datetime import UTC, datetime

from pi_memory.index import open_index
from pi_memory.learning import log as jlog
from pi_memory.learning import tokens_per_day


def _job(conn, day: str, tokens_in: int, tokens_out: int) -> None:
    jid = jlog.start_job(conn, "review", "test", project=None, dry_run=False, model="m")
    conn.execute("UPDATE learning_jobs SET day = ?, input_tokens = ?, output_tokens = ? WHERE id = ?",
                 (day, tokens_in, tokens_out, jid))


def test_each_day_of_the_window_oldest_first_with_empty_days_as_zero(tmp_path) -> None:
    conn = jlog.open_log(open_index(tmp_path))
    _job(conn, "2026-11-28", 100, 20)
    _job(conn, "2026-11-30", 1000, 50)
    _job(conn, "2026-11-30", 300, 0)
    _job(conn, "2026-11-01", 9999, 0)  # before the window
    days = tokens_per_day(conn, 4, now=datetime(2026, 12, 1, 9, 0, tzinfo=UTC))
    assert days == [{"day": "2026-11-28", "tokens": 120, "jobs": 1}, {"day": "2026-11-29", "tokens": 0, "jobs": 0},
                    {"day": "2026-11-30", "tokens": 1350, "jobs": 2}, {"day": "2026-12-01", "tokens": 0, "jobs": 0}]
    conn.close()
