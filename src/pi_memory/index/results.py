"""Result models of ``session_search`` and ``memory_search`` (camelCase JSON for the tools layer).

Output is bounded so one search cannot flood a context window: at most ``MAX_LIMIT`` hits, each snippet at
most ``MAX_SNIPPET_CHARS`` characters (``truncated`` + ``textChars`` say the text was longer), memory contents
cut at ``MAX_MEMORY_CHARS``, and the whole JSON at most ``MAX_OUTPUT_BYTES``: lowest-ranked hits are dropped
first and ``truncated``/``omitted`` say how many.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

MAX_LIMIT = 50
MAX_OUTPUT_BYTES = 16 * 1024
MIN_SNIPPET_CHARS = 40
MAX_SNIPPET_CHARS = 2000
MAX_MEMORY_CHARS = 4000
HIGHLIGHT_OPEN = "**"
HIGHLIGHT_CLOSE = "**"

Match = Literal["all", "any", "text", "context", "meaning"]


def highlight_parts(snippet: str) -> list[tuple[str, bool]]:
    """A snippet as ``(text, highlighted)`` pieces: the search's ``**`` pairs (the only ``**`` pairs a snippet
    holds, :mod:`pi_memory.index.snippets`) mark the highlighted ones, the markers themselves dropped. An odd
    count of ``**`` means one of the text itself (``2**10``): then the snippet is one plain piece."""
    parts = snippet.split(HIGHLIGHT_OPEN)
    if len(parts) % 2 == 0:
        return [(snippet, False)]
    return [(part, bool(i % 2)) for i, part in enumerate(parts) if part]


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class SessionHit(_Model):
    """One message of a past session, with where it came from."""

    rank: int
    score: float
    match: Match  # "all": every term matched; "any": a broadened (OR) match; "text": a LIKE-only match;
    # "context": no term of its own, found through the turns around it; "meaning": found by its vector alone
    snippet: str
    truncated: bool  # the message is longer than the snippet
    text_chars: int
    role: str
    kind: str
    tool_name: str | None = None
    branch: str  # "active" | "abandoned"
    timestamp: str | None = None
    session_id: str
    source: str  # "pi" | "claude_code" | "codex"
    cwd: str | None = None
    project: str | None = None  # project name (display)
    project_id: str | None = None
    file: str
    line: int
    entry_id: str | None = None


class MemoryHit(_Model):
    """One stored memory."""

    rank: int
    score: float
    match: Match
    id: int
    content: str  # verbatim (cut at MAX_MEMORY_CHARS, with `truncated`)
    snippet: str
    truncated: bool
    scope: str  # "global" | "project"
    project: str | None = None  # project id for project-scoped memories
    target: str
    category: str | None = None
    failure_reason: str | None = None
    source: str  # "markdown" | "extended"
    created: str
    last_used: str | None = None
    hit_count: int


class BlockHit(_Model):
    """One memory block (already in the system prompt as ``<memory-blocks>``; ``memory_search`` finds it too).
    ``block``: its key, the label it has in ``<memory-blocks>`` and the ``blockKey`` of ``updateMemory``."""

    rank: int
    score: float
    match: Match
    target: Literal["block"] = "block"
    block: str
    scope: str  # "project" | "global"
    description: str = ""
    content: str  # cut at MAX_MEMORY_CHARS, with `truncated`
    snippet: str
    truncated: bool
    file: str


class SearchResult(_Model):
    """Hits of one search, best first.

    ``strategy`` says how they were found: ``"match"`` (every term), ``"match+any"`` (completed with hits of
    any term), ``"any"`` (only hits of any term), ``"none"`` (blank query or nothing found). ``expression`` is
    the plan actually run, for debugging a surprising result.
    """

    kind: Literal["session", "memory"]
    query: str
    strategy: str
    expression: str = ""
    count: int = 0
    results: list[SessionHit | MemoryHit | BlockHit] = []
    truncated: bool = False
    omitted: int = 0
    note: str | None = None

    def to_dict(self) -> dict:
        return self.model_dump(by_alias=True, exclude_none=True)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


def _size(result: SearchResult) -> int:
    return len(result.to_json().encode("utf-8"))


def cap_output(result: SearchResult, max_bytes: int = MAX_OUTPUT_BYTES) -> SearchResult:
    """Drop the lowest-ranked hits until the JSON form fits ``max_bytes`` (at least one hit is kept)."""
    if _size(result) <= max_bytes:
        return result
    hits = list(result.results)
    dropped = 0
    while len(hits) > 1:
        hits.pop()
        dropped += 1
        trial = result.model_copy(update={"results": hits, "count": len(hits)})
        if _size(trial) <= max_bytes - 200:
            break
    note = (
        f"{dropped} lower-ranked hit(s) left out to keep the output under {max_bytes // 1024} KiB; "
        "ask for fewer results, a shorter snippet or a narrower query to see them."
    )
    return result.model_copy(
        update={
            "results": hits,
            "count": len(hits),
            "truncated": True,
            "omitted": result.omitted + dropped,
            "note": f"{result.note} {note}" if result.note else note,
        }
    )
