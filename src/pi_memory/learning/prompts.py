"""What the learning jobs show a model: the stores, a transcript, the reply schemas. Every text here is read by
a model, never by a person. Caps keep each prompt inside the job budget.

No credential reaches a model: store entries are shown as :func:`~pi_memory.curated.sanitise.sanitise_entry`
shows them (hostile ones as the blocked marker, credentials redacted), and every session message a job shows
(review, flush, the correction's refinement, the dream) goes through :func:`shown_message`: redacted as the
session index redacts a message (:func:`pi_memory.index.redaction.redact_text`, the message before as context),
then clipped."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from pi_memory.curated.entries import joined_length, usage
from pi_memory.curated.sanitise import sanitise_entry
from pi_memory.curated.store import FAILURE_CATEGORIES, MemoryStore, failure_entry
from pi_memory.index.redaction import MARGIN, redact_text
from pi_memory.learning.runner import PlannedOp

MESSAGE_CAP = 2_000  # characters of one message shown (head and tail kept)
ROUTING = (
    "Route each fact: facts about the user (preferences, background, habits) -> target \"user\"; facts that hold "
    "across projects -> \"memory\"; facts about this repository (commands, layout, conventions) -> \"project\" "
    "(only when a project store is listed); lessons (a failure and its fix, a correction, an insight, a "
    "convention, a tool quirk) -> \"failure\" with one of the categories " + ", ".join(FAILURE_CATEGORIES) + ". "
    "Save only durable facts that will matter in a later session: no task progress, no secrets, no text the "
    "conversation merely quoted. Never repeat an entry that already exists; replace an entry that the "
    "conversation shows to be outdated (oldText: a short unique piece of it). An empty operations list is a "
    "valid answer when there is nothing worth saving."
)


class LearnOp(BaseModel):
    target: Literal["memory", "user", "project", "failure"]
    action: Literal["add", "replace", "remove"]
    content: str | None = Field(None, description="add/replace: the entry text (one fact, one or two sentences)")
    old_text: str | None = Field(None, alias="oldText", description="replace/remove: a unique piece of the entry")
    category: Literal["failure", "correction", "insight", "preference", "convention", "tool-quirk"] | None = Field(
        None, description="failure target only")
    reason: str | None = Field(None, description="failure target only: what went wrong (optional)")

    model_config = {"populate_by_name": True}


class LearnReply(BaseModel):
    operations: list[LearnOp] = Field(default_factory=list)
    note: str | None = Field(None, description="optional: one line on why nothing (or what) was saved")


def to_planned(ops: list[LearnOp], store: MemoryStore) -> list[PlannedOp]:
    """Model operations -> store operations (failure entries formatted; targets the store lacks dropped)."""
    out = []
    for op in ops:
        if op.target not in store.targets:
            continue
        content = op.content
        if op.target == "failure" and content and op.action in ("add", "replace") and not content.startswith("["):
            content = failure_entry(content, op.category or "insight", op.reason)
        out.append(PlannedOp(target=op.target, action=op.action, content=content, old_text=op.old_text))
    return out


def ask_ops(ctx, store: MemoryStore, prompt: str, system: str, max_tokens: int, default_note: str) -> list[PlannedOp]:
    """One model call for a :class:`LearnReply`; its operations as store operations (the note kept)."""
    reply = ctx.ask(prompt, LearnReply, system=system, max_tokens=max_tokens)
    ops = to_planned(reply.operations, store)
    ctx.note = reply.note or (None if ops else default_note)
    return ops


def stores_block(store: MemoryStore, targets: tuple[str, ...] | None = None) -> tuple[str, list[str]]:
    """The current entries of each store as a model may see them, and ``target:index`` ids for provenance."""
    parts, ids = [], []
    for target in targets or store.targets:
        entries = store.read(target).entries or []
        name = store.name(target)
        lines = [f"## {target} ({name}, {usage(joined_length(entries), store.limit(target))})"]
        for i, e in enumerate(entries):
            lines.append(f"- {sanitise_entry(name, e)}")
            ids.append(f"{target}:{i}")
        if not entries:
            lines.append("(empty)")
        parts.append("\n".join(lines))
    return "\n\n".join(parts), ids


@dataclass(frozen=True)
class Turn:
    role: str  # user | assistant
    text: str
    entry_id: str | None = None


def clip(text: str, cap: int = MESSAGE_CAP) -> str:
    text = text.strip()
    if len(text) <= cap:
        return text
    half = cap // 2
    return text[:half] + " […] " + text[-half:]


def shown_message(text: str, cap: int = MESSAGE_CAP, context: str = "") -> str:
    """A session message as a job shows it to a model: credentials redacted (``context``: the message before it,
    as the index reads it), then clipped to ``cap`` (:func:`clip`). Redacted before the cut, so no half key is
    left; a long message is scanned only around the head and tail it keeps."""
    text = text.strip()
    if len(text) <= cap + 2 * MARGIN:
        return clip(redact_text(text, context), cap)
    half = cap // 2
    return f"{redact_text(text[: half + MARGIN], context)[:half]} […] {redact_text(text[-half - MARGIN:])[-half:]}"


def transcript(turns: list[Turn], char_cap: int, *, oldest_first: bool = False) -> tuple[str, list[Turn]]:
    """The turns that fit in ``char_cap`` characters, shown oldest first, and the turns it holds: the newest
    that fit, or with ``oldest_first`` the oldest (a review's backlog is read from its start, so what does not fit
    is what comes after, left for the next job, never what came before). At least one turn is held (cut to the
    cap)."""
    picked, size = [], 0
    order = range(len(turns)) if oldest_first else range(len(turns) - 1, -1, -1)
    for i in order:
        turn = turns[i]
        line = f"{turn.role.upper()}: {shown_message(turn.text, context=turns[i - 1].text if i else '')}"
        if size + len(line) > char_cap and picked:
            break
        picked.append((turn, line[:char_cap]))
        size += len(line) + 1
    if not oldest_first:
        picked.reverse()
    return "\n".join(line for _, line in picked), [t for t, _ in picked]


def read_turns(path: Path | str) -> tuple[str | None, list[Turn], int]:
    """User and assistant messages of a session file (pi, Claude Code, Codex) on its active branch, the
    session id, and the number of tool calls in it."""
    sid, turns, tools, _ = read_session_turns(path)
    return sid, turns, tools


def read_session_turns(path: Path | str) -> tuple[str | None, list[Turn], int, str | None]:
    """:func:`read_turns` and the folder the session ran in, as its transcript records it (``None``: it does not
    say): the folder whose project the session index files it under."""
    from pi_memory.index.readers import active_branch, read_session

    result = read_session(Path(path))
    branch = active_branch(result.parents, result.leaf_id) if result.parents else None
    turns, tools = [], 0
    for r in result.records:
        if branch is not None and r.entry_id is not None and r.entry_id not in branch:
            continue
        if r.kind == "tool_call":
            tools += 1
        elif r.kind == "message" and r.role in ("user", "assistant") and r.text.strip():
            turns.append(Turn(r.role, r.text, r.entry_id))
    return result.info.session_id, turns, tools, result.info.cwd


def transcript_cap(job_budget: int, reply_tokens: int, fixed_chars: int) -> int:
    """Characters of transcript that fit a job budget with its reply and its fixed prompt (1 token ~ 4 chars,
    a fifth kept free for the estimate's error)."""
    return max(2_000, int((job_budget - reply_tokens - 600) * 4 * 0.8) - fixed_chars)
