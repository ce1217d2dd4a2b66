"""The pi reader on the real pi fixtures (../shared/fixtures): counts, branches, v1 files, incremental
reads and damaged files."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from readers_helpers import (
    ERR,
    PI_EXPECTED,
    PI_SESSIONS,
    PI_V1,
    PROBE,
    RACE,
    RPC,
    V16,
    V16_RACE,
    assert_same_as_one_pass,
    kinds,
    leaves,
    lines_of,
    needs_pi,
    needs_v1,
    two_pass,
    write,
)

from pi_memory.index.readers import (
    active_branch,
    read_pi,
)

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


@needs_pi
@pytest.mark.parametrize("rel", list(PI_EXPECTED))
def test_pi_incremental_equals_one_pass(rel: str, tmp_path: Path) -> None:
    assert_same_as_one_pass(read_pi, PI_SESSIONS / rel, tmp_path)


@needs_v1
def test_pi_v1_incremental_equals_one_pass(tmp_path: Path) -> None:
    assert_same_as_one_pass(read_pi, PI_V1, tmp_path)


@needs_pi
def test_pi_incremental_without_info_rereads_header(tmp_path: Path) -> None:
    first, _ = two_pass(read_pi, PROBE, tmp_path, 10)
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
