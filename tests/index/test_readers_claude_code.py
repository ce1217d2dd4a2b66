"""The Claude Code reader on our fixtures: records, tree, subagent files, incremental reads."""

from __future__ import annotations

import collections
from pathlib import Path

from readers_helpers import (
    CC_AGENT,
    CC_FILE,
    leaves,
    lines_of,
    two_pass,
)

from pi_memory.index.readers import (
    SessionInfo,
    active_branch,
    read_claude_code,
)

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
        first, second = two_pass(read_claude_code, CC_FILE, tmp_path, cut)
        got = first.records + second.records
        # a summary is kept only if the leaf it names is read in the same pass (line 2 names line 13)
        assert [r for r in got if r.kind != "branch_summary"] == [
            r for r in whole.records if r.kind != "branch_summary"
        ]
        assert {**first.parents, **second.parents} == whole.parents
        assert second.info == whole.info
        assert (second.leaf_id or first.leaf_id) == whole.leaf_id  # None: no main-chain entry in that pass
