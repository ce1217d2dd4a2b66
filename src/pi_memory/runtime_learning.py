"""How :class:`pi_memory.runtime.Memory` wires the learning jobs (review, consolidation, dream, the overflow
handler): their model from the settings, a :class:`pi_memory.learning.Learner` on the host's index, and the
budget left. Part of the composition root: it reads the settings :func:`pi_memory.runtime.open_memory` loaded
and passes them down; the learning capability reads no file or variable for its configuration."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

from pi_memory.curated import MemoryStore

log = logging.getLogger("pi_memory.runtime")


class LearningWiring:
    """Mixed into :class:`pi_memory.runtime.Memory` (its settings, cwd, store, index and learning settings)."""

    settings: Any
    cwd: Any
    store: Any
    learning: Any
    _llm: Any
    _llm_notes: list
    index: Any

    def learning_model(self, kind: str = "review"):
        """``(ChatModel | None, status)`` for a learning job: ``pi-memory.llm`` (as capture), or for ``dream``
        ``dreaming.model`` (a pi models.json name) when set. One request per call (the runner counts calls)."""
        from pi_memory.llm import LLMConfigError, build_chat_model
        from pi_memory.llm.config import spec_from_pi

        try:
            named = getattr(getattr(self.learning, "dreaming", None), "model", None)
            if kind == "dream" and named:
                if "/" not in named:
                    return None, f"dreaming.model {named!r} must be provider/model as in pi's models.json"
                prov, model = named.split("/", 1)
                spec = spec_from_pi(prov, model, self.settings.agent_dir, source=f"dreaming.model={named}")
            else:
                if self._llm is None:
                    self._llm = self._learning_spec()
                spec, why = self._llm
                if spec is None:
                    return None, f"no model for learning jobs: {why}"
            timeout = min(spec.timeout_s, self.learning.jobs.job_timeout_seconds) if self.learning else spec.timeout_s
            model = build_chat_model(spec, max_retries=0, timeout_s=timeout)
            notes = "".join(f"; {n}" for n in self._llm_notes) if kind != "dream" or not named else ""
            return model, f"learning on: {spec.model} (from {spec.source}){notes}"
        except (LLMConfigError, ValueError) as exc:
            return None, f"no model for learning jobs: {exc}"

    def _learning_spec(self):
        """``(spec | None, why)`` of the learning jobs: ``pi-memory.llm``, with ``llmModelOverride`` /
        ``llmThinkingOverride`` applied (:func:`pi_memory.llm.config.learning_overrides`; its notes on what the
        provider cannot honour go into the learning status line). Raises ``LLMConfigError``."""
        from pi_memory.llm import load_llm_spec
        from pi_memory.llm.config import learning_overrides

        s = self.settings
        spec, why = (None, "") if s.llm_model_override else load_llm_spec(self.cwd, s.agent_dir)
        spec, self._llm_notes = learning_overrides(spec, s.llm_model_override, s.llm_thinking_override,
                                                   s.agent_dir)
        for note in self._llm_notes:
            log.warning("%s", note)
        return spec, why

    def learner(self, conn: sqlite3.Connection | None = None, log_only: bool = False,
                cwd: Path | str | None = None):
        """A :class:`pi_memory.learning.Learner` on ``conn`` (default: this host's index connection), with a
        store of its own mirrored through that connection; ``None`` when the learning settings are invalid.
        ``log_only``: for reading the log and undoing a job (no model, no budget), which the settings do not
        decide: then a learner on the default settings when they are invalid. ``cwd``: the folder whose project
        store the learner writes (default: this memory's; ``pi-memory review FILE``: the session's)."""
        if self.learning is None and not log_only:
            return None
        from pi_memory.index import sync_store
        from pi_memory.index.read_only import read_only
        from pi_memory.learning import Learner, LearningSettings

        conn = conn if conn is not None else self.index()
        store = MemoryStore.from_settings(self.settings, cwd=self.cwd if cwd is None else cwd)

        def mirror(target: str, entries: list[str]) -> None:
            scope = "project" if target == "project" else "global"
            sync_store(conn, scope, store.project_id if target == "project" else None, target, entries)

        store.on_change = mirror
        store.write_check = lambda: read_only(conn)
        store.load_from_disk()
        own = store.project_id == self.store.project_id  # the agent's store learns the writes of its own project
        acknowledge = self.store.acknowledge if own else (
            lambda target, entries: None if target == "project" else self.store.acknowledge(target, entries))
        return Learner(self.learning or LearningSettings(), conn, store, self.learning_model,
                       project=store.project_id, on_write=acknowledge)

    def _no_model(self) -> str | None:
        """``None`` when learning jobs have a model, else why not (the overflow handler's wording)."""
        model, status = self.learning_model("consolidate")
        if model is None:
            return status
        model.close()
        return None

    def _learning_budget_left(self) -> int | None:
        """Tokens left of today's learning budget (``None``: not known): whether an overflow can be consolidated."""
        from pi_memory.learning import log as jlog

        if self.learning is None:
            return None
        try:
            spent = jlog.spent_today(jlog.open_log(self.index()))
        except Exception:  # noqa: BLE001 - a hint for the refusal's wording only
            return None
        return max(0, self.learning.jobs.daily_token_budget - spent)

    def _overflow_learner(self):
        from pi_memory.index import open_index

        learner = self.learner(open_index(self.settings.data_dir))
        return learner
