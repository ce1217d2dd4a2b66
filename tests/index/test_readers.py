"""Session readers on the real pi fixtures (../shared/fixtures) and our Claude Code / Codex fixtures."""

from __future__ import annotations

import collections
import json
import os
import shutil
from pathlib import Path

import pytest

from pi_memory.index.readers import (
    Record,
    SessionInfo,
    UnknownSessionFormat,
    active_branch,
    default_roots,
    detect_source,
    discover,
    read_claude_code,
    read_codex,
    read_pi,
    read_session,
)
from pi_memory.index.readers.base import ms_to_iso

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


# ---------------------------------------------------------------- pi: real fixtures


@needs_pi
@pytest.mark.parametrize("rel", list(PI_EXPECTED))
def test_pi_fixture_counts(rel: str) -> None:
    expected_kinds, expected_skipped = PI_EXPECTED[rel]
    path = PI_SESSIONS / rel
    result = read_pi(path)
    assert kinds(result) == expected_kinds
    assert dict(result.skipped) == expected_skipped
    n_lines = len(lines_of(path))
    assert result.end_line == n_lines
    assert result.end_offset == path.stat().st_size
    assert result.partial_tail is False
    assert len(result.parents) == n_lines - 1  # every entry but the header
    assert result.info.source == "pi"
    assert result.info.version == "3"
    assert result.info.session_id == path.stem.split("_", 1)[1]
    assert result.info.cwd.startswith("/home/dev/scratch")
    last = json.loads(lines_of(path)[-1])
    assert result.leaf_id == last["id"]
    for rec in result.records:
        assert rec.timestamp and rec.timestamp.endswith("Z")
        assert rec.entry_id in result.parents
        assert rec.role in {"user", "assistant", "tool", "summary"}


@needs_pi
def test_pi_failed_retries_are_skipped() -> None:
    result = read_pi(ERR)
    assert [r for r in result.records if r.role == "assistant"] == []
    assert result.skipped["failed_retry"] == 4
    assert [(r.kind, r.role, r.text) for r in result.records] == [
        ("message", "user", "hello to a dead server")
    ]


@needs_pi
def test_pi_plain_records_and_tool_call_text() -> None:
    result = read_pi(PI_SESSIONS / list(PI_EXPECTED)[2])
    got = [(r.kind, r.role, r.tool_name, r.line) for r in result.records]
    assert got == [
        ("message", "user", None, 4),
        ("tool_call", "assistant", "bash", 5),
        ("tool_result", "tool", "bash", 6),
        ("message", "assistant", None, 7),
    ]
    call = result.records[1]
    assert call.text == 'bash: {"command":"ls -la"}'
    assert call.entry_id == "251fced9" and call.parent_id == "4ccad43d"
    assert call.timestamp == "2026-11-29T13:28:08.893Z"
    assert result.records[2].text.startswith("total 20\n")


@needs_pi
def test_pi_branched_probe_active_branch() -> None:
    result = read_pi(PROBE)
    assert leaves(result.parents) == {"ccb4655e", "0eace924"}
    assert result.leaf_id == "0eace924"
    branch = active_branch(result.parents, result.leaf_id)
    assert len(branch) == 12
    on = [r for r in result.records if r.entry_id in branch]
    off = [r for r in result.records if r.entry_id not in branch]
    assert [(r.kind, r.line) for r in on] == [
        ("message", 5),
        ("custom_message", 6),
        ("tool_call", 7),
        ("branch_summary", 22),
        ("message", 24),
        ("custom_message", 25),
        ("message", 26),
    ]
    assert len(off) == 11
    assert {r.kind for r in off} == {"message", "custom_message", "tool_call", "tool_result", "compaction"}
    assert any(r.text == "Third prompt after compaction" for r in off)
    assert any(r.text == "Fourth prompt on the new branch" for r in on)
    # the abandoned branch ends at the other leaf
    assert "ccb4655e" in active_branch(result.parents, "ccb4655e") - branch


@needs_pi
def test_pi_summaries_and_custom_messages() -> None:
    result = read_pi(PROBE)
    compaction = [r for r in result.records if r.kind == "compaction"]
    summary = [r for r in result.records if r.kind == "branch_summary"]
    assert len(compaction) == 1 and compaction[0].role == "summary" and compaction[0].entry_id == "e7e2373f"
    assert compaction[0].text.startswith("Fake answer to: <conversation>")
    assert len(summary) == 1 and summary[0].role == "summary" and summary[0].parent_id == "34abe6aa"
    assert summary[0].text.startswith("The user explored a different conversation branch")
    customs = [r for r in result.records if r.kind == "custom_message"]
    assert {(r.role, r.tool_name) for r in customs} == {("user", "memory-recall")}
    assert customs[0].text.startswith("Relevant memories:\n[mem-1]")


@needs_pi
def test_pi_race_file_parses() -> None:
    result = read_pi(RACE)
    assert result.skipped["malformed_line"] == 0
    assert leaves(result.parents) == {"075dd6f4", "eb0406fb"}
    assert len(active_branch(result.parents, result.leaf_id)) == 15
    assert len(result.records) == 18


@needs_pi
def test_pi_16_system_message_skipped() -> None:
    for path in (V16, V16_RACE):
        result = read_pi(path)
        assert result.skipped["system_prompt"] == 1
        assert all(r.role != "system" for r in result.records)
        assert all("You are a coding assistant" not in r.text for r in result.records)
    v16 = read_pi(V16_RACE)
    assert leaves(v16.parents) == {"524302f3", "25cb96f5"}


@needs_pi
def test_pi_bash_execution() -> None:
    result = read_pi(RPC)
    bash = [r for r in result.records if r.kind == "bash"]
    assert [(r.role, r.tool_name, r.text, r.line) for r in bash] == [
        ("user", "bash", "echo from-rpc-bash\nfrom-rpc-bash\n", 7)
    ]


# ---------------------------------------------------------------- pi: v1 file


@needs_v1
def test_pi_v1_file() -> None:
    result = read_pi(PI_V1)
    # checked by hand: 55 user texts + 253 assistant messages with text; 454 toolCall blocks; 448 toolResults;
    # 3 bashExecution; 2 compactions; 14 aborted and 1 failed (error) empty assistant messages; 49 thinking blocks
    assert kinds(result) == {"message": 308, "tool_call": 454, "tool_result": 448, "bash": 3, "compaction": 2}
    assert len(result.records) == 1215
    assert dict(result.skipped) == {
        "aborted": 14,
        "failed_retry": 1,
        "thinking": 49,
        "meta:model_change": 5,
        "meta:thinking_level_change": 5,
    }
    info = result.info
    assert info.version == "1"
    assert info.session_id == "ffae836b-9420-4060-ac13-7745215f90ff"
    assert info.cwd == "/Users/badlogic/workspaces/pi-mono"
    assert info.parent_session.endswith("d97339c6-6c10-4827-846b-9ff1d9c3dc37.jsonl")
    # synthetic linear ids: L2 .. L1003
    assert len(result.parents) == 1002
    assert result.parents["L2"] is None and result.parents["L1003"] == "L1002"
    assert result.leaf_id == "L1003"
    assert len(active_branch(result.parents, result.leaf_id)) == 1002
    first = result.records[0]
    assert (first.kind, first.role, first.line, first.entry_id) == ("message", "user", 2, "L2")
    assert first.text.startswith("alright, read @packages/coding-agent/src/main.ts")
    assert all(r.entry_id == f"L{r.line}" for r in result.records)


# ---------------------------------------------------------------- pi: incremental and damaged files


def _two_pass(reader, path: Path, tmp_path: Path, cut: int):
    """Read ``path`` grown in two appends (first ``cut`` lines, then the rest)."""
    data = lines_of(path)
    grow = write(tmp_path / path.name, data[:cut])
    first = reader(grow)
    with open(grow, "ab") as fh:
        fh.write(b"".join(data[cut:]))
    second = reader(grow, first.end_offset, first.end_line, first.info)
    return first, second


def _assert_same_as_one_pass(reader, path: Path, tmp_path: Path) -> None:
    whole = reader(path)
    n = len(lines_of(path))
    for cut in sorted({1, 2, n // 2, n - 1}):
        first, second = _two_pass(reader, path, tmp_path, cut)
        assert first.records + second.records == whole.records
        assert {**first.parents, **second.parents} == whole.parents
        assert second.leaf_id == whole.leaf_id
        assert second.info == whole.info
        assert first.skipped + second.skipped == whole.skipped
        assert second.end_offset == whole.end_offset == path.stat().st_size
        assert second.end_line == whole.end_line == n


@needs_pi
@pytest.mark.parametrize("rel", list(PI_EXPECTED))
def test_pi_incremental_equals_one_pass(rel: str, tmp_path: Path) -> None:
    _assert_same_as_one_pass(read_pi, PI_SESSIONS / rel, tmp_path)


@needs_v1
def test_pi_v1_incremental_equals_one_pass(tmp_path: Path) -> None:
    _assert_same_as_one_pass(read_pi, PI_V1, tmp_path)


@needs_pi
def test_pi_incremental_without_info_rereads_header(tmp_path: Path) -> None:
    first, _ = _two_pass(read_pi, PROBE, tmp_path, 10)
    later = read_pi(tmp_path / PROBE.name, first.end_offset, first.end_line)
    assert later.info == first.info


@needs_pi
def test_pi_truncated_last_line_is_left_for_later(tmp_path: Path) -> None:
    data = lines_of(PROBE)
    half = data[20][: len(data[20]) // 2]
    path = write(tmp_path / "s.jsonl", [*data[:20], half])
    first = read_pi(path)
    assert first.partial_tail is True
    assert first.end_line == 20
    assert first.end_offset == sum(len(x) for x in data[:20])
    assert first.skipped["malformed_line"] == 0
    assert max(r.line for r in first.records) <= 20
    with open(path, "ab") as fh:
        fh.write(data[20][len(half) :] + b"".join(data[21:]))
    second = read_pi(path, first.end_offset, first.end_line, first.info)
    assert second.partial_tail is False
    assert first.records + second.records == read_pi(PROBE).records
    assert "ccb4655e" in second.parents  # line 21 (a custom entry) was read in the second pass
    assert min(r.line for r in second.records) == 22


@needs_pi
def test_pi_complete_last_line_without_newline_is_consumed(tmp_path: Path) -> None:
    data = lines_of(PROBE)
    path = write(tmp_path / "s.jsonl", [*data[:-1], data[-1].rstrip(b"\n")])
    result = read_pi(path)
    assert result.partial_tail is False
    assert result.end_line == len(data)
    assert result.end_offset == path.stat().st_size
    assert result.records == read_pi(PROBE).records
    with open(path, "ab") as fh:  # the writer adds the newline and another entry later
        fh.write(
            b'\n{"type":"label","id":"zz","parentId":"0eace924","timestamp":"2026-11-29T13:31:00.000Z"}\n'
        )
    later = read_pi(path, result.end_offset, result.end_line, result.info)
    assert later.records == []
    assert later.leaf_id == "zz" and later.parents == {"zz": "0eace924"}
    assert later.skipped == collections.Counter({"blank_line": 1, "meta:label": 1})


@needs_pi
def test_pi_malformed_middle_line_is_counted(tmp_path: Path) -> None:
    data = lines_of(PROBE)
    path = write(
        tmp_path / "s.jsonl",
        [*data[:10], b'{"type":"message","id":"broken",\n', b"\xff\xfe not json\n", *data[10:]],
    )
    result = read_pi(path)
    assert result.skipped["malformed_line"] == 2
    whole = read_pi(PROBE)
    assert [(r.kind, r.text) for r in result.records] == [(r.kind, r.text) for r in whole.records]
    assert [r.line for r in result.records] == [r.line + 2 if r.line > 10 else r.line for r in whole.records]
    assert result.leaf_id == whole.leaf_id


def test_pi_unknown_types_roles_blocks_images(tmp_path: Path) -> None:
    b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    entries = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-11-29T10:00:00.000Z", "cwd": "/w"},
        {"type": "hologram", "id": "a1", "parentId": None, "timestamp": "2026-11-29T10:00:01.000Z"},
        {
            "type": "message",
            "id": "a2",
            "parentId": "a1",
            "timestamp": "2026-11-29T10:00:02.000Z",
            "message": {"role": "oracle", "content": "?"},
        },
        {
            "type": "message",
            "id": "a3",
            "parentId": "a2",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is in this picture"},
                    {"type": "image", "data": b64},
                ],
                "timestamp": 1795958888790,
            },
        },
        {
            "type": "message",
            "id": "a4",
            "parentId": "a3",
            "timestamp": "2026-11-29T10:00:04.000Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm"},
                    {"type": "hologram", "x": 1},
                    {"type": "text", "text": "A red pixel."},
                    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "é.png"}},
                    {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "file é.png"}},
                ],
                "stopReason": "toolUse",
            },
        },
        {
            "type": "message",
            "id": "a5",
            "parentId": "a4",
            "timestamp": "2026-11-29T10:00:05.000Z",
            "message": {
                "role": "toolResult",
                "toolName": "read",
                "content": [{"type": "image", "data": b64, "mimeType": "image/png"}],
            },
        },
        {
            "type": "message",
            "id": "a6",
            "parentId": "a5",
            "timestamp": "2026-11-29T10:00:06.000Z",
            "message": {
                "role": "hookMessage",
                "customType": "old-hook",
                "content": "v2 hook text",
                "display": True,
            },
        },
        {"type": "usage", "id": "a7", "parentId": "a6", "timestamp": "2026-11-29T10:00:07.000Z", "usage": {}},
        {
            "type": "context_edit",
            "id": "a8",
            "parentId": "a7",
            "timestamp": "2026-11-29T10:00:08.000Z",
            "targetId": "a3",
        },
        [1, 2, 3],
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\r\n" for e in entries), encoding="utf-8")
    result = read_pi(path)
    assert result.skipped == collections.Counter(
        {
            "unknown_type:hologram": 1,
            "unknown_role:oracle": 1,
            "unknown_block:hologram": 1,
            "image": 2,
            "thinking": 1,
            "empty": 1,
            "meta:usage": 1,
            "meta:context_edit": 1,
            "not_object": 1,
        }
    )
    got = [(r.kind, r.role, r.text, r.tool_name, r.timestamp) for r in result.records]
    assert got == [
        ("message", "user", "what is in this picture", None, "2026-11-29T13:28:08.790Z"),
        ("message", "assistant", "A red pixel.", None, "2026-11-29T10:00:04.000Z"),
        ("tool_call", "assistant", 'read: {"path":"é.png"}', "read", "2026-11-29T10:00:04.000Z"),
        ("tool_call", "assistant", 'bash: {"command":"file é.png"}', "bash", "2026-11-29T10:00:04.000Z"),
        ("custom_message", "user", "v2 hook text", "old-hook", "2026-11-29T10:00:06.000Z"),
    ]
    assert all(b64[:20] not in r.text for r in result.records)
    assert result.leaf_id == "a8" and len(result.parents) == 8


def test_pi_empty_and_header_only_files(tmp_path: Path) -> None:
    empty = write(tmp_path / "e.jsonl", [])
    result = read_pi(empty)
    assert (result.records, result.parents, result.leaf_id, result.end_offset, result.partial_tail) == (
        [],
        {},
        None,
        0,
        False,
    )
    header = write(
        tmp_path / "h.jsonl", [b'{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/w"}\n']
    )
    result = read_pi(header)
    assert result.info.session_id == "x" and result.records == [] and result.end_line == 1


# ---------------------------------------------------------------- base


def test_active_branch_cycles_and_missing_parents() -> None:
    parents = {"a": None, "b": "a", "c": "b", "x": "y", "y": "x", "m": "gone"}
    assert active_branch(parents, "c") == {"a", "b", "c"}
    assert active_branch(parents, "x") == {"x", "y"}
    assert active_branch(parents, "m") == {"m"}
    assert active_branch(parents, None) == set()
    assert active_branch(parents, "unknown") == set()


def test_ms_to_iso() -> None:
    assert ms_to_iso(1795958888790) == "2026-11-29T13:28:08.790Z"
    assert ms_to_iso(1795958888) == "2026-11-29T13:28:08.000Z"


def test_record_is_frozen() -> None:
    rec = Record("message", "user", "x", None, None, 1, None)
    with pytest.raises(AttributeError):
        rec.text = "y"  # type: ignore[misc]


# ---------------------------------------------------------------- Claude Code


def test_claude_code_records() -> None:
    result = read_claude_code(CC_FILE)
    got = [(r.line, r.kind, r.role, r.tool_name) for r in result.records]
    assert got == [
        (2, "branch_summary", "summary", None),
        (5, "message", "user", None),
        (7, "message", "assistant", None),
        (8, "tool_call", "assistant", "Read"),
        (9, "tool_result", "tool", "Read"),
        (11, "message", "assistant", None),
        (11, "tool_call", "assistant", "Bash"),
        (12, "tool_result", "tool", "Bash"),
        (13, "message", "assistant", None),
        (14, "message", "user", None),
        (17, "compaction", "summary", None),
        (20, "message", "assistant", None),
        (21, "message", "assistant", None),
    ]
    texts = [r.text for r in result.records]
    assert texts[0] == "Fix rounding bug in invoice totals"
    assert texts[3] == 'Read: {"file_path":"/home/dev/shop/totals.py"}'
    assert texts[7] == "3 passed in 0.02s"
    assert texts[9] == "actually, use banker's rounding instead"
    assert texts[10].startswith("This session is being continued")
    assert texts[12].startswith("(subagent)")
    assert all("iVBORw0KGgo" not in t for t in texts)
    assert result.skipped == collections.Counter(
        {
            "foreign_summary": 1,
            "meta:file-history-snapshot": 1,
            "meta:queue-operation": 1,
            "is_meta": 1,
            "thinking": 2,
            "meta:progress": 1,
            "image": 2,
            "api_error": 1,
            "meta:system": 1,
            "meta:attachment": 1,
            "unknown_type:future-thing": 1,
        }
    )
    assert result.info == SessionInfo(
        source="claude_code",
        session_id="9b2f0c1e-5d7a-4c3b-8e21-7f6a1d0c4b93",
        cwd="/home/dev/shop",
        started_at="2026-11-29T12:00:00.000Z",
        version="2.1.332",
    )
    assert result.end_line == 21 and result.partial_tail is False


def test_claude_code_tree() -> None:
    result = read_claude_code(CC_FILE)
    assert len(result.parents) == 17
    c = "c{:07d}-0000-4000-8000-{:012d}".format
    assert result.leaf_id == c(16, 16)  # the sidechain line after it is not the leaf
    assert result.parents[c(12, 12)] == c(11, 11)  # compact boundary: logicalParentUuid
    assert leaves(result.parents) == {c(9, 9), c(17, 17)}
    branch = active_branch(result.parents, result.leaf_id)
    assert branch == {c(i, i) for i in (1, 10, 11, 12, 13, 14, 15, 16)}
    off = [r for r in result.records if r.entry_id is not None and r.entry_id not in branch]
    assert [r.line for r in off] == [7, 8, 9, 11, 11, 12, 13, 21]
    summary = result.records[0]
    assert summary.entry_id is None and summary.parent_id == c(9, 9)


def test_claude_code_subagent_file() -> None:
    result = read_claude_code(CC_AGENT)
    assert result.info.session_id == "a1b2c3"
    assert result.info.parent_session == "9b2f0c1e-5d7a-4c3b-8e21-7f6a1d0c4b93"
    assert [(r.kind, r.tool_name) for r in result.records] == [
        ("message", None),
        ("tool_call", "Grep"),
        ("tool_result", "Grep"),
        ("message", None),
    ]
    assert result.leaf_id == "d0000004-0000-4000-8000-000000000004"


def test_claude_code_incremental(tmp_path: Path) -> None:
    whole = read_claude_code(CC_FILE)
    n = len(lines_of(CC_FILE))
    for cut in (4, 9, n - 1):
        first, second = _two_pass(read_claude_code, CC_FILE, tmp_path, cut)
        got = first.records + second.records
        # a summary is kept only if the leaf it names is read in the same pass (line 2 names line 13)
        assert [r for r in got if r.kind != "branch_summary"] == [
            r for r in whole.records if r.kind != "branch_summary"
        ]
        assert {**first.parents, **second.parents} == whole.parents
        assert second.info == whole.info
        assert (second.leaf_id or first.leaf_id) == whole.leaf_id  # None: no main-chain entry in that pass


# ---------------------------------------------------------------- Codex


def test_codex_records() -> None:
    result = read_codex(CODEX_FILE)
    got = [(r.line, r.kind, r.role, r.tool_name, r.entry_id, r.parent_id) for r in result.records]
    assert got == [
        (7, "message", "user", None, "L7", "L6"),
        (10, "tool_call", "assistant", "exec_command", "L10", "L9"),
        (12, "tool_result", "tool", "exec_command", "L12", "L11"),
        (14, "message", "assistant", None, "L14", "L13"),
        (16, "tool_call", "assistant", "apply_patch", "L16", "L15"),
        (17, "tool_result", "tool", "apply_patch", "L17", "L16"),
        (19, "tool_call", "assistant", "view_image", "L19", "L18"),
        (20, "tool_result", "tool", "view_image", "L20", "L19"),
        (21, "message", "user", None, "L21", "L20"),
        (22, "compaction", "summary", None, "L22", "L21"),
        (24, "tool_call", "assistant", "web_search", "L24", "L23"),
        (26, "message", "assistant", None, "L26", "L25"),
    ]
    texts = [r.text for r in result.records]
    assert texts[1] == 'exec_command: {"cmd":"pytest -x tests/test_shipping.py","workdir":"/home/dev/shop"}'
    assert texts[2].endswith("1 failed: test_estimate_uses_today")
    assert texts[4].startswith("apply_patch: *** Begin Patch\n")
    assert texts[5] == "Success. Updated the following files:\nM tests/test_shipping.py\n"
    assert texts[7] == "chart of delivery times"
    assert texts[8] == "here is the failing CI screenshot"
    assert texts[9].startswith("Summary: the flaky shipping test")
    assert texts[10] == 'web_search: {"type":"search","query":"freezegun pytest fixture"}'
    assert all("iVBORw0KGgo" not in t for t in texts)
    assert result.skipped == collections.Counter(
        {
            "instructions": 3,
            "meta:turn_context": 1,
            "meta:world_state": 1,
            "event_msg:task_started": 1,
            "event_msg:user_message": 1,
            "event_msg:exec_command_end": 1,
            "event_msg:token_count": 1,
            "event_msg:agent_message": 1,
            "reasoning": 1,
            "duplicate_call_id": 1,
            "image": 2,
            "unknown_type:mystery": 1,
        }
    )
    assert result.info == SessionInfo(
        source="codex",
        session_id="019ad1e2-7c3b-7f10-9a4e-2b5c8d7e6f01",
        cwd="/home/dev/shop",
        started_at="2026-11-29T12:00:00.000Z",
        version="0.169.0",
    )
    assert result.leaf_id == "L26" and len(result.parents) == 26 and result.parents["L1"] is None
    assert len(active_branch(result.parents, result.leaf_id)) == 26


def test_codex_legacy_rollout() -> None:
    result = read_codex(CODEX_LEGACY)
    assert result.info.session_id == "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    assert result.info.started_at == "2025-05-02T09:00:00.000Z"
    assert [(r.kind, r.role, r.text) for r in result.records] == [
        ("message", "user", "add a --dry-run flag to the importer"),
        ("tool_call", "assistant", 'shell: {"command":["bash","-lc","grep -n argparse importer.py"]}'),
        ("tool_result", "tool", "12:import argparse\n"),
        ("message", "assistant", "Added --dry-run to importer.py."),
    ]
    assert result.skipped == collections.Counter({"meta:state": 2})


def test_codex_incremental(tmp_path: Path) -> None:
    _assert_same_as_one_pass(read_codex, CODEX_FILE, tmp_path)
    first, _ = _two_pass(read_codex, CODEX_FILE, tmp_path, 5)
    later = read_codex(tmp_path / CODEX_FILE.name, first.end_offset, first.end_line)  # no info: meta re-read
    assert later.info == first.info


# ---------------------------------------------------------------- dispatch, roots, discovery


def test_detect_source_and_read_session(tmp_path: Path) -> None:
    assert detect_source(CC_FILE) == "claude_code"
    assert detect_source(CC_AGENT) == "claude_code"
    assert detect_source(CODEX_FILE) == "codex"
    assert detect_source(CODEX_LEGACY) == "codex"
    assert read_session(CODEX_FILE).records == read_codex(CODEX_FILE).records
    assert read_session(CC_FILE).records == read_claude_code(CC_FILE).records
    # a first line still being written: the path decides
    partial = tmp_path / ".codex" / "sessions" / "rollout-x.jsonl"
    partial.parent.mkdir(parents=True)
    partial.write_bytes(b'{"timestamp":"2026-')
    assert detect_source(partial) == "codex"
    result = read_session(partial)
    assert result.partial_tail is True and result.end_offset == 0 and result.records == []
    pi_dir = tmp_path / "--home-dev-x--"
    pi_dir.mkdir()
    (pi_dir / "a.jsonl").write_bytes(b"")
    assert detect_source(pi_dir / "a.jsonl") == "pi"
    unknown = tmp_path / "notes.jsonl"
    unknown.write_text('{"hello": 1}\n')
    assert detect_source(unknown) is None
    with pytest.raises(UnknownSessionFormat):
        read_session(unknown)
    # info.source wins over detection
    assert read_session(unknown, info=SessionInfo("codex", None, None, None, None)).records == []


@needs_pi
def test_detect_source_pi() -> None:
    for rel in PI_EXPECTED:
        assert detect_source(PI_SESSIONS / rel) == "pi"
    assert read_session(PROBE).records == read_pi(PROBE).records


def test_default_roots(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("PI_CODING_AGENT_SESSION_DIR", "PI_CODING_AGENT_DIR", "CODEX_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_roots() == {
        "pi": tmp_path / ".pi" / "agent" / "sessions",
        "claude_code": tmp_path / ".claude" / "projects",
        "codex": tmp_path / ".codex" / "sessions",
    }
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    roots = default_roots()
    assert roots["pi"] == tmp_path / "agent" / "sessions" and roots["codex"] == tmp_path / "cx" / "sessions"
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "flat"))
    assert default_roots()["pi"] == tmp_path / "flat"


def test_discover_newest_first(tmp_path: Path) -> None:
    shutil.copytree(LOCAL / "claude_code", tmp_path / "claude")
    shutil.copytree(LOCAL / "codex", tmp_path / "codex")
    (tmp_path / "codex" / "notes.txt").write_text("x")
    files = sorted(tmp_path.rglob("*.jsonl"))
    for age, path in enumerate(files):
        os.utime(path, (1_700_000_000 + age, 1_700_000_000 + age))
    roots = {"claude_code": tmp_path / "claude", "codex": tmp_path / "codex", "pi": tmp_path / "missing"}
    found = list(discover(roots))
    assert found == list(reversed(files))
    assert list(discover([tmp_path / "codex", tmp_path])) == found  # overlapping roots: listed once


def test_tiny_chunks_give_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    from pi_memory.index.readers import base

    files = [CC_FILE, CC_AGENT, CODEX_FILE, CODEX_LEGACY]
    if PI_SESSIONS.is_dir():
        files += [PI_SESSIONS / rel for rel in PI_EXPECTED]
    expected = [read_session(p) for p in files]
    for size in (1, 7, 4096):
        monkeypatch.setattr(base, "CHUNK_SIZE", size)
        assert [read_session(p) for p in files] == expected


def test_bom_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-11-29T10:00:00.000Z","cwd":"/w"}\n'
    msg = b'{"type":"message","id":"a","parentId":null,"timestamp":"2026-11-29T10:00:01.000Z","message":{"role":"user","content":"hi"}}\n'
    path.write_bytes(b"\xef\xbb\xbf" + header + b"\n   \n" + msg)
    result = read_pi(path)
    assert result.info.session_id == "s"
    assert [(r.text, r.line) for r in result.records] == [("hi", 4)]
    assert result.skipped == collections.Counter({"blank_line": 2})
    assert result.end_offset == path.stat().st_size
