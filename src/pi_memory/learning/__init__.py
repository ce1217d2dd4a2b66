"""Learning on its own: background review, correction capture, flush, consolidation and dreaming, every
model-driven job on one runner with hard token budgets, dry runs and an undoable log.

Public API::

    learner = memory.learner()                                   # runtime.Memory: settings, model, own store
    review_session(learner, turns, trigger="manual", session_id=None, dry_run=True) -> JobReport
    consolidate(learner, "memory", dry_run=False) -> JobReport
    dream(learner, data_dir, model_named=True, force=True) -> JobReport
    undo_job(learner, job_id) -> JobReport;  list_jobs(learner.conn) -> [dict]
    CorrectionRules.from_lists().detect("no, use pnpm") -> Detection
    SessionLearning(...)                                          # the per-session triggers (session.py)

Modules: ``settings`` (keys and defaults), ``log`` (tables, budget accounting), ``runner`` (the job runner),
``undo``, ``corrections`` (rules), ``prompts`` (what models see), ``review`` (review, flush, correction save and
refinement), ``consolidate`` (overflow strategies), ``dream``, ``triggers`` (per-session counters).
"""

from pi_memory.learning.consolidate import OverflowHandler, consolidate, fifo_evict
from pi_memory.learning.corrections import CorrectionRules, Detection
from pi_memory.learning.dream import dream, gate_check
from pi_memory.learning.log import list_jobs, tokens_per_day
from pi_memory.learning.prompts import Turn, read_turns
from pi_memory.learning.review import refine_correction, review_session, save_correction
from pi_memory.learning.runner import JobReport, Learner, PlannedOp
from pi_memory.learning.settings import LearningSettings, LearningSettingsError, parse_learning
from pi_memory.learning.undo import undo_job

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
    "consolidate",
    "dream",
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
