"""The detached job a transcript hook starts: index the transcript, capture the turn, then exit.

``python -m pi_memory.integrations.hooks.background '<job JSON>'`` with ``{"host", "event", "sessionId",
"cwd", "transcript", "userText"?, "assistantText"?}``. It is one :class:`pi_memory.session.AgentSession` for
one run (``after_run``, on ``pre-compact`` / ``session-end`` also the learning flush, on a session's first
``stop`` the flushes earlier sessions' end left undone, then ``shutdown``),
never a resident process. The learning triggers' turn counters are kept in the host session's state between
jobs (:data:`COUNTERS`), so "review every N turns" and ``flushMinTurns`` count the session's turns:

* bounded: ``SIGALRM`` ends it after :data:`JOB_CEILING_S` seconds whatever it is doing (a capture model that
  hangs included); what it did not finish is picked up by the next job, the MCP server's index pass or
  ``pi-memory index-sessions``, since indexing is incremental;
* after the run it rebuilds the session-start context cache when the turn changed memory
  (:func:`refresh_context`), so the next session start stays on the fast path;
* one at a time per host session: a job waits up to :data:`LOCK_WAIT_S` for the one before it, and when that
  runs long it gives up (the next job, or the running one, indexes the rest).
"""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

from pi_memory.integrations.hooks import state

JOB_CEILING_S = 120
LOCK_WAIT_S = 30.0
FLUSH_REASONS = {"pre-compact": "compaction", "session-end": "shutdown"}
# the learning triggers' per-session counters (pi keeps them in its one bridge process; a hook job is a new
# process each turn, so they live in the host session's state between jobs)
# and the mark of the transcript's messages a review or flush has read (``reviewed``, ``refused_from``)
COUNTERS = ("turn", "turns", "tool_calls", "user_messages", "since_flush", "last_correction_turn", "reviewed",
            "refused_from")


def restore_counters(learning, saved: dict) -> None:
    for key in COUNTERS:
        if isinstance(saved.get(key), int) and isinstance(getattr(learning, key, None), int):
            setattr(learning, key, saved[key])


def run(job: dict) -> bool:
    from filelock import FileLock, Timeout

    from pi_memory.session import AgentSession

    host, sid = str(job.get("host") or "host"), str(job.get("sessionId") or "")
    lock_path = state.session_file(host, sid).with_suffix(".lock")
    state.private_dir(lock_path.parent)
    try:
        lock = FileLock(str(lock_path), timeout=LOCK_WAIT_S)
        lock.acquire()
    except Timeout:
        state.log(f"{host} {job.get('event')}: another job of session {sid} is still running; skipped")
        return False
    started = time.monotonic()
    from pi_memory.integrations.hooks.handlers import _log_to_hook_log

    _log_to_hook_log("pi_memory.index")  # a read-only data folder: the indexing and capture it skips
    try:
        session = AgentSession(job.get("cwd") or None, sid or None)
        learning, event, transcript = session.learning, job.get("event"), job.get("transcript")
        saved = state.read_json(state.session_file(host, sid)).get("learning") if sid else None
        if learning is not None and isinstance(saved, dict):
            restore_counters(learning, saved)
        if event != "stop":
            session.learning = None  # not a turn: index only (the learning triggers count turns)
        session.after_run(transcript, user_text=str(job.get("userText") or ""),
                          assistant_text=str(job.get("assistantText") or ""),
                          source={"host": host, "session_id": sid})
        session.learning = learning
        if event == "stop" and learning is not None and learning.turn == 1:  # the host session's first turn
            learning.pick_up()  # what earlier sessions' end left unreviewed (learning/pending.py)
        flushed = None
        if event in FLUSH_REASONS and learning is not None:
            flushed = session.flush(FLUSH_REASONS[event], transcript)
        finished = session.shutdown(JOB_CEILING_S - 10)
        if learning is not None and sid:
            state.update_session(host, sid, learning={k: getattr(learning, k) for k in COUNTERS
                                                      if isinstance(getattr(learning, k, None), int)})
        if flushed is not None:
            state.log(f"{host} {event}: session {sid}: learning flush "
                      f"{'queued' if flushed['queued'] else 'not due'} ({flushed['reason']})")
        refresh_context(job.get("cwd"))
        errors = session.worker.errors
        state.log(f"{host} {job.get('event')}: session {sid}: {session.indexed_files} file(s) indexed, "
                  f"{len(session.captures)} capture(s), {time.monotonic() - started:.2f} s"
                  + (f"; errors: {'; '.join(errors)}" if errors else "") + ("" if finished else "; cut short"))
        return finished
    finally:
        lock.release()


def refresh_context(cwd: str | None) -> None:
    """Build the session-start context for ``cwd`` again when its cache is stale (a tool call of the turn
    changed memory), so the next session start is answered from the cache instead of building it within the
    hook's time ceiling."""
    from pi_memory.integrations.hooks import handlers

    if cwd and state.cached_context(cwd, handlers.CACHE_VERSION) is None:
        handlers.session_context(cwd)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    signal.alarm(JOB_CEILING_S)  # default action ends the process: the hard bound
    try:
        if args[:1] == ["--job-file"] and len(args) == 2:  # what the hooks pass (a private file, read once)
            path = Path(args[1])
            try:
                job = json.loads(path.read_text(encoding="utf-8"))
            finally:
                path.unlink(missing_ok=True)
        else:
            job = json.loads(args[0]) if args else {}
        if not isinstance(job, dict):
            raise ValueError("the job must be a JSON object")
        run(job)
    except Exception as exc:  # noqa: BLE001 - nobody reads our exit code; the log says what happened
        state.log(f"background job failed: {type(exc).__name__}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
