"""Session-transcript readers: pi, Claude Code and Codex JSONL files -> searchable :class:`Record` lists.

Entry points:

* :func:`read_session` ``(path, start_offset=0, start_line=0, info=None) -> ReadResult``: detect the format
  (or take ``info.source``) and dispatch to :func:`read_pi`, :func:`read_claude_code` or :func:`read_codex`. For an
  incremental pass give the previous pass's ``end_offset``, ``end_line`` and ``info``.
* :func:`detect_source` ``(path) -> "pi" | "claude_code" | "codex" | None``: by the first complete line's content,
  with path hints as the fallback (a file whose first line is still being written).
* :func:`default_roots` ``() -> {"pi": Path, "claude_code": Path, "codex": Path}``: where each agent keeps its
  transcripts (pi: ``$PI_CODING_AGENT_SESSION_DIR``, else ``$PI_CODING_AGENT_DIR/sessions``, else
  ``~/.pi/agent/sessions``; Claude Code: ``~/.claude/projects``; Codex: ``$CODEX_HOME/sessions``, else
  ``~/.codex/sessions``).
* :func:`discover` ``(roots) -> Iterator[Path]``: every ``*.jsonl`` under the roots, newest mtime first.

Shapes, skip reasons and the per-format details are in :mod:`.base` and each reader module.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from .base import ReadResult, Record, SessionInfo, active_branch, read_first_object
from .claude_code import META_TYPES as CLAUDE_META_TYPES
from .claude_code import read_claude_code
from .codex import read_codex
from .pi import read_pi

__all__ = [
    "ReadResult",
    "Record",
    "SessionInfo",
    "UnknownSessionFormat",
    "active_branch",
    "default_roots",
    "detect_source",
    "discover",
    "read_claude_code",
    "read_codex",
    "read_pi",
    "read_session",
]

SOURCES = ("pi", "claude_code", "codex")

_CODEX_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state"}
)
_CLAUDE_TYPES = frozenset({"user", "assistant", "summary"}) | CLAUDE_META_TYPES


class UnknownSessionFormat(ValueError):
    """Raised by :func:`read_session` when neither the content nor the path tells the format."""


def _source_from_content(first: dict) -> str | None:
    ltype = first.get("type")
    if not isinstance(ltype, str | None):
        ltype = None  # a list or an object where a string belongs: judge by the other keys
    if ltype == "session":
        return "pi"
    if "payload" in first and ltype in _CODEX_TYPES:
        return "codex"
    if "uuid" in first or "parentUuid" in first or "sessionId" in first or "leafUuid" in first:
        return "claude_code"
    if ltype is None and "id" in first and ("instructions" in first or "git" in first):
        return "codex"  # legacy rollout header
    if ltype in _CLAUDE_TYPES:
        return "claude_code"
    return None


def _source_from_path(path: Path) -> str | None:
    parts = path.parts
    name = path.name
    if name.startswith("rollout-") or ".codex" in parts:
        return "codex"
    if ".claude" in parts or (name.startswith("agent-") and "subagents" in parts):
        return "claude_code"
    if ".pi" in parts or any(p.startswith("--") and p.endswith("--") for p in parts[:-1]):
        return "pi"
    return None


def detect_source(path: str | Path) -> str | None:
    """``"pi"``, ``"claude_code"``, ``"codex"`` or ``None``: by the first complete line, else by the path."""
    path = Path(path)
    first = read_first_object(path)
    if first is not None:
        found = _source_from_content(first)
        if found is not None:
            return found
    return _source_from_path(path)


def read_session(
    path: str | Path, start_offset: int = 0, start_line: int = 0, info: SessionInfo | None = None
) -> ReadResult:
    """Read a transcript of any supported agent; raises :class:`UnknownSessionFormat` if the format is unknown."""
    source = info.source if info is not None and info.source in SOURCES else detect_source(path)
    readers = {"pi": read_pi, "claude_code": read_claude_code, "codex": read_codex}
    if source not in readers:
        raise UnknownSessionFormat(f"cannot tell which agent wrote {path}")
    res = readers[source](path, start_offset, start_line, info)
    if start_offset == 0 and _nothing_but_garbage(res):
        # The format came from the folder (``.claude/projects``), not the content: a file of which no line is
        # a JSON record (binary data, another tool's log) is not a transcript there either, as anywhere else.
        raise UnknownSessionFormat(f"cannot tell which agent wrote {path}: none of its lines is a JSON record")
    return res


def _nothing_but_garbage(res: ReadResult) -> bool:
    """No record and at least one line that was not JSON, nothing else (the synthetic tree ids of the linear
    formats say nothing about the content)."""
    return (not res.records and res.skipped.get("malformed_line", 0) > 0
            and set(res.skipped) <= {"malformed_line", "not_object", "blank_line"})


def default_roots() -> dict[str, Path]:
    """Default transcript directories, honouring the agents' own environment variables."""
    home = Path.home()
    pi_dir = os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    if pi_dir:
        pi_root = Path(pi_dir).expanduser()
    else:
        agent_dir = os.environ.get("PI_CODING_AGENT_DIR")
        pi_root = (Path(agent_dir).expanduser() if agent_dir else home / ".pi" / "agent") / "sessions"
    codex_home = os.environ.get("CODEX_HOME")
    codex_root = (Path(codex_home).expanduser() if codex_home else home / ".codex") / "sessions"
    return {"pi": pi_root, "claude_code": home / ".claude" / "projects", "codex": codex_root}


def discover(roots: Mapping[str, Path | str] | Iterable[Path | str]) -> Iterator[Path]:
    """Every ``*.jsonl`` file under ``roots`` (a mapping like :func:`default_roots` or paths), newest mtime first.

    Missing roots are ignored, a file reachable from two roots is listed once, and symlinked directories are not
    followed.
    """
    paths = roots.values() if isinstance(roots, Mapping) else roots
    found: dict[str, tuple[float, Path]] = {}
    for root in paths:
        root = Path(root).expanduser()
        if root.is_file():
            candidates: Iterable[tuple[str, str]] = (
                [(str(root.parent), root.name)] if root.suffix == ".jsonl" else []
            )
        else:
            candidates = (
                (dirpath, name)
                for dirpath, _dirs, files in os.walk(root)
                for name in files
                if name.endswith(".jsonl")
            )
        for dirpath, name in candidates:
            full = os.path.join(dirpath, name)
            try:
                st = os.stat(full)
            except OSError:
                continue  # vanished or unreadable
            if not stat.S_ISREG(st.st_mode):
                continue
            key = os.path.realpath(full)
            if key not in found:
                found[key] = (st.st_mtime, Path(full))
    for _mtime, path in sorted(found.values(), key=lambda item: (-item[0], str(item[1]))):
        yield path
