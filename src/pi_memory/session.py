"""The agent-session lifecycle: where a host's events become calls into the capabilities.

Every host sees the same moments of an agent's life; an adapter (the pi bridge today; Claude Code / Codex
hooks and Python agents tomorrow) translates its own events into these calls and nothing else:

``start()``            open the stores; start a bounded catch-up of the session index in the background
``before_run(prompt)`` a new agent run: reset the per-run retry guard
``recall(prompt)``     semantic recall for the prompt: the fenced text to inject as a user-channel message
``after_run(...)``     index the session file as it grew; queue semantic capture of the turn
``snapshot()``         the frozen curated-memory block (built at session start and after a compaction)
``shutdown(wait)``     finish queued background work, bounded by ``wait`` seconds

Background work (index catch-up, capture) runs on ONE worker thread with its own SQLite connection, in the
order it was queued, so a slow model call never delays a tool call and two captures never interleave. After
each indexing pass the worker embeds the session turns that pass added (at most
:data:`pi_memory.semantic.turn_vectors.TURNS_PER_RUN`) and the curated entries that lack a vector, when
semantic recall includes those sources (:mod:`pi_memory.semantic.turn_vectors`).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pi_memory.runtime import Memory, open_memory

log = logging.getLogger(__name__)

CATCH_UP_MAX_FILES = 50


@dataclass
class Worker:
    """A single background thread running queued jobs in order."""

    name: str = "pi-memory-worker"
    _jobs: queue.Queue = field(default_factory=queue.Queue)
    _thread: threading.Thread | None = None
    errors: list[str] = field(default_factory=list)
    done: int = 0

    def submit(self, job: Callable[[], object], label: str) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()
        self._jobs.put((label, job))

    def _run(self) -> None:
        while True:
            label, job = self._jobs.get()
            try:
                if job is None:
                    return
                job()
                self.done += 1
            except Exception as exc:  # background work must never take the session down
                log.exception("background job %s failed", label)
                self.errors.append(f"{label}: {type(exc).__name__}: {exc}")
                del self.errors[:-20]
            finally:
                self._jobs.task_done()

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for queued jobs; True when all finished."""
        if self._thread is None:
            return True
        done = threading.Event()
        self._jobs.put(("drain", done.set))
        return done.wait(timeout)


class AgentSession:
    """One agent session of one host process."""

    def __init__(self, cwd: Path | str | None = None, session_id: str | None = None):
        self.cwd = Path(cwd) if cwd else Path.cwd()
        self.session_id = session_id
        self.memory: Memory = open_memory(self.cwd)
        self.worker = Worker()
        self.indexed_files = 0
        self.embedded: dict[str, int] = {"curated": 0, "sessions": 0}  # vectors written by the worker
        self.captures: list = []  # the latest capture reports (at most 20)

    # ------------------------------------------------------------- lifecycle
    def start(self, catch_up: bool = True) -> None:
        if catch_up:
            self.worker.submit(self._catch_up, "index catch-up")

    def before_run(self, prompt: str | None = None) -> None:
        self.memory.store.begin_turn()

    def recall(self, prompt: str, state: dict | None = None):
        """Semantic recall (a :class:`pi_memory.semantic.service.RecallOutcome`), or ``None`` when semantic
        memory is off. ``state`` holds the session's persisted recall marker (``recallFrequency: "session"``)."""
        service = self.memory.semantic()
        if service is None:
            return None
        return service.recall_for_prompt(prompt, state or {})

    def after_run(
        self,
        session_file: str | None = None,
        user_text: str = "",
        assistant_text: str = "",
        observed_at: str | None = None,
        source: dict | None = None,
    ) -> None:
        if session_file:
            self.worker.submit(lambda: self._index([session_file]), f"index {session_file}")
        if (user_text or "").strip() and (assistant_text or "").strip():
            self.worker.submit(
                lambda: self._capture(user_text, assistant_text, observed_at, source), "semantic capture"
            )

    def _background_semantic(self):
        """The worker's own semantic service (its own SQLite connection), or ``False`` when semantic memory
        is off or broken (the status already says why)."""
        if getattr(self, "_bg_semantic", None) is None:
            from pi_memory.runtime import open_semantic_or_none

            if self.memory.semantic() is None:
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
        self.worker.submit(self._close_background, "close")
        finished = self.worker.drain(wait)
        self.memory.close()
        return finished

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

            self._bg_conn = open_index(self.memory.settings.data_dir)
        return self._bg_conn

    def _catch_up(self) -> None:
        from pi_memory.index import index_paths

        before = self._last_message_id()
        stats = index_paths(self._background_conn(), None, max_files=CATCH_UP_MAX_FILES)
        self.indexed_files += stats.files_new + stats.files_appended + stats.files_replaced
        log.info("index catch-up: %s", stats.to_dict())
        self._embed(before)

    def _index(self, paths: list[str]) -> None:
        from pi_memory.index import index_paths

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
        if "curated" in wanted:
            report = tv.embed_curated(conn, embedder, project=project, limit=tv.CURATED_PER_RUN)
            self.embedded["curated"] += report.embedded
        if "sessions" in wanted:
            report = tv.embed_turns(conn, embedder, after_id=after_id, limit=tv.TURNS_PER_RUN)
            self.embedded["sessions"] += report.embedded
            if report.error:
                log.warning("session turns not embedded: %s", report.error)
