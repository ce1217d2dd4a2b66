"""Helpers shared by the index tests: pi v3 session files, direct inserts, an open index."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from pi_memory.index.db import transaction
from pi_memory.index.indexer import insert_messages

sys.path.insert(0, str(Path(__file__).resolve().parent))  # readers_helpers
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"  # ../shared/fixtures of the repo


def pi_header(session_id: str, cwd: str, ts: str = "2026-11-01T10:00:00.000Z") -> dict:
    return {"type": "session", "version": 3, "id": session_id, "timestamp": ts, "cwd": cwd}


def pi_message(entry_id: str, parent: str | None, role: str, text: str, ts: str) -> dict:
    msg: dict = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
    if role == "assistant":
        msg["stopReason"] = "stop"
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": ts, "message": msg}


def write_lines(path: Path, objs: list[dict], mode: str = "w") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode, encoding="utf-8") as fh:
        for obj in objs:
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")


def pi_session(
    path: Path, session_id: str, cwd: str, texts: list[tuple[str, str]], day: str = "2026-11-01"
) -> Path:
    """A linear pi v3 session: ``texts`` = [(role, text), ...], one entry per item, ids e1, e2, ..."""
    objs = [pi_header(session_id, cwd, f"{day}T10:00:00.000Z")]
    parent = None
    for n, (role, text) in enumerate(texts, 1):
        objs.append(pi_message(f"e{n}", parent, role, text, f"{day}T10:{n // 60:02d}:{n % 60:02d}.000Z"))
        parent = f"e{n}"
    write_lines(path, objs)
    return path


def add_session(
    conn: sqlite3.Connection,
    key: str,
    rows: list[dict],
    cwd: str = "/work/demo",
    project_id: str = "aaaaaaaaaaaa",
    project_name: str = "demo",
    source: str = "pi",
) -> int:
    """Insert one session with messages directly (no reader): each row needs ``text``; optional ``role``,
    ``kind``, ``timestamp``, ``branch``, ``entry_id``, ``line``."""
    with transaction(conn):
        sid = conn.execute(
            "INSERT INTO sessions(source, session_key, cwd, project_id, project_name) VALUES (?, ?, ?, ?, ?) "
            "RETURNING id",
            (source, key, cwd, project_id, project_name),
        ).fetchone()[0]
        fid = conn.execute(
            "INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES (?, ?, 0, 0) RETURNING id",
            (f"/sessions/{key}.jsonl", sid),
        ).fetchone()[0]
        insert_messages(conn, [
            (
                sid, fid, row.get("entry_id", f"{key}-{n}"), None, row.get("line", n + 1),
                row.get("timestamp", f"2026-11-01T10:00:{n % 60:02d}.000Z"), row.get("role", "user"),
                row.get("kind", "message"), None, row.get("branch", "active"), row["text"],
            )
            for n, row in enumerate(rows, 1)
        ])
    return sid


@pytest.fixture
def helpers() -> SimpleNamespace:
    """The helper functions above, for test modules (``--import-mode=importlib`` cannot import this file)."""
    return SimpleNamespace(
        pi_header=pi_header, pi_message=pi_message, write_lines=write_lines, pi_session=pi_session,
        add_session=add_session,
    )


@pytest.fixture
def fixtures_dir() -> Path:
    if not (FIXTURES / "pi-sessions").is_dir():
        pytest.skip("shared fixtures not present (../shared/fixtures)")
    return FIXTURES


@pytest.fixture
def conn(tmp_path):
    from pi_memory.index import open_index

    c = open_index(tmp_path / "data")
    yield c
    c.close()


@pytest.fixture(params=["mounted read-only", "mode 0555"])
def ro(tmp_path, request):
    """A data folder that really denies writes once frozen (tests/read_only_folder.py), each way this user can
    make one."""
    from read_only_folder import read_only_folder

    with read_only_folder(tmp_path / "ro", mount=request.param == "mounted read-only") as made:
        if request.param == "mounted read-only" and not made.mounted:
            pytest.skip("this user may not mount a tmpfs: the mode case covers it")
        yield made
