"""Fixture paths, expected counts and helpers shared by the session-reader tests (``test_readers_*``)."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = (REPO / ".." / "shared" / "fixtures").resolve()
PI_SESSIONS = SHARED / "pi-sessions"
PI_V1 = SHARED / "pi-real" / "before-compaction.jsonl"
LOCAL = Path(__file__).resolve().parents[1] / "fixtures"
CC_FILE = LOCAL / "claude_code" / "-home-dev-shop" / "9b2f0c1e-5d7a-4c3b-8e21-7f6a1d0c4b93.jsonl"
CC_AGENT = CC_FILE.with_suffix("") / "subagents" / "agent-a1b2c3.jsonl"
CODEX_FILE = (
    LOCAL
    / "codex"
    / "2026"
    / "11"
    / "29"
    / "rollout-2026-11-29T12-00-00-019ad1e2-7c3b-7f10-9a4e-2b5c8d7e6f01.jsonl"
)
CODEX_LEGACY = LOCAL / "codex" / "rollout-2025-05-02T09-00-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl"

needs_pi = pytest.mark.skipif(not PI_SESSIONS.is_dir(), reason="shared pi-sessions fixtures absent")
needs_v1 = pytest.mark.skipif(not PI_V1.is_file(), reason="shared pi-real fixture absent")

# file (relative to pi-sessions) -> (records by kind, skipped)
META = {"meta:model_change": 1, "meta:thinking_level_change": 1}
PI_EXPECTED = {
    "v0.73.1/--home-dev-scratch-err--/2026-11-29T13-32-57-385Z_01a22782-40a8-726c-81a2-ce421610e101.jsonl": (
        {"message": 1},
        {**META, "failed_retry": 4},
    ),
    "v0.73.1/--home-dev-scratch-project--/2026-11-29T13-28-05-811Z_01a2277d-cdb3-732e-a108-3fb063e4c6bc.jsonl": (
        {"message": 2},
        META,
    ),
    "v0.73.1/--home-dev-scratch-project--/2026-11-29T13-28-08-775Z_01a2277d-d947-7378-9703-2750a836eac5.jsonl": (
        {"message": 2, "tool_call": 1, "tool_result": 1},
        META,
    ),
    "v0.73.1/--home-dev-scratch-project--/2026-11-29T13-30-23-553Z_01a2277f-e7c0-72f7-9e57-55e569bb7bcd.jsonl": (
        {
            "message": 8,
            "custom_message": 4,
            "tool_call": 2,
            "tool_result": 2,
            "compaction": 1,
            "branch_summary": 1,
        },
        {**META, "meta:custom": 4, "meta:label": 1, "meta:session_info": 1},
    ),
    "v0.73.1/--home-dev-scratch-project--/2026-11-29T13-31-57-937Z_01a22781-5870-712b-a227-78b9acaf318d.jsonl": (
        {"message": 4, "bash": 1},
        {**META, "meta:session_info": 1},
    ),
    "v0.73.1/--home-dev-scratch-race--/2026-11-29T13-30-34-460Z_01a22780-125c-75ef-9d5e-0db6290c51c8.jsonl": (
        {
            "message": 8,
            "custom_message": 4,
            "tool_call": 2,
            "tool_result": 2,
            "compaction": 1,
            "branch_summary": 1,
        },
        {**META, "meta:custom": 3, "meta:label": 1, "meta:session_info": 1},
    ),
    "v1.6.0/--home-dev-scratch-v1--/2026-11-29T13-31-32-498Z_01a22780-f511-7225-ba1f-d57c28b75789.jsonl": (
        {"message": 2, "tool_call": 1, "tool_result": 1},
        {**META, "system_prompt": 1},
    ),
    "v1.6.0/--home-dev-scratch-v1-race--/2026-11-29T13-31-39-297Z_01a22781-0fa0-7772-bfda-593d714c78c6.jsonl": (
        {"message": 8, "custom_message": 4, "tool_call": 2, "tool_result": 2, "branch_summary": 1},
        {**META, "meta:custom": 4, "meta:label": 1, "meta:session_info": 1, "system_prompt": 1},
    ),
}
PROBE = PI_SESSIONS / list(PI_EXPECTED)[3]
RACE = PI_SESSIONS / list(PI_EXPECTED)[5]
V16 = PI_SESSIONS / list(PI_EXPECTED)[6]
V16_RACE = PI_SESSIONS / list(PI_EXPECTED)[7]
ERR = PI_SESSIONS / list(PI_EXPECTED)[0]
RPC = PI_SESSIONS / list(PI_EXPECTED)[4]


def kinds(result) -> dict[str, int]:
    return dict(collections.Counter(r.kind for r in result.records))


def leaves(parents: dict[str, str | None]) -> set[str]:
    return set(parents) - {p for p in parents.values() if p is not None}


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def write(path: Path, chunks: list[bytes]) -> Path:
    path.write_bytes(b"".join(chunks))
    return path


def two_pass(reader, path: Path, tmp_path: Path, cut: int):
    """Read ``path`` grown in two appends (first ``cut`` lines, then the rest)."""
    data = lines_of(path)
    grow = write(tmp_path / path.name, data[:cut])
    first = reader(grow)
    with open(grow, "ab") as fh:
        fh.write(b"".join(data[cut:]))
    second = reader(grow, first.end_offset, first.end_line, first.info)
    return first, second


def assert_same_as_one_pass(reader, path: Path, tmp_path: Path) -> None:
    whole = reader(path)
    n = len(lines_of(path))
    for cut in sorted({1, 2, n // 2, n - 1}):
        first, second = two_pass(reader, path, tmp_path, cut)
        assert first.records + second.records == whole.records
        assert {**first.parents, **second.parents} == whole.parents
        assert second.leaf_id == whole.leaf_id
        assert second.info == whole.info
        assert first.skipped + second.skipped == whole.skipped
        assert second.end_offset == whole.end_offset == path.stat().st_size
        assert second.end_line == whole.end_line == n


def insert_plaintext_session(conn, key: str, session: Path, turns: list[tuple[str, str]]) -> None:
    """One session of ``turns`` ``(role, text)`` stored as it is, as an index before redaction (or with older
    patterns) holds it: rows inserted beside the redacting writer, with their word index. Inside the caller's
    transaction."""
    from pi_memory.index.indexer import _insert_rows
    from pi_memory.index.writer import index_ranges

    sid = conn.execute("INSERT INTO sessions(source, session_key, cwd) VALUES ('pi', ?, '/w') RETURNING id",
                       (key,)).fetchone()[0]
    st = session.stat()
    fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES (?, ?, ?, ?) "
                       "RETURNING id", (str(session), sid, st.st_size, st.st_mtime_ns)).fetchone()[0]
    ids = _insert_rows(conn, [(sid, fid, f"e{n}", None, n, f"2026-11-01T10:00:{n:02d}.000Z", role, "message",
                               None, "active", text) for n, (role, text) in enumerate(turns, 1)])
    index_ranges(conn, [ids])
