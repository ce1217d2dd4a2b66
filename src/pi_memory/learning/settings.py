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

import json
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
    :class:`LearningSettingsError` naming ``where``, each bad key, its value, what it must be and its default."""
    data = {k: block[k] for k in LEARNING_KEYS if k in block}
    try:
        return LearningSettings.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        problems = "; ".join(_problem(e) for e in errors[:5])
        it = "it is" if len(errors) == 1 else "they are"
        raise LearningSettingsError(
            f'Invalid learning setting{"s" if len(errors) > 1 else ""} under "pi-memory" in {where}: {problems}. '
            f"Learning jobs are off until {it} fixed: correct the value, or remove the key to use its default."
        ) from exc


_NEEDS = {"int": "a whole number", "bool": "true or false", "float": "a number", "string": "text",
          "list": "a list", "dict": "an object ({...})", "model": "an object ({...})"}
_BOUNDS = {"greater_than": ("more than", "gt"), "greater_than_equal": ("at least", "ge"),
           "less_than": ("less than", "lt"), "less_than_equal": ("at most", "le")}


def _problem(error: dict) -> str:
    """One validation error in a person's words: the key, its value, what it must be, its default."""
    loc = error["loc"]
    key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "pi-memory"
    kind = error["type"]
    if kind == "extra_forbidden":
        return f'"{key}" is not a learning setting (a typo?)'
    base = kind.rsplit("_", 1)[0]
    if base in _NEEDS and kind.endswith(("_type", "_parsing", "_from_float")):
        need = _NEEDS[base]
    elif kind in _BOUNDS:
        word, field = _BOUNDS[kind]
        need = f"{word} {error['ctx'][field]}"
    elif kind == "literal_error":
        need = "one of " + error["ctx"]["expected"].replace("'", '"')
    else:
        need = error["msg"][:1].lower() + error["msg"][1:]
    given = json.dumps(error.get("input"), ensure_ascii=False)
    given = given if len(given) <= 40 else given[:39] + "…"
    default = _default(loc)
    return f'"{key}" is {given}, but it must be {need}' + (f" (default {default})" if default is not None else "")


def _default(loc: tuple) -> str | None:
    """The default of the setting at ``loc`` (aliases) as JSON, ``None`` for a section or a default of none."""
    model: type[BaseModel] | None = LearningSettings
    value = None
    for part in loc:
        field = next((f for n, f in (model.model_fields.items() if model else ()) if (f.alias or n) == part), None)
        if field is None:
            return None
        is_section = isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
        model, value = (field.annotation, None) if is_section else (None, field.get_default(call_default_factory=True))
    return json.dumps(value) if value is not None else None
