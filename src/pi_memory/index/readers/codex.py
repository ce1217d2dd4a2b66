"""Reader for OpenAI Codex CLI rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ISO>-<uuid>.jsonl``.

Shapes (from ``shared/reference/ecosystem.md`` §3 "Rollouts", Codex 0.169): every line is
``{"timestamp","type","payload"}`` (newer versions add ``ordinal``), with ``type``:

* ``session_meta``: ``payload.id``, ``timestamp``, ``cwd``, ``cli_version``, ``git``, ``instructions``... -> ``info``.
* ``response_item``: what the model sees. ``payload.type``:
  ``message`` (``role`` user/assistant/developer/system; ``content`` blocks ``input_text``/``output_text``/
  ``input_image``), ``reasoning``, ``function_call`` (``name``, JSON-string ``arguments``, ``call_id``),
  ``function_call_output`` (``call_id``, ``output``: a string, content items, or ``{"content": ...}``),
  ``custom_tool_call`` (``name``, free-text ``input``, e.g. ``apply_patch``), ``custom_tool_call_output``,
  ``local_shell_call`` (``action.command``), ``web_search_call`` (``action``).
* ``event_msg``: what the TUI shows (``user_message``, ``agent_message``, ``exec_command_end``, ``token_count``...).
  Everything there that matters is also a ``response_item`` (shell output appears both as ``exec_command_end`` and
  ``function_call_output`` with the same ``call_id``), so all ``event_msg`` lines are skipped.
* ``compacted``: ``payload.message`` is the summary that replaced the history (``replacement_history``, which
  repeats earlier items, is not indexed).
* ``turn_context``, ``world_state``: metadata, skipped.

Older rollouts without the envelope (a first line ``{"id","timestamp","instructions"}`` then bare items, plus
``{"record_type":"state"}`` lines) are read too: a bare item is handled as a ``response_item`` payload.

A rollout is linear, so the reader assigns synthetic ids: line ``n`` is entry ``"L<n>"`` with parent ``"L<n-1>"``
(``None`` for line 1), every consumed line included, so the chain continues across incremental passes.

Records kept:

=====================================  ===========  =========  ==============================================
response_item payload                  kind         role       text
=====================================  ===========  =========  ==============================================
message user (``input_text``)          message      user       text blocks joined with ``\\n``
message assistant (``output_text``)    message      assistant  text blocks joined with ``\\n``
function_call / local_shell_call /     tool_call    assistant  ``name: <compact JSON args>`` (custom tools: raw
custom_tool_call / web_search_call                             ``input``)
function_call_output /                 tool_result  tool       output text (``tool_name`` from the call, when
custom_tool_call_output                                        read in the same pass); a JSON string
                                                               ``{"output": ..., "metadata": ...}`` is unwrapped
compacted (line type)                  compaction   summary    ``payload.message``
=====================================  ===========  =========  ==============================================

Skipped and counted: ``instructions`` (developer/system messages, and user-role messages that Codex injects:
``<user_instructions>``, ``<environment_context>``, ``# AGENTS.md instructions``...), ``reasoning``, ``image``,
``duplicate_call_id`` (a second call or output with a ``call_id`` already read in this pass), ``event_msg:<type>``,
``meta:<type>`` (``turn_context``, ``world_state``, ``state``, a second ``session_meta``, the response items
``ghost_snapshot`` and ``compaction`` whose content is encrypted), ``empty``,
``unknown_type:<t>``, ``unknown_item:<t>``, ``unknown_role:<r>``, ``unknown_block:<t>``, ``malformed_line``,
``not_object``, ``blank_line``.
"""

from __future__ import annotations

import collections
import contextlib
import json
from pathlib import Path

from pi_memory import safety

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

INJECTED_PREFIXES = (
    "<user_instructions>",
    "<environment_context>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
)
META_TYPES = frozenset({"turn_context", "world_state"})
QUIET_ITEMS = frozenset({"ghost_snapshot", "compaction"})  # git snapshots; encrypted compaction state
ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)


_TEXT_TYPES = frozenset({"input_text", "output_text", "text"})
_COUNTED = {"input_image": "image", "image": "image"}


def _content_text(content: object, skipped: collections.Counter) -> str:
    return block_text(content, skipped, _TEXT_TYPES, _COUNTED)


def _output_text(output: object, skipped: collections.Counter) -> str:
    if type(output) is str:
        if output.startswith(
            '{"output":'
        ):  # older exec/apply_patch results: {"output": "...", "metadata": {...}}
            try:
                inner = safety.replace_unencodable(json.loads(output))
            except (ValueError, RecursionError):
                return output
            if type(inner) is dict and type(inner.get("output")) is str:
                return inner["output"]
        return output
    if type(output) is dict:
        return _content_text(output.get("content"), skipped)
    return _content_text(output, skipped)


class _State:
    __slots__ = ("records", "skipped", "tool_names", "seen_calls", "seen_outputs")

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.skipped: collections.Counter = collections.Counter()
        self.tool_names: dict[str, str] = {}
        self.seen_calls: set[str] = set()
        self.seen_outputs: set[str] = set()


def _item(p: dict, eid: str, pid: str | None, n: int, ts: str | None, st: _State) -> None:
    ptype = p.get("type")
    skipped = st.skipped
    if ptype == "message":
        role = p.get("role")
        if role == "user" or role == "assistant":
            text = _content_text(p.get("content"), skipped)
            if not text.strip():
                skipped["empty"] += 1
            elif role == "user" and text.lstrip().startswith(INJECTED_PREFIXES):
                skipped["instructions"] += 1
            else:
                st.records.append(Record("message", role, text, eid, pid, n, ts))
        elif role == "developer" or role == "system":
            skipped["instructions"] += 1
        else:
            skipped[f"unknown_role:{role}"] += 1
        return
    if ptype == "reasoning":
        skipped["reasoning"] += 1
        return
    if ptype in QUIET_ITEMS:
        skipped[f"meta:{ptype}"] += 1
        return
    if ptype in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
        call_id = p.get("call_id")
        if type(call_id) is str:
            if call_id in st.seen_calls:
                skipped["duplicate_call_id"] += 1
                return
            st.seen_calls.add(call_id)
        if ptype == "function_call":
            name = p.get("name")
            args = p.get("arguments")
            if type(args) is str:
                with contextlib.suppress(ValueError, RecursionError):  # else keep the raw string
                    args = safety.replace_unencodable(json.loads(args))  # "\ud83d" escapes inside it
        elif ptype == "custom_tool_call":
            name = p.get("name")
            args = p.get("input")
        elif ptype == "local_shell_call":
            name = "local_shell"
            action = p.get("action")
            args = action.get("command", action) if type(action) is dict else action
        else:
            name = "web_search"
            args = p.get("action")
        name = name if type(name) is str else None
        if name and type(call_id) is str:
            st.tool_names[call_id] = name
        st.records.append(Record("tool_call", "assistant", tool_call_text(name, args), eid, pid, n, ts, name))
        return
    if ptype == "function_call_output" or ptype == "custom_tool_call_output":
        call_id = p.get("call_id")
        if type(call_id) is str:
            if call_id in st.seen_outputs:
                skipped["duplicate_call_id"] += 1
                return
            st.seen_outputs.add(call_id)
        text = _output_text(p.get("output"), skipped)
        name = st.tool_names.get(call_id)
        keep(st.records, skipped, Record("tool_result", "tool", text, eid, pid, n, ts, name))
        return
    skipped[f"unknown_item:{ptype}"] += 1


def _meta_info(meta: dict, ts: str | None) -> SessionInfo:
    sid = meta.get("id")
    cwd = meta.get("cwd")
    version = meta.get("cli_version")
    forked = meta.get("forked_from_id")
    return SessionInfo(
        source="codex",
        session_id=sid if type(sid) is str else None,
        cwd=cwd if type(cwd) is str and cwd else None,
        started_at=norm_ts(meta.get("timestamp")) or ts,
        version=version if type(version) is str and version else None,
        parent_session=forked if type(forked) is str and forked else None,
    )


def read_codex(
    path: str | Path, start_offset: int = 0, start_line: int = 0, info: SessionInfo | None = None
) -> ReadResult:
    """Read a Codex rollout from ``start_offset``; ``info`` comes from the first ``session_meta`` line read."""
    st = _State()
    skipped = st.skipped
    parents: dict[str, str | None] = {}
    if info is None and start_offset > 0:
        first = read_first_object(path)
        if first is not None and first.get("type") == "session_meta" and type(first.get("payload")) is dict:
            info = _meta_info(first["payload"], norm_ts(first.get("timestamp")))
    have_meta = info is not None and info.session_id is not None
    if info is None:
        info = SessionInfo(source="codex", session_id=None, cwd=None, started_at=None, version=None)
    prev = f"L{start_line}" if start_line >= 1 else None

    src = LineSource(path, start_offset, start_line)
    for n, raw in src:
        try:  # a valid JSON line with unexpected types costs that line, never the file
            eid = f"L{n}"
            pid = prev
            parents[eid] = pid
            prev = eid
            line = parse_line(raw, skipped)
            if line is None:
                continue
            ts = norm_ts(line.get("timestamp"))
            ltype = line.get("type")
            payload = line.get("payload")
            if type(payload) is not dict:
                payload = None
            if ltype == "response_item" and payload is not None:
                _item(payload, eid, pid, n, ts, st)
            elif ltype == "event_msg":
                skipped[f"event_msg:{payload.get('type') if payload else None}"] += 1
            elif ltype == "compacted":
                text = payload.get("message") if payload else None
                keep(st.records, skipped, Record("compaction", "summary", text if type(text) is str else "", eid, pid,
                                                 n, ts))
            elif ltype == "session_meta" and payload is not None:
                if have_meta:
                    skipped["meta:session_meta"] += 1
                else:
                    info = _meta_info(payload, ts)
                    have_meta = True
            elif ltype in META_TYPES:
                skipped[f"meta:{ltype}"] += 1
            elif ltype in ITEM_TYPES and payload is None:  # legacy rollout: bare response item
                _item(line, eid, pid, n, ts, st)
            elif ltype is None and n == 1 and "id" in line and not have_meta:  # legacy rollout header
                info = _meta_info(line, ts)
                have_meta = True
            elif ltype is None and line.get("record_type") is not None:
                skipped[f"meta:{line.get('record_type')}"] += 1
            else:
                skipped[f"unknown_type:{ltype}"] += 1
        except (TypeError, AttributeError, KeyError, IndexError, ValueError):
            skipped["malformed_entry"] += 1

    return ReadResult(
        info=info,
        records=st.records,
        parents=parents,
        leaf_id=prev if src.end_line > start_line else None,
        skipped=skipped,
        end_offset=src.end_offset,
        end_line=src.end_line,
        partial_tail=src.partial_tail,
    )
