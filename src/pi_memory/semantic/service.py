"""One object per host session that ties settings, backend, embedder, chat model, recall and capture together.

Hosts (the pi bridge, the MCP server, the CLI, ``pi-memory serve``) call :func:`open_semantic` once and then:

* before each agent run: :meth:`SemanticService.recall_for_prompt` → inject ``outcome.text`` as a user-channel
  message (never the system prompt) and, when ``outcome.marker`` is not ``None``, persist it in the session
  under :data:`RECALL_MARKER_KEY` and pass the persisted values back as ``session_state`` next time
  (``recallFrequency: "session"`` searches once per persistent session; the first attempt counts even when
  it finds nothing or fails, as the seed specifies);
* after each turn: :meth:`SemanticService.capture` (off without a chat model: the report says why; recall
  keeps working);
* for people: :meth:`SemanticService.status`.

Nothing here raises on a model or backend failure during recall or capture: the outcome or report carries the
error, logged and counted in ``stats`` (this process) and the index's job outcomes (:mod:`.outcomes`, read by
``pi-memory semantic status``); turns capture's own rules skip are counted, those the settings skip are not.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_memory import safety
from pi_memory.retrieval.engine import (
    RecallHit,
    format_recall,
    has_evidence,
    keyword_coverage,
    keywords_needed,
    recall,
    script_floor,
    skip_reason,
)
from pi_memory.retrieval.lang import evidence_terms
from pi_memory.semantic import outcomes
from pi_memory.semantic.backend import RECALL_SERVER_DOWN, BackendDownError, SemanticBackend
from pi_memory.semantic.backends.build import build_backend  # re-exported: open_semantic's, and the hosts'
from pi_memory.semantic.config import SemanticSettings, host_recall_sources, load_semantic_settings
from pi_memory.semantic.models import (
    CaptureReport,
    HistoryEvent,
    Scope,
    SemanticHit,
    SemanticMemory,
    normalise_text,
    now_iso,
)

if TYPE_CHECKING:
    from pi_memory.semantic.dedup import DedupReport

log = logging.getLogger(__name__)

RECALL_MARKER_KEY = "pi-memory.semantic.recalled"
_AUTO: Any = object()


class RefusedError(ValueError):
    """A write was refused (threat pattern); the message says why and what to do instead."""


def refusal(pattern: str) -> str:
    """Why a semantic memory was not stored, and what to do instead."""
    return (f"Not saved: the text matches the threat pattern {pattern}. Semantic memories are recalled into later "
            "conversations, so they must read as plain facts, not as instructions to a model. Rephrase it as a "
            "fact (e.g. \"User prefers X\") without that wording.")


@dataclass
class RecallOutcome:
    """``text``: what to inject (``None``: nothing); ``marker``: the value to persist under
    :data:`RECALL_MARKER_KEY` (``None``: persist nothing); ``reason``: why nothing was injected, or ``"ok"``;
    ``hits``: what was found; ``error``: a failure message; ``latency_ms``: wall time."""

    text: str | None
    marker: str | None = None
    reason: str = "ok"
    hits: list[RecallHit] = field(default_factory=list)
    error: str | None = None
    latency_ms: float = 0.0


class SemanticService:
    """Semantic memory for one session; build it with :func:`open_semantic` (module docstring)."""

    def __init__(self, settings: SemanticSettings, backend: SemanticBackend, scope: Scope, *, model: Any = _AUTO,
                 model_status: str = "", cwd: Path | None = None, conn: Any = None,
                 agent_dir: Path | None = None, data_dir: Path | None = None,
                 skills: Callable[[], Any] | None = None) -> None:
        self.settings = settings
        self.skills = skills  # () -> the skills recall ranks (its "skills" source); None: none
        self.backend = backend
        self.scope = scope
        self.cwd = cwd
        self.conn = conn if conn is not None else getattr(backend, "conn", None)
        self._agent_dir = agent_dir
        self._model = model
        self._model_status = model_status
        self._lock = threading.Lock()
        self.stats = {"recalls": 0, "recall_errors": 0, "captures": 0, "capture_errors": 0, "facts_blocked": 0,
                      "captures_skipped": 0}
        self.reembed_thread: threading.Thread | None = None
        self._data_dir = data_dir
        self._own_conn: Any = None  # the index, opened for job outcomes when the backend holds no connection

    def _conn_lock(self) -> Any:
        """The backend's connection lock when outcomes share its connection (never two statements at once)."""
        lock = getattr(self.backend, "lock", None) if self.conn is getattr(self.backend, "conn", None) else None
        return lock if lock is not None else contextlib.nullcontext()

    def outcomes_conn(self) -> Any:
        """The index connection job outcomes go to (the backend's, else one opened from the data folder), or
        ``None`` when there is none (logged)."""
        if self.conn is not None:
            return self.conn
        if self._own_conn is None and self._data_dir is not None:
            from pi_memory.index import open_index

            try:
                self._own_conn = open_index(self._data_dir, check=False)  # checked by whoever opened it first
            except Exception as exc:  # noqa: BLE001 - bookkeeping must not break capture
                log.warning("job outcomes not recorded: the index could not be opened: %s", exc)
                self._data_dir = None
        return self._own_conn

    # --- model ---------------------------------------------------------------------------------------------
    @property
    def model(self) -> Any:
        """The chat model used for capture, resolved on first use (``None`` when none is configured)."""
        with self._lock:
            if self._model is _AUTO:
                from pi_memory.llm import resolve_chat_model

                self._model, self._model_status = resolve_chat_model(self.cwd, self._agent_dir)
            return self._model

    @property
    def model_status(self) -> str:
        model = self.model
        if self._model_status:
            return self._model_status
        return f"capture on: {model.describe()}" if model is not None else "capture off: no model given"

    # --- recall --------------------------------------------------------------------------------------------
    def recall_for_prompt(self, prompt: str, session_state: Mapping[str, Any] | None = None, *,
                          vector_deadline: float | None = None, as_of: str | None = None) -> RecallOutcome:
        """What to inject before the agent answers ``prompt``; see the module docstring for the marker.
        ``vector_deadline``: see :func:`~pi_memory.retrieval.engine.recall` (keyword-only when the query vector
        is late). ``as_of``: the turn's time (recall's ``as_of``; default now)."""
        s = self.settings
        if not s.enabled or not s.auto_recall:
            return RecallOutcome(None, reason="autoRecall is off")
        if skip_reason(prompt) is not None:
            return RecallOutcome(None, reason="trivial prompt")
        marker = None
        if s.recall_frequency == "session":
            if session_state and session_state.get(RECALL_MARKER_KEY):
                return RecallOutcome(None, reason="already recalled in this session")
            marker = now_iso()
        start = time.perf_counter()
        self.stats["recalls"] += 1
        try:
            hits = self.recall_hits(prompt, vector_deadline=vector_deadline, as_of=as_of)
            text = format_recall(hits, s.recall_token_budget) or None
        except BackendDownError as exc:  # the model carries on without team memory and tells the user; the fix
            return self._server_down(exc, start, marker)  # is for a person: the log
        except Exception as exc:  # noqa: BLE001 - recall must never break the agent run
            self.stats["recall_errors"] += 1
            log.warning("semantic recall failed: %s", exc, exc_info=True)
            conn = self.outcomes_conn()
            if conn is not None:
                with self._conn_lock():
                    outcomes.record_recall_error(conn, f"{type(exc).__name__}: {exc}", self.scope.project_id)
            return RecallOutcome(None, marker, "error", error=str(exc),
                                 latency_ms=round((time.perf_counter() - start) * 1000, 2))
        return RecallOutcome(text, marker, "ok" if text else "no matches", hits,
                             latency_ms=round((time.perf_counter() - start) * 1000, 2))

    def _server_down(self, exc: BackendDownError, start: float, marker: str | None) -> RecallOutcome:
        """The outcome of a recall the team server could not answer: :data:`RECALL_SERVER_DOWN` for the model
        (the tool's words), the error (how to fix it) in the log and the job outcomes; the attempt counts for
        ``recallFrequency: "session"`` as a failed one does."""
        self.stats["recall_errors"] += 1
        log.warning("semantic recall went without team memory: %s", exc)
        conn = self.outcomes_conn()
        if conn is not None:
            with self._conn_lock():
                outcomes.record_recall_error(conn, f"{type(exc).__name__}: {exc}", self.scope.project_id)
        return RecallOutcome(RECALL_SERVER_DOWN, marker, "server_down", error=str(exc),
                             latency_ms=round((time.perf_counter() - start) * 1000, 2))

    def recall_hits(self, prompt: str, sources: list[str] | None = None, *,
                    vector_deadline: float | None = None, as_of: str | None = None) -> list[RecallHit]:
        """The hits recall would inject for ``prompt`` (no trivial-prompt check: see :func:`skip_reason`), with
        the settings' ``topK``, ``recallSources`` (or ``sources``) and ``recallMinSimilarity``. Raises
        ``ValueError`` for an unknown source; backend errors propagate."""
        s = self.settings
        include = sources or s.recall_sources
        skills = self.skills() if "skills" in include and self.skills is not None else None
        return recall(self.backend, prompt, scope=self.scope, top_k=s.top_k, include=include,
                      conn=self.conn, min_similarity=s.recall_min_similarity, vector_deadline=vector_deadline,
                      as_of=as_of, skills=skills)

    def recall_preview(self, prompt: str, sources: list[str] | None = None, as_of: str | None = None) -> dict[str, Any]:
        """What recall would inject for ``prompt``, trivial-prompt check included: ``{"prompt", "skipped",
        "reason", "hits": [RecallHit], "text"}`` (``reason``: why it was skipped, else ``None``). The one preview
        behind ``pi-memory semantic recall`` and the memory inspector. ``as_of``: the moment asked at (default
        now; :func:`pi_memory.retrieval.recall`). Raises ``ValueError`` for an unknown source or an unreadable
        ``as_of``; backend errors propagate."""
        prompt = safety.replace_unencodable(prompt)  # a lone surrogate from Python code: U+FFFD, as hosts do
        skipped = skip_reason(prompt)
        if skipped is not None:
            return {"prompt": prompt, "skipped": True, "reason": skipped, "hits": [], "text": ""}
        hits = self.recall_hits(prompt, sources, as_of=as_of)
        return {"prompt": prompt, "skipped": False, "reason": None, "hits": hits,
                "text": format_recall(hits, self.settings.recall_token_budget)}

    # --- capture -------------------------------------------------------------------------------------------
    def capture(self, user_text: str, assistant_text: str, observed_at: str | datetime | None = None,
                source: dict[str, Any] | None = None, *, force: bool = False) -> CaptureReport:
        """Capture one turn (honours ``autoCapture`` unless ``force``). Never raises."""
        if not self.settings.enabled:
            return CaptureReport(status="skipped", message="semantic memory is off (pi-memory.semantic: false)")
        if not self.settings.auto_capture and not force:
            return CaptureReport(status="skipped", message="autoCapture is off")
        from pi_memory.index.read_only import read_only, skipped

        if skipped(getattr(self.backend, "conn", None), "capture"):  # before any model call: nothing could be kept
            problem = read_only(self.backend.conn)
            return CaptureReport(status="skipped", skip_rule="read-only", message=problem.message if problem else "")
        model = self.model
        if model is None:
            return CaptureReport(status="skipped", message=self.model_status)
        self.stats["captures"] += 1
        try:
            from pi_memory.semantic.capture import (
                capture_turn,  # with the LLM clients: not on the recall path
            )

            report = capture_turn(self.backend, model, user_text=user_text, assistant_text=assistant_text,
                                  scope=self.scope, observed_at=observed_at, source=source,
                                  custom_instructions=self.settings.custom_instructions,
                                  max_input_tokens=self.settings.capture_max_input_tokens)
        except Exception as exc:  # noqa: BLE001 - a capture failure must not break the host
            log.warning("semantic capture failed: %s", exc, exc_info=True)
            report = CaptureReport(status="error", errors=[f"capture failed: {type(exc).__name__}: {exc}"])
        if report.errors:
            self.stats["capture_errors"] += len(report.errors)
        self.stats["facts_blocked"] += report.blocked_facts
        self.stats["captures_skipped"] += report.status == "skipped"
        conn = self.outcomes_conn()
        if conn is not None:
            with self._conn_lock():
                outcomes.record_capture(conn, report, self.scope.project_id)
        return report

    # --- direct operations (tool, CLI) ---------------------------------------------------------------------
    def search(self, query: str, top_k: int | None = None, *, floor: bool = True) -> list[SemanticHit]:
        """The ``top_k`` best active memories for ``query``. With ``floor`` (default) only those with evidence
        of their own, by recall's rule (:func:`pi_memory.retrieval.engine.has_evidence`: a cosine of at least
        ``recallMinSimilarity``, or half of the query's keyword terms in the text), so a query unrelated to
        every memory (``🤖``) finds nothing instead of "the best of what there is"; ``floor=False`` returns
        the ranked list as it is. ``pi-memory semantic search`` (a person) uses the floor (``--no-floor`` to
        drop it); the ``mem0_memory`` tool does not: a model that searches explicitly reads the scores, and
        the floor, tuned against injecting noise, misses indirect matches (``benchmarks/recall_floor.py``)."""
        hits = self.backend.search(query, scope=self.scope, top_k=top_k or self.settings.top_k)
        if not floor:
            return hits
        terms = evidence_terms(query)  # recall's evidence in every language, and its per-script floor
        floor_value = script_floor(query, self.settings.recall_min_similarity)
        needed, kept = keywords_needed(terms), []
        for hit in hits:
            judged = RecallHit.from_semantic(hit)
            judged.coverage, judged.needed = keyword_coverage(terms, hit.memory.text), needed
            kept += [hit] if has_evidence(judged, floor_value) else []
        return kept

    def add(self, text: str, *, source: dict[str, Any] | None = None) -> tuple[SemanticMemory, bool]:
        """Store ``text`` verbatim; ``(memory, created)`` -- ``created`` is False for a duplicate. Raises
        :class:`RefusedError` for text that trips the threat scanner, ``ValueError`` for empty text."""
        text = self._checked(text)
        key = normalise_text(safety.redact(text or "").strip())
        before = {h.memory.id for h in self.backend.similar(text, scope=self.scope, top_k=3)
                  if normalise_text(h.memory.text) == key}
        mem = self.backend.add(text, scope=self.scope, source=source or {"kind": "api"})
        return mem, mem.id not in before

    def update(self, memory_id: str, text: str, reason: str | None = None) -> SemanticMemory:
        """Replace active memory ``memory_id`` by ``text`` (the old one superseded, history kept); raises as
        :meth:`add`, and ``MemoryNotFoundError`` / ``MemoryChangedError`` for an id not active in this scope."""
        return self.backend.update(memory_id, self._checked(text), scope=self.scope, reason=reason)

    @staticmethod
    def _checked(text: str) -> str:
        from pi_memory.semantic.embedded import too_long

        if isinstance(text, str) and (long := too_long(text)) is not None:  # before the scan and the embedding
            raise ValueError(long)
        text = safety.replace_unencodable(text)  # a lone surrogate cannot be embedded or stored: U+FFFD
        if threats := safety.scan_threats(text or ""):
            raise RefusedError(refusal(threats[0].id))
        return text

    def list(self, limit: int = 100, include_superseded: bool = False) -> list[SemanticMemory]:
        return self.backend.get_all(scope=self.scope, limit=limit, include_superseded=include_superseded)

    def get(self, memory_id: str) -> SemanticMemory | None:
        return self.backend.get(memory_id, scope=self.scope)

    def delete(self, memory_id: str, reason: str | None = None) -> bool:
        return self.backend.delete(memory_id, scope=self.scope, reason=reason)

    def history(self, memory_id: str) -> list[HistoryEvent]:
        return self.backend.history(memory_id, scope=self.scope)

    def dedup(self, apply: bool = False) -> DedupReport:
        from pi_memory.semantic.dedup import dedup

        return dedup(self.backend, self.scope, apply=apply)

    def reembed(self, progress: Callable[[int, int], None] | None = None, *, prune: bool = False) -> Any:
        """Re-embed memories missing a vector of the current model (embedded backend only)."""
        if not hasattr(self.backend, "reembed"):
            raise ValueError(f"the {self.backend.name} backend embeds on its server; nothing to do here")
        return self.backend.reembed(progress, prune=prune)

    def start_background_reembed(self) -> bool:
        """Start re-embedding on a daemon thread when memories lack a vector of the current model."""
        if not hasattr(self.backend, "stale_count") or self.reembed_thread is not None:
            return False
        if self.backend.stale_count() == 0:
            return False
        from pi_memory.index.read_only import skipped

        if skipped(getattr(self.backend, "conn", None), "re-embedding semantic memories"):
            return False
        self.reembed_thread, _stop = self.backend.start_reembed()
        return True

    def warm(self) -> None:
        """Load the vectors recall searches: the scope's semantic memories, and the curated entries' and
        session turns' when recall includes them (:func:`pi_memory.semantic.sources.warm`)."""
        self.backend.warm(self.scope)
        embedder = getattr(self.backend, "embedder", None)
        if self.conn is not None and embedder is not None:
            from pi_memory.semantic import sources

            sources.warm(self.conn, embedder, self.scope, self.settings.recall_sources)

    # --- status --------------------------------------------------------------------------------------------
    def status_info(self) -> dict[str, Any]:
        s = self.settings
        info: dict[str, Any] = {
            "enabled": s.enabled, "backend": self.backend.name, "scope": self.scope.key,
            "userIdScope": s.user_id_scope, "memoryMode": s.memory_mode, **s.controls(), "topK": s.top_k,
            "recallFrequency": s.recall_frequency, "recallTokenBudget": s.recall_token_budget,
            "recallMinSimilarity": s.recall_min_similarity, "recallSources": list(s.recall_sources),
            "captureMaxInputTokens": s.capture_max_input_tokens, "capture": self.model_status,
            "stats": dict(self.stats),
            "settings": list(s.sources),
        }
        if hasattr(self.backend, "count"):
            info["memories"] = {st: self.backend.count(scope=self.scope, status=st)
                                for st in ("active", "superseded", "deleted")}
        embedder = getattr(self.backend, "embedder", None)
        if embedder is not None:
            info["embedder"] = {"model": str(embedder.model_name), "staleMemories": self.backend.stale_count(),
                                "vectorsByModel": self.backend.models()}
        disclosure = getattr(self.backend, "disclosure", None)
        if disclosure:
            info["disclosure"] = disclosure
        info["captureActive"] = bool(s.enabled and s.auto_capture and self.model is not None)
        conn = self.outcomes_conn()
        if conn is not None:
            try:
                with self._conn_lock():
                    info["jobs"] = outcomes.summary(conn)
            except sqlite3.Error as exc:
                info["jobs"] = {"error": f"job outcomes could not be read: {exc}"}
        return info

    def status(self, info: dict[str, Any] | None = None) -> str:
        """A few lines for people: backend, scope, mode, counts, embedder, capture state (of ``info``, a
        :meth:`status_info` just read, when given: it counts every memory)."""
        i = info if info is not None else self.status_info()
        lines = [f"semantic memory: {'on' if i['enabled'] else 'off'} (backend {i['backend']})",
                 f"scope: {i['scope']} (userIdScope {i['userIdScope']})",
                 f"mode: {self.settings.describe(capture_model=i['captureActive'] or not self.settings.auto_capture)}; topK {i['topK']}; recallFrequency {i['recallFrequency']}; "
                 f"recall budget {i['recallTokenBudget']} tokens; similarity floor {i['recallMinSimilarity']}; "
                 f"sources {', '.join(i['recallSources'])}"]
        if "memories" in i:
            m = i["memories"]
            lines.append(f"memories in this scope: {m['active']} active, {m['superseded']} superseded, "
                         f"{m['deleted']} deleted")
        if "embedder" in i:
            e = i["embedder"]
            stale = f"; {e['staleMemories']} waiting for re-embedding (`pi-memory semantic reembed`)" \
                if e["staleMemories"] else ""
            lines.append(f"embedder: {e['model']}{stale}")
        lines.append(i["capture"] + (f"; turns read up to {i['captureMaxInputTokens']:,} input tokens "
                                     "(captureMaxInputTokens)" if i["captureActive"] else ""))
        st = i["stats"]
        if st["recalls"] or st["captures"]:
            lines.append(f"this process: {st['recalls']} recall(s), {st['recall_errors']} failed; {st['captures']} "
                         f"capture(s) ({st['captures_skipped']} skipped), {st['capture_errors']} error(s), "
                         f"{st['facts_blocked']} fact(s) blocked")
        jobs = i.get("jobs") or {}
        lines.extend([jobs["error"]] if "error" in jobs else outcomes.status_lines(jobs))
        if i.get("disclosure"):
            lines.append(i["disclosure"])
        return "\n".join(lines)

    def close(self) -> None:
        closer = getattr(self.backend, "close", None)
        if callable(closer):
            closer()
        own, self._own_conn = self._own_conn, None
        if own is not None:
            own.close()


def open_semantic(settings: SemanticSettings | None = None, cwd: Path | str | None = None, *,
                  data_dir: Path | str | None = None, model: Any = _AUTO, backend: SemanticBackend | None = None,
                  embedder: Any = None, conn: Any = None, agent_dir: Path | None = None,
                  background_reembed: bool = True, warm: bool = True,
                  index_check: bool | None = None, host: str | None = None,
                  skills: Callable[[], Any] | None = None, migrate_wait: float | None = None) -> SemanticService:
    """Build the service for a session started in ``cwd`` (default: the process's).

    ``settings``: default :func:`~pi_memory.semantic.config.load_semantic_settings`. ``data_dir``: the index
    folder (default: the configured data root, :func:`pi_memory.config.load_settings`). ``model``: a chat model,
    ``None`` for none, or omitted to resolve it from settings on first capture. ``backend`` / ``embedder`` /
    ``conn``: ready-made parts (tests, hosts that already hold them). ``background_reembed``: start
    re-embedding memories of an older embedding model on a daemon thread. ``warm``: load the scope's vectors on
    a daemon thread when automatic recall is on, so the first recall does not pay for it. ``index_check``:
    ``check`` for :func:`pi_memory.index.open_index` (``False`` in an agent session, which checks in the
    background). ``host``: the host recall serves (``"claude-code"``, ``"codex"``; ``None``: pi, the CLI): its
    default ``recallSources`` (:func:`~pi_memory.semantic.config.host_recall_sources`). ``skills``: called at
    each recall that includes skills, it returns the skills to rank (the composition root's skill store).
    ``migrate_wait``: how long the embedded backend's migrations wait for another process's lock on the index
    (``None``: the connection's busy timeout); then SQLite's "database is locked" is raised. Raises
    ``SemanticSettingsError``, ``pi_memory.config.SettingsError``, ``BackendError`` or ``EmbeddingError`` for
    unusable settings.
    """
    where = Path(cwd) if cwd is not None else Path.cwd()
    settings = host_recall_sources(settings or load_semantic_settings(where, agent_dir), host)
    if backend is None:
        if data_dir is None and conn is None and settings.backend.type == "embedded":
            from pi_memory.config import load_settings

            data_dir = load_settings(where).data_dir
        if embedder is None and settings.backend.type == "embedded":
            from pi_memory.embed import get_embedder

            embedder = get_embedder(settings.embedder or None)
        backend = build_backend(settings.backend, data_dir=Path(data_dir) if data_dir else None,
                                embedder=embedder, conn=conn, index_check=index_check, migrate_wait=migrate_wait)
    settings = adopt_token_user(settings, backend)
    scope = Scope.for_project(settings.user_id, where, exact=settings.user_id_scope == "exact",
                              agent_id=settings.agent_id)
    service = SemanticService(settings, backend, scope, model=model, cwd=where, conn=conn, agent_dir=agent_dir,
                              data_dir=Path(data_dir) if data_dir else None, skills=skills)
    if background_reembed:
        try:
            service.start_background_reembed()
        except Exception as exc:  # noqa: BLE001 - a failed start only delays re-embedding
            log.warning("could not start background re-embedding: %s", exc)
    if warm and settings.enabled and settings.auto_recall and hasattr(backend, "warm"):
        threading.Thread(target=_quietly, args=(service.warm,), name="pi-memory-warm", daemon=True).start()
    return service


def adopt_token_user(settings: SemanticSettings, backend: Any) -> SemanticSettings:
    """``settings`` acting as the user a team server's token belongs to, when they name no ``"userId"`` (whose
    default, the computer's user name, a user's token may not act for: every call was a 403). The server is
    asked once (``GET /whoami``, a short wait); an admin or shared token, a server without that route or one
    that does not answer leaves the settings as they are. An explicit ``"userId"`` always wins."""
    if settings.backend.type != "self-hosted" or "user_id" in settings.model_fields_set:
        return settings
    ask = getattr(backend, "token_user", None)
    user = ask() if callable(ask) else None
    if not user or user == settings.user_id:
        return settings
    return settings.model_copy(update={"user_id": user})


def _quietly(fn: Callable[..., Any], *args: Any) -> None:
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 - warming is an optimisation only
        log.warning("semantic memory warm-up failed: %s", exc)
