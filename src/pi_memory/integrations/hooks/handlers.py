"""What each hook event does, as thin calls into pi-memory's session lifecycle (:mod:`pi_memory.session`).

* ``session-start``: the session-start context from :mod:`pi_memory.prompt` (:func:`session_context`, the one
  place that builds it): the memory part (the curated snapshot, or the policy) is frozen per host session id
  in the hook state (:mod:`.state`), so a resumed session gets the same bytes; a ``compact`` or ``clear``
  start builds it anew (memory written since shows after a compaction, as in pi). The run parts (memory
  blocks, standing instructions) follow it.
* ``prompt``: semantic recall for the prompt (:meth:`AgentSession.recall`: fenced untrusted data within the
  recall token budget; the session is opened for this host, so recall's default sources include skills:
  :data:`pi_memory.semantic.config.HOST_RECALL_SOURCES`), after the run parts when they changed since the session
  last got them (or, in Claude Code, their pieces still owed since a session start over its cap); the prompt
  is kept as the user half of the turn the stop hook captures. A team memory server that does not answer within
  the recall's share of the time gives the model the words ``mem0_memory`` gives (carry on without team memory,
  tell the user), the fix goes to the hook log, and the next prompts do not ask it again for 30 s
  (:mod:`.team_servers`).
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

from pi_memory.integrations.hooks import state, team_servers
from pi_memory.integrations.hooks.protocol import CLAUDE_CONTEXT_CAP, RUN_PIECE_CHARS, claude_length

CACHE_VERSION = "2"  # 2: the run parts' pieces (``pieces``) are cached with them
_PKG = Path(__file__).resolve().parents[2]  # src/pi_memory
# the code a cached context was built by: a changed file (an upgrade, an edit) invalidates the cache; every module
# of the safety scanner (its rules live in many: a new rule in one of them must not be served stale)
_CODE = ("curated/snapshot.py", "curated/sanitise.py", "curated/entries.py", "prompt/context.py",
         "prompt/render.py", "prompt/pieces.py", "integrations/hooks/handlers.py")
_CODE_FOLDERS = ("safety",)


def _code_files() -> list[str]:
    return [*(str(_PKG / c) for c in _CODE),
            *(str(p) for folder in _CODE_FOLDERS for p in sorted((_PKG / folder).glob("*.py")))]


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
    from pi_memory.prompt import memory_part, run_texts
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
                    str(StandingStore.in_data_dir(memory.settings.data_dir).path), *_code_files()]
            before = state.fingerprint(deps)
            run, pieces = run_texts(memory, RUN_PIECE_CHARS, claude_length)
            value = {"memory": memory_part(memory).text, "run": run, "pieces": pieces}
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
    ``team_deadline``, ``team_wait``: see :func:`session_context`.

    Claude Code keeps one hook's context whole only up to :data:`.protocol.CLAUDE_CONTEXT_CAP` (a longer one reaches
    the model as a preview and a file path). A start over it carries the frozen part and the leading pieces of the
    run parts that fit beside it (:func:`pi_memory.prompt.pieces.run_pieces`: each whole and marked as its part, in
    order, none left out); the rest follow with the first prompts (:func:`_next_run`)."""
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
    run = _text(value.get("run"))
    context = _join(frozen, run)
    if sid:
        state.update_session(host, sid, context=frozen, runDigest=_digest(run), runNext=None, cwd=cwd)
    if host == "claude-code" and sid and claude_length(context) > CLAUDE_CONTEXT_CAP:
        # the leading pieces that fit beside the frozen part (none when the run parts are one piece); the rest,
        # owed from here on (runNext), go with the next prompts
        room = CLAUDE_CONTEXT_CAP - (claude_length(frozen) + 2 if frozen else 0)
        context = _join(frozen, _next_run(host, sid, _run_of(value), {}, room, first_always=False))
    if source in ("startup", ""):  # a new session: forget the host sessions nobody resumed for a month
        state.prune_sessions(host)
    return context


def on_prompt(host: str, payload: dict, vector_deadline: float | None = None) -> str | None:
    """Recall for the prompt. ``vector_deadline`` (a :func:`time.monotonic` value, :data:`.VECTOR_SHARE` of the
    ceiling): a query embedding not ready by then is skipped and the recall is keyword-only (logged).

    A prompt recall skips (:func:`pi_memory.semantic.prompt_gate.skip_reason`: "ok", "thanks", a ``/command``)
    is answered from the session-start cache when it is current (the run parts, when they changed since this
    host session got them), without opening memory: no settings, index or embedder load for it.

    Claude Code: the answer stays within :data:`.protocol.CLAUDE_CONTEXT_CAP`. The run parts still owed to the
    session go first (the next piece always, as a piece is at most :data:`.protocol.RUN_PIECE_CHARS`; the
    following ones while they fit beside the recall), and the recall fills the rest: its lowest-ranked lines are
    left out when it does not fit (:func:`pi_memory.retrieval.fenced.trim_recall`; logged)."""
    from pi_memory.semantic.prompt_gate import skip_reason

    sid, prompt = _text(payload.get("session_id")), _text(payload.get("prompt"))
    saved = state.read_json(state.session_file(host, sid)) if sid else {}
    cwd = _cwd(payload)
    cached = state.cached_context(cwd, CACHE_VERSION)
    if cached is not None and skip_reason(prompt) is not None:
        if sid and saved.get("lastPrompt"):  # "ok", "/compact": nothing to capture (and no scanner loaded here)
            state.update_session(host, sid, lastPrompt=None)
        return _next_run(host, sid, _run_of(cached), saved, CLAUDE_CONTEXT_CAP)
    from pi_memory.integrations.hooks import preload

    preload.start(Path(cwd), prompt, bool(saved.get("recallMarker")))  # the model loads beside the imports below
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
    session = AgentSession(cwd, sid or None, memory=memory, learn=False)  # learning runs in the stop hook's job
    learnt = team_servers.restore()  # a team server's token user, or that it was found down, by earlier hooks
    _bound_team_wait(memory, vector_deadline)
    outcome = session.recall(prompt, {RECALL_MARKER_KEY: saved.get("recallMarker")}, vector_deadline)
    team_servers.keep(learnt)
    recall = outcome.text if outcome is not None and outcome.text else ""
    room = CLAUDE_CONTEXT_CAP - (claude_length(recall) + 2 if recall else 0)
    run = _next_run(host, sid, _run_of(cached) if cached is not None else _built_run(host, session), saved, room)
    if outcome is None:
        if memory.semantic_held:
            state.log(f"{host} prompt: recall skipped: {memory.semantic_status}")
        return run
    if outcome.marker is not None and sid:
        state.update_session(host, sid, recallMarker=outcome.marker)
    if outcome.error:
        state.log(f"{host} prompt: recall failed: {outcome.error}")
    if host == "claude-code" and recall:
        recall = _fit_recall(host, recall, CLAUDE_CONTEXT_CAP - (claude_length(run) + 2 if run else 0))
    return _join(run, recall) or None


def _bound_team_wait(memory, vector_deadline: float | None) -> None:
    """A team memory server (the self-hosted backend) waited for until ``vector_deadline`` at most, so one that
    hangs is found down within the hook's time, said to the model (``RECALL_SERVER_DOWN``) and not asked again
    by the next prompts for its down window (:mod:`.team_servers`), instead of the hook being abandoned."""
    if vector_deadline is None:
        return
    service = memory.semantic()
    limit = getattr(getattr(service, "backend", None), "limit_wait", None)
    if callable(limit):
        limit(max(0.2, vector_deadline - time.monotonic()))


def _fit_recall(host: str, recall: str, room: int) -> str:
    """``recall`` within ``room`` characters (Claude Code's count), its lowest-ranked lines left out (logged)."""
    from pi_memory.retrieval.fenced import trim_recall

    fitted = trim_recall(recall, room, claude_length)
    if fitted != recall:
        dropped = recall.count("\n") - fitted.count("\n") if fitted else recall.count("\n") - 2
        state.log(f"{host} prompt: the recall was {claude_length(recall)} characters with {room} left under the "
                  f"cap; its {dropped} lowest-ranked line(s) were left out")
    return fitted


def _run_of(cached: dict) -> tuple[str, list[str]]:
    """``(run text, its pieces)`` of a cached session-start value."""
    run = _text(cached.get("run"))
    pieces = cached.get("pieces")
    if not isinstance(pieces, list) or not all(isinstance(p, str) for p in pieces):
        pieces = [run] if run else []
    return run, pieces


def _built_run(host: str, session) -> tuple[str, list[str]] | None:
    """The run parts (blocks, standing instructions) built for this prompt (no current cache), with their pieces;
    ``None`` when they could not be built (logged)."""
    from pi_memory.prompt import run_texts

    try:
        return run_texts(session.memory, RUN_PIECE_CHARS, claude_length)
    except Exception as exc:  # noqa: BLE001 - the run parts must not cost the prompt its recall
        state.log(f"{host} prompt: run parts not built: {type(exc).__name__}: {exc}")
        return None


def _next_run(host: str, sid: str, run: tuple[str, list[str]] | None, saved: dict, room: int,
              first_always: bool = True) -> str | None:
    """What of the run parts ``run`` (``(text, pieces)``) this host session is owed now (recorded), else ``None``.

    The host keeps every injection in the conversation, so run parts it has are not sent again: ``runDigest`` is
    the run text the session has (or is getting), ``runNext`` the first of its pieces not sent yet (``None``: all
    sent). A run text that changed is owed whole again. Codex gets the text whole. Claude Code gets the next piece
    (unless not ``first_always``: a session start, where the frozen part comes first), and the ones after it while
    the answer stays within ``room`` characters; the rest wait for the next prompts."""
    if not sid or run is None:
        return None
    text, pieces = run
    digest = _digest(text)
    start = saved.get("runNext") if digest == saved.get("runDigest") else 0
    if not isinstance(start, int) or isinstance(start, bool):
        return None  # the session has them
    if host != "claude-code":
        state.update_session(host, sid, runDigest=digest, runNext=None)
        return text or None
    chosen = pieces[start:start + 1] if first_always else []
    for piece in pieces[start + len(chosen):]:
        if claude_length(_join(*chosen, piece)) > room:
            break
        chosen.append(piece)
    done = start + len(chosen)
    state.update_session(host, sid, runDigest=digest, runNext=done if done < len(pieces) else None)
    if done < len(pieces):
        state.log(f"{host}: {len(chosen)} of the {len(pieces) - start} run part(s) still owed sent (pieces up to "
                  f"{done} of {len(pieces)}); the rest come with the next prompts")
    return _join(*chosen) or None


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
    except OSError as exc:  # no job file, no job: the transcript is indexed by the next job or `pi-memory index-sessions`
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
