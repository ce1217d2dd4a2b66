"""The result object every curated-memory operation returns (tools, CLI ``--json``, MCP, Python).

Serialised with camelCase keys and ``None`` fields left out. A result whose JSON form exceeds
``MAX_RESULT_BYTES`` (12 KiB, so one tool result cannot flood a context window) is shortened: list fields keep
as many items as fit, each long item cut to a preview, and ``truncated``/``total`` say what was left out.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel

MAX_RESULT_BYTES = 12 * 1024
PREVIEW_CHARS = 80

Code = Literal[
    "ok",
    "duplicate",
    "empty",
    "delimiter",
    "threat",
    "secret",
    "over_limit",
    "no_match",
    "ambiguous",
    "drift",
    "locked",
    "retry_limit",
    "invalid_target",
    "invalid_arguments",
    "io_error",
    "read_only",
    "unreadable",
    "not_an_index",
    "not_a_file",
    "changed_on_disk",
    "invalid_content",
    "conflict",  # two steps of one batch change the same entry (:meth:`pi_memory.curated.edits.Batch.find`)
]


class MemoryResult(BaseModel):
    """Outcome of one operation on a curated store.

    ``success`` is False when the store refused (``code`` says why, ``error`` says it for a person and an LLM).
    ``done`` True on success and on the terminal retry-limit result: the caller must not repeat the call.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    success: bool
    code: Code = "ok"
    target: str | None = None
    done: bool | None = None
    message: str | None = None
    error: str | None = None
    entry_count: int | None = None
    usage: str | None = None
    entries: list[str] | None = None
    current_entries: list[str] | None = None
    matches: list[str] | None = None
    evicted_entries: list[str] | None = Field(default=None, description="fifo-evict: entries dropped to make room")
    findings: list[str] | None = None
    drift_backup: str | None = None
    duplicates_merged: int | None = Field(default=None, description="exact duplicate entries the write merged")
    notice: str | None = None
    truncated: bool | None = None
    total: int | None = Field(default=None, description="item count of the list that was truncated")
    _to_person: list[tuple[str, str]] = PrivateAttr(default_factory=list)  # this result's own (model, person) texts
    _merged: list = PrivateAttr(default_factory=list)  # the copies themselves (entries.Copy): the learning log's
    _published: object = PrivateAttr(default=None)  # layout.Published of a file store's write: the learning log's

    @property
    def merged_copies(self) -> list:
        """The exact duplicates this write merged (:class:`pi_memory.curated.entries.Copy`, where each stood)."""
        return self._merged

    def keep_merged(self, copies: list) -> MemoryResult:
        """This result of a write that merged ``copies`` (``duplicates_merged`` says how many)."""
        self._merged = list(copies)
        self.duplicates_merged = len(copies) or None
        return self

    @property
    def published(self):
        """What a file store's write replaced and wrote (:class:`pi_memory.curated.layout.Published`), else ``None``."""
        return self._published

    def keep_published(self, published) -> MemoryResult:
        self._published = published
        return self

    def say_to_person(self, model_text: str, person_text: str) -> None:
        """A person reads ``person_text`` where the message or error says ``model_text`` (a part one host added:
        the overflow strategy's words to the model that made the add)."""
        self._to_person.append((model_text, person_text))

    def to_dict(self) -> dict:
        """JSON-ready dict, camelCase keys, capped at ``MAX_RESULT_BYTES``."""
        data = self.model_dump(by_alias=True, exclude_none=True)
        return cap_result(data)

    def for_person(self) -> MemoryResult:
        """A copy whose ``message``, ``error`` and ``notice`` are worded for a person (the CLI prints it): the
        model's wording names tools and result fields (:func:`pi_memory.curated.messages.for_person`)."""
        from pi_memory.curated.messages import for_person

        def worded(text: str | None) -> str | None:
            for model, person in self._to_person:
                text = text.replace(model, person) if text else text
            return for_person(text)

        return self.model_copy(update={"message": worded(self.message), "error": worded(self.error),
                                       "notice": worded(self.notice)})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """First ``limit`` characters of ``text`` on one line, with ``...`` when cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def _size(data: dict) -> int:
    return len(json.dumps(data, ensure_ascii=False).encode("utf-8"))


def cap_result(data: dict, limit: int = MAX_RESULT_BYTES) -> dict:
    """Shorten list fields until the JSON form fits ``limit`` bytes (linear: item sizes are measured once)."""
    if _size(data) <= limit:
        return data
    lists = [k for k in ("entries", "currentEntries", "matches") if isinstance(data.get(k), list)]
    data["truncated"] = True
    data["total"] = max((len(data[k]) for k in lists), default=0)
    for key in lists:
        data[key] = [preview(item, 400) for item in data[key]]
    for key in ("error", "message", "notice"):
        if isinstance(data.get(key), str):
            data[key] = preview(data[key], 2000) if len(data[key]) > 2000 else data[key]
    base = _size({k: v for k, v in data.items() if k not in lists}) + 40 * len(lists)
    budget = limit - base
    for key in lists:
        kept, used = [], 0
        for item in data[key]:
            cost = len(json.dumps(item, ensure_ascii=False).encode("utf-8")) + 2
            if used + cost > budget:
                break
            kept.append(item)
            used += cost
        data[key] = kept
        budget -= used
    return data
