"""Data shapes of semantic memory: scopes, memories, history events, search hits, capture results.

Times are UTC ISO-8601 strings ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (they sort as text, like the index's other
tables), except ``observed_at``: when the fact was *said* (the turn's time, used to resolve "yesterday"), kept
in the offset the caller gave (``2026-03-14T23:30:00.000-08:00``; :func:`to_iso_keep_offset`), because the
day a person said "yesterday" is their local day, not the UTC one. Nothing sorts by ``observed_at``.
``created_at`` is when it was *stored*. The two differ when old conversations are imported.

Supersession, not erasure: an UPDATE (or a contradiction found by capture) stores the new text as a new
memory and marks the old one ``status="superseded"`` with ``superseded_by`` (the new id) and
``superseded_at``; a DELETE marks ``status="deleted"``. Rows are never removed, so "what did we believe
before?" stays answerable and :class:`HistoryEvent` rows can be listed per memory.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pi_memory.index.text_hash import normalise_text, text_hash  # noqa: F401  (their home: the table's hash)

Status = Literal["active", "superseded", "deleted"]
EventKind = Literal["ADD", "UPDATE", "DELETE", "SUPERSEDE"]
Decision = Literal["ADD", "UPDATE", "DELETE", "NOOP"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def now_iso() -> str:
    """UTC now as ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""
    return to_iso(datetime.now(UTC))


def to_iso(value: datetime) -> str:
    """A datetime as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` in UTC (a naive datetime is taken as UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def to_iso_keep_offset(value: datetime) -> str:
    """A datetime as ``YYYY-MM-DDTHH:MM:SS.mmm`` plus its own offset (``Z`` for UTC, else ``+HH:MM``); a naive
    datetime is taken as UTC. The local date stays the caller's: ``23:30-08:00`` is still that day."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    offset = value.utcoffset()
    if not offset:
        return to_iso(value)
    minutes = int(offset.total_seconds() // 60)
    sign, minutes = ("+" if minutes >= 0 else "-"), abs(minutes)
    return (f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:"
            f"{value.second:02d}.{value.microsecond // 1000:03d}{sign}{minutes // 60:02d}:{minutes % 60:02d}")


def parse_iso(value: str | datetime | None) -> datetime | None:
    """Parse an ISO-8601 time (``Z`` or an offset; a bare date is midnight UTC). ``None`` when unreadable."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    text = str(value).strip()
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _check_id(value: str | None, name: str, required: bool) -> str | None:
    if value is None or (not required and value == ""):
        if required:
            raise ValueError(f"{name} is required")
        return None
    value = value.strip()
    if not value:
        if required:
            raise ValueError(f"{name} must not be empty or only whitespace")
        return None
    if _CONTROL.search(value):
        raise ValueError(f"{name} must not contain control characters")
    if len(value) > 256:
        raise ValueError(f"{name} is longer than 256 characters")
    return value


class Scope(BaseModel):
    """Whose memories: every read and write is confined to exactly one scope.

    ``user_id``: the identity (settings ``userId``, default the OS user name). ``project_id``: the hash of the
    project root (:func:`pi_memory.project.project_id`), ``None`` with ``userIdScope: "exact"`` (one identity
    shared across projects). ``agent_id``: optional extra partition (settings ``agentId``).

    Scope comes only from trusted arguments (settings, the host), never from memory metadata (mem0 #6655).
    """

    model_config = ConfigDict(frozen=True)

    user_id: str
    agent_id: str | None = None
    project_id: str | None = None

    @field_validator("user_id")
    @classmethod
    def _user(cls, v: str) -> str:
        return _check_id(v, "user_id", True) or ""

    @field_validator("agent_id", "project_id")
    @classmethod
    def _optional(cls, v: str | None, info: Any) -> str | None:
        return _check_id(v, info.field_name, False)

    @property
    def user_key(self) -> str:
        """The mem0-style user id: ``<userId>:project:<hash>``, or ``<userId>`` for an exact scope."""
        return f"{self.user_id}:project:{self.project_id}" if self.project_id else self.user_id

    @property
    def key(self) -> str:
        """One string naming the scope, for display and logs: ``user_key`` plus ``:agent:<agentId>``."""
        return f"{self.user_key}:agent:{self.agent_id}" if self.agent_id else self.user_key

    def columns(self) -> tuple[str, str, str]:
        """``(user_id, project_id, agent_id)`` as stored: absent parts are ``""`` so SQL can use ``=``."""
        return (self.user_id, self.project_id or "", self.agent_id or "")

    @classmethod
    def for_project(cls, user_id: str, cwd: Any, *, exact: bool = False, agent_id: str | None = None) -> Scope:
        """The scope for a session started in ``cwd`` (``exact=True``: no project part)."""
        from pi_memory.project import project_id, project_root

        return cls(user_id=user_id, agent_id=agent_id, project_id=None if exact else project_id(project_root(cwd)))


class MemorySource(BaseModel):
    """Where a memory came from: the session and the entries (messages) of the turn, when known."""

    model_config = ConfigDict(extra="allow")

    session_id: str | None = None
    entry_ids: list[str] = Field(default_factory=list)
    kind: str | None = None  # "capture" | "tool" | "cli" | "api" | "import" ...


class SemanticMemory(BaseModel):
    """One stored fact. ``hash`` is :func:`text_hash` of ``text``. Shapes: see the module docstring."""

    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    text: str
    user_id: str
    agent_id: str | None = None
    project_id: str | None = None
    created_at: str = Field(default_factory=now_iso)
    updated_at: str = Field(default_factory=now_iso)
    observed_at: str | None = None
    status: Status = "active"
    superseded_by: str | None = None
    superseded_at: str | None = None
    source: MemorySource = Field(default_factory=MemorySource)
    metadata: dict[str, Any] = Field(default_factory=dict)
    hash: str = ""

    def model_post_init(self, _ctx: Any) -> None:
        if not self.hash:
            self.hash = text_hash(self.text)

    @property
    def scope(self) -> Scope:
        return Scope(user_id=self.user_id, agent_id=self.agent_id, project_id=self.project_id)

    @property
    def date(self) -> str:
        """The day the fact is about (``observed_at``, else ``created_at``) as ``YYYY-MM-DD``; ``""`` when
        neither starts with a well-formed day (a row stored before ``observed_at`` was validated could hold
        anything, and this string is printed inside the recall fence)."""
        return fact_day(self.observed_at, self.created_at)

    def to_public(self) -> dict[str, Any]:
        """camelCase JSON for tools, the CLI and REST (mem0's ``memory`` key for the text)."""
        return {
            "id": self.id, "memory": self.text, "userId": self.user_id, "agentId": self.agent_id,
            "projectId": self.project_id, "createdAt": self.created_at, "updatedAt": self.updated_at,
            "observedAt": self.observed_at, "status": self.status, "supersededBy": self.superseded_by,
            "supersededAt": self.superseded_at, "source": self.source.model_dump(exclude_none=True),
            "metadata": self.metadata, "hash": self.hash,
        }


class HistoryEvent(BaseModel):
    """One change to one memory. ``SUPERSEDE``: this memory was replaced by ``related_id`` (``new_text``);
    ``UPDATE``: this memory was created to replace ``related_id`` (``old_text``); ``DELETE``: marked deleted."""

    memory_id: str
    event: EventKind
    old_text: str | None = None
    new_text: str | None = None
    at: str = Field(default_factory=now_iso)
    reason: str | None = None
    related_id: str | None = None

    def to_public(self) -> dict[str, Any]:
        return {"memoryId": self.memory_id, "event": self.event, "oldMemory": self.old_text,
                "newMemory": self.new_text, "at": self.at, "reason": self.reason, "relatedId": self.related_id}


class ScoreDetails(BaseModel):
    """How a hit was ranked. Ranks are 1-based positions in each candidate list (``None``: not in it).

    ``cosine``: similarity of the query and memory vectors (-1..1); ``bm25``: SQLite FTS5 ``bm25()`` (lower is
    better, negative); ``rrf``: the fused score (sum of weight / (k + rank) over the lists)."""

    keyword_rank: int | None = None
    vector_rank: int | None = None
    cosine: float | None = None
    bm25: float | None = None
    rrf: float | None = None
    stale_model: bool = False  # the memory has no vector of the current model yet (found by keyword only)


class SemanticHit(BaseModel):
    """A search result: the memory, its fused ``score`` (higher is better) and how it was computed."""

    memory: SemanticMemory
    score: float
    details: ScoreDetails = Field(default_factory=ScoreDetails)

    def to_public(self) -> dict[str, Any]:
        return {**self.memory.to_public(), "score": round(self.score, 6),
                "scoreDetails": self.details.model_dump(exclude_none=True)}


class MemoryEvent(BaseModel):
    """What capture did with one fact. ``event`` NOOP: already known (or the model said so).

    ``id``: the memory written (ADD/UPDATE/DELETE: the new memory) or matched (NOOP); ``previous_id`` /
    ``previous_text``: the memory that was superseded (UPDATE, DELETE)."""

    event: Decision
    fact: str
    id: str | None = None
    text: str | None = None
    previous_id: str | None = None
    previous_text: str | None = None
    reason: str | None = None

    def to_public(self) -> dict[str, Any]:
        return {"event": self.event, "fact": self.fact, "id": self.id, "memory": self.text,
                "previousId": self.previous_id, "previousMemory": self.previous_text, "reason": self.reason}


class CaptureReport(BaseModel):
    """The outcome of one capture call. ``status``: ``ok`` (all steps ran), ``error`` (a step failed: see
    ``errors``; facts already applied stay applied), ``skipped`` (nothing ran: see ``message``)."""

    status: Literal["ok", "error", "skipped"] = "ok"
    message: str = ""
    skip_rule: str | None = None  # skipped: which rule (capture_gate.RULES, "empty", or a setting such as "off")
    facts: list[str] = Field(default_factory=list)
    events: list[MemoryEvent] = Field(default_factory=list)
    blocked_facts: int = 0  # facts dropped because they tripped the threat scanner
    dropped_facts: int = 0  # facts past capture.MAX_FACTS in the model's reply (see ``message``)
    refused_decisions: int = 0  # UPDATE/DELETE refused by the supersession check (the fact was added instead)
    refusals: list[str] = Field(default_factory=list)  # why each was refused
    turn_chars: int = 0  # characters of the turn (both sides, after redaction)
    windows: int = 0  # parts the turn was cut into (capture_windows)
    windows_read: int = 0  # parts the model read
    unread_chars: int = 0  # characters left unread (budget ran out, or a model failure stopped the reading)
    redacted_secrets: int = 0  # credentials removed from the turn before the model saw it
    errors: list[str] = Field(default_factory=list)
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    latency_ms: float = 0.0

    @property
    def error_count(self) -> int:
        return len(self.errors)

    def count(self, event: str) -> int:
        return sum(1 for e in self.events if e.event == event)

    def summary(self) -> str:
        """One line for logs and status bars."""
        if self.status == "skipped":
            return f"capture skipped: {self.message}"
        parts = [f"{n} {e}" for e in ("ADD", "UPDATE", "DELETE", "NOOP") if (n := self.count(e))]
        line = f"capture {self.status}: {len(self.facts)} fact(s)" + (f" → {', '.join(parts)}" if parts else "")
        if self.blocked_facts:
            line += f"; {self.blocked_facts} blocked by the threat scanner"
        if self.dropped_facts:
            line += f"; {self.dropped_facts} over the per-turn limit dropped"
        if self.refused_decisions:
            line += f"; {self.refused_decisions} UPDATE/DELETE refused (old memory kept)"
        if self.unread_chars:
            line += f"; {self.unread_chars:,} of {self.turn_chars:,} characters not read"
        if self.errors:
            line += f"; {len(self.errors)} error(s): {self.errors[0]}"
        return line

    def to_public(self) -> dict[str, Any]:
        return {"status": self.status, "message": self.message, "facts": self.facts,
                "events": [e.to_public() for e in self.events], "blockedFacts": self.blocked_facts,
                "droppedFacts": self.dropped_facts, "skipRule": self.skip_rule,
                "refusedDecisions": self.refused_decisions, "refusals": self.refusals, "turnChars": self.turn_chars,
                "windows": self.windows, "windowsRead": self.windows_read, "unreadChars": self.unread_chars,
                "redactedSecrets": self.redacted_secrets, "errors": self.errors, "modelCalls": self.model_calls,
                "inputTokens": self.input_tokens, "outputTokens": self.output_tokens, "costUsd": self.cost_usd,
                "latencyMs": self.latency_ms}


def fact_day(observed_at: str | None, created_at: str | None) -> str:
    """:attr:`SemanticMemory.date` from the two stored columns (a reader that builds no model: recall's evidence
    check)."""
    for value in (observed_at, created_at):
        day = (value or "")[:10]
        if _DAY.fullmatch(day):
            return day
    return ""
