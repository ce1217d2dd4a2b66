"""A scripted, OpenAI-compatible chat-completions server for driving real agents offline.

It stands in for an LLM when the real ``pi`` CLI (or any OpenAI-compatible client) is run in
tests and in ``pi-memory demo``. It listens on 127.0.0.1 only, keeps every request body it
receives (in memory, and optionally appended to a JSONL file) and answers deterministically:

* The *prompt* of the current run is the earliest user message of the trailing block of
  user messages (pi sends extension-injected custom messages as extra user messages after
  the prompt; compaction / branch summaries are skipped). Only the prompt is scripted, so
  memory text quoted in an injected message can never trigger a tool call.
* Every line of the prompt holding ``[tool:NAME] {json}`` (or ``[tool:NAME] plain text``,
  sent as ``{"command": text}``) is one step. Directives on the same line become parallel
  tool calls in one assistant message; lines are run one after another, one step per model
  response. Tools the request does not offer are left out (so requests without tools, such
  as compaction summaries, always get text).
* When all steps are done and the last message is a tool result, the reply quotes the tool
  output(s), so the "model" has visibly seen error texts.
* Otherwise the reply echoes the prompt: ``Fake answer to: <prompt>``.

A ``responder`` callable can override any decision. Usage::

    with ScriptedLLM() as llm:
        run_client(base_url=llm.base_url)
        system = system_prompt_of(llm.chat_requests[0])

Run ``python -m pi_memory.devtools.scripted_llm --port 18080`` to start one by hand.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_ID = "fake-model"
SUMMARY_PREFIXES = (
    "The conversation history before this point was compacted",
    "The following is a summary of a branch",
)
_DIRECTIVE = re.compile(r"\[tool:([A-Za-z0-9_.-]+)\]")
_QUOTE_LIMIT = 4000


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any]


COUNTED = "counted"
"""``Reply.usage`` default: the server's own count (request messages as JSON / 4 in, 12 out)."""
LEFT_OUT = "left out"
"""``Reply.usage``: the reply has no ``usage`` key at all."""


@dataclass
class Reply:
    """What the scripted model answers: plain text, or one assistant message of tool calls. ``usage``: the
    reply's usage object: :data:`COUNTED` (the server's count), :data:`LEFT_OUT` (no ``usage`` key), or any
    JSON value sent as it is (``None`` is ``"usage": null``; a dict with negative or fractional counts)."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Any = COUNTED


Responder = Callable[[list[dict[str, Any]], set[str]], "Reply | None"]


def text_of(content: Any) -> str:
    """Flatten an OpenAI message ``content`` (string or list of parts) to text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


def system_prompt_of(body: dict[str, Any]) -> str | None:
    """The leading system (or developer) prompt of a chat-completions request body."""
    messages = body.get("messages") or []
    if messages and messages[0].get("role") in ("system", "developer"):
        return text_of(messages[0].get("content"))
    return None


def tool_results_of(body: dict[str, Any]) -> list[tuple[str, str]]:
    """``(tool_name, text)`` for every tool-result message in a request body, in order."""
    names: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for msg in body.get("messages") or []:
        if msg.get("role") == "assistant":
            for call in msg.get("tool_calls") or []:
                names[call.get("id", "")] = (call.get("function") or {}).get("name", "")
        elif msg.get("role") == "tool":
            out.append((names.get(msg.get("tool_call_id", ""), ""), text_of(msg.get("content"))))
    return out


def prompt_of(body: dict[str, Any]) -> str | None:
    """The typed prompt of the run a request belongs to (see module docstring), or ``None``."""
    messages = body.get("messages") or []
    idx = _prompt_index(messages)
    return text_of(messages[idx].get("content")) if idx is not None else None


def parse_steps(prompt: str) -> list[list[ToolCall]]:
    """Split a prompt into steps: one per line holding ``[tool:NAME] args`` directives."""
    steps: list[list[ToolCall]] = []
    decoder = json.JSONDecoder()
    for line in prompt.splitlines():
        matches = list(_DIRECTIVE.finditer(line))
        calls: list[ToolCall] = []
        for i, m in enumerate(matches):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
            raw = line[m.end() : end].strip()
            args: dict[str, Any] | None = None
            if raw.startswith("{"):
                try:
                    value, _ = decoder.raw_decode(line[m.end() :].lstrip())
                    if isinstance(value, dict):
                        args = value
                except json.JSONDecodeError:
                    args = None
            if args is None:
                args = {"command": raw} if raw else {}
            calls.append(ToolCall(m.group(1), args))
        if calls:
            steps.append(calls)
    return steps


def _prompt_index(messages: list[dict[str, Any]]) -> int | None:
    """Index of the typed prompt that started the current run (see module docstring)."""
    i = len(messages) - 1
    while i >= 0 and messages[i].get("role") in ("assistant", "tool"):
        i -= 1
    prompt: int | None = None
    while i >= 0 and messages[i].get("role") in ("user", "system", "developer"):
        msg = messages[i]
        if msg.get("role") == "user" and not text_of(msg.get("content")).startswith(SUMMARY_PREFIXES):
            prompt = i
        i -= 1
    return prompt


def decide(messages: list[dict[str, Any]], tool_names: set[str]) -> Reply:
    """The default script. Pure function of the request, so it is easy to test."""
    if not messages:
        return Reply(text="Hello from fake-model (no messages).")
    idx = _prompt_index(messages)
    prompt = text_of(messages[idx].get("content")) if idx is not None else ""
    after = messages[idx + 1 :] if idx is not None else []
    done = sum(1 for m in after if m.get("role") == "assistant" and m.get("tool_calls"))
    steps = [[c for c in step if c.name in tool_names] for step in parse_steps(prompt)]
    steps = [s for s in steps if s]
    if done < len(steps):
        return Reply(tool_calls=steps[done])
    if messages[-1].get("role") == "tool":
        trailing: list[str] = []
        for msg in reversed(messages):
            if msg.get("role") != "tool":
                break
            trailing.append(text_of(msg.get("content")).strip())
        quoted = "\n---\n".join(reversed(trailing))[:_QUOTE_LIMIT]
        return Reply(text="The tool finished. Its output was:\n" + quoted + "\nDone.")
    snippet = prompt.strip().replace("\n", " ")[:200]
    return Reply(text=f"Fake answer to: {snippet}")


def _chunk(cid: str, created: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _render(reply: Reply, cid: str, created: int) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    """Stream chunks, the equivalent non-streamed message, and the finish reason."""
    if reply.tool_calls:
        calls = []
        chunks = []
        for index, call in enumerate(reply.tool_calls):
            call_id = "call_" + uuid.uuid4().hex[:10]
            args = json.dumps(call.arguments)
            calls.append({"id": call_id, "type": "function", "function": {"name": call.name, "arguments": args}})
            head = {"index": index, "id": call_id, "type": "function", "function": {"name": call.name, "arguments": ""}}
            first: dict[str, Any] = {"tool_calls": [head]}
            if index == 0:
                first = {"role": "assistant", "content": None, "tool_calls": [head]}
            chunks.append(_chunk(cid, created, first))
            half = len(args) // 2
            for piece in (args[:half], args[half:]):
                chunks.append(_chunk(cid, created, {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
        chunks.append(_chunk(cid, created, {}, finish="tool_calls"))
        return chunks, {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"
    words = re.findall(r"\S+\s*|\s+", reply.text) or [reply.text]
    chunks = [_chunk(cid, created, {"role": "assistant", "content": ""})]
    chunks += [_chunk(cid, created, {"content": w}) for w in words]
    chunks.append(_chunk(cid, created, {}, finish="stop"))
    return chunks, {"role": "assistant", "content": reply.text}, "stop"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr noise
        pass

    def _send_json(self, code: int, obj: dict[str, Any]) -> None:
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "owned_by": "fake"}]})
        else:
            self._send_json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "bad json"}})
            return
        self.server.owner._record(self.path, body)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": "not found"}})
            return
        messages = body.get("messages") or []
        tool_names = {(t.get("function") or {}).get("name", "") for t in body.get("tools") or []}
        reply = self.server.owner._respond(messages, tool_names)
        cid = "chatcmpl-" + uuid.uuid4().hex[:12]
        created = int(time.time())
        chunks, message, finish = _render(reply, cid, created)
        prompt_tokens = sum(len(json.dumps(m)) // 4 for m in messages)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 12, "total_tokens": prompt_tokens + 12}
        if reply.usage != COUNTED:
            usage = reply.usage
        if not body.get("stream"):
            answer = {"id": cid, "object": "chat.completion", "created": created, "model": MODEL_ID,
                      "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}
            if usage == LEFT_OUT:
                del answer["usage"]
            self._send_json(200, answer)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        usage_chunk = {"id": cid, "object": "chat.completion.chunk", "created": created,
                       "model": MODEL_ID, "choices": [], "usage": usage}
        for chunk in [*chunks, *([usage_chunk] if usage != LEFT_OUT else [])]:
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedLLM


class ScriptedLLM:
    """The scripted server, run on a background thread. Use as a context manager. Subclasses speaking another
    wire API set ``handler_class`` (:mod:`pi_memory.devtools.scripted_hosts`)."""

    handler_class: type[BaseHTTPRequestHandler] = _Handler

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: str | Path | None = None,
        responder: Responder | None = None,
    ) -> None:
        self._host = host
        self._port = port
        self.log_path = Path(log_path) if log_path else None
        self.responder = responder
        self._requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -----------------------------------------------------------------------
    def start(self) -> ScriptedLLM:
        if self._server is not None:
            return self
        server = _Server((self._host, self._port), self.handler_class)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- addresses -----------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("ScriptedLLM is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    # --- request log ---------------------------------------------------------------------
    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request received so far: ``{"path", "ts", "body"}``, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat-completions requests received so far."""
        return [r["body"] for r in self.requests if r["path"].rstrip("/").endswith("/chat/completions")]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    def iter_system_prompts(self) -> Iterator[str | None]:
        for body in self.chat_requests:
            yield system_prompt_of(body)

    def _record(self, path: str, body: dict[str, Any]) -> None:
        entry = {"path": path, "ts": time.time(), "body": body}
        with self._lock:
            self._requests.append(entry)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry) + "\n")

    def _respond(self, messages: list[dict[str, Any]], tool_names: set[str]) -> Reply:
        if self.responder is not None:
            reply = self.responder(messages, tool_names)
            if reply is not None:
                return reply
        return decide(messages, tool_names)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m pi_memory.devtools.scripted_llm",
                                     description="Scripted OpenAI-compatible chat server (127.0.0.1 only).")
    parser.add_argument("--port", type=int, default=18080)
    parser.add_argument("--log", default=None, help="append each request as one JSON line here")
    args = parser.parse_args(argv)
    llm = ScriptedLLM(port=args.port, log_path=args.log).start()
    print(f"scripted LLM listening on {llm.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        llm.stop()


if __name__ == "__main__":
    main()
