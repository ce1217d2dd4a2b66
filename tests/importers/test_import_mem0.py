"""``pi-memory import mem0``: seed 004's embedded store (tests/fixtures/mem0) into our semantic memory."""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path

import pytest

from pi_memory.semantic import open_semantic

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mem0" / "store.json"


def write_mem0_store(folder: Path) -> Path:
    """mem0-vectors.db and mem0-history.db with mem0 OSS's schema (vector_stores/memory.ts, SQLiteManager.ts)."""
    data = json.loads(FIXTURE.read_text())
    folder.mkdir(parents=True, exist_ok=True)
    vec = sqlite3.connect(folder / "mem0-vectors.db")
    vec.executescript("CREATE TABLE vectors (id TEXT PRIMARY KEY, vector BLOB NOT NULL, payload TEXT NOT NULL);"
                      "CREATE TABLE memory_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT NOT NULL UNIQUE);")
    for row in data["vectors"]:
        vec.execute("INSERT INTO vectors VALUES (?, ?, ?)", (row["id"], struct.pack("<4f", 0.1, 0.2, 0.3, 0.4),
                                                            json.dumps(row["payload"])))
    vec.commit()
    vec.close()
    hist = sqlite3.connect(folder / "mem0-history.db")
    hist.execute("CREATE TABLE memory_history (id INTEGER PRIMARY KEY AUTOINCREMENT, memory_id TEXT NOT NULL, "
                 "previous_value TEXT, new_value TEXT, action TEXT NOT NULL, created_at TEXT, updated_at TEXT, "
                 "is_deleted INTEGER DEFAULT 0)")
    for row in data["history"]:
        hist.execute("INSERT INTO memory_history (memory_id, previous_value, new_value, action, created_at) "
                     "VALUES (?, ?, ?, ?, ?)", (row["memory_id"], row["previous_value"], row["new_value"],
                                                row["action"], row["created_at"]))
    hist.commit()
    hist.close()
    return folder / "mem0-vectors.db"


@pytest.fixture
def mem0(machine):
    write_mem0_store(machine["data"])
    return machine


def test_several_user_ids_need_a_choice(mem0) -> None:
    report = mem0["cli"]("import", "mem0")
    assert report["applied"] is False
    assert "priya:project:9b2f0c (3), sam:project:11aa22 (1)" in report["notes"][0]
    from pi_memory.cli.app import app

    result = mem0["runner"].invoke(app, ["import", "mem0", "--apply", "--json"])
    assert result.exit_code == 2 and "--source-user ID" in json.loads(result.stdout)["error"]


def test_import_re_embeds_and_keeps_history(mem0) -> None:
    report = mem0["cli"]("import", "mem0", "--source-user", "priya:project:9b2f0c", "--apply")
    assert report["counts"] == {"mem0": {"add": 3, "skip": 1}}
    service = open_semantic(cwd=Path.cwd(), data_dir=mem0["data"], background_reembed=False, warm=False,
                            model=None)
    try:
        everything = service.list(limit=100, include_superseded=True)
        by_text = {m.text: m for m in everything}
        assert {m.text: m.status for m in everything} == {
            "Prefers pnpm over npm for every JavaScript project": "active",
            "Runs the API on port 8080 in development": "superseded",
            "Runs the API on port 8081 in development": "active",
            "Uses Python 3.9 for the data scripts": "deleted",
        }
        current = by_text["Runs the API on port 8081 in development"]
        assert current.metadata["mem0Id"] == "6f1c2a40-0001-4000-8000-000000000002"
        assert current.metadata["topic"] == "dev-setup"
        assert [e.event for e in service.history(current.id)] == ["ADD", "UPDATE", "SUPERSEDE"]
        [hit] = service.search("which port does the API use locally", top_k=1)
        assert hit.memory.text == "Runs the API on port 8081 in development"  # found by our model's vectors
    finally:
        service.close()
    again = mem0["cli"]("import", "mem0", "--source-user", "priya:project:9b2f0c", "--apply")
    assert again["counts"] == {"mem0": {"already": 3, "skip": 1}}


def test_missing_store_is_a_usage_error(machine) -> None:
    from pi_memory.cli.app import app

    result = machine["runner"].invoke(app, ["import", "mem0", str(machine["tmp"] / "none.db"), "--json"])
    assert result.exit_code == 2 and "No mem0 store at" in json.loads(result.stdout)["error"]


def test_a_memory_of_ours_with_the_same_text_is_left_alone(mem0) -> None:
    service = open_semantic(cwd=Path.cwd(), data_dir=mem0["data"], background_reembed=False, warm=False,
                            model=None)
    try:
        mine, _ = service.add("Runs the API on port 8080 in development")
    finally:
        service.close()
    report = mem0["cli"]("import", "mem0", "--source-user", "priya:project:9b2f0c", "--apply")
    assert report["counts"] == {"mem0": {"add": 3, "skip": 1}}
    service = open_semantic(cwd=Path.cwd(), data_dir=mem0["data"], background_reembed=False, warm=False,
                            model=None)
    try:
        assert service.get(mine.id).status == "active"  # mem0's later version did not supersede ours
        texts = sorted(m.text for m in service.list(limit=100))
        assert texts == ["Prefers pnpm over npm for every JavaScript project",
                         "Runs the API on port 8080 in development", "Runs the API on port 8081 in development"]
    finally:
        service.close()


def test_history_elsewhere_is_read_with_history_option(machine) -> None:
    store = machine["tmp"] / "mem0"
    write_mem0_store(store)
    elsewhere = machine["tmp"] / "hist" / "h.db"
    elsewhere.parent.mkdir()
    (store / "mem0-history.db").rename(elsewhere)
    without = machine["cli"]("import", "mem0", str(store / "mem0-vectors.db"), "--source-user",
                             "priya:project:9b2f0c")
    assert [i["what"] for i in without["items"] if i["action"] == "add"] == [
        "Prefers pnpm over npm for every JavaScript project", "Runs the API on port 8081 in development"]
    with_history = machine["cli"]("import", "mem0", str(store), "--history", str(elsewhere), "--source-user",
                                  "priya:project:9b2f0c")
    assert [i["what"] for i in with_history["items"] if i["action"] == "add"] == [
        "Prefers pnpm over npm for every JavaScript project",
        "Runs the API on port 8081 in development (1 earlier version)",
        "Uses Python 3.9 for the data scripts (deleted in mem0)"]
