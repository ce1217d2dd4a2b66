"""Learning on its own: background review, correction capture, flush, consolidation and dreaming, every
model-driven job on one runner with hard token budgets, dry runs and an undoable log.

Public API::

    learner = memory.learner()                                   # runtime.Memory: settings, model, own store
    review_session(learner, turns, trigger="manual", session_id=None, dry_run=True) -> JobReport
    consolidate(learner, "memory", dry_run=False) -> JobReport     # from pi_memory.learning.consolidate
    dream(learner, data_dir, model_named=True, force=True) -> JobReport  # from pi_memory.learning.dream
    undo_job(learner, job_id) -> JobReport;  list_jobs(learner.conn) -> [dict]
    CorrectionRules.from_lists().detect("no, use pnpm") -> Detection
    SessionLearning(...)                                          # the per-session triggers (session.py)

Modules: ``settings`` (keys and defaults), ``log`` (tables, budget accounting), ``runner`` (the job runner),
``undo``, ``corrections`` (rules; their word lists in ``correction_words``), ``prompts`` (what models see), ``review`` (review, flush, correction save and
refinement), ``consolidate`` (overflow strategies), ``dream``, ``triggers`` (per-session counters).
"""

from pi_memory._lazy import lazy_exports

# Lazy (``pi_memory._lazy``): opening the memory parses the learning settings on every hook process, which must
# not import the runner, the prompts and pydantic models of every job. ``consolidate`` and ``dream`` share their
# modules' names, so they are imported from there: ``from pi_memory.learning.consolidate import consolidate``.
__getattr__, __dir__ = lazy_exports(__name__, {
    ".overflow": "OverflowHandler fifo_evict",
    ".corrections": "CorrectionRules Detection",
    ".dream": "gate_check",
    ".log": "list_jobs tokens_per_day",
    ".prompts": "Turn read_turns",
    ".review": "refine_correction review_session save_correction",
    ".runner": "JobReport Learner PlannedOp",
    ".settings": "LearningSettings LearningSettingsError parse_learning",
    ".undo": "undo_job",
})

__all__ = [
    "CorrectionRules",
    "Detection",
    "JobReport",
    "Learner",
    "LearningSettings",
    "LearningSettingsError",
    "OverflowHandler",
    "PlannedOp",
    "Turn",
    "fifo_evict",
    "gate_check",
    "list_jobs",
    "parse_learning",
    "read_turns",
    "refine_correction",
    "review_session",
    "save_correction",
    "tokens_per_day",
    "undo_job",
]
