"""Scripted model servers for the real Claude Code and Codex CLIs: Anthropic Messages and OpenAI Responses,
both streamed as server-sent events, on 127.0.0.1 only.

They follow the same script as :mod:`pi_memory.devtools.scripted_llm` (the OpenAI chat-completions one pi
uses): the typed prompt of the current run is the script, and every line of it holding ``[tool:NAME] {json}``
is one tool call, made one per model response in order; once they are done the reply quotes the last tool
output, otherwise it is ``Fake answer to: <prompt>``. Only the typed prompt is read, never context a hook
injected (Claude Code sends hook context as ``system``-role messages and ``<system-reminder>`` blocks, Codex
as ``developer`` messages), so memory text can never trigger a tool call. Every request body is kept
(``requests``) for the tests to assert on.

* :class:`ScriptedAnthropic`: ``POST /v1/messages`` (streamed or not) and ``/v1/messages/count_tokens``.
  Tool names are the request's ``tools`` names (``mcp__pi-memory__memory_add`` with
  ``ENABLE_TOOL_SEARCH=false``; Claude Code otherwise defers MCP tools behind ``ToolSearch``).
* :class:`ScriptedResponses`: ``POST /v1/responses``. MCP tools arrive inside ``namespace`` tools
  (``mcp__pi_memory``); a directive names the plain tool (``[tool:memory_add]``) and the call carries the
  namespace.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from pi_memory.devtools.scripted_llm import _QUOTE_LIMIT, ScriptedLLM, _Handler, parse_steps

MODEL_ID = "fake-model"


def script_reply(prompt: str, done: int, results: list[str] | None, tool_names: set[str]) -> dict[str, Any]:
    """``{"tool": (name, args)}`` for the next scripted call, else ``{"text": ...}``. ``done``: calls already
    made in this run; ``results``: the tool outputs the request ends with (``None`` when it ends otherwise)."""
    calls = [c for step in parse_steps(prompt) for c in step if c.name in tool_names]
    if done < len(calls):
        return {"tool": (calls[done].name, calls[done].arguments)}
    if results is not None:
        quoted = "\n---\n".join(r.strip() for r in results)[:_QUOTE_LIMIT]
        return {"text": "The tool finished. Its output was:\n" + quoted + "\nDone."}
    return {"text": "Fake answer to: " + prompt.strip().replace("\n", " ")[:200]}


class _SSEHandler(_Handler):
    """The chat-completions handler's HTTP plumbing; subclasses answer ``POST`` in their own wire API."""

    def send_json(self, code: int, obj: dict[str, Any]) -> None:
        self._send_json(code, obj)

    def send_events(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

    def read_body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length", "0") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}") if length else {}
        except ValueError:
            self.send_json(400, {"error": {"message": "bad json"}})
            return None
        self.server.owner._record(self.path, body)
        return body

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


# --------------------------------------------------------------------------------------- Anthropic Messages
def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _typed_text(message: dict[str, Any]) -> str | None:
    """The user's typed text in a Messages ``user`` message (``None`` for tool results and injected text)."""
    if message.get("role") != "user":
        return None
    texts = [b.get("text", "") for b in _blocks(message.get("content")) if b.get("type") == "text"]
    typed = [t for t in texts if not t.lstrip().startswith("<system-reminder>")]
    return "\n".join(typed) if typed else None


def anthropic_prompt(body: dict[str, Any]) -> tuple[int | None, str]:
    messages = body.get("messages") or []
    for i in range(len(messages) - 1, -1, -1):
        text = _typed_text(messages[i])
        if text is not None:
            return i, text
    return None, ""


def anthropic_decide(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    idx, prompt = anthropic_prompt(body)
    after = messages[idx + 1:] if idx is not None else []
    done = sum(1 for m in after if m.get("role") == "assistant"
               for b in _blocks(m.get("content")) if b.get("type") == "tool_use")
    turns = [m for m in messages if m.get("role") != "system"]  # Claude Code appends system-role context
    last = _blocks(turns[-1].get("content")) if turns else []
    results = None
    if turns and turns[-1].get("role") == "user" and any(b.get("type") == "tool_result" for b in last):
        results = [c if isinstance(c := b.get("content"), str)
                   else "\n".join(x.get("text", "") for x in _blocks(c) if x.get("type") == "text")
                   for b in last if b.get("type") == "tool_result"]
    names = {t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)}
    return script_reply(prompt, done, results, names)


class _AnthropicHandler(_SSEHandler):
    def do_POST(self) -> None:
        body = self.read_body()
        if body is None:
            return
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/messages/count_tokens"):
            self.send_json(200, {"input_tokens": len(json.dumps(body)) // 4})
            return
        if not path.endswith("/messages"):
            self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not found"}})
            return
        reply = anthropic_decide(body)
        mid = "msg_" + uuid.uuid4().hex[:16]
        usage = {"input_tokens": len(json.dumps(body.get("messages"))) // 4, "output_tokens": 12}
        if "tool" in reply:
            name, args = reply["tool"]
            block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:16], "name": name, "input": args}
            stop = "tool_use"
        else:
            block, stop = {"type": "text", "text": reply["text"]}, "end_turn"
        message = {"id": mid, "type": "message", "role": "assistant", "model": body.get("model") or MODEL_ID,
                   "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            self.send_json(200, message)
            return
        start = {**block, "input": {}} if block["type"] == "tool_use" else {"type": "text", "text": ""}
        delta = ({"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
                 if block["type"] == "tool_use" else {"type": "text_delta", "text": block["text"]})
        self.send_events([
            ("message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 12}}),
            ("message_stop", {"type": "message_stop"}),
        ])


class ScriptedAnthropic(ScriptedLLM):
    """Anthropic Messages API (``ANTHROPIC_BASE_URL`` = :attr:`root_url`)."""

    handler_class = _AnthropicHandler

    @property
    def root_url(self) -> str:
        return f"http://{self._host}:{self.port}"

    @property
    def message_requests(self) -> list[dict[str, Any]]:
        """Bodies of the ``/v1/messages`` requests (not ``count_tokens``), oldest first."""
        return [r["body"] for r in self.requests if r["path"].split("?")[0].rstrip("/").endswith("/messages")]


# ---------------------------------------------------------------------------------------- OpenAI Responses
def _item_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content or [] if isinstance(p, dict))


def responses_prompt(body: dict[str, Any]) -> tuple[int | None, str]:
    """The last ``user`` message of ``input`` that is not Codex's own context (environment, AGENTS.md)."""
    items = body.get("input") or []
    for i in range(len(items) - 1, -1, -1):
        item = items[i]
        if isinstance(item, dict) and item.get("type", "message") == "message" and item.get("role") == "user":
            text = _item_text(item)
            if not text.lstrip().startswith(("<environment_context>", "# AGENTS.md", "<user_instructions>")):
                return i, text
    return None, ""


def responses_tools(body: dict[str, Any]) -> dict[str, str | None]:
    """Tool name -> its namespace (``None`` for a plain function)."""
    out: dict[str, str | None] = {}
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                out[str(inner.get("name", ""))] = str(tool.get("name"))
        elif tool.get("name"):
            out[str(tool["name"])] = None
    return out


def responses_decide(body: dict[str, Any]) -> dict[str, Any]:
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    idx, prompt = responses_prompt(body)
    after = items[idx + 1:] if idx is not None else []
    done = sum(1 for i in after if i.get("type") == "function_call")
    results = None
    if items and items[-1].get("type") == "function_call_output":
        tail = []
        for item in reversed(items):
            if item.get("type") != "function_call_output":
                break
            out = item.get("output")
            tail.append(out if isinstance(out, str) else json.dumps(out))
        results = list(reversed(tail))
    return script_reply(prompt, done, results, set(responses_tools(body)))


class _ResponsesHandler(_SSEHandler):
    def do_POST(self) -> None:
        body = self.read_body()
        if body is None:
            return
        if not self.path.split("?")[0].rstrip("/").endswith("/responses"):
            self.send_json(404, {"error": {"message": "not found"}})
            return
        reply = responses_decide(body)
        rid = "resp_" + uuid.uuid4().hex[:16]
        if "tool" in reply:
            name, args = reply["tool"]
            item: dict[str, Any] = {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:12],
                                    "call_id": "call_" + uuid.uuid4().hex[:12], "name": name,
                                    "arguments": json.dumps(args), "status": "completed"}
            namespace = responses_tools(body).get(name)
            if namespace:
                item["namespace"] = namespace
            events = []
        else:
            item = {"type": "message", "id": "msg_" + uuid.uuid4().hex[:12], "role": "assistant",
                    "status": "completed", "content": [{"type": "output_text", "text": reply["text"],
                                                        "annotations": []}]}
            events = [("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                      "output_index": 0, "content_index": 0,
                                                      "delta": reply["text"]})]
        tokens = len(json.dumps(body.get("input"))) // 4
        usage = {"input_tokens": tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 12,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": tokens + 12}
        response = {"id": rid, "object": "response", "created_at": int(time.time()), "model": MODEL_ID,
                    "status": "in_progress", "output": []}
        self.send_events([
            ("response.created", {"type": "response.created", "response": response}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                            "item": {**item, "status": "in_progress"}}),
            *events,
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed",
                                    "response": {**response, "status": "completed", "output": [item],
                                                 "usage": usage}}),
        ])


class ScriptedResponses(ScriptedLLM):
    """OpenAI Responses API (Codex ``base_url`` = :attr:`base_url`, ``wire_api = "responses"``)."""

    handler_class = _ResponsesHandler

    @property
    def response_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].split("?")[0].rstrip("/").endswith("/responses")]


def texts_of(body: dict[str, Any]) -> str:
    """Every text a request carries (system prompt, messages, input items), for assertions."""
    return json.dumps({k: body.get(k) for k in ("system", "messages", "instructions", "input")}, ensure_ascii=False)


__all__ = ["ScriptedAnthropic", "ScriptedResponses", "anthropic_decide", "responses_decide", "texts_of"]
