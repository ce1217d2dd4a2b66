"""The bridge's learning methods (``tool_calls``, ``flush``, ``consolidate``, ``learning_status``), mixed into
:class:`pi_memory.integrations.pi.bridge.Bridge`; the protocol is documented there. Each answers before a lazy
load from the settings alone where it can, so an unused session is never loaded just to be closed."""

from __future__ import annotations

from typing import Any


class LearningMethods:
    """Needs the bridge's ``lazy``, ``loaded``, ``light``, ``session``, ``_pending_runs``,
    ``_pending_tool_calls``, ``_rules``, ``_model_named``, ``_ensure_open`` and ``_safe_status``."""

    lazy: bool
    light: Any
    session: Any
    _pending_runs: list
    _pending_tool_calls: int
    _rules: Any
    _model_named: bool | None
    loaded: Any
    _ensure_open: Any
    _safe_status: Any

    def _learning_due(self, user_text: str) -> bool:
        """Before a lazy load: whether the turns waiting would fire a learning trigger (a correction in this
        prompt, or a review after ``nudgeInterval`` turns / ``nudgeToolCalls`` tool calls) with a model
        configured for it; then the stores load so the trigger runs as in an eager session."""
        learning = self.light.learning if self.light is not None else None
        if learning is None:
            return False
        due = learning.review_enabled and (len(self._pending_runs) >= learning.nudge_interval
                                           or self._pending_tool_calls >= learning.nudge_tool_calls)
        if not due and learning.correction_detection and user_text.strip():
            from pi_memory.learning.corrections import CorrectionRules

            if self._rules is None:
                self._rules = CorrectionRules.from_lists(
                    learning.correction_strong_patterns, learning.correction_weak_patterns,
                    learning.correction_negative_patterns, learning.correction_directive_words)
            due = self._rules.detect(user_text).correction
        if not due:
            return False
        if self._model_named is None:
            model, _status = self.light.learning_model("review")
            self._model_named = model is not None
            if model is not None:
                model.close()
        return self._model_named

    def tool_calls(self, count: Any = 0, **_: Any) -> dict[str, Any]:
        """Tool calls of the run that is ending, for the review trigger (sent before ``after_run``)."""
        if self.lazy and not self.loaded:
            self._pending_tool_calls += count if isinstance(count, int) and count > 0 else 0
            return {"ok": True}
        self._ensure_open()
        if self.session.learning is not None and isinstance(count, int) and count > 0:
            self.session.learning.add_tool_calls(count)
        return {"ok": True}

    def flush(self, reason: Any = "compaction", sessionFile: Any = None, wait: Any = 0, **_: Any) -> dict[str, Any]:  # noqa: N803
        """Compaction or shutdown flush. Before a lazy load it loads the stores only when the turns that ended
        meanwhile reach ``flushMinTurns`` (an unused session is not loaded just to be closed)."""
        from pi_memory import timing

        if self.lazy and not self.loaded:
            learning = self.light.learning
            if learning is None or len(self._pending_runs) < learning.flush_min_turns:
                return {"queued": False, "reason": "memory was not used in this session (lazyInitialization)"}
        self._ensure_open()
        seconds = float(wait) if isinstance(wait, int | float) and wait > 0 else 0.0
        with timing.span(f"{'shutdown' if reason == 'shutdown' else 'compaction'}.flush"):
            return self.session.flush(str(reason), sessionFile if isinstance(sessionFile, str) else None,
                                      wait=seconds)

    def consolidate(self, target: Any = "memory", dryRun: Any = False, **_: Any) -> dict[str, Any]:  # noqa: N803
        from pi_memory.learning.consolidate import consolidate, usage_signals

        self._ensure_open()
        target = (target or "memory").strip() if isinstance(target, str) else "memory"
        learner = self.session.memory.learner()
        if learner is None:
            return {"ok": False, "text": self.session.memory.learning_status, "report": None}
        if target not in learner.store.targets:
            return {"ok": False, "text": f"Unknown store {target!r}; use one of: {', '.join(learner.store.targets)}.",
                    "report": None}
        report = consolidate(learner, target, dry_run=bool(dryRun) or None, usage=usage_signals(learner, target))
        text = f"consolidate {target}: {report.outcome}: {report.message}"
        if report.job_id and report.outcome == "ok":
            text += f" (undo: pi-memory learning undo {report.job_id})"
        return {"ok": report.ok, "text": text, "report": report.to_dict(), "status": self._safe_status()}

    def learning_status(self, **_: Any) -> dict[str, Any]:
        if self.lazy and not self.loaded:  # what the extension reads at start: settings only, no load
            learning = self.light.learning
            return {"model": "learning starts when memory is first used (lazyInitialization)",
                    "flushCompactTimeoutMs": learning.flush_compact_timeout_ms if learning else 60_000}
        self._ensure_open()
        return self.session.learning_status()
