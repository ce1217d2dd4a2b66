"""The detached job a transcript hook starts: index the transcript, capture the turn, learn from it, then exit.

``python -m pi_memory.integrations.hooks.background '<job JSON>'`` with ``{"host", "event", "sessionId",
"cwd", "transcript", "userText"?, "assistantText"?}``. It is one :class:`pi_memory.session.AgentSession` for
one run (``after_run``, on ``pre-compact`` / ``session-end`` also the learning flush, on a session's first
``stop`` the flushes earlier sessions' end left undone, then ``shutdown``),
never a resident process. The learning triggers' turn counters are kept in the host session's state between
jobs (:data:`COUNTERS`), so "review every N turns" and ``flushMinTurns`` count the session's turns as pi's do,
and a ``stop`` whose turn fires a trigger runs that job (review, correction) here, as pi runs it on its worker:

* bounded: ``SIGALRM`` ends it after :data:`JOB_CEILING_S` seconds whatever it is doing (a capture model that
  hangs included); what it did not finish is picked up by the next job, the MCP server's index pass or
  ``pi-memory index-sessions``, since indexing is incremental; a review or flush it did not finish left its mark
  in the index (:mod:`pi_memory.learning.pending`), so the session's next ``stop`` or the next session of the
  project reviews those messages again;
* after the run it rebuilds the session-start context cache when the turn changed memory
  (:func:`refresh_context`), so the next session start stays on the fast path;
* one at a time per host session: a job waits up to :data:`LOCK_WAIT_S` for the one before it, and when that
  runs long it gives up (the next job, or the running one, indexes the rest). The learning jobs a turn fired run
  after the job let the session go, holding the transcript's review lock instead: the next turn's job never
  waits for a model, and counts its turn for the next review while one is running (never two at once).
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
FLUSH_LOCK_WAIT_S = 60.0  # a flush waits this long for a review of the session that is still running
FLUSH_REASONS = {"pre-compact": "compaction", "session-end": "shutdown"}
# the learning triggers' per-session counters (pi keeps them in its one bridge process; a hook job is a new
# process each turn, so they live in the host session's state between jobs)
# and the mark of the transcript's messages a review or flush has read (``reviewed``, ``refused_from``)
COUNTERS = ("turn", "turns", "tool_calls", "user_messages", "since_flush", "last_correction_turn", "reviewed",
            "refused_from")


MARK = ("reviewed", "refused_from")  # written only by a job holding the transcript's review lock


def restore_counters(learning, saved: dict) -> None:
    for key in COUNTERS:
        if isinstance(saved.get(key), int) and isinstance(getattr(learning, key, None), int):
            setattr(learning, key, saved[key])


def save_counters(host: str, sid: str, learning, keys: tuple[str, ...]) -> None:
    """Merge ``keys`` of ``learning`` into the host session's saved counters (under a short lock of their own: a
    review running after its job let the session go writes its mark while the next job writes its counters)."""
    from filelock import FileLock

    path = state.session_file(host, sid)
    with FileLock(str(path.with_suffix(".state.lock")), timeout=10):
        saved = state.read_json(path).get("learning")
        merged = dict(saved) if isinstance(saved, dict) else {}
        merged.update({k: getattr(learning, k) for k in keys if isinstance(getattr(learning, k, None), int)})
        state.update_session(host, sid, learning=merged)


def run(job: dict) -> bool:
    """One job: under the host session's lock, index the transcript, capture the turn and count it (the learning
    triggers); then, with that lock let go (the next turn's job never waits for a model), the learning jobs the
    turn fired (a review, a correction, what earlier sessions left) on this job's worker, holding the
    transcript's review lock (:func:`pi_memory.learning.pending.lock`: never two reviews of one session at once)."""
    from filelock import FileLock, Timeout

    from pi_memory.integrations.hooks.handlers import _log_to_hook_log
    from pi_memory.session import AgentSession

    host, sid = str(job.get("host") or "host"), str(job.get("sessionId") or "")
    event, transcript = job.get("event"), job.get("transcript")
    started = time.monotonic()
    _log_to_hook_log("pi_memory.index")  # a read-only data folder: the indexing and capture it skips
    _log_to_hook_log("pi_memory.learning")  # a learning job that did not run (a dead model server) and why
    session = AgentSession(job.get("cwd") or None, sid or None)
    learning, later = session.learning, []
    review, busy = None, False
    if event in FLUSH_REASONS:  # before the session's lock: the next turn's job never waits behind a flush's wait
        review, busy = _review_lock(session, event, transcript, host, sid)
    lock_path = state.session_file(host, sid).with_suffix(".lock")
    state.private_dir(lock_path.parent)
    try:
        lock = FileLock(str(lock_path), timeout=LOCK_WAIT_S)
        lock.acquire()
    except Timeout:
        state.log(f"{host} {event}: another job of session {sid} is still running; skipped")
        if review is not None:
            review.release()
        session.shutdown(1.0)
        return False
    try:
        if event == "stop":
            review, busy = _review_lock(session, event, transcript, host, sid)
        reports = len(learning.reports) if learning is not None else 0
        saved = state.read_json(state.session_file(host, sid)).get("learning") if sid else None
        if learning is not None and isinstance(saved, dict):
            restore_counters(learning, saved)
        if learning is not None and event == "stop":
            learning.review_running = busy  # another job reviews this session: the counters go on
            queue = learning._submit
            learning._submit = lambda work, label: later.append((work, label))  # run once the session is let go
        if event != "stop":
            session.learning = None  # not a turn: index only (the learning triggers count turns)
        session.after_run(transcript, user_text=str(job.get("userText") or ""),
                          assistant_text=str(job.get("assistantText") or ""),
                          source={"host": host, "session_id": sid})
        session.learning = learning
        if event == "stop" and learning is not None:
            if learning.turn == 1:  # the host session's first turn
                learning.pick_up()  # what earlier sessions' end left unreviewed (learning/pending.py)
            if review is not None and not later:
                learning.resume(transcript)  # a review of this session that a killed job left unfinished
            learning._submit = queue
        flushed = None
        if event in FLUSH_REASONS and learning is not None:
            flushed = {"queued": False, "reason": "a review of this session is still running"} if busy else \
                session.flush(FLUSH_REASONS[event], transcript)
        deadline = started + JOB_CEILING_S - 10
        session.worker.drain(max(1.0, deadline - time.monotonic()))
        if learning is not None and sid:
            save_counters(host, sid, learning, COUNTERS if review is not None else
                          tuple(k for k in COUNTERS if k not in MARK))
        if flushed is not None:
            state.log(f"{host} {event}: session {sid}: learning flush "
                      f"{'queued' if flushed['queued'] else 'not due'} ({flushed['reason']})")
    finally:
        lock.release()
    try:
        for work, label in later:  # the session is let go: the next turn's job runs meanwhile
            session.worker.submit(work, label)
        if review is not None and not later:  # nothing of the session's left to review here
            review.release()
            review = None
        finished = session.shutdown(max(1.0, deadline - time.monotonic()))
        if learning is not None and sid and review is not None:
            save_counters(host, sid, learning, MARK)
        refresh_context(job.get("cwd"))
        errors = session.worker.errors
        said = [f"{r['kind']} {r['outcome']}" + ("" if r["outcome"] in ("ok", "nothing") else f" ({r['message']})")
                for r in (learning.reports[reports:] if learning is not None else [])]
        state.log(f"{host} {event}: session {sid}: {session.indexed_files} file(s) indexed, "
                  f"{len(session.captures)} capture(s), {time.monotonic() - started:.2f} s"
                  + (f"; learning: {'; '.join(said)}" if said else "")
                  + (f"; errors: {'; '.join(errors)}" if errors else "") + ("" if finished else "; cut short"))
        return finished
    finally:
        if review is not None:
            review.release()


def _review_lock(session, event: str | None, transcript: str | None, host: str, sid: str):
    """``(the transcript's review lock, whether another job holds it)`` for a job that may review or flush it
    (``stop``: taken if free, else no review fires; a flush waits for a running review up to
    :data:`FLUSH_LOCK_WAIT_S`); ``(None, False)`` when there is nothing to review."""
    from pi_memory.learning import pending

    if session.learning is None or not transcript or event not in ("stop", *FLUSH_REASONS):
        return None, False
    try:
        held = pending.take(session.memory.settings.data_dir, transcript,
                            0.0 if event == "stop" else FLUSH_LOCK_WAIT_S)
    except OSError as exc:  # a data folder open for reading only: its learning jobs are skipped (and logged) anyway
        state.log(f"{host} {event}: session {sid}: the review lock cannot be taken: {exc}")
        return None, False
    if held is None:
        state.log(f"{host} {event}: session {sid}: a review of this session is still running; the turn is counted "
                  "for the next one")
    return held, held is None


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
