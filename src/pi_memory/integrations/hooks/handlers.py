"""What each hook event does, as thin calls into pi-memory's session lifecycle (:mod:`pi_memory.session`).

* ``session-start``: the session-start context (today the frozen curated snapshot, :func:`session_context`,
  the one place that builds it) is frozen per host session id in the hook state
  (:mod:`.state`), so a resumed session gets the same bytes; a ``compact`` or ``clear`` start builds it anew
  (memory written since shows after a compaction, as in pi).
* ``prompt``: semantic recall for the prompt (:meth:`AgentSession.recall`: fenced untrusted data within the
  recall token budget); the prompt is kept as the user half of the turn the stop hook captures.
* ``pre-compact``, ``stop``, ``session-end``: queue indexing of ``transcript_path`` (incremental) and, on
  ``stop``, capture of the turn, in a detached child process (:mod:`.background`) so the host never waits.

Imports are lazy: a session start whose inputs did not change since the last one reads one cache file and
imports nothing beyond the standard library.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pi_memory.integrations.hooks import state

CACHE_VERSION = "1"
_PKG = Path(__file__).resolve().parents[2]  # src/pi_memory
# the code a cached context was built by: a changed file (an upgrade, an edit) invalidates the cache
_CODE = ("curated/snapshot.py", "curated/sanitise.py", "curated/entries.py", "safety/threats.py",
         "safety/secrets.py", "safety/_threat_patterns.py", "integrations/hooks/handlers.py")


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _cwd(payload: dict) -> str:
    cwd = _text(payload.get("cwd")) or os.getcwd()
    return os.path.realpath(cwd)


def session_context(cwd: str) -> tuple[str, list[str]]:
    """The context a new host session starts with, and the files it was built from (for the cache).

    The one call site that assembles it: today the curated snapshot (:func:`pi_memory.curated.build_snapshot`
    of the stores of ``cwd``'s project); standing instructions and blocks join it here."""
    from pi_memory.config import agent_dir, load_settings, trust_file
    from pi_memory.curated import MemoryStore, build_snapshot

    settings = load_settings(Path(cwd))
    store = MemoryStore.from_settings(settings, cwd=cwd)
    deps = [str(agent_dir() / "settings.json"), str(trust_file()), str(Path(cwd) / ".pi" / "settings.json"),
            *(str(p) for p in store.files.values()), *(str(_PKG / c) for c in _CODE)]
    before = state.fingerprint(deps)
    text = build_snapshot(store)
    state.store_context(cwd, CACHE_VERSION, deps, before, text)
    return text, deps


def on_session_start(host: str, payload: dict) -> str | None:
    sid = _text(payload.get("session_id"))
    source = _text(payload.get("source"))
    saved = state.read_json(state.session_file(host, sid)) if sid else {}
    if isinstance(saved.get("context"), str) and source not in ("compact", "clear"):
        state.log(f"{host} session-start ({source or 'no source'}): session {sid}: the frozen context again "
                  f"({len(saved['context'])} chars)")
        return saved["context"]
    cwd = _cwd(payload)
    text = state.cached_context(cwd, CACHE_VERSION)
    if text is None:
        text, _ = session_context(cwd)
    if sid:
        state.update_session(host, sid, context=text, cwd=cwd)
    return text


def on_prompt(host: str, payload: dict) -> str | None:
    from pi_memory.semantic.service import RECALL_MARKER_KEY
    from pi_memory.session import AgentSession

    sid, prompt = _text(payload.get("session_id")), _text(payload.get("prompt"))
    saved = state.read_json(state.session_file(host, sid)) if sid else {}
    if sid:
        state.update_session(host, sid, lastPrompt=prompt)
    session = AgentSession(_cwd(payload), sid or None)
    outcome = session.recall(prompt, {RECALL_MARKER_KEY: saved.get("recallMarker")})
    if outcome is None:
        return None
    if outcome.marker is not None and sid:
        state.update_session(host, sid, recallMarker=outcome.marker)
    if outcome.error:
        state.log(f"{host} prompt: recall failed: {outcome.error}")
    return outcome.text


def on_transcript(host: str, event: str, payload: dict) -> None:
    """Queue the background job for the transcript (and, on ``stop``, the turn) and return at once."""
    sid = _text(payload.get("session_id"))
    job = {"host": host, "event": event, "sessionId": sid, "cwd": _cwd(payload),
           "transcript": _text(payload.get("transcript_path")) or None}
    if event == "stop":
        saved = state.read_json(state.session_file(host, sid)) if sid else {}
        job["userText"] = _text(saved.get("lastPrompt"))
        job["assistantText"] = _text(payload.get("last_assistant_message"))
    spawn_background(job)


def spawn_background(job: dict) -> None:
    """Start :mod:`.background` for ``job``, detached (its own session, no standard streams shared with the
    host), so the hook returns at once and the host never waits for, or kills, the work."""
    log_path = state.state_dir() / "hooks.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a", encoding="utf-8") as log_fh:
        subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-m", "pi_memory.integrations.hooks.background", json.dumps(job)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log_fh, start_new_session=True,
            close_fds=True, cwd=job["cwd"] if os.path.isdir(job["cwd"]) else None,
        )


def handle(host: str, event: str, payload: dict) -> str | None:
    """The context to answer with (``None``: the empty answer)."""
    if event == "session-start":
        return on_session_start(host, payload)
    if event == "prompt":
        return on_prompt(host, payload)
    on_transcript(host, event, payload)
    return None
