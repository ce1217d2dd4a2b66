"""Salvage after damage the earlier repair could not read past: a bad byte in an unrelated table's schema entry,
pages overwritten across the file, text that is not UTF-8. Semantic memories live only in the index, so the
repair must copy back every row it can still read, never end in a traceback, and always leave its record."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import pi_memory
from pi_memory.index import open_index, repairs, transaction
from pi_memory.index.db import applied_migrations, migrate
from pi_memory.index.schema import MIGRATIONS
from pi_memory.index.semantic_schema import SEMANTIC_MIGRATIONS
from pi_memory.semantic.models import text_hash

FACTS = ["The staging db listens on port 6543", "cache is redis 6380"]


def _memory(conn, mid: str, text: str, n: int) -> None:
    conn.execute("INSERT INTO semantic_memories(id, user_id, project_id, agent_id, text, hash, status, created_at, "
                 "updated_at, seq) VALUES (?, 'ada', '', '', ?, ?, 'active', ?, ?, ?)",
                 (mid, text, text_hash(text), f"2026-11-0{n}T10:00:00.000Z", f"2026-11-0{n}T10:00:00.000Z", n))


def _event(conn, mid: str, event: str, new: str | None, n: int) -> None:
    conn.execute("INSERT INTO semantic_history(memory_id, user_id, project_id, agent_id, event, old_text, new_text, "
                 "at) VALUES (?, 'ada', '', '', ?, NULL, ?, ?)", (mid, event, new, f"2026-11-0{n}T10:00:00.000Z"))


def build(data: Path, bad_text: bool = False) -> Path:
    """An index with two semantic memories (three history events) and one extended memory; with ``bad_text``
    a third memory and an extended memory whose text holds bytes that are not UTF-8."""
    conn = open_index(data)
    migrate(conn, SEMANTIC_MIGRATIONS)
    with transaction(conn):
        for n, fact in enumerate(FACTS, 1):
            _memory(conn, f"m{n}", fact, n)
            _event(conn, f"m{n}", "ADD", fact, n)
        _event(conn, "m2", "UPDATE", FACTS[1], 3)
        conn.execute("INSERT INTO memories(scope, target, content, source, created) "
                     "VALUES ('global', 'memory', 'Project uses uv', 'extended', '2026-11-01T10:00:00.000Z')")
        if bad_text:  # the Q becomes 0xE5 in the file below (the triggers could not take such text)
            _memory(conn, "m3", "port Q! is open", 3)
            conn.execute("INSERT INTO memories(scope, target, content, source, created) VALUES "
                         "('global', 'memory', 'tabs Q! spaces', 'extended', '2026-11-01T10:00:00.000Z')")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    path = data / "index.sqlite3"
    if bad_text:  # 0xE5 0x21: a lead byte without its continuation
        raw = path.read_bytes()
        for text in (b"port Q! is open", b"tabs Q! spaces"):
            assert text in raw
            raw = raw.replace(text, text.replace(b"Q", b"\xe5"))
        path.write_bytes(raw)
    return path


def damage_schema_entry(path: Path, table: str = "semantic_turn_vectors_gone") -> None:
    """One byte of ``table``'s CREATE statement in sqlite_master becomes 0xE5 (the tester's damage)."""
    raw = bytearray(path.read_bytes())
    at = raw.find(f"CREATE TABLE {table}".encode())
    assert at > 0
    raw[at + 20] = 0xE5
    path.write_bytes(bytes(raw))


def damage_pages(path: Path) -> None:
    """Bytes 100-400 of every 4 KiB page from offset 8192 on are overwritten (the tester's heavy damage)."""
    raw = bytearray(path.read_bytes())
    for off in range(8192, len(raw), 4096):
        raw[off + 100:off + 400] = b"\xe5" * 300
    path.write_bytes(bytes(raw))


def _unreadable(path: Path) -> bool:
    with sqlite3.connect(path) as raw:
        try:
            raw.execute("SELECT count(*) FROM semantic_memories").fetchone()
            return False
        except sqlite3.DatabaseError:
            return True
        except UnicodeDecodeError:
            return True


def test_a_bad_byte_in_an_unrelated_schema_entry_keeps_every_semantic_memory(tmp_path: Path) -> None:
    path = build(tmp_path)
    damage_schema_entry(path)
    assert _unreadable(path)  # the damage is real: a plain connection cannot read the semantic table
    conn = open_index(tmp_path)
    rows = conn.execute("SELECT id, text, status FROM semantic_memories ORDER BY id").fetchall()
    assert rows == [("m1", FACTS[0], "active"), ("m2", FACTS[1], "active")]
    assert conn.execute("SELECT count(*) FROM semantic_history").fetchone()[0] == 3
    assert conn.execute("SELECT content FROM memories WHERE source = 'extended'").fetchall() == [("Project uses uv",)]
    [record] = repairs(conn)
    assert record["rebuilt"]["semanticMemories"] == 2 and record["rebuilt"]["semanticHistory"] == 3
    assert record["rebuilt"]["memories"] == 1 and record["rebuilt"]["semanticFromHistory"] == 0
    assert record["lost"]["semanticMemories"] == 0 and not record["lost"]["semanticHistoryUnreadable"]
    assert not record.get("failed")
    conn.close()


def test_text_that_is_not_utf8_is_kept_with_replacement_characters(tmp_path: Path) -> None:
    path = build(tmp_path, bad_text=True)
    damage_schema_entry(path)
    conn = open_index(tmp_path)
    texts = dict(conn.execute("SELECT id, text FROM semantic_memories"))
    assert texts == {"m1": FACTS[0], "m2": FACTS[1], "m3": "port \ufffd! is open"}
    extended = [r[0] for r in conn.execute("SELECT content FROM memories WHERE source = 'extended' ORDER BY id")]
    assert extended == ["Project uses uv", "tabs \ufffd! spaces"]
    [record] = repairs(conn)
    assert record["rebuilt"]["semanticMemories"] == 3 and record["rebuilt"]["memories"] == 2
    conn.close()


def test_a_salvage_step_that_fails_leaves_a_whole_index_and_a_record(tmp_path: Path, monkeypatch, caplog) -> None:
    path = build(tmp_path)
    damage_schema_entry(path)
    from pi_memory.index import salvage

    def broken(conn, damaged):
        raise RuntimeError("disk went away")

    monkeypatch.setattr(salvage, "salvage_sessions", broken)
    with caplog.at_level("WARNING", logger="pi_memory.index.db"):
        conn = open_index(tmp_path)
    names = applied_migrations(conn)
    assert [m.name for m in MIGRATIONS + SEMANTIC_MIGRATIONS] == [n for n in names if n in
                                                                  {m.name for m in MIGRATIONS + SEMANTIC_MIGRATIONS}]
    assert conn.execute("SELECT count(*) FROM semantic_memories").fetchone()[0] == 2  # copied before the sessions
    [record] = repairs(conn)
    assert record["failed"] == ["session rows: RuntimeError: disk went away"]
    said = " ".join(r.getMessage() for r in caplog.records if r.name == "pi_memory.index.db")
    assert "session rows could not be copied back (RuntimeError: disk went away)" in said
    assert record["damagedCopy"] in said
    conn.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# ------------------------------------------------------------------------------------------- the real CLI
@pytest.fixture
def cli(tmp_path: Path):
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    env.update(HOME=str(tmp_path), PI_MEMORY_DIR=str(data), PI_CATCH_UP="0", PI_MEMORY_CATCH_UP="0")
    env["PYTHONPATH"] = str(Path(pi_memory.__file__).resolve().parents[1])  # the code under test, from any cwd

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pi_memory", *args], capture_output=True, text=True, env=env,
                              timeout=120, cwd=tmp_path)

    run.data = data
    for fact in FACTS:
        added = run("semantic", "add", fact)
        assert added.returncode == 0, added.stderr
    return run


def test_cli_one_bad_schema_byte_keeps_the_semantic_memories(cli) -> None:
    damage_schema_entry(cli.data / "index.sqlite3")
    searched = cli("session-search", "x")
    assert "Traceback" not in searched.stderr
    assert "Copied back: 0 session messages, 0 memories, 2 semantic memories" in searched.stderr
    listed = cli("semantic", "list")
    assert listed.returncode == 0 and all(fact in listed.stdout for fact in FACTS), listed.stdout


def test_cli_heavy_page_damage_reports_the_loss_without_a_traceback(cli) -> None:
    path = cli.data / "index.sqlite3"
    damage_pages(path)
    searched = cli("session-search", "x")
    assert "Traceback" not in searched.stderr, searched.stderr
    assert "was damaged" in searched.stderr and ".corrupt-" in searched.stderr
    assert "semantic memories could not be read" in searched.stderr, searched.stderr
    for name in ("index.sqlite3", "index.sqlite3.rebuild.lock"):
        assert stat.S_IMODE((cli.data / name).stat().st_mode) == 0o600, name
    status = cli("status")
    assert status.returncode == 0, status.stderr
    assert "index repaired at" in status.stdout and "Lost: " in status.stdout
    assert "semantic memories that could not be read" in status.stdout, status.stdout
    again = cli("semantic", "list")
    assert "Traceback" not in again.stderr and again.returncode == 0


def test_cli_status_on_a_schema_entry_that_is_not_text_answers_and_the_next_command_repairs(cli) -> None:
    """A tester's case: `pi-memory status`, the command people run to diagnose, ended in a UnicodeDecodeError
    traceback (file_guard.index_problem, segments.messages_left) on every call."""
    path = cli.data / "index.sqlite3"
    with path.open("r+b") as f:
        head = f.read(16384)
        f.seek(head.find(b"CREATE TABLE semantic_history") + 5)
        f.write(b"\xff\xfe garbage" * 3)
    status = cli("status")
    assert status.returncode == 0 and "Traceback" not in status.stderr, status.stderr
    assert "MEMORY.md:" in status.stdout
    listed = cli("semantic", "list")
    assert "was damaged" in listed.stderr and all(fact in listed.stdout for fact in FACTS), listed.stderr


def test_the_repair_message_puts_an_integrity_report_on_one_short_line() -> None:
    """A tester's case: the warning carried SQLite's integrity_check report as it is, several lines long."""
    from pi_memory.index.repair import repair_message

    report = "On tree page 22 cell 2: Offset 57005 out of range\nOn tree page 23 cell 0: bad\n" + "x" * 300
    record = {"reason": report, "rebuilt": {"messages": 0, "memories": 0, "semanticMemories": 1,
                                            "semanticFromHistory": 0}, "lost": {}}
    text = repair_message(record, Path("/d/index.sqlite3.corrupt-1"))
    assert "\n" not in text
    reason = text[text.index("damaged (") + 9: text.index(") and has been")]
    assert reason.startswith("On tree page 22 cell 2: Offset 57005 out of range On tree page 23") and len(reason) == 160


def test_a_rebuild_hook_that_raises_leaves_a_whole_index_a_record_and_words(tmp_path: Path, caplog) -> None:
    path = build(tmp_path)
    damage_schema_entry(path)

    def broken(conn, damaged):
        raise RuntimeError("disk went away")

    with caplog.at_level("WARNING", logger="pi_memory.index.db"):
        conn = open_index(tmp_path, rebuild=broken)
    [record] = repairs(conn)
    assert record["failed"] == ["the rows of the damaged copy: RuntimeError: disk went away"]
    assert record["lost"] == {"semanticUnreadable": True, "semanticHistoryUnreadable": True}
    said = " ".join(r.getMessage() for r in caplog.records if r.name == "pi_memory.index.db")
    assert "the rows of the damaged copy could not be copied back (RuntimeError: disk went away)" in said
    assert f"Keep the damaged copy {tmp_path / record['damagedCopy']}" in said
    conn.close()
