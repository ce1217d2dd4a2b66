"""Claude Code files that repeat a record with the same ``uuid`` (resumes, retries): one row per (file, uuid),
the last version wins, and search never returns the same entry twice (issue 9, item 8)."""

from __future__ import annotations

import json
from pathlib import Path

from pi_memory.index import index_paths, open_index
from pi_memory.index.readers import read_session
from pi_memory.retrieval import session_search


def line(uid: str, parent: str | None, kind: str, content: object, n: int) -> dict:
    return {"type": kind, "uuid": uid, "parentUuid": parent, "sessionId": "rep", "cwd": "/w", "version": "2.1.0",
            "timestamp": f"2026-11-20T10:00:{n:02d}.000Z", "isSidechain": False,
            "message": {"role": kind, "content": content}}


def write(path: Path, lines: list[dict], mode: str = "w") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode, encoding="utf-8") as fh:
        fh.writelines(json.dumps(x) + "\n" for x in lines)
    return path


def rows(conn) -> list[tuple]:
    return conn.execute("SELECT entry_id, kind, text FROM messages ORDER BY id").fetchall()


Q = line("u1", None, "user", "why does the orbitalframe build fail", 1)
A = line("u2", "u1", "assistant", [{"type": "text", "text": "the orbitalframe cache is stale"},
                                     {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}], 2)
R = line("u3", "u2", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "orbitalframe ok"}], 3)


def test_a_record_written_three_times_is_one_row_and_one_hit(tmp_path: Path) -> None:
    path = write(tmp_path / ".claude" / "projects" / "-w" / "rep.jsonl", [Q, Q, A, Q, R])
    res = read_session(path)
    assert [(r.entry_id, r.kind) for r in res.records] == [("u2", "message"), ("u2", "tool_call"),
                                                           ("u1", "message"), ("u3", "tool_result")]
    assert res.skipped["repeated_uuid"] == 2
    conn = open_index(tmp_path / "data")
    index_paths(conn, [path])
    assert len(rows(conn)) == 4
    hits = session_search(conn, "orbitalframe build", limit=50)
    assert [h.entry_id for h in hits.results].count("u1") == 1


def test_the_last_version_of_a_retried_record_wins(tmp_path: Path) -> None:
    retry = line("u2", "u1", "assistant", [{"type": "text", "text": "the orbitalframe lockfile is stale"}], 4)
    path = write(tmp_path / "rep.jsonl", [Q, A, retry, R])
    conn = open_index(tmp_path / "data")
    index_paths(conn, [path])
    assert rows(conn) == [("u1", "message", "why does the orbitalframe build fail"),
                          ("u2", "message", "the orbitalframe lockfile is stale"),
                          ("u3", "tool_result", "orbitalframe ok")]


def test_a_repeat_in_a_later_pass_replaces_the_rows_of_the_earlier_one(tmp_path: Path) -> None:
    path = write(tmp_path / "rep.jsonl", [Q, A])
    conn = open_index(tmp_path / "data")
    index_paths(conn, [path])
    resumed = line("u2", "u1", "assistant", [{"type": "text", "text": "resumed: the orbitalframe cache"}], 5)
    write(path, [Q, resumed, R], mode="a")
    stats = index_paths(conn, [path])
    assert stats.files_appended == 1 and stats.messages_removed == 3  # u1, u2's text and tool call
    assert rows(conn) == [("u1", "message", "why does the orbitalframe build fail"),
                          ("u2", "message", "resumed: the orbitalframe cache"),
                          ("u3", "tool_result", "orbitalframe ok")]
    assert session_search(conn, "orbitalframe", limit=50).count == 3


def test_a_repeated_summary_line_is_read_once(tmp_path: Path) -> None:
    summary = {"type": "summary", "summary": "Fix the orbitalframe build", "leafUuid": "u3"}
    path = write(tmp_path / "rep.jsonl", [summary, Q, A, R, summary, summary])
    res = read_session(path)
    assert [r.kind for r in res.records].count("branch_summary") == 1
    assert res.skipped["repeated_summary"] == 2
