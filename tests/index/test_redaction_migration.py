"""Migration 008_redact_secrets: an index written before redaction at index time is redacted in place, in
batches that survive being killed, its old plaintext leaves the file and its WAL, and ``reindex`` gives the
same rows."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from credential_cases import FAMILIES, cases, render, runs
from readers_helpers import insert_plaintext_session

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import index_paths, open_index, redaction, reindex, transaction
from pi_memory.index.indexer import _insert_rows
from pi_memory.index.writer import index_ranges
from pi_memory.retrieval import memory_search, session_search

SECRETS = [f for f in FAMILIES if f.id in ("openai_api_key", "aws_secret_access_key", "url_credentials",
                                          "password_in_prose", "github_token")]


def pi_session(path: Path, session_id: str, cwd: str, turns: list[tuple[str, str]]) -> Path:
    return write_pi_session(path, Path(cwd), turns, session_id)


def _turns() -> list[tuple[str, str]]:
    out = []
    for family in SECRETS:
        for context in ("env", "prose", "json"):
            if render(family, context) is not None:
                out.append(("user", f"{render(family, context)[1]} oldidx{FAMILIES.index(family)}"))
    return out


def _blob(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (data / "index.sqlite3", data / "index.sqlite3-wal") if p.exists())


def _leaks(blob: bytes) -> list[str]:
    return [f.id for f in SECRETS if any(r.encode() in blob for r in runs(f.secret))]


def make_old_index(data: Path, session: Path) -> None:
    """An index as the version before redaction wrote it: plaintext rows and memories, no 008 record."""
    conn = open_index(data)
    turns = _turns()
    with transaction(conn):
        insert_plaintext_session(conn, "old", session, turns)
        conn.execute("INSERT INTO memories(scope, target, content, source, created) VALUES "
                     "('global', 'memory', ?, 'extended', '2026-11-01T10:00:00.000Z')",
                     (f"staging key {SECRETS[0].secret} oldmem",))
        conn.execute("DELETE FROM schema_migrations WHERE name = ?", (redaction.MIGRATION_NAME,))
        conn.execute("DELETE FROM meta WHERE key = ?", (redaction.META_KEY,))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


@pytest.fixture
def old(tmp_path: Path) -> Path:
    session = pi_session(tmp_path / "sessions" / "old.jsonl", "old", "/w", _turns())
    make_old_index(tmp_path / "data", session)
    return tmp_path


def test_the_old_index_held_plaintext_and_open_redacts_it_in_place(old: Path) -> None:
    data = old / "data"
    assert _leaks(_blob(data)) == [f.id for f in SECRETS]  # the test can fail: the plaintext was there
    seen: list[tuple[int, int]] = []
    with redaction.redaction_progress(lambda done, total: seen.append((done, total))):
        conn = open_index(data)
    state = redaction.load_state(conn)
    assert (state.phase, state.changed) == ("done", len(_turns()) + 1)
    assert seen[-1] == (len(_turns()), len(_turns()))  # the CLI's progress bar got its steps
    assert _leaks(_blob(data)) == []
    for n in range(len(FAMILIES)):
        text = session_search(conn, f"oldidx{n}", limit=50).to_json()
        assert all(not any(r in text for r in runs(f.secret)) for f in SECRETS)
    found = memory_search(conn, "oldmem", record_use=False)
    assert found.results[0].content == "staging key [REDACTED:openai_api_key] oldmem"
    assert "oldidx" in " ".join(r[0] for r in conn.execute("SELECT text FROM messages"))  # text kept, keys gone
    conn.close()


class Killed(Exception):
    pass


def test_the_migration_resumes_after_being_killed_between_batches(old: Path) -> None:
    data = old / "data"
    conn = sqlite3.connect(data / "index.sqlite3", isolation_level=None)
    from pi_memory.index.db import migrate

    migrate(conn)  # records the work (phase "messages"), does none of it
    assert redaction.load_state(conn).phase == "messages"
    calls = []

    def kill(done: int, total: int) -> None:
        calls.append(done)
        if len(calls) == 2:
            raise Killed

    with pytest.raises(Killed):
        redaction.redact_pending_index(conn, data / "index.sqlite3", progress=kill, batch=3)
    state = redaction.load_state(conn)
    assert (state.phase, state.cursor) == ("messages", 6)  # two batches committed
    plain = [t for (t,) in conn.execute("SELECT text FROM messages ORDER BY id")]
    assert "[REDACTED:" in plain[0] and SECRETS[-1].secret in "".join(plain[6:])  # the rest still to do
    report = redaction.redact_pending_index(conn, data / "index.sqlite3", batch=3)
    assert report.compacted and redaction.load_state(conn).phase == "done"
    assert _leaks(_blob(data)) == []
    again = redaction.redact_pending_index(conn, data / "index.sqlite3")
    assert (again.messages_changed, again.memories_changed) == (0, 0)  # done is done
    conn.close()


def test_a_second_process_finds_the_lock_held_and_goes_on(old: Path) -> None:
    from filelock import FileLock

    data = old / "data"
    with FileLock(str(data / "index.sqlite3") + ".redact.lock"):
        conn = open_index(data)  # does not wait for the holder
        assert redaction.redaction_pending(conn)
        hit = session_search(conn, f"oldidx{FAMILIES.index(SECRETS[0])}")
        assert hit.count >= 1 and SECRETS[0].secret not in hit.to_json()  # searches redact what they show
        conn.close()
    conn = open_index(data)
    assert not redaction.redaction_pending(conn)
    conn.close()


def test_reindex_gives_the_rows_the_migration_gave(old: Path) -> None:
    data = old / "data"
    conn = open_index(data)
    migrated = [tuple(r) for r in conn.execute("SELECT text FROM messages ORDER BY id")]
    reindex(conn, [old / "sessions"])
    again = [tuple(r) for r in conn.execute("SELECT text FROM messages ORDER BY id")]
    assert again == migrated
    assert _leaks(_blob(data)) == []
    conn.close()


def test_fresh_indexing_stores_what_the_migration_stores(tmp_path: Path) -> None:
    """Every context of every family: the indexer and the migration (rows written as plaintext) agree."""
    turns = [("user", render(f, c)[1]) for f, c in cases() if c != "split"]
    session = pi_session(tmp_path / "s" / "a.jsonl", "a", "/w", turns)
    conn = open_index(tmp_path / "fresh")
    index_paths(conn, [session])
    fresh = [t for (t,) in conn.execute("SELECT text FROM messages ORDER BY id")]
    conn.close()
    raw = open_index(tmp_path / "raw")
    with transaction(raw):
        sid = raw.execute("INSERT INTO sessions(source, session_key) VALUES ('pi', 'a') RETURNING id").fetchone()[0]
        fid = raw.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES ('x', ?, 0, 0) "
                          "RETURNING id", (sid,)).fetchone()[0]
        index_ranges(raw, [_insert_rows(raw, [(sid, fid, None, None, n, None, r, "message", None, "active", t)
                                              for n, (r, t) in enumerate(turns)])])
        redaction.save_state(raw, redaction.RedactionState())
    redaction.redact_pending_index(raw)
    migrated = [t for (t,) in raw.execute("SELECT text FROM messages ORDER BY id")]
    raw.close()
    assert migrated == fresh
    assert json.dumps(fresh).count("[REDACTED:") >= len(turns)


def test_the_cli_shows_the_migration_as_a_progress_bar(old: Path) -> None:
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "pi_memory.cli", "session-search", "oldidx1", "--dir", str(old / "data")]
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("PI_")}
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("redacting credentials in the index") == 1 and f"{len(_turns())}/{len(_turns())}" in run.stderr
    again = subprocess.run([*cmd, "--json"], capture_output=True, text=True, timeout=60, env=env)
    assert "redacting" not in again.stderr  # done once; and never drawn under --json
    assert json.loads(again.stdout)["count"] >= 1


def test_vectors_embedded_from_plaintext_are_dropped(old: Path) -> None:
    data = old / "data"
    conn = sqlite3.connect(data / "index.sqlite3", isolation_level=None)
    from pi_memory.index.db import migrate
    from pi_memory.index.semantic_schema import SEMANTIC_MIGRATIONS

    migrate(conn, SEMANTIC_MIGRATIONS)
    conn.execute("PRAGMA foreign_keys = ON")
    ids = [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY id")]
    conn.executemany("INSERT INTO semantic_turn_vectors(message_id, model, dim, vector, created_at) "
                     "VALUES (?, 'm', 1, x'00000000', 'now')", [(i,) for i in ids])
    conn.close()
    conn = open_index(data)
    assert conn.execute("SELECT count(*) FROM semantic_turn_vectors").fetchone()[0] == 0  # all held a secret
    conn.close()


def test_a_read_only_index_opens_and_its_searches_still_redact(old: Path) -> None:
    data = old / "data"
    conn = sqlite3.connect(data / "index.sqlite3", isolation_level=None)
    from pi_memory.index.db import migrate

    migrate(conn)  # the work is recorded but not done (as when the lock holder was killed)
    conn.close()
    ro = sqlite3.connect(f"file:{data / 'index.sqlite3'}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError):
        redaction.redact_pending_index(ro)
    assert redaction.redaction_pending(ro)
    result = session_search(ro, f"oldidx{FAMILIES.index(SECRETS[0])}").to_json()
    assert "oldidx" in result and not any(r in result for r in runs(SECRETS[0].secret))
    ro.close()


def test_a_host_redacts_a_large_old_index_in_slices(old: Path) -> None:
    data = old / "data"
    conn = sqlite3.connect(data / "index.sqlite3", isolation_level=None)
    from pi_memory.index.db import migrate

    migrate(conn)
    first = redaction.redact_pending_index(conn, data / "index.sqlite3", batch=3, budget_s=0)
    assert not first.finished and redaction.load_state(conn).cursor == 3  # one batch, then the host goes on
    result = session_search(conn, f"oldidx{FAMILIES.index(SECRETS[-1])}").to_json()
    assert not any(r in result for r in runs(SECRETS[-1].secret))  # meanwhile searches redact
    conn.close()
    conn = open_index(data)  # the next open (or indexing pass) does the next slice: here all that is left
    assert not redaction.redaction_pending(conn) and _leaks(_blob(data)) == []
    conn.close()
