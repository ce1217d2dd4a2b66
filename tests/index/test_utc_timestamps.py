"""Timestamps are compared as text (as_of, since/until), so every stored one is in one form: UTC with
milliseconds. A session file dated with an offset (+14:00, -08:00) or without milliseconds is stored in that
form (readers/base.utc_ts), and migration 009 rewrites the rows an older version stored as found."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from pi_memory.index import index_paths, open_index
from pi_memory.index.db import migrate
from pi_memory.index.readers.base import norm_ts, utc_ts
from pi_memory.index.schema import MIGRATIONS
from pi_memory.retrieval import session_search


@pytest.mark.parametrize(("found", "stored"), [
    ("2026-12-04T09:00:00+14:00", "2026-12-03T19:00:00.000Z"),
    ("2026-12-03T20:00:00-08:00", "2026-12-04T04:00:00.000Z"),
    ("2026-11-29T13:28:08Z", "2026-11-29T13:28:08.000Z"),
    ("2026-11-29T13:28:08.800Z", "2026-11-29T13:28:08.800Z"),
    ("2026-11-29T13:28:08.123456+00:00", "2026-11-29T13:28:08.123Z"),
    ("not a time", "not a time"),  # kept as found: nothing better to compare
    ("2026-13-45T00:00:00Z", "2026-13-45T00:00:00Z"),
    ("7d", "7d"),  # an age is the search filters' form, never a file's
])
def test_a_files_timestamp_is_stored_in_utc_with_milliseconds(found, stored):
    assert utc_ts(found) == stored and norm_ts(found) == stored


def _stamp(moment: datetime, hours: int) -> str:
    return moment.astimezone(timezone(timedelta(hours=hours))).isoformat(timespec="seconds")


def test_a_turn_dated_with_an_offset_is_found_as_of_now_and_a_future_one_is_not(tmp_path, helpers):
    now = datetime.now(UTC)
    sessions = tmp_path / "sessions"
    hour_ago_east = _stamp(now - timedelta(hours=1), 14)  # text sorts after now: "...+14:00" is tomorrow's date
    hour_ahead_west = _stamp(now + timedelta(hours=1), -8)  # text sorts before now: today's date, earlier hour
    helpers.write_lines(sessions / "a.jsonl", [
        helpers.pi_header("east", "/w", hour_ago_east),
        helpers.pi_message("e1", None, "user", "The redis eviction policy is allkeys-lru.", hour_ago_east),
    ])
    helpers.write_lines(sessions / "b.jsonl", [
        helpers.pi_header("west", "/w", hour_ahead_west),
        helpers.pi_message("e1", None, "user", "The memcached pool size is 64.", hour_ahead_west),
    ])
    conn = open_index(tmp_path / "data")
    index_paths(conn, [sessions])
    assert session_search(conn, "redis eviction").count == 1
    assert session_search(conn, "memcached pool").count == 0  # written an hour from now
    stored = sorted(r[0] for r in conn.execute("SELECT timestamp FROM messages"))
    assert all(s.endswith("Z") and len(s) == 24 for s in stored)
    conn.close()


def test_migration_009_rewrites_what_an_older_version_stored_as_found(tmp_path, helpers):
    conn = open_index(tmp_path / "data")
    helpers.add_session(conn, "old", [
        {"text": "the staging database moved to 6543", "timestamp": "2026-12-04T09:00:00+14:00"},
        {"text": "the replica moved too", "timestamp": "2026-11-29T13:28:08Z"},
        {"text": "and the cache", "timestamp": "2026-11-29T13:28:08.800Z"},
        {"text": "no time at all"},
    ])
    conn.execute("UPDATE messages SET timestamp = NULL WHERE text = 'no time at all'")
    conn.execute("UPDATE sessions SET started_at = '2026-12-04T09:00:00+14:00'")
    conn.execute("DELETE FROM schema_migrations WHERE name = '009_utc_timestamps'")
    migrate(conn, MIGRATIONS)
    stamps = dict(conn.execute("SELECT text, timestamp FROM messages"))
    assert stamps == {"the staging database moved to 6543": "2026-12-03T19:00:00.000Z",
                      "the replica moved too": "2026-11-29T13:28:08.000Z",
                      "and the cache": "2026-11-29T13:28:08.800Z", "no time at all": None}
    assert conn.execute("SELECT started_at FROM sessions").fetchone()[0] == "2026-12-03T19:00:00.000Z"
    assert session_search(conn, "staging", until="2026-12-03T20:00:00Z").count == 1
    conn.close()
