"""A torn page on the semantic table (issue 9, item 9): salvage rebuilds the active memories from their history,
keeps a repair record, and ``pi-memory status`` and the pi bridge's status report it."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from pi_memory.index import last_repair, open_index, repairs, transaction
from pi_memory.index.db import PAGE_SIZE, migrate
from pi_memory.index.semantic_schema import SEMANTIC_MIGRATIONS
from pi_memory.semantic.models import text_hash

FACTS = ["Ada prefers tabs over spaces", "The shop deploys on Fridays", "Staging resets every night"]


def _memory(conn, mid: str, text: str, n: int, status: str = "active") -> None:
    conn.execute("INSERT INTO semantic_memories(id, user_id, project_id, agent_id, text, hash, status, created_at, "
                 "updated_at, seq) VALUES (?, 'ada', '', '', ?, ?, ?, ?, ?, ?)",
                 (mid, text, text_hash(text), status, f"2026-11-0{n}T10:00:00.000Z", f"2026-11-0{n}T10:00:00.000Z", n))


def _event(conn, mid: str, event: str, old: str | None, new: str | None, n: int, related: str | None = None) -> None:
    conn.execute("INSERT INTO semantic_history(memory_id, user_id, project_id, agent_id, event, old_text, new_text, "
                 "related_id, at) VALUES (?, 'ada', '', '', ?, ?, ?, ?, ?)",
                 (mid, event, old, new, related, f"2026-11-0{n}T10:00:00.000Z"))


def build(data: Path) -> None:
    """Three active memories (one of them made by an update), one superseded, one deleted; then a torn page
    on the table's root page."""
    conn = open_index(data)
    migrate(conn, SEMANTIC_MIGRATIONS)
    with transaction(conn):
        _memory(conn, "m1", FACTS[0], 1)
        _event(conn, "m1", "ADD", None, FACTS[0], 1)
        _memory(conn, "m2", "The shop deploys on Mondays", 2, status="superseded")
        _event(conn, "m2", "ADD", None, "The shop deploys on Mondays", 2)
        _memory(conn, "m3", FACTS[1], 3)
        _event(conn, "m3", "UPDATE", "The shop deploys on Mondays", FACTS[1], 3, related="m2")
        _event(conn, "m2", "SUPERSEDE", "The shop deploys on Mondays", FACTS[1], 3, related="m3")
        _memory(conn, "m4", "Uses npm", 4, status="deleted")
        _event(conn, "m4", "ADD", None, "Uses npm", 4)
        _event(conn, "m4", "DELETE", "Uses npm", None, 5)
        _memory(conn, "m5", FACTS[2], 6)
        _event(conn, "m5", "ADD", None, FACTS[2], 6)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'semantic_memories'").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with open(data / "index.sqlite3", "r+b") as fh:
        fh.seek((root - 1) * PAGE_SIZE)  # a torn write: the page holds the first half of other bytes
        fh.write(b"\xa5" * (PAGE_SIZE // 2))


def test_a_torn_semantic_page_rebuilds_the_active_memories_from_history(tmp_path: Path) -> None:
    data = tmp_path / "data"
    build(data)
    with sqlite3.connect(data / "index.sqlite3") as raw:  # the test can fail: the table really is unreadable
        try:
            raw.execute("SELECT text FROM semantic_memories").fetchall()
            readable = True
        except sqlite3.DatabaseError:
            readable = False
    assert not readable
    conn = open_index(data, check=True)
    active = conn.execute("SELECT id, text, status FROM semantic_memories WHERE status = 'active' ORDER BY id")
    assert [(r[0], r[1]) for r in active] == [("m1", FACTS[0]), ("m3", FACTS[1]), ("m5", FACTS[2])]
    [record] = repairs(conn)
    assert record["rebuilt"]["semanticFromHistory"] == 3
    assert record["lost"]["semanticMemories"] == 0 and record["damagedCopy"].startswith("index.sqlite3.corrupt-")
    assert record["at"] and record["reason"]
    conn.close()
    assert last_repair(data) == record


def test_status_and_the_bridge_report_the_repair(tmp_path: Path) -> None:
    data = tmp_path / "data"
    build(data)
    open_index(data, check=True).close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    env.update(HOME=str(tmp_path), PI_MEMORY_DIR=str(data), PI_CATCH_UP="0", PI_MEMORY_CATCH_UP="0")
    human = subprocess.run([sys.executable, "-m", "pi_memory.cli", "status"], capture_output=True, text=True,
                           env=env, timeout=60)
    assert human.returncode == 0, human.stderr
    assert "index repaired at" in human.stdout and "3 semantic memories rebuilt from their history" in human.stdout
    assert "Lost: nothing" in human.stdout
    js = subprocess.run([sys.executable, "-m", "pi_memory.cli", "status", "--json"], capture_output=True, text=True,
                        env=env, timeout=60)
    assert json.loads(js.stdout)["indexRepair"]["rebuilt"]["semanticFromHistory"] == 3
    request = json.dumps({"id": 1, "method": "hello", "params": {"cwd": str(tmp_path)}}) + "\n"
    bridge = subprocess.run([sys.executable, "-m", "pi_memory.integrations.pi.bridge"], input=request, text=True,
                            capture_output=True, env=env, timeout=60, cwd=tmp_path)
    status = json.loads(bridge.stdout.splitlines()[0])["result"]["status"]
    assert status["indexRepair"]["rebuilt"]["semanticFromHistory"] == 3


def test_an_index_never_repaired_has_no_record(tmp_path: Path) -> None:
    open_index(tmp_path).close()
    assert last_repair(tmp_path) is None and last_repair(tmp_path / "missing") is None


def test_a_file_sqlite_cannot_read_leaves_a_record_too(tmp_path: Path) -> None:
    open_index(tmp_path).close()
    (tmp_path / "index.sqlite3").write_bytes(b"SQLite format 3\x00" + b"this is not a database" * 100)
    conn = open_index(tmp_path)
    [record] = repairs(conn)
    assert record["rebuilt"]["messages"] == 0 and record["damagedCopy"].startswith("index.sqlite3.corrupt-")
    assert "not a database" in record["reason"]
    conn.close()
    from pi_memory.index import describe_repair

    line = describe_repair(record)
    assert line.startswith(f"index repaired at {record['at']} (damaged copy {record['damagedCopy']}): ")
    assert line.endswith("Lost: any semantic memories that could not be read (nor their history) (vectors are embedded "
                         "again).")
    hurt = describe_repair({**record, "lost": {"semanticMemories": 2, "transcriptsGone": 1}})
    assert "Lost: 2 semantic memories, the text of 1 transcripts that no longer exist" in hurt
