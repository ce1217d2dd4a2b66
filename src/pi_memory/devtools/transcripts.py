"""Writing small agent transcripts for tests and demos: a pi session file (format v3) of text turns and tool
calls."""

from __future__ import annotations

import json
from pathlib import Path


def tool_call(name: str, arguments: dict, call_id: str = "call1") -> dict:
    """A pi ``toolCall`` content block (what an assistant turn holds when it calls a tool)."""
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def write_pi_session(path: Path, cwd: Path, turns: list[tuple[str, str | list[dict]]], session_id: str = "01aa",
                     day: str = "2026-11-29") -> Path:
    """Write a pi session file at ``path`` (folders created): the header for ``cwd`` and one message entry per
    ``(role, content)`` of ``turns`` (ids ``e1``, ``e2``... chained by ``parentId``, one second apart from
    ``{day}T10:00:01Z``). ``content`` is a text, or a list of content blocks (:func:`tool_call`); assistant
    messages end with ``stopReason: "stop"``, or ``"toolUse"`` when they call a tool. Returns ``path``."""
    lines = [{"type": "session", "version": 3, "id": session_id, "timestamp": f"{day}T10:00:00.000Z",
              "cwd": str(cwd)}]
    parent = None
    for n, (role, content) in enumerate(turns, 1):
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        msg: dict = {"role": role, "content": blocks, "timestamp": 1}
        if role == "assistant":
            msg["stopReason"] = "toolUse" if any(b.get("type") == "toolCall" for b in blocks) else "stop"
        lines.append({"type": "message", "id": f"e{n}", "parentId": parent,
                      "timestamp": f"{day}T10:00:{n:02d}.000Z", "message": msg})
        parent = f"e{n}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path
