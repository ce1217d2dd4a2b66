"""Reader for pi coding-agent sessions: ``<agentDir>/sessions/--<cwd>--/<ISO>_<uuid>.jsonl``.

Formats (source: pi's ``session-manager`` and the real files in ``shared/fixtures``):

* **v3** (pi 0.73.x and 1.6.x): line 1 is the header ``{"type":"session","version":3,"id","timestamp","cwd",
  "parentSession"?}``; every other line is ``{"type","id","parentId","timestamp",...}`` and the lines form a
  tree through ``parentId`` (branches live in the same file; the active leaf is the last line).
* **v2**: as v3 (``version:2``, ids and ``parentId``), except that extension-injected messages have
  ``role:"hookMessage"`` instead of ``"custom"``.
* **v1** (no ``version`` in the header, which also carries ``provider``/``modelId``/``thinkingLevel`` and maybe
  ``branchedFrom``, the older name of ``parentSession``): entries have no ``id``/``parentId``; the file is one
  linear conversation and ``compaction`` has ``firstKeptEntryIndex``. pi migrates v1/v2 to v3 (new random ids)
  and rewrites the whole file the first time it opens it, so the caller must re-read such a file from offset 0
  when its size shrinks or its header changes.

For v1 the reader assigns synthetic ids: consumed line ``n`` (after the header) is entry ``"L<n>"`` whose parent is
``"L<n-1>"`` (``None`` for line 2). Every line gets one, even a blank or malformed one, so the chain never breaks
and an incremental pass (``start_line``) continues it.

Records kept:

=================================  ==================  ===========  ==========================================
entry / message role               kind                role         text
=================================  ==================  ===========  ==========================================
message user                       message             user         text blocks joined with ``\\n``
message assistant (text blocks)    message             assistant    text blocks joined with ``\\n``
message assistant toolCall block   tool_call           assistant    ``name: <compact JSON args>`` (one per call)
message toolResult                 tool_result         tool         text blocks (``tool_name`` = ``toolName``)
message bashExecution              bash                user         ``command\\noutput`` (``tool_name`` = "bash")
message custom / hookMessage       custom_message      user         content (``tool_name`` = ``customType``)
custom_message entry               custom_message      user         content (``tool_name`` = ``customType``)
compaction / compactionSummary     compaction          summary      ``summary``
branch_summary / branchSummary     branch_summary      summary      ``summary``
=================================  ==================  ===========  ==========================================

``tool_name`` of a ``custom_message`` record carries the extension's ``customType`` (e.g. ``"memory-recall"``) so
the caller can leave out its own injected recalls.

Skipped (counted in ``ReadResult.skipped``): failed retries (assistant ``stopReason:"error"`` with no text or tool
call: ``failed_retry``; the same with ``stopReason:"aborted"``: ``aborted``), ``thinking`` and ``image`` blocks (per block), the 1.6 ``role:"system"`` message with pi's
system prompt (``system_prompt``), entries with no conversation (``meta:<type>`` for ``custom``, ``model_change``,
``thinking_level_change``, ``label``, ``session_info``, ``usage``, ``context_edit`` and a stray ``session``
header), messages with no text (``empty``), ``unknown_type:<t>``, ``unknown_role:<r>``, ``unknown_block:<t>``,
``malformed_line``, ``not_object``, ``blank_line``. None of them is fatal.
"""

from __future__ import annotations

import collections
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
    read_first_object,
    tool_call_text,
)

META_TYPES = frozenset(
    {"custom", "model_change", "thinking_level_change", "label", "session_info", "usage", "context_edit"}
)


def _info_from_header(header: dict | None) -> SessionInfo:
    if header is None:
        return SessionInfo(source="pi", session_id=None, cwd=None, started_at=None, version=None)
    version = header.get("version")
    sid = header.get("id")
    cwd = header.get("cwd")
    parent = header.get("parentSession") or header.get("branchedFrom")
    return SessionInfo(
        source="pi",
        session_id=sid if type(sid) is str else None,
        cwd=cwd if type(cwd) is str and cwd else None,
        started_at=norm_ts(header.get("timestamp")),
        version=str(version) if version is not None else "1",
        parent_session=parent if type(parent) is str and parent else None,
    )


_COUNTED = {"image": "image", "thinking": "thinking"}


def _text(content: object, skipped: collections.Counter) -> str:
    """Text of a user/toolResult/custom content: a string, or text blocks joined (images counted, not kept)."""
    return block_text(content, skipped, counted=_COUNTED)


def _message(
    msg: dict,
    eid: str | None,
    pid: str | None,
    n: int,
    ts: str | None,
    records: list[Record],
    skipped: collections.Counter,
) -> None:
    role = msg.get("role")
    if ts is None:
        ts = norm_ts(msg.get("timestamp"))
    if role == "assistant":
        content = msg.get("content")
        texts: list[str] = []
        calls: list[Record] = []
        if type(content) is str:
            if content:
                texts.append(content)
        elif type(content) is list:
            for block in content:
                if type(block) is not dict:
                    continue
                btype = block.get("type")
                if btype == "text":
                    text = block.get("text")
                    if type(text) is str and text.strip():
                        texts.append(text)
                elif btype == "toolCall":
                    name = block.get("name")
                    name = name if type(name) is str else None
                    calls.append(
                        Record(
                            "tool_call",
                            "assistant",
                            tool_call_text(name, block.get("arguments")),
                            eid,
                            pid,
                            n,
                            ts,
                            name,
                        )
                    )
                elif btype == "thinking":
                    skipped["thinking"] += 1
                elif btype == "image":
                    skipped["image"] += 1
                else:
                    skipped[f"unknown_block:{btype}"] += 1
        if texts:
            records.append(Record("message", "assistant", "\n".join(texts), eid, pid, n, ts))
        if calls:
            records.extend(calls)
        elif not texts:
            stop = msg.get("stopReason")
            skipped["failed_retry" if stop == "error" else "aborted" if stop == "aborted" else "empty"] += 1
        return
    if role == "user":
        keep(records, skipped, Record("message", "user", _text(msg.get("content"), skipped), eid, pid, n, ts))
    elif role == "toolResult":
        text = _text(msg.get("content"), skipped)
        name = msg.get("toolName")
        name = name if type(name) is str else None
        keep(records, skipped, Record("tool_result", "tool", text, eid, pid, n, ts, name))
    elif role == "bashExecution":
        command = msg.get("command")
        output = msg.get("output")
        command = command if type(command) is str else ""
        output = output if type(output) is str else ""
        if command or output:
            records.append(
                Record("bash", "user", f"{command}\n{output}" if output else command, eid, pid, n, ts, "bash")
            )
        else:
            skipped["empty"] += 1
    elif role == "custom" or role == "hookMessage":
        _custom(msg, eid, pid, n, ts, records, skipped)
    elif role == "system":
        skipped["system_prompt"] += 1
    elif role == "compactionSummary" or role == "branchSummary":
        _summary(
            "compaction" if role == "compactionSummary" else "branch_summary",
            msg,
            eid,
            pid,
            n,
            ts,
            records,
            skipped,
        )
    else:
        skipped[f"unknown_role:{role}"] += 1


def _custom(
    obj: dict,
    eid: str | None,
    pid: str | None,
    n: int,
    ts: str | None,
    records: list[Record],
    skipped: collections.Counter,
) -> None:
    text = _text(obj.get("content"), skipped)
    ctype = obj.get("customType")
    ctype = ctype if type(ctype) is str else None
    keep(records, skipped, Record("custom_message", "user", text, eid, pid, n, ts, ctype))


def _summary(
    kind: str,
    obj: dict,
    eid: str | None,
    pid: str | None,
    n: int,
    ts: str | None,
    records: list[Record],
    skipped: collections.Counter,
) -> None:
    text = obj.get("summary")
    keep(records, skipped, Record(kind, "summary", text if type(text) is str else "", eid, pid, n, ts))


def read_pi(
    path: str | Path, start_offset: int = 0, start_line: int = 0, info: SessionInfo | None = None
) -> ReadResult:
    """Read a pi session file from ``start_offset`` (0: whole file, header included).

    For an incremental pass (``start_offset > 0``) pass the ``end_offset``/``end_line``/``info`` of the previous
    pass; without ``info`` the header is read again from the start of the file.
    """
    skipped: collections.Counter = collections.Counter()
    records: list[Record] = []
    parents: dict[str, str | None] = {}
    leaf: str | None = None
    if start_offset > 0 and info is None:
        header = read_first_object(path)
        info = _info_from_header(header if header is not None and header.get("type") == "session" else None)
    elif info is None:
        info = _info_from_header(None)
    linear = info.version == "1"
    prev_lid = f"L{start_line}" if linear and start_line >= 2 else None

    src = LineSource(path, start_offset, start_line)
    for n, raw in src:
        try:  # a valid JSON line with unexpected types costs that line, never the file
            entry = parse_line(raw, skipped)
            if entry is not None and n == 1 and entry.get("type") == "session":
                info = _info_from_header(entry)
                linear = info.version == "1"
                continue
            if linear:
                eid: str | None = f"L{n}"
                pid: str | None = prev_lid
                parents[eid] = pid
                prev_lid = leaf = eid
                if entry is None:
                    continue
            else:
                if entry is None:
                    continue
                eid = entry.get("id")
                pid = entry.get("parentId")
                if type(eid) is str:
                    if type(pid) is not str:
                        pid = None
                    parents[eid] = pid
                    leaf = eid
                else:
                    eid = None
                    pid = pid if type(pid) is str else None

            etype = entry.get("type")
            if etype == "message":
                msg = entry.get("message")
                if type(msg) is dict:
                    _message(msg, eid, pid, n, norm_ts(entry.get("timestamp")), records, skipped)
                else:
                    skipped["empty"] += 1
            elif etype in META_TYPES:
                skipped[f"meta:{etype}"] += 1
            elif etype == "custom_message":
                _custom(entry, eid, pid, n, norm_ts(entry.get("timestamp")), records, skipped)
            elif etype == "compaction" or etype == "branch_summary":
                _summary(etype, entry, eid, pid, n, norm_ts(entry.get("timestamp")), records, skipped)
            elif etype == "session":
                skipped["meta:session"] += 1
            else:
                skipped[f"unknown_type:{etype}"] += 1
        except (TypeError, AttributeError, KeyError, IndexError, ValueError):
            skipped["malformed_entry"] += 1

    return ReadResult(
        info=info,
        records=records,
        parents=parents,
        leaf_id=leaf,
        skipped=skipped,
        end_offset=src.end_offset,
        end_line=src.end_line,
        partial_tail=src.partial_tail,
    )
