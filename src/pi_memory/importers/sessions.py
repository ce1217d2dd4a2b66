"""Conversations that only the peer's ``sessions.db`` still holds (their pi session file is gone).

pi-memory's session index is derived from transcript files, so such a conversation is written back as a pi
session file (format v3: a ``session`` header, then one ``message`` line per message, each the child of the
one before) into ``<pi sessions folder>/--pi-hermes-memory-import--/<session id>.jsonl``. That folder is
under pi's sessions folder, so every index pass and ``pi-memory reindex`` read it like any other transcript
(and a rebuilt index keeps it); its name matches no working folder, so pi's own ``/resume`` lists never show
it. Conversations whose file still exists are left to ``pi-memory index-sessions``.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from pathlib import Path

from pi_memory.curated.files import atomic_write_text
from pi_memory.importers.report import ImportReport

FOLDER = "--pi-hermes-memory-import--"
KIND = "sessions.db conversations"


def _iso(value: object) -> str:
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        return _dt.datetime.fromtimestamp(seconds, _dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return str(value or "1970-01-01T00:00:00.000Z")


def _ms(iso: str) -> int:
    try:
        return int(_dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0


def session_file_text(session: dict, messages: list[dict]) -> str:
    """A pi v3 session file holding ``messages`` (``role``, ``content``, ``timestamp``) of ``session``."""
    started = _iso(session.get("started_at"))
    lines = [{"type": "session", "version": 3, "id": session["id"], "timestamp": started,
              "cwd": session.get("cwd") or ""}]
    parent = None
    for n, msg in enumerate(messages, 1):
        when = _iso(msg.get("timestamp") or started)
        entry_id = f"imp{n:05d}"
        lines.append({"type": "message", "id": entry_id, "parentId": parent, "timestamp": when,
                      "message": {"role": msg["role"], "content": [{"type": "text", "text": msg["content"]}],
                                  "timestamp": _ms(when)}})
        parent = entry_id
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def restore_sessions(report: ImportReport, rows: dict[str, list[dict]], sessions_root: Path, apply: bool) -> Path | None:
    """Write back the conversations of ``rows`` (``sessions``, ``session_files``, ``messages`` of the peer's
    database, as dicts) that have no file any more; returns the folder when something was written."""
    files: dict[str, list[str]] = {}
    for f in rows.get("session_files", []):
        files.setdefault(str(f["session_id"]), []).append(str(f["path"]))
    by_session: dict[str, list[dict]] = {}
    for m in rows.get("messages", []):
        if m.get("role") in ("user", "assistant") and (m.get("content") or "").strip():
            by_session.setdefault(str(m["session_id"]), []).append(m)
    folder = sessions_root / FOLDER
    wrote = False
    for session in rows.get("sessions", []):
        sid = str(session["id"])
        paths = files.get(sid, [])
        if any(Path(p).exists() for p in paths):
            continue  # pi's own file is there: the indexer reads it
        messages = by_session.get(sid, [])
        what = f"{session.get('project') or 'no project'}, {len(messages)} message(s), started {session.get('started_at')}"
        if not messages:
            report.add(KIND, what, "skip", "its session file is gone and sessions.db kept no message text")
            continue
        dest = folder / (re.sub(r"[^A-Za-z0-9._-]+", "-", sid) + ".jsonl")
        if dest.exists():
            report.add(KIND, what, "already", to=str(dest))
            continue
        if apply:
            atomic_write_text(dest, session_file_text(session, messages))
            wrote = True
        report.add(KIND, what, "add", to=str(dest))
    return folder if wrote else None
