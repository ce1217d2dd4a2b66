"""What each hook event does, as thin calls into pi-memory's session lifecycle (:mod:`pi_memory.session`).

* ``session-start``: the session-start context from :mod:`pi_memory.prompt` (:func:`session_context`, the one
  place that builds it): the memory part (the curated snapshot, or the policy) is frozen per host session id
  in the hook state (:mod:`.state`), so a resumed session gets the same bytes; a ``compact`` or ``clear``
  start builds it anew (memory written since shows after a compaction, as in pi). The run parts (memory
  blocks, standing instructions) follow it.
* ``prompt``: semantic recall for the prompt (:meth:`AgentSession.recall`: fenced untrusted data within the
  recall token budget; the session is opened for this host, so recall's default sources include skills:
  :data:`pi_memory.semantic.config.HOST_RECALL_SOURCES`), after the run parts when they changed since the session last got them; the prompt
  is kept as the user half of the turn the stop hook captures.
* ``pre-compact``, ``stop``, ``session-end``: queue indexing of ``transcript_path`` (incremental) and, on
  ``stop``, capture of the turn, in a detached child process (:mod:`.background`) so the host never waits.

Imports are lazy: a session start whose inputs did not change since the last one reads one cache file and
imports nothing beyond the standard library.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from pi_memory.integrations.hooks import state
from pi_memory.integrations.hooks.protocol import CLAUDE_CONTEXT_CAP

CACHE_VERSION = "1"
_PKG = Path(__file__).resolve().parents[2]  # src/pi_memory
# the code a cached context was built by: a changed file (an upgrade, an edit) invalidates the cache
_CODE = ("curated/snapshot.py", "curated/sanitise.py", "curated/entries.py", "safety/threats.py",
         "safety/secrets.py", "safety/_secret_values.py", "safety/_threat_patterns.py", "prompt/context.py",
         "prompt/render.py",
         "integrations/hooks/handlers.py")


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _cwd(payload: dict) -> str:
    cwd = _text(payload.get("cwd")) or os.getcwd()
    return os.path.realpath(cwd)


def session_context(cwd: str, team_deadline: float | None = None, team_wait: float | None = None) -> dict:
    """What a new host session starts with, ``{"memory": the frozen part, "run": the per-run parts}``, built
    by :mod:`pi_memory.prompt` (the one call site): the memory part (the curated snapshot, or the memory policy
    in policy mode) and the run parts (memory blocks, standing instructions). Creates the default blocks when
    none exist, as a session start does. Cached with the files it was read from (:mod:`.state`).

    A team project store (``teamProjectStore``) gets ``team_wait`` seconds to answer, and never past
    ``team_deadline`` (:func:`time.monotonic`): a server that does not answer by then costs the session its
    project part only (the snapshot says it could not be reached), never the rest. Its entries live on the server, which no file fingerprint sees, so
    such a context is not cached."""
    from pi_memory.curated.team_client import bounded
    from pi_memory.prompt import memory_part, run_parts
    from pi_memory.runtime import open_memory
    from pi_memory.settings_files import settings_files
    from pi_memory.standing import StandingStore

    memory = open_memory(Path(cwd), load=False)
    team = memory.store.team_project
    try:
        with bounded(memory.store, team_wait, team_deadline):  # both reads of the store: one wait at most
            memory.store.load_from_disk()
            blocks = memory.blocks()
            try:
                blocks.ensure_defaults()
            except Exception as exc:  # noqa: BLE001 - a read-only data root must not stop the session start
                state.log(f"default memory blocks not created: {exc}")
            folders = [folder for _, folder in blocks.folders()]
            deps = [*(str(p) for p in settings_files(Path(cwd))),
                    *(str(p) for p in memory.store.files.values()), *(str(f) for f in folders),
                    *(str(p) for f in folders if f.is_dir() for p in sorted(f.glob("*.md"))),
                    str(StandingStore.in_data_dir(memory.settings.data_dir).path), *(str(_PKG / c) for c in _CODE)]
            before = state.fingerprint(deps)
            value = {"memory": memory_part(memory).text,
                     "run": "\n\n".join(p.text for p in run_parts(memory, preview=False) if p.text)}
        if team is None:
            state.store_context(cwd, CACHE_VERSION, deps, before, value)
        elif (drift := memory.store.drift("project")) is not None:
            state.log(f"session-start: the project part is missing: {drift.detail}")
        return value
    finally:
        memory.close()


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _join(*texts: str | None) -> str:
    return "\n\n".join(t for t in texts if t)


def on_session_start(host: str, payload: dict, team_deadline: float | None = None,
                     team_wait: float | None = None) -> str | None:
    """The frozen memory part (kept per host session: a resume gets the same bytes) and the run parts;
    ``team_deadline``, ``team_wait``: see :func:`session_context`."""
    sid = _text(payload.get("session_id"))
    source = _text(payload.get("source"))
    cwd = _cwd(payload)
    saved = state.read_json(state.session_file(host, sid)) if sid else {}
    value = state.cached_context(cwd, CACHE_VERSION) or session_context(cwd, team_deadline, team_wait)
    frozen = saved.get("context")
    if isinstance(frozen, str) and source not in ("compact", "clear"):
        state.log(f"{host} session-start ({source or 'no source'}): session {sid}: the frozen context again "
                  f"({len(frozen)} chars)")
    else:
        frozen = value["memory"]
    context, sent = _join(frozen, value["run"]), _digest(value["run"])
    if host == "claude-code" and frozen and value["run"] and len(context) > CLAUDE_CONTEXT_CAP and sid:
        # Claude Code keeps one hook's context whole only up to the cap (a longer one reaches the model as a
        # preview and a file path): the run parts (blocks, standing instructions) come with the first prompt
        # instead, as run parts that changed do (_changed_run), so each part arrives whole in its own reminder
        context, sent = frozen, None
    if sid:
        state.update_session(host, sid, context=frozen, runDigest=sent, cwd=cwd)
    if source in ("startup", ""):  # a new session: forget the host sessions nobody resumed for a month
        state.prune_sessions(host)
    return context


def on_prompt(host: str, payload: dict, vector_deadline: float | None = None) -> str | None:
    """Recall for the prompt. ``vector_deadline`` (a :func:`time.monotonic` value, :data:`.VECTOR_SHARE` of the
    ceiling): a query embedding not ready by then is skipped and the recall is keyword-only (logged).

    A prompt recall skips (:func:`pi_memory.semantic.prompt_gate.skip_reason`: "ok", "thanks", a ``/command``)
    is answered from the session-start cache when it is current (the run parts, when they changed since this
    host session got them), without opening memory: no settings, index or embedder load for it."""
    from pi_memory.semantic.prompt_gate import skip_reason

    sid, prompt = _text(payload.get("session_id")), _text(payload.get("prompt"))
    saved = state.read_json(state.session_file(host, sid)) if sid else {}
    cwd = _cwd(payload)
    cached = state.cached_context(cwd, CACHE_VERSION)
    if cached is not None and skip_reason(prompt) is not None:
        if sid and saved.get("lastPrompt"):  # "ok", "/compact": nothing to capture (and no scanner loaded here)
            state.update_session(host, sid, lastPrompt=None)
        return _changed_run(host, sid, _text(cached.get("run")), saved)
    if sid:  # the user half of the turn, for the capture at stop: never a credential on disk
        from pi_memory.safety import redact

        state.update_session(host, sid, lastPrompt=redact(prompt[:state.PROMPT_KEEP_CHARS]))
    from pi_memory.semantic.service import RECALL_MARKER_KEY
    from pi_memory.session import AgentSession

    _log_to_hook_log("pi_memory.semantic")
    _log_to_hook_log("pi_memory.retrieval")  # the engine's warnings ("vectors skipped") too
    _log_to_hook_log("pi_memory.index")  # a data folder opened for reading only, and what that skips
    from pi_memory.runtime import open_memory

    # the host decides recall's default sources; recall reads the index, so no curated store is read (a team
    # project server that does not answer must not cost the prompt its recall)
    memory = open_memory(Path(cwd), load=False, host=host)
    if vector_deadline is not None:  # semantic memory set up on a held index must leave the hook time to answer
        memory.semantic_wait = min(memory.semantic_wait, max(0.0, vector_deadline - time.monotonic()))
    session = AgentSession(cwd, sid or None, memory=memory)
    run = _changed_run(host, sid, _text(cached.get("run")), saved) if cached is not None else (
        _changed_run_parts(host, sid, session, saved))
    outcome = session.recall(prompt, {RECALL_MARKER_KEY: saved.get("recallMarker")}, vector_deadline)
    if outcome is None:
        if memory.semantic_held:
            state.log(f"{host} prompt: recall skipped: {memory.semantic_status}")
        return run
    if outcome.marker is not None and sid:
        state.update_session(host, sid, recallMarker=outcome.marker)
    if outcome.error:
        state.log(f"{host} prompt: recall failed: {outcome.error}")
    return _join(run, outcome.text)


def _changed_run_parts(host: str, sid: str, session, saved: dict) -> str | None:
    """The run parts (blocks, standing instructions) when they changed since this host session last got them
    (the host keeps what a hook injected in the conversation, so unchanged parts are not sent again)."""
    from pi_memory.prompt import run_parts

    try:
        run = "\n\n".join(p.text for p in run_parts(session.memory, preview=False) if p.text)
    except Exception as exc:  # noqa: BLE001 - the run parts must not cost the prompt its recall
        state.log(f"{host} prompt: run parts not built: {type(exc).__name__}: {exc}")
        return None
    return _changed_run(host, sid, run, saved)


def _changed_run(host: str, sid: str, run: str, saved: dict) -> str | None:
    """``run`` when it differs from what this host session got last (recorded), else ``None``."""
    if not sid or _digest(run) == saved.get("runDigest"):
        return None
    state.update_session(host, sid, runDigest=_digest(run))
    return run or None


def on_transcript(host: str, event: str, payload: dict) -> None:
    """Queue the background job for the transcript (and, on ``stop``, the turn) and return at once."""
    sid = _text(payload.get("session_id"))
    job = {"host": host, "event": event, "sessionId": sid, "cwd": _cwd(payload),
           "transcript": _text(payload.get("transcript_path")) or None}
    if event == "stop":
        saved = state.read_json(state.session_file(host, sid)) if sid else {}
        job["userText"] = _text(saved.get("lastPrompt"))
        job["assistantText"] = _text(payload.get("last_assistant_message"))
        if sid and saved.get("lastPrompt"):  # the capture has it now
            state.update_session(host, sid, lastPrompt=None)
    spawn_background(job)


def spawn_background(job: dict) -> None:
    """Start :mod:`.background` for ``job``, detached (its own session, no standard streams shared with the
    host), so the hook returns at once and the host never waits for, or kills, the work."""
    import subprocess

    state.log(f"{job['host']} {job['event']}: background job queued")  # creates the log, private
    log_path = state.state_dir() / "hooks.log"
    # the job (the turn's text) goes in a private file, never on the command line, where `ps` shows it to
    # every user of the machine; the job reads and deletes it
    job_file = state.state_dir() / "hooks" / "jobs" / f"{os.getpid()}-{time.time_ns()}.json"
    try:
        state.write_json(job_file, job)
    except OSError as exc:  # no job file, no job: the transcript is indexed by the next job or `pi-memory index`
        state.note_unwritable(job_file, exc)
        return
    with open(log_path, "a", encoding="utf-8") as log_fh:
        subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-m", "pi_memory.integrations.hooks.background", "--job-file", str(job_file)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log_fh, start_new_session=True,
            close_fds=True, cwd=job["cwd"] if os.path.isdir(job["cwd"]) else None,
        )


def _log_to_hook_log(name: str) -> None:
    """Send warnings of logger ``name`` (recall's: a failed or skipped query embedding) to the hook log
    (:mod:`logging` is imported here, on the recall path only)."""
    import logging

    class HookLog(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            state.log(f"{record.name}: {record.getMessage()}")

    logger = logging.getLogger(name)
    if not any(type(h).__name__ == "HookLog" for h in logger.handlers):
        logger.addHandler(HookLog(logging.WARNING))


def handle(host: str, event: str, payload: dict, vector_deadline: float | None = None,
           team_deadline: float | None = None, team_wait: float | None = None) -> str | None:
    """The context to answer with (``None``: the empty answer). ``team_deadline``, ``team_wait``: the session
    start's time for a team project server (:func:`session_context`)."""
    if event == "session-start":
        return on_session_start(host, payload, team_deadline, team_wait)
    if event == "prompt":
        return on_prompt(host, payload, vector_deadline)
    on_transcript(host, event, payload)
    return None
