"""The Codex reader on our fixtures: current and legacy rollouts, incremental reads."""

from __future__ import annotations

import collections
from pathlib import Path

from readers_helpers import (
    CODEX_FILE,
    CODEX_LEGACY,
    assert_same_as_one_pass,
    two_pass,
)

from pi_memory.index.readers import (
    SessionInfo,
    active_branch,
    read_codex,
)

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
    assert_same_as_one_pass(read_codex, CODEX_FILE, tmp_path)
    first, _ = two_pass(read_codex, CODEX_FILE, tmp_path, 5)
    later = read_codex(tmp_path / CODEX_FILE.name, first.end_offset, first.end_line)  # no info: meta re-read
    assert later.info == first.info
