"""The Python side of the pi extension: newline-delimited JSON-RPC over stdin/stdout.

One bridge process serves one pi session. The extension (``extension/index.ts``) spawns
``<python> -m pi_memory.integrations.pi.bridge`` and writes one JSON object per line::

    {"id": 1, "method": "hello", "params": {"cwd": "/repo"}}

and reads exactly one line back per request::

    {"id": 1, "result": {...}}        or        {"id": 1, "error": {"message": "..."}}

Requests are handled one at a time, in the order they arrive. Nothing but protocol lines is
ever written to stdout: ``sys.stdout`` is pointed at stderr while the bridge runs, so a stray
``print`` in library code cannot corrupt the stream. Diagnostics go to stderr.

Methods:

``hello {cwd, sessionId?}``
    Loads settings for ``cwd`` and opens the store. Returns ``{version, dataDir, tools, status, lazy}``;
    ``tools`` is a list of ``{name, label, description, parameters}`` (JSON Schema). With
    ``lazyInitialization`` in policy mode (``lazy: true``) nothing is opened: the stores load at the first
    memory operation (``Bridge._ensure_open``; docs/architecture.md, "Lazy start").
``snapshot {}``
    ``{text}``: the frozen ``memory`` part built now (:mod:`pi_memory.prompt`: the curated snapshot in snapshot
    mode, the memory policy in policy mode; ``""`` when there is nothing to inject). A team project store gets
    :data:`pi_memory.curated.team_client.START_WAIT_S` to answer for it (as for ``hello``'s read of the stores);
    one that does not is a "[not available]" project part.
``validate_snapshot {text}``
    ``{ok}``: whether a persisted ``memory`` part may be reused as is.
``run_context {}``
    ``{text, parts}``: the parts rebuilt at every agent run (memory blocks, standing instructions), appended to
    the system prompt after the frozen part.
``command {name, args, data}``
    A slash command (:mod:`pi_memory.integrations.pi.commands`): ``{text, level, ...}`` for the TUI.
``begin_turn {}``
    Starts a new agent run (resets the per-run failure counters). ``{ok: true}``.
``call_tool {name, arguments}``
    ``{text, result, isError, status}``. A refusal is a normal result with ``isError: true``.
``recall {prompt, state}``
    ``{text, marker, reason, status}``: semantic recall to inject as a user-channel message (``text`` null:
    none); ``status`` as below, so the status line shows what the last turn's capture did.
``after_run {sessionFile, userText, assistantText, timestamp, entryIds}``
    Queues indexing of the session file and semantic capture of the turn; answers at once.
``tool_calls {count}``
    Tool calls of the run that is ending (counted for the background review). ``{ok: true}``.
``flush {reason, sessionFile, wait?}``
    Compaction or shutdown: queue a flush job when due (:mod:`pi_memory.learning.triggers`); with ``wait``
    seconds, wait that long at most for it. ``{queued, reason, finished?}``.
``consolidate {target, dryRun?}``
    pi's ``/memory-consolidate``: one consolidation job now (the code behind ``pi-memory consolidate``).
    ``{ok, text, report}`` (``text`` for a person).
``learning_status {}``
    The learning triggers and the latest jobs.
``skills {action, ...}``
    Skill discovery, the ``/memory-skills`` manager and the complex-run question (:mod:`.skills_host`).
``status {}``
    ``{text, memoryEntries, userEntries, dataDir, latestError, indexRepair?}`` (``text`` is the pi status-line
    text; ``latestError``: the newest capture or recall failure recorded in the index since this bridge started,
    by any process, ``{job, outcome, at, message, ...}`` or null; the text then ends with it).
    ``indexRepair``, present once the index was ever repaired after corruption: the newest repair record
    ``{at, damagedCopy, reason, rebuilt: {sessionFiles, messages, filesToReadAgain, memories,
    semanticMemories, semanticFromHistory}, lost: {semanticMemories, semanticHistoryUnreadable,
    transcriptsGone, vectors}}`` (:mod:`pi_memory.index.salvage`), for the status line to tell the user.
``shutdown {}``
    ``{ok: true}``, then the process exits.

Run ``python -m pi_memory.integrations.pi.bridge --dump-tools`` to print the tool specs as JSON
(this is how ``extension/fallback-tools.json`` is regenerated).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import IO, Any

from pi_memory.integrations.pi.bridge_learning import LearningMethods

log = logging.getLogger("pi_memory.bridge")

PROTOCOL_VERSION = 1
MAX_PENDING_RUNS = 50  # turns kept before a lazy load (the catch-up pass reads at most 50 files, too)


class BridgeError(Exception):
    """A request failed in a way the caller should see as an ``error`` response."""


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("pi-memory")
    except Exception:  # pragma: no cover - metadata missing in odd installs
        return "0+unknown"


def tool_spec_dict(tool: Any) -> dict[str, Any]:
    return {
        "name": tool.name,
        "label": getattr(tool, "label", tool.name),
        "description": tool.description,
        "parameters": tool.parameters,
    }


class Bridge(LearningMethods):
    """The request handlers. The store and tools are opened lazily (on ``hello`` or first use)."""

    def __init__(self) -> None:
        self.cwd: Path | None = None
        self.session_id: str | None = None
        self.settings: Any = None
        self.store: Any = None
        self.tools: dict[str, Any] = {}
        self.session: Any = None
        self.stopping = False
        self.started_at: str | None = None  # UTC ISO time of hello: older job errors are not this session's
        # lazyInitialization (policy mode): until the first memory operation only ``light`` exists -- settings,
        # tool descriptions, prompt parts -- and the turns that ended meanwhile wait in ``_pending_runs``.
        self.lazy = False
        self.light: Any = None
        self.light_tools: dict[str, Any] = {}
        self.catch_up = True
        self._pending_runs: list[dict[str, Any]] = []
        self._pending_tool_calls = 0
        self._load_lock = threading.Lock()
        self._rules: Any = None  # correction rules, for the lazy trigger check
        self._model_named: bool | None = None  # whether learning has a model (asked once, when a trigger is due)

    # ------------------------------------------------------------------ setup
    def _open(self, cwd: Path | None, catch_up: bool = False, start: bool = True) -> None:
        from pi_memory.session import AgentSession

        session = AgentSession(cwd or Path.cwd(), self.session_id)
        tools = {t.name: t for t in session.memory.tools()}
        # assigned together, after everything opened: a load that raised leaves the bridge unloaded (retried)
        self.session, self.settings, self.store, self.tools = session, session.memory.settings, \
            session.memory.store, tools
        if start:
            self.session.start(catch_up=catch_up)

    @property
    def loaded(self) -> bool:
        return self.store is not None

    def _ensure_open(self) -> None:
        """Load the stores now if they are not (lazy start, or a method called before ``hello``). Callers on
        several threads share one load; a load that fails raises to this caller and the next one tries again."""
        if self.store is not None:
            return
        with self._load_lock:
            if self.store is not None:
                return
            from pi_memory import timing

            with timing.span("memory-init.load" if self.lazy else "session-start.load"):
                self._open(self.cwd, catch_up=self.catch_up)
            if self.lazy:
                self._replay_pending()

    def _replay_pending(self) -> None:
        """The turns that ended before the stores were loaded: indexed, captured and counted now."""
        runs, self._pending_runs = self._pending_runs, []
        calls, self._pending_tool_calls = self._pending_tool_calls, 0
        if self.session.learning is not None and calls:
            self.session.learning.add_tool_calls(calls)
        for run in runs:
            self.session.after_run(**run)

    def status(self) -> dict[str, Any]:
        if self.lazy and not self.loaded:
            return {"text": "memory: ready (loads on first use)", "memoryEntries": None, "userEntries": None,
                    "dataDir": str(self.settings.data_dir), "latestError": None, "loaded": False}
        self._ensure_open()
        memory = len(self.store.entries("memory"))
        user = len(self.store.entries("user"))
        text = f"memory: {memory} {'entry' if memory == 1 else 'entries'}"
        if user:
            text += f", user: {user}"
        error = self._latest_error()
        check = self.session.integrity if self.session is not None else None
        if check is not None and not check["ok"]:
            text += " · index damaged: the next search repairs it (or run `pi-memory reindex`)"
        if error is not None:
            text += f" · {error['job']} failed at {error['at'][11:16]} UTC: {' '.join(error['message'].split())}"
            text = text if len(text) <= 160 else text[:159] + "…"
        status = {"text": text, "memoryEntries": memory, "userEntries": user,
                  "dataDir": str(self.settings.data_dir), "latestError": error}
        if check is not None:
            status["integrityCheck"] = check
        from pi_memory.index import last_repair

        repair = last_repair(self.settings.data_dir)
        if repair:
            status["indexRepair"] = repair
        return status

    def _latest_error(self) -> dict[str, Any] | None:
        """The newest capture/recall error in the index since this bridge started (any process), or None."""
        if self.started_at is None or self.session is None:
            return None
        try:
            from pi_memory.semantic.outcomes import latest_error

            found = latest_error(self.session.memory.index(), since=self.started_at)
        except Exception as exc:  # noqa: BLE001 - the status line must always answer
            log.debug("job outcomes unreadable: %s", exc)
            return None
        return found.to_public() if found is not None else None

    # ---------------------------------------------------------------- methods
    def hello(self, cwd: str | None = None, sessionId: str | None = None, **_: Any) -> dict[str, Any]:  # noqa: N803
        from pi_memory import timing
        from pi_memory.config import load_settings
        from pi_memory.index.db import now_iso

        self.cwd = Path(cwd) if cwd else None
        self.session_id = sessionId
        started = now_iso()
        self.catch_up = catch_up = os.environ.get("PI_MEMORY_CATCH_UP", "1") != "0"
        settings = load_settings(self.cwd or Path.cwd())
        # snapshot mode needs the stores at start (the frozen snapshot), so it ignores lazyInitialization
        self.lazy = settings.lazy_initialization and settings.prompt_mode == "policy"
        if self.lazy:
            from pi_memory.runtime import open_memory

            with timing.span("session-start.describe", "lazy"):
                self.light = open_memory(self.cwd or Path.cwd(), load=False)
                self.settings = self.light.settings
                self.light_tools = {t.name: t for t in self.light.tools(describe_only=True)}
            tools, learning = list(self.light_tools.values()), self.light.learning
        else:
            with timing.span("session-start.load"):
                self._open(self.cwd, catch_up=catch_up)
            tools, learning = list(self.tools.values()), self.session.memory.learning
        status = self.status()  # before started_at is set: no error can be this session's yet, and hello must
        self.started_at = started  # not wait for the index to open (a long migration would time it out)
        return {
            "learning": {"flushCompactTimeoutMs": learning.flush_compact_timeout_ms if learning else 60_000},
            "version": _package_version(),
            "protocol": PROTOCOL_VERSION,
            "dataDir": str(self.settings.data_dir),
            "tools": [tool_spec_dict(t) for t in tools],
            "status": status,
            "lazy": self.lazy,
        }

    def _prompt_memory(self) -> Any:
        """The Memory prompt parts are built from: the loaded one, or before a lazy load the light one (policy
        mode: the policy text and the per-run parts need settings and their own files, no store)."""
        if self.lazy and not self.loaded:
            return self.light
        self._ensure_open()
        return self.session.memory

    def snapshot(self, **_: Any) -> dict[str, Any]:
        from pi_memory.curated.team_client import START_WAIT_S, bounded
        from pi_memory.prompt import memory_part

        memory = self._prompt_memory()
        with bounded(memory.store, START_WAIT_S):  # frozen for the session: a team server gets a start's wait
            text = memory_part(memory).text
        return {"text": text, "status": self.status()}

    def validate_snapshot(self, text: Any = None, **_: Any) -> dict[str, Any]:
        from pi_memory.prompt import frozen_is_reusable

        if not isinstance(text, str):
            raise BridgeError("validate_snapshot needs a string 'text'")
        return {"ok": bool(frozen_is_reusable(text, self._prompt_memory()))}

    def run_context(self, **_: Any) -> dict[str, Any]:
        """The per-run prompt parts (memory blocks, standing instructions), built from the files now."""
        from pi_memory.prompt import run_parts

        parts = run_parts(self._prompt_memory(), preview=False)
        return {"text": "\n\n".join(p.text for p in parts if p.text),
                "parts": [{"name": p.name, "tokens": p.tokens} for p in parts]}

    def command(self, name: Any = None, args: Any = None, data: Any = None, **_: Any) -> dict[str, Any]:
        """A pi slash command: text for the TUI (:mod:`pi_memory.integrations.pi.commands`)."""
        from types import SimpleNamespace

        from pi_memory.integrations.pi import commands

        if not isinstance(name, str):
            raise BridgeError("command needs a string 'name'")
        args = args if isinstance(args, str) else ""
        if self.lazy and not self.loaded and (name == "projects" or (name == "preview" and not args.strip())):
            session: Any = SimpleNamespace(memory=self.light)  # files only: no database, no load
        else:
            self._ensure_open()
            session = self.session
        from pi_memory.curated.team_client import TOOL_WAIT_S, bounded

        with bounded(self.store, TOOL_WAIT_S, bound_for="command"):  # one wait for the command and its status,
            reply = commands.run(session, name, args, data if isinstance(data, dict) else {})  # under the
            reply["status"] = self._safe_status()  # extension's 10 s a request: as a tool call's
        return reply

    def begin_turn(self, **_: Any) -> dict[str, Any]:
        if self.lazy and not self.loaded:
            return {"ok": True}  # a fresh store starts with a fresh turn
        self._ensure_open()
        self.store.begin_turn()
        return {"ok": True}

    def call_tool(self, name: Any = None, arguments: Any = None, **_: Any) -> dict[str, Any]:
        if self._without_load(name):
            tools = self.light_tools  # anchor-mode session_search reads the session files: no load needed
        else:
            self._ensure_open()
            tools = self.tools
        tool = tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise BridgeError(f"unknown tool {name!r}; known: {', '.join(sorted(tools))}")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise BridgeError("call_tool 'arguments' must be an object")
        from pi_memory.curated.team_client import TOOL_WAIT_S, bounded

        try:
            with bounded(self.store, TOOL_WAIT_S, bound_for="tool"), self._using():  # under the extension's 10 s
                outcome = tool.call(arguments)  # a request; a shutdown meanwhile does not close the index under it
        except Exception as exc:  # a library bug must not kill the session's memory
            log.error("tool %s crashed:\n%s", name, traceback.format_exc())
            text = f"pi-memory internal error in {name}: {type(exc).__name__}: {exc}. Nothing was changed by this call."
            return {"text": text, "result": {"success": False, "error": text}, "isError": True,
                    "status": self._safe_status()}
        return {
            "text": outcome.text,
            "result": outcome.result,
            "isError": bool(outcome.is_error),
            "status": self._safe_status(),
        }

    def _using(self):
        """The session's :meth:`pi_memory.runtime.Memory.using` (nothing for the light tools before a load)."""
        memory = getattr(self.session, "memory", None)
        return memory.using() if memory is not None else contextlib.nullcontext()

    def _without_load(self, name: Any) -> bool:
        return (self.lazy and not self.loaded and name == "session_search"
                and self.settings.session_search_variant == "anchors")

    def _safe_status(self) -> dict[str, Any] | None:
        try:
            return self.status()
        except Exception:
            return None

    def recall(self, prompt: Any = None, state: Any = None, timestamp: Any = None, **_: Any) -> dict[str, Any]:
        """Semantic recall for a prompt: ``{text, marker, reason}`` (``text`` null: inject nothing;
        ``marker``: persist it in the session for ``recallFrequency: "session"``). ``timestamp``: the turn's
        time (ISO), recall's ``as_of`` (default now). Before a lazy load: nothing (an ordinary prompt loads no
        store)."""
        from pi_memory import timing

        as_of = timestamp if isinstance(timestamp, str) and timestamp.strip() else None
        log.debug("recall as of %s", as_of or "now")  # PI_MEMORY_LOG_LEVEL=debug: the turn time the host sent
        if self.lazy and not self.loaded:
            return {"text": None, "marker": None, "reason": "memory not loaded yet (lazyInitialization)",
                    "status": self._safe_status()}
        self._ensure_open()
        with timing.span("recall"):
            outcome = self.session.recall(prompt if isinstance(prompt, str) else "",
                                          state if isinstance(state, dict) else {},
                                          as_of=as_of)
        if outcome is None:
            return {"text": None, "marker": None, "reason": self.session.memory.semantic_status,
                    "status": self._safe_status()}
        return {"text": outcome.text, "marker": outcome.marker, "reason": outcome.reason,
                "count": len(outcome.hits), "latencyMs": outcome.latency_ms, "status": self._safe_status()}

    def after_run(
        self, sessionFile: Any = None, userText: Any = None, assistantText: Any = None,  # noqa: N803
        timestamp: Any = None, entryIds: Any = None, **_: Any,  # noqa: N803
    ) -> dict[str, Any]:
        """An agent run ended: index the session file as it grew and capture the turn (queued; returns at once).
        Before a lazy load the turn waits (at most :data:`MAX_PENDING_RUNS`) and is handled when the stores
        load; a session that never uses memory leaves its turns to the session files (the next session's
        catch-up indexes them)."""
        text = lambda v: v if isinstance(v, str) else ""  # noqa: E731
        source = {"session_id": self.session_id, "entry_ids": entryIds if isinstance(entryIds, list) else []}
        run = {"session_file": sessionFile if isinstance(sessionFile, str) else None,
               "user_text": text(userText), "assistant_text": text(assistantText),
               "observed_at": timestamp if isinstance(timestamp, str) else None, "source": source}
        if self.lazy and not self.loaded:
            self._pending_runs = [*self._pending_runs, run][-MAX_PENDING_RUNS:]
            if not self._learning_due(run["user_text"]):
                return {"ok": True, "pending": len(self._pending_runs)}
            self._ensure_open()  # a learning trigger fires: load, and the waiting turns (this one too) are handled
            return {"ok": True}
        self._ensure_open()
        self.session.after_run(**run)
        return {"ok": True}

    def skills(self, action: Any = None, **params: Any) -> dict[str, Any]:
        from pi_memory.integrations.pi.skills_host import handle

        try:  # skill folders are files of their own: discovery works before a lazy load
            return handle(self._prompt_memory().skills(), action, params)
        except ValueError as exc:
            raise BridgeError(str(exc)) from exc

    def shutdown(self, wait: Any = None, **_: Any) -> dict[str, Any]:
        """Finish queued background work (at most ``wait`` seconds, default 1), then exit."""
        self.stopping = True
        finished = True
        if self.session is not None:  # a lazy session never loaded has nothing to finish or close
            finished = self.session.shutdown(float(wait) if isinstance(wait, int | float) else 1.0)
        return {"ok": True, "finished": finished}

    METHODS = (
        "hello", "snapshot", "validate_snapshot", "run_context", "command", "begin_turn", "call_tool", "recall",
        "after_run", "status", "shutdown", "tool_calls", "flush", "consolidate", "learning_status", "skills",
    )

    def handle(self, line: str) -> dict[str, Any] | None:
        """One request line -> one response object (``None`` for a blank line)."""
        if not line.strip():
            return None
        try:
            from pi_memory.safety import replace_unencodable  # lazy, like every import here

            request = replace_unencodable(json.loads(line))  # "\ud83d" escapes -> U+FFFD, never a lost turn
        except json.JSONDecodeError as exc:
            return {"id": None, "error": {"message": f"invalid JSON request: {exc}"}}
        if not isinstance(request, dict):
            return {"id": None, "error": {"message": "a request must be a JSON object"}}
        rid = request.get("id")
        method = request.get("method")
        params = request.get("params") or {}
        if method not in self.METHODS:
            return {"id": rid, "error": {"message": f"unknown method {method!r}"}}
        if not isinstance(params, dict):
            return {"id": rid, "error": {"message": "'params' must be an object"}}
        try:
            return {"id": rid, "result": getattr(self, method)(**params)}
        except BridgeError as exc:
            return {"id": rid, "error": {"message": str(exc)}}
        except TypeError as exc:
            return {"id": rid, "error": {"message": f"bad params for {method}: {exc}"}}
        except Exception as exc:
            log.error("%s failed:\n%s", method, traceback.format_exc())
            return {"id": rid, "error": {"message": f"{method} failed: {type(exc).__name__}: {exc}"}}


def serve(stdin: IO[str], stdout: IO[str]) -> int:
    bridge = Bridge()
    for line in stdin:
        response = bridge.handle(line)
        if response is None:
            continue
        stdout.write(json.dumps(response, ensure_ascii=False) + "\n")
        stdout.flush()
        if bridge.stopping:
            break
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    logging.basicConfig(
        level=os.environ.get("PI_MEMORY_LOG_LEVEL", "WARNING").upper(),
        stream=sys.stderr,
        format="pi-memory-bridge %(levelname)s %(message)s",
    )
    from pi_memory import timing

    timing.enable(timing.wanted(dict(os.environ)))  # PI_TIMING=1 / PI_MEMORY_TIMING=1: spans on stderr
    if argv[:1] == ["--dump-tools"]:
        bridge = Bridge()
        bridge._open(None, start=False)
        print(json.dumps([tool_spec_dict(t) for t in bridge.tools.values()], indent=2, ensure_ascii=False))
        return 0
    # Own the real stdout; everything else that prints goes to stderr.
    protocol_out = open(sys.stdout.fileno(), "w", encoding="utf-8", newline="\n", closefd=False)  # noqa: SIM115
    sys.stdout = sys.stderr
    protocol_in = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", newline="\n", closefd=False)  # noqa: SIM115
    try:
        return serve(protocol_in, protocol_out)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
