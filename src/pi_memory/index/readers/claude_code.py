"""Reader for Claude Code transcripts: ``~/.claude/projects/<slug>/<session-uuid>.jsonl``.

Also reads subagent transcripts (``<session-uuid>/subagents/agent-<id>.jsonl``). Shapes (from
``shared/reference/ecosystem.md`` §2.2, Claude Code 2.1.x):

* Conversation lines ``{"type":"user"|"assistant","uuid","parentUuid","sessionId","timestamp","cwd","version",
  "isSidechain","message":{"role","content"}}``; ``content`` is a string or a list of blocks ``text``,
  ``thinking``/``redacted_thinking``, ``image``, ``document``, ``tool_use`` (``id``, ``name``, ``input``) and, on user
  lines, ``tool_result`` (``tool_use_id``, ``content`` string or blocks, ``is_error``). An assistant reply is often
  split over several lines (one per content block), each its own tree entry.
* Tree: ``uuid``/``parentUuid``; after a compaction the ``system``/``compact_boundary`` line has ``parentUuid:null``
  and ``logicalParentUuid`` pointing at the pre-compaction leaf. ``parents`` uses ``parentUuid`` and falls back to
  ``logicalParentUuid`` so the whole history stays one tree.
* ``{"type":"summary","summary","leafUuid"}``: a short title for the conversation ending at ``leafUuid``. Claude Code is
  known to write summaries of *other* sessions into a file, so a summary is kept only when its ``leafUuid`` is an
  entry of the same pass (otherwise ``skipped["foreign_summary"]``).

Records kept:

=====================================  ==============  =========  ============================================
line                                   kind            role       notes
=====================================  ==============  =========  ============================================
user text (string or text blocks)      message         user
user ``isCompactSummary``              compaction      summary    the post-compaction summary message
user ``tool_result`` block             tool_result     tool       ``tool_name`` from the matching ``tool_use``
assistant text blocks                  message         assistant
assistant ``tool_use`` block           tool_call       assistant  ``name: <compact JSON input>``
``summary`` line                       branch_summary  summary    ``entry_id`` None, ``parent_id`` = leafUuid
=====================================  ==============  =========  ============================================

``tool_name`` of a ``tool_result`` is known only when its ``tool_use`` was read in the same pass.

Repeated records: Claude Code writes a line with the same ``uuid`` again on resumes and retries. The records of
a repeated uuid replace those of its earlier line (the last version wins, ``skipped["repeated_uuid"]``); a
repeated ``summary`` line (same ``leafUuid`` and text) is read once (``skipped["repeated_summary"]``). Across
incremental passes the indexer does the same: a record whose entry id the file already has replaces its rows.

Sidechain (subagent) lines (``isSidechain:true``) are kept as normal records. In a subagent file, whose lines carry
the parent's ``sessionId``, ``info.session_id`` is the ``agentId`` and ``info.parent_session`` the parent's
``sessionId``. ``leaf_id`` is the last non-sidechain entry of the pass (in a subagent file, or a first pass with only
sidechain lines, the last sidechain entry); ``None`` when an incremental pass read none (keep the previous leaf).

Skipped and counted: ``is_meta`` (``isMeta`` lines: injected, not typed by the user), ``api_error`` (synthetic
assistant lines with ``isApiErrorMessage``), ``thinking``, ``image``, ``document``, ``empty``, ``foreign_summary``,
``meta:<type>`` for ``system``, ``progress``, ``file-history-snapshot``, ``queue-operation``, ``attachment``,
``custom-title``, ``ai-title``, ``last-prompt``, ``tag``, ``pr-link``, ``worktree-state``, ``agent-name``,
``content-replacement``; ``unknown_type:<t>``, ``unknown_block:<t>``, ``malformed_line``, ``not_object``,
``blank_line``.
"""

from __future__ import annotations

import collections
import dataclasses
from pathlib import Path

from .base import (
    LineSource,
    ReadResult,
    Record,
    SessionInfo,
    block_text,
    keep,
    norm_ts,
    parse_line,
    tool_call_text,
)

META_TYPES = frozenset(
    {
        "system",
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "custom-title",
        "ai-title",
        "last-prompt",
        "tag",
        "pr-link",
        "worktree-state",
        "agent-name",
        "content-replacement",
    }
)


_COUNTED = {"image": "image", "document": "document"}


def _block_text(content: object, skipped: collections.Counter) -> str:
    """Text of a string or a list of blocks (text only; images/documents counted)."""
    return block_text(content, skipped, counted=_COUNTED)


def _user(
    line: dict,
    content: object,
    eid: str | None,
    pid: str | None,
    n: int,
    ts: str | None,
    tool_names: dict[str, str],
    records: list[Record],
    skipped: collections.Counter,
) -> None:
    kind, role = ("compaction", "summary") if line.get("isCompactSummary") else ("message", "user")
    if type(content) is str:
        keep(records, skipped, Record(kind, role, content, eid, pid, n, ts))
        return
    if type(content) is not list:
        skipped["empty"] += 1
        return
    texts: list[str] = []
    results: list[Record] = []
    empty_results = 0
    for block in content:
        if type(block) is not dict:
            continue
        btype = block.get("type")
        if btype == "text":
            text = block.get("text")
            if type(text) is str and text.strip():
                texts.append(text)
        elif btype == "tool_result":
            text = _block_text(block.get("content"), skipped)
            empty_results += not text.strip()
            if text.strip():
                call_id = block.get("tool_use_id")
                results.append(Record("tool_result", "tool", text, eid, pid, n, ts, tool_names.get(call_id)))
        elif btype == "image":
            skipped["image"] += 1
        elif btype == "document":
            skipped["document"] += 1
        else:
            skipped[f"unknown_block:{btype}"] += 1
    if texts:
        records.append(Record(kind, role, "\n".join(texts), eid, pid, n, ts))
    records.extend(results)
    if empty_results:
        skipped["empty"] += empty_results
    elif not texts and not results:
        skipped["empty"] += 1


def _assistant(
    content: object,
    eid: str | None,
    pid: str | None,
    n: int,
    ts: str | None,
    tool_names: dict[str, str],
    records: list[Record],
    skipped: collections.Counter,
) -> None:
    if type(content) is str:
        keep(records, skipped, Record("message", "assistant", content, eid, pid, n, ts))
        return
    if type(content) is not list:
        skipped["empty"] += 1
        return
    texts: list[str] = []
    calls: list[Record] = []
    for block in content:
        if type(block) is not dict:
            continue
        btype = block.get("type")
        if btype == "text":
            text = block.get("text")
            if type(text) is str and text.strip():
                texts.append(text)
        elif btype == "tool_use":
            name = block.get("name")
            name = name if type(name) is str else None
            call_id = block.get("id")
            if name and type(call_id) is str:
                tool_names[call_id] = name
            calls.append(
                Record(
                    "tool_call", "assistant", tool_call_text(name, block.get("input")), eid, pid, n, ts, name
                )
            )
        elif btype == "thinking" or btype == "redacted_thinking":
            skipped["thinking"] += 1
        elif btype == "image":
            skipped["image"] += 1
        else:
            skipped[f"unknown_block:{btype}"] += 1
    if texts:
        records.append(Record("message", "assistant", "\n".join(texts), eid, pid, n, ts))
    records.extend(calls)
    if not texts and not calls:
        skipped["empty"] += 1


def read_claude_code(
    path: str | Path, start_offset: int = 0, start_line: int = 0, info: SessionInfo | None = None
) -> ReadResult:
    """Read a Claude Code transcript from ``start_offset``; ``info`` from an earlier pass is kept and completed."""
    skipped: collections.Counter = collections.Counter()
    records: list[Record] = []
    parents: dict[str, str | None] = {}
    leaf: str | None = None
    side_leaf: str | None = None
    tool_names: dict[str, str] = {}
    summaries: list[
        tuple[int, int, str, str, str | None]
    ] = []  # (index in records, line, leafUuid, text, ts)
    if info is None:
        info = SessionInfo(source="claude_code", session_id=None, cwd=None, started_at=None, version=None)
    else:
        info = dataclasses.replace(info)  # completed below; the caller's object is left as it was
    need_info = info.session_id is None or info.cwd is None or info.started_at is None or info.version is None

    positions: dict[str, range] = {}  # uuid -> where its records are in ``records`` (a repeat replaces them)
    seen_summaries: set[tuple[str, str]] = set()
    src = LineSource(path, start_offset, start_line)
    for n, raw in src:
        try:  # a valid JSON line with unexpected types costs that line, never the file
            line = parse_line(raw, skipped)
            if line is None:
                continue
            ltype = line.get("type")
            eid = line.get("uuid")
            if type(eid) is str:
                pid = line.get("parentUuid")
                if type(pid) is not str:
                    pid = line.get("logicalParentUuid")
                    if type(pid) is not str:
                        pid = None
                parents[eid] = pid
                if line.get("isSidechain") is True:
                    side_leaf = eid
                else:
                    leaf = eid
            else:
                eid = pid = None
            ts = norm_ts(line.get("timestamp"))
            if need_info:
                need_info = _fill_info(info, line, ts)

            if ltype == "user" or ltype == "assistant":
                if eid is not None:
                    if eid in positions:  # a repeated record (resume, retry): the last version wins
                        for i in positions[eid]:
                            records[i] = None
                        skipped["repeated_uuid"] += 1
                    start = len(records)
                if line.get("isMeta"):
                    skipped["is_meta"] += 1
                    continue
                msg = line.get("message")
                if type(msg) is not dict:
                    skipped["empty"] += 1
                    continue
                if ltype == "user":
                    _user(line, msg.get("content"), eid, pid, n, ts, tool_names, records, skipped)
                elif line.get("isApiErrorMessage"):
                    skipped["api_error"] += 1
                else:
                    _assistant(msg.get("content"), eid, pid, n, ts, tool_names, records, skipped)
                if eid is not None:
                    positions[eid] = range(start, len(records))
            elif ltype in META_TYPES:
                skipped[f"meta:{ltype}"] += 1
            elif ltype == "summary":
                text = line.get("summary")
                target = line.get("leafUuid")
                if type(text) is str and text.strip() and type(target) is str and (target, text) not in seen_summaries:
                    seen_summaries.add((target, text))
                    summaries.append((len(records), n, target, text, ts))
                elif type(text) is str and text.strip() and type(target) is str:
                    skipped["repeated_summary"] += 1
                else:
                    skipped["empty"] += 1
            else:
                skipped[f"unknown_type:{ltype}"] += 1
        except (TypeError, AttributeError, KeyError, IndexError, ValueError):
            skipped["malformed_entry"] += 1

    if positions and any(r is None for r in records):  # drop the replaced versions, keep summary places
        kept_before = [0]
        for r in records:
            kept_before.append(kept_before[-1] + (r is not None))
        summaries = [(kept_before[i], *rest) for i, *rest in summaries]
        records = [r for r in records if r is not None]
    if summaries:
        records = _place_summaries(records, summaries, parents, skipped)
    return ReadResult(
        info=info,
        records=records,
        parents=parents,
        leaf_id=leaf if leaf is not None or (start_offset > 0 and info.parent_session is None) else side_leaf,
        skipped=skipped,
        end_offset=src.end_offset,
        end_line=src.end_line,
        partial_tail=src.partial_tail,
    )


def _fill_info(info: SessionInfo, line: dict, ts: str | None) -> bool:
    """Complete ``info`` from one line; return whether fields are still missing."""
    if info.session_id is None:
        sid = line.get("sessionId")
        agent = line.get("agentId")
        if line.get("isSidechain") is True and type(agent) is str and agent:
            info.session_id = agent
            info.parent_session = sid if type(sid) is str else None
        elif type(sid) is str and sid:
            info.session_id = sid
    if info.cwd is None:
        cwd = line.get("cwd")
        if type(cwd) is str and cwd:
            info.cwd = cwd
    if info.version is None:
        version = line.get("version")
        if type(version) is str and version:
            info.version = version
    if info.started_at is None and ts is not None:
        info.started_at = ts
    return info.session_id is None or info.cwd is None or info.started_at is None or info.version is None


def _place_summaries(
    records: list[Record],
    summaries: list[tuple[int, int, str, str, str | None]],
    parents: dict[str, str | None],
    skipped: collections.Counter,
) -> list[Record]:
    """Insert the summaries whose leaf is in this file at their line's place; count the others."""
    out: list[Record] = []
    pos = 0
    for index, n, target, text, ts in summaries:
        if target not in parents:
            skipped["foreign_summary"] += 1
            continue
        out.extend(records[pos:index])
        pos = index
        out.append(Record("branch_summary", "summary", text, None, target, n, ts))
    out.extend(records[pos:])
    return out
