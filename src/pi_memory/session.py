"""The agent-session lifecycle: where a host's events become calls into the capabilities.

Every host sees the same moments of an agent's life; an adapter (the pi bridge today; Claude Code / Codex
hooks and Python agents tomorrow) translates its own events into these calls and nothing else:

``start(every=None)``  open the stores; start a bounded catch-up of the session index in the background and,
                       with ``every`` seconds, repeat that incremental pass while the session lives
``before_run(prompt)`` a new agent run: reset the per-run retry guard
``recall(prompt)``     semantic recall for the prompt: the fenced text to inject as a user-channel message
``after_run(...)``     index the session file as it grew; queue semantic capture of the turn; count the turn
                       and its tool calls for the learning triggers (correction capture, background review)
``flush(reason)``      compaction or shutdown: queue a flush job when due (:mod:`pi_memory.learning.triggers`)
``context(...)``       what the prompt gets (:func:`pi_memory.prompt.build_context`): the frozen ``memory``
                       part (snapshot or policy, built at session start and after a compaction) and the
                       parts rebuilt at every run (memory blocks, standing instructions)
``status()``           what the background worker has done: passes, files indexed, vectors written, errors
``shutdown(wait)``     finish queued background work, bounded by ``wait`` seconds

Background work (index catch-up, capture) runs on ONE worker thread with its own SQLite connection, in the
order it was queued, so a slow model call never delays a tool call and two captures never interleave. After
each indexing pass the worker embeds the session turns that pass added (at most
:data:`pi_memory.semantic.turn_vectors.TURNS_PER_RUN`) and the curated entries that lack a vector, when
semantic recall includes those sources (:mod:`pi_memory.semantic.turn_vectors`). A job that raises is logged and
kept in :attr:`Worker.errors` (and :meth:`AgentSession.status`); the worker goes on with the next job.

Hosts: the pi bridge (one session per pi session: catch-up at ``hello``, an index pass after each run) and the
MCP server (one session per server process: catch-up at start, then a pass every ``--index-interval`` seconds,
since MCP has no "run ended" event).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pi_memory import timing
from pi_memory.curated.team_client import START_WAIT_S
from pi_memory.index.db import now_iso
from pi_memory.runtime import Memory, open_memory

log = logging.getLogger(__name__)

CATCH_UP_MAX_FILES = 50
INDEX_EVERY_S = 60.0  # MCP server's default between index passes; 2,000 unchanged transcripts: about 0.1 s a pass


@dataclass
class Worker:
    """A single background thread running queued jobs in order, plus at most one periodic job.

    ``submit`` queues a job; ``every`` also runs one job each ``seconds`` (after the queued job that is running
    when it falls due, never two at once, never piling up); ``drain`` waits for what is queued; ``stop`` ends
    the thread after what is queued. A job that raises is logged and its ``"label: Type: message"`` kept in
    ``errors`` (the last 20)."""

    name: str = "pi-memory-worker"
    _jobs: queue.Queue = field(default_factory=queue.Queue)
    _thread: threading.Thread | None = None
    _periodic: tuple[float, Callable[[], object], str] | None = None
    _due: float = 0.0  # time.monotonic() when the periodic job runs next
    errors: list[str] = field(default_factory=list)
    done: int = 0

    def submit(self, job: Callable[[], object], label: str) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()
        self._jobs.put((label, job))

    def every(self, seconds: float, job: Callable[[], object], label: str) -> None:
        """Run ``job`` every ``seconds`` (> 0), the first time ``seconds`` from now."""
        if seconds <= 0:
            raise ValueError(f"a periodic job needs an interval above 0 seconds, not {seconds}")
        self._periodic, self._due = (seconds, job, label), time.monotonic() + seconds
        self.submit(lambda: None, "schedule")  # wakes the thread so it waits for the new due time

    def stop(self, wait: float, last: Callable[[], object] | None = None, label: str = "close") -> bool:
        """End the worker: no more periodic runs, then ``last`` (clean-up) after the queued jobs, then the thread
        ends. Waits up to ``wait`` seconds for all that; returns whether it finished in time."""
        self._periodic = None
        if last is not None:
            self.submit(last, label)
        finished = self.drain(wait)
        if self._thread is not None:
            self._jobs.put(("stop", None))
        return finished

    def _run(self) -> None:
        while True:
            periodic = self._periodic
            wait = max(0.0, self._due - time.monotonic()) if periodic else None
            try:
                label, job = self._jobs.get(timeout=wait)
            except queue.Empty:
                self._run_periodic()
                continue
            try:
                if job is None:
                    return
                self._call(label, job)
            finally:
                self._jobs.task_done()
            self._run_periodic()

    def _run_periodic(self) -> None:
        periodic = self._periodic
        if periodic is not None and time.monotonic() >= self._due:
            seconds, job, label = periodic
            self._call(label, job)
            self._due = time.monotonic() + seconds

    def _call(self, label: str, job: Callable[[], object]) -> None:
        try:
            job()
            self.done += 1
        except Exception as exc:  # background work must never take the session down
            log.exception("background job %s failed", label)
            self.errors.append(f"{label}: {type(exc).__name__}: {exc}")
            del self.errors[:-20]

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for queued jobs; True when all finished."""
        if self._thread is None:
            return True
        done = threading.Event()
        self._jobs.put(("drain", done.set))
        return done.wait(timeout)


class AgentSession:
    """One agent session of one host process.

    ``memory``: the assembled system to use (a host that resolved ``--dir`` itself passes it); default
    :func:`pi_memory.runtime.open_memory` for ``cwd`` and ``host`` (``"claude-code"`` / ``"codex"`` from their
    hooks: recall's default sources depend on it), whose first read of a team project store is a start's
    (:data:`pi_memory.curated.team_client.START_WAIT_S`, not its ``timeoutSeconds``). ``learn=False``: a process
    that only recalls (the prompt hook) opens no learning triggers (no chat model is built for them):
    :attr:`learning` is ``None``, as when learning is off."""

    def __init__(self, cwd: Path | str | None = None, session_id: str | None = None, memory: Memory | None = None,
                 host: str | None = None, learn: bool = True):
        self.cwd = Path(cwd) if cwd else Path.cwd()
        self.session_id = session_id
        self.memory: Memory = memory if memory is not None else open_memory(self.cwd, host=host,
                                                                              team_wait=START_WAIT_S)
        # The session never checks the index at open: start() runs the check on a thread of its own.
        self.memory.index_check = False
        self.integrity: dict | None = None  # the background integrity check's report (quickCheckOnOpen)
        self._check_thread: threading.Thread | None = None
        self.worker = Worker()
        self.indexed_files = 0
        self.embedded: dict[str, int] = {"curated": 0, "sessions": 0}  # vectors written by the worker
        self.captures: list = []  # the latest capture reports (at most 20)
        self.index_every: float | None = None  # seconds between periodic index passes (None: none)
        self.passes = 0  # index passes finished (catch-up and periodic)
        self.last_pass: dict | None = None  # {"at": ISO time, "seconds", "files", "messagesAdded", "deferred"}
        self.embed_error: str | None = None  # the latest embedding failure (logged once as a warning)
        self._embed_warned = False
        self._stop = threading.Event()  # set when shutdown gave up waiting: embedding passes stop between batches
        self.learning = self._open_learning() if learn else None

    # ------------------------------------------------------------- lifecycle
    def start(self, catch_up: bool = True, every: float | None = None, dream: bool = True) -> None:
        """Queue the catch-up pass (at most :data:`CATCH_UP_MAX_FILES` changed transcripts, the newest, then
        their vectors) and, with ``every`` seconds (> 0), repeat the same incremental pass on that interval
        until :meth:`shutdown` (files a pass deferred are read by the next one); with ``dream``, check the dream
        gate on the worker after that. Also creates the default memory blocks when none exist. Returns at once."""
        try:
            self.memory.blocks().ensure_defaults()
        except Exception as exc:  # a read-only data root must not stop the session
            log.warning("default memory blocks not created: %s", exc)
        if self.memory.settings.quick_check_on_open:
            self.start_integrity_check()
        if catch_up:
            self.worker.submit(self._timed("session-backfill.callback", self._catch_up), "index catch-up")
        if dream and self.learning is not None:
            self.learning.start()  # the dream gate, on the worker after the catch-up
        if every is not None and every > 0:
            self.index_every = float(every)
            self.worker.every(self.index_every, self._catch_up, "periodic index pass")

    def start_integrity_check(self) -> None:
        """``quickCheckOnOpen``: check the index on a daemon thread of its own (read-only connection), so neither
        the session nor the worker waits for it; the report goes to :attr:`integrity`, a damaged index is
        logged as a warning. Once per session."""
        if self._check_thread is not None:
            return

        def run() -> None:
            from pi_memory.index.integrity import check_integrity

            report = check_integrity(self.memory.settings.data_dir)
            self.integrity = report.to_dict()
            if not report.ok:
                log.warning("the search index failed its integrity check (%s); the next search repairs it, or "
                            "run `pi-memory reindex` to rebuild it now", report.detail)

        self._check_thread = threading.Thread(target=run, name="pi-memory-integrity-check", daemon=True)
        self._check_thread.start()

    def status(self) -> dict:
        """The background work so far (camelCase, JSON-ready): ``{"indexEverySeconds": float | None,
        "passes": int, "lastPass": dict | None, "indexedFiles": int, "embedded": {"curated": int, "sessions":
        int}, "embedError": str | None, "errors": [str]}`` (``errors``: the last 20 failed jobs). The integrity check's
        report is :attr:`integrity` (the pi status line shows a damaged index)."""
        return {"indexEverySeconds": self.index_every, "passes": self.passes, "lastPass": self.last_pass,
                "indexedFiles": self.indexed_files, "embedded": dict(self.embedded),
                "embedError": self.embed_error, "errors": list(self.worker.errors)}

    def learning_status(self) -> dict:
        """The learning triggers: model status line, counters, the latest job reports (JSON-ready)."""
        if self.learning is None:
            return {"model": self.memory.learning_status or "learning is off"}
        return self.learning.status()

    def context(self, prompt: str | None = None):
        """Every prompt part this session gets (a :class:`pi_memory.prompt.SessionContext`)."""
        from pi_memory.prompt import build_context

        return build_context(self.memory, prompt=prompt)

    def before_run(self, prompt: str | None = None) -> None:
        self.memory.store.begin_turn()

    def recall(self, prompt: str, state: dict | None = None, vector_deadline: float | None = None,
               as_of: str | None = None):
        """Semantic recall (a :class:`pi_memory.semantic.service.RecallOutcome`), or ``None`` when semantic
        memory is off. ``state`` holds the session's persisted recall marker (``recallFrequency: "session"``).
        ``vector_deadline`` (a :func:`time.monotonic` value): keyword-only recall when the query vector is not
        ready by then (the prompt hook's time ceiling). ``as_of``: the turn's time (default now)."""
        service = self.memory.semantic()
        if service is None:
            return None
        return service.recall_for_prompt(prompt, state or {}, vector_deadline=vector_deadline, as_of=as_of)

    def after_run(
        self,
        session_file: str | None = None,
        user_text: str = "",
        assistant_text: str = "",
        observed_at: str | None = None,
        source: dict | None = None,
        tool_calls: int = 0,
    ) -> None:
        if session_file:
            self.worker.submit(self._timed("live-index.callback", lambda: self._index([session_file])),
                               f"index {session_file}")
        if (user_text or "").strip() and (assistant_text or "").strip():
            self.worker.submit(self._timed("capture", lambda: self._capture(user_text, assistant_text, observed_at,
                                                                            source)), "semantic capture")
        if self.learning is not None:
            self.learning.after_run(session_file, user_text or "", tool_calls)

    def flush(self, reason: str, session_file: str | None = None, wait: float = 0.0) -> dict:
        """Compaction or shutdown: queue a flush of what the session taught when it is due (``{"queued",
        "reason"}``); with ``wait`` > 0, wait at most that many seconds for the worker (``"finished"``)."""
        if self.learning is None:
            return {"queued": False, "reason": self.memory.learning_status or "learning is off"}
        result = self.learning.flush(reason, session_file)
        if result["queued"] and wait > 0:
            result["finished"] = self.worker.drain(wait)
        return result

    def _open_learning(self):
        """The session's learning triggers, or ``None`` when the learning settings are invalid."""
        if self.memory.learning is None:
            return None
        from pi_memory.learning.triggers import SessionLearning

        model, status = self.memory.learning_model("review")
        if model is not None:
            model.close()
        return SessionLearning(self.memory.learning, self._background_learner, self.worker.submit,
                               (model is not None, status), self.memory.settings.data_dir, self.session_id)

    def _background_learner(self):
        """The worker's learner (its own connection and store), built on the worker thread; ``None`` when the
        data folder is open for reading only (a job would call the model, then fail to keep anything)."""
        if self._read_only("learning jobs"):
            return None
        if getattr(self, "_bg_learner", None) is None:
            self._bg_learner = self.memory.learner(self._background_conn())
        return self._bg_learner

    def _background_semantic(self):
        """The worker's own semantic service (its own SQLite connection), or ``False`` when semantic memory
        is off or broken (the status already says why), or not open yet because another process held the index
        (asked again at the next capture)."""
        if getattr(self, "_bg_semantic", None) is None:
            from pi_memory.runtime import open_semantic_or_none

            if self.memory.semantic() is None:
                if self.memory.semantic_held:
                    return False
                self._bg_semantic = False
            else:
                self._bg_semantic = open_semantic_or_none(self.memory, background_reembed=False)
        return self._bg_semantic

    def _capture(self, user_text: str, assistant_text: str, observed_at: str | None, source: dict | None) -> None:
        """Capture on the worker with the worker's own service; the session's main service sees the new
        memories through the backend's change sequence."""
        if not self._background_semantic():
            return
        report = self._bg_semantic.capture(user_text, assistant_text, observed_at, source)
        self.captures.append(report)
        del self.captures[:-20]
        if report.errors:
            log.warning("semantic capture: %s", "; ".join(report.errors))

    def shutdown(self, wait: float = 2.0) -> bool:
        """Stop periodic passes, finish queued work (at most ``wait`` seconds), close the stores. Returns whether
        the queued work finished; when it did not, a running embedding pass stops at its next batch and the
        worker thread (a daemon) is left to end with the process."""
        with timing.span("shutdown.index-waits"):
            finished = self.worker.stop(wait, last=self._close_background)
        if not finished:
            self._stop.set()
        with timing.span("shutdown.database-close"):
            self.memory.close()
        return finished

    @staticmethod
    def _timed(name: str, job: Callable[[], object]) -> Callable[[], object]:
        """``job`` as a timing span (``PI_TIMING=1``), measured where it runs: on the worker."""
        def run() -> object:
            with timing.span(name):
                return job()
        return run

    def _close_background(self) -> None:
        conn, self._bg_conn = getattr(self, "_bg_conn", None), None
        if conn is not None:
            conn.close()
        service, self._bg_semantic = getattr(self, "_bg_semantic", None), None
        if service:
            service.close()

    # ------------------------------------------------------------ background
    def _background_conn(self):
        """The worker's own connection (sqlite3 connections stay on the thread that opened them)."""
        if getattr(self, "_bg_conn", None) is None:
            from pi_memory.index import open_index

            self._bg_conn = open_index(self.memory.settings.data_dir, check=self.memory.index_check)
        return self._bg_conn

    def _read_only(self, what: str) -> bool:
        """True when the worker's index is open for reading only, so ``what`` is skipped (logged once)."""
        from pi_memory.index.read_only import skipped

        return skipped(self._background_conn(), what)

    def _catch_up(self) -> None:
        from pi_memory.index import index_paths

        if self._read_only("indexing session transcripts"):
            return
        self.memory.mirror_hand_edits(self._background_conn())  # a store edited by hand while the host runs
        before = self._last_message_id()
        stats = index_paths(self._background_conn(), None, max_files=CATCH_UP_MAX_FILES)
        files = stats.files_new + stats.files_appended + stats.files_replaced
        self.indexed_files += files
        self.passes += 1
        self.last_pass = {"at": now_iso(), "seconds": round(stats.seconds, 3), "files": files,
                          "messagesAdded": stats.messages_added, "deferred": stats.files_deferred}
        log.log(logging.INFO if files or stats.files_failed else logging.DEBUG, "index pass: %s", stats.to_dict())
        self._embed(before)

    def _index(self, paths: list[str]) -> None:
        from pi_memory.index import index_paths

        if self._read_only("indexing session transcripts"):
            return
        before = self._last_message_id()
        stats = index_paths(self._background_conn(), paths)
        self.indexed_files += stats.files_new + stats.files_appended + stats.files_replaced
        self._embed(before)

    def _last_message_id(self) -> int:
        from pi_memory.semantic.turn_vectors import max_message_id

        return max_message_id(self._background_conn())

    def _embed(self, after_id: int) -> None:
        """Vectors for the turns indexed since ``after_id`` and for curated entries without one, when semantic
        recall includes those sources. A failure is logged; recall then finds those rows by keyword."""
        main = self.memory.semantic()
        wanted = set(main.settings.recall_sources) & {"curated", "sessions"} if main is not None else set()
        service = self._background_semantic() if wanted else None
        embedder = getattr(service.backend, "embedder", None) if service else None
        if embedder is None:
            return
        from pi_memory.semantic import turn_vectors as tv

        project = service.scope.project_id
        conn = self._background_conn()
        reports = []
        if "curated" in wanted:
            reports.append(tv.embed_curated(conn, embedder, project=project, limit=tv.CURATED_PER_RUN,
                                            stop=self._stop))
        if "sessions" in wanted and not (reports and reports[-1].error):
            reports.append(tv.embed_turns(conn, embedder, after_id=after_id, limit=tv.TURNS_PER_RUN, stop=self._stop))
        for report in reports:
            self.embedded[report.source] += report.embedded
            if report.stopped is not None:  # a write failed (busy, full disk): the next run goes on from there
                log.info("%s vectors not written now: %s", report.source, report.stopped)
        error = next((r.error for r in reports if r.error), None)
        if error and not self._embed_warned:  # said once; later passes try again quietly
            self._embed_warned = True
            log.warning("%s not embedded: %s. Keyword search still finds them; fix the embedder settings and "
                        "run `pi-memory semantic embed-sessions` to catch up.", reports[-1].source, error.rstrip("."))
        elif error:
            log.debug("embedding failed again: %s", error)
        if error or any(r.embedded for r in reports):  # the latest failure, until vectors are written again
            self.embed_error = error
