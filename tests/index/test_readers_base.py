"""Reader building blocks (active branch, timestamps, records) and dispatch: source detection, default
roots, discovery, chunked and BOM input."""

from __future__ import annotations

import collections
import os
import shutil
from pathlib import Path

import pytest
from readers_helpers import (
    CC_AGENT,
    CC_FILE,
    CODEX_FILE,
    CODEX_LEGACY,
    LOCAL,
    PI_EXPECTED,
    PI_SESSIONS,
    PROBE,
    needs_pi,
)

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
