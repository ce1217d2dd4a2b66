"""Writing small agent transcripts for tests and demos: a pi session file (format v3) of plain text turns."""

from __future__ import annotations

import json
from pathlib import Path


def write_pi_session(path: Path, cwd: Path, turns: list[tuple[str, str]], session_id: str = "01aa",
                     day: str = "2026-11-29") -> Path:
    """Write a pi session file at ``path`` (folders created): the header for ``cwd`` and one message entry per
    ``(role, text)`` of ``turns`` (ids ``e1``, ``e2``... chained by ``parentId``, one second apart from
    ``{day}T10:00:01Z``; assistant messages end with ``stopReason: "stop"``). Returns ``path``."""
    lines = [{"type": "session", "version": 3, "id": session_id, "timestamp": f"{day}T10:00:00.000Z",
              "cwd": str(cwd)}]
    parent = None
    for n, (role, text) in enumerate(turns, 1):
        msg: dict = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
        if role == "assistant":
            msg["stopReason"] = "stop"
        lines.append({"type": "message", "id": f"e{n}", "parentId": parent,
                      "timestamp": f"{day}T10:00:{n:02d}.000Z", "message": msg})
        parent = f"e{n}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path
