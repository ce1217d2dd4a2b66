"""Settings of the learning loops: the ``"pi-memory"`` keys below, parsed from one merged settings block.

The composition root (:func:`pi_memory.runtime.open_memory`) reads the files and hands the merged block to
:func:`parse_learning`; nothing in this package reads files or the environment::

    "pi-memory": {
      "learning": {"jobTokenBudget": 24000, "dailyTokenBudget": 300000, "dryRun": false,
                   "jobTimeoutSeconds": 120, "maxCallsPerJob": 3},
      "nudgeInterval": 10, "nudgeToolCalls": 15, "reviewEnabled": true, "reviewRecentMessages": 0,
      "correctionDetection": true, "correctionStrongPatterns": [...], "correctionWeakPatterns": [...],
      "correctionNegativePatterns": [...], "correctionDirectiveWords": [...],
      "flushMinTurns": 6, "flushCompactTimeoutMs": 60000,
      "memoryOverflowStrategy": "auto-consolidate", "overflowGraceMs": 180000,
      "dreaming": {"enabled": true, "minHoursSinceLastRun": 24, "minTurnsSinceLastRun": 5,
                   "model": "provider/model"}
    }

Default budgets (measured by ``benchmarks/learning_cost.py``, see docs/learning.md): one job may spend
24,000 tokens (input + output; the p95 dream over 32 long LoCoMo sessions is below it) and all jobs of a data
root 300,000 tokens per UTC day (about a dozen reviews and a dream a day for a busy user).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

DEFAULT_JOB_TOKEN_BUDGET = 24_000
DEFAULT_DAILY_TOKEN_BUDGET = 300_000
OverflowStrategy = Literal["reject", "fifo-evict", "auto-consolidate"]
LEARNING_KEYS = (
    "learning", "nudgeInterval", "nudgeToolCalls", "reviewEnabled", "reviewRecentMessages", "correctionDetection",
    "correctionStrongPatterns", "correctionWeakPatterns", "correctionNegativePatterns", "correctionDirectiveWords",
    "flushMinTurns", "flushCompactTimeoutMs", "memoryOverflowStrategy", "overflowGraceMs", "dreaming",
)


class LearningSettingsError(ValueError):
    """Invalid learning settings; the message names the key and the fix."""


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


class JobSettings(_Model):
    job_token_budget: StrictInt = Field(DEFAULT_JOB_TOKEN_BUDGET, alias="jobTokenBudget", gt=0)
    daily_token_budget: StrictInt = Field(DEFAULT_DAILY_TOKEN_BUDGET, alias="dailyTokenBudget", gt=0)
    dry_run: StrictBool = Field(False, alias="dryRun")
    job_timeout_seconds: float = Field(120.0, alias="jobTimeoutSeconds", gt=0, le=3600)
    max_calls_per_job: StrictInt = Field(3, alias="maxCallsPerJob", ge=1, le=10)


class DreamingSettings(_Model):
    enabled: StrictBool | None = None  # None: on when a model is named
    min_hours_since_last_run: float = Field(24.0, alias="minHoursSinceLastRun", ge=0)
    min_turns_since_last_run: StrictInt = Field(5, alias="minTurnsSinceLastRun", ge=0)
    model: str | None = Field(None, description="a pi models.json name, provider/model")
    max_sessions: StrictInt = Field(32, alias="maxSessions", gt=0, le=1000)


class LearningSettings(_Model):
    jobs: JobSettings = Field(default_factory=JobSettings, alias="learning")
    nudge_interval: StrictInt = Field(10, alias="nudgeInterval", gt=0)
    nudge_tool_calls: StrictInt = Field(15, alias="nudgeToolCalls", gt=0)
    review_enabled: StrictBool = Field(True, alias="reviewEnabled")
    review_recent_messages: StrictInt = Field(0, alias="reviewRecentMessages", ge=0)
    correction_detection: StrictBool = Field(True, alias="correctionDetection")
    correction_strong_patterns: list[str] | None = Field(None, alias="correctionStrongPatterns")
    correction_weak_patterns: list[str] | None = Field(None, alias="correctionWeakPatterns")
    correction_negative_patterns: list[str] | None = Field(None, alias="correctionNegativePatterns")
    correction_directive_words: list[str] | None = Field(None, alias="correctionDirectiveWords")
    flush_min_turns: StrictInt = Field(6, alias="flushMinTurns", ge=1)
    flush_compact_timeout_ms: StrictInt = Field(60_000, alias="flushCompactTimeoutMs", gt=0)
    memory_overflow_strategy: OverflowStrategy = Field("auto-consolidate", alias="memoryOverflowStrategy")
    overflow_grace_ms: StrictInt = Field(180_000, alias="overflowGraceMs", ge=0)
    dreaming: DreamingSettings = Field(default_factory=DreamingSettings)


def parse_learning(block: dict[str, Any], where: str = "settings") -> LearningSettings:
    """:class:`LearningSettings` from one merged ``"pi-memory"`` block (other keys are ignored). Raises
    :class:`LearningSettingsError` naming ``where`` and each bad key."""
    data = {k: block[k] for k in LEARNING_KEYS if k in block}
    try:
        return LearningSettings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'pi-memory'}: {e['msg']}" for e in exc.errors(include_url=False)
        )
        raise LearningSettingsError(f'Invalid "pi-memory" learning settings in {where}: {problems}.') from exc
