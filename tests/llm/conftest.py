"""A scripted model server on 127.0.0.1 speaking both chat APIs, for the provider-layer tests.

``POST /v1/chat/completions`` answers in the OpenAI shape, ``POST /v1/messages`` in the Anthropic Messages
shape. Each request takes the next :class:`Step` from the script (``server.script({...}, ...)``); an empty script
answers ``"ok"``. A step can fail with an HTTP status, wait before answering (timeouts), or, for Anthropic,
answer with a ``tool_use`` block. Every request is recorded (path, headers, JSON body).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Step:
    text: str = "ok"
    status: int = 200
    error: str = "scripted failure"
    delay_s: float = 0.0
    tool_input: dict[str, Any] | None = None
    input_tokens: int = 11
    output_tokens: int = 7
    headers: dict[str, str] = field(default_factory=dict)
    finish: str | None = None
    raw: dict[str, Any] | None = None  # sent as the 200 body instead of a well-formed reply
    body: bytes | None = None  # sent as it is, with ``content_type``: a reply that is not JSON (an HTML page)
    content_type: str = "text/html"


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _reply(self, code: int, obj: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        with contextlib.suppress(OSError):  # the client may have given up (timeout tests)
            self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        owner = self.server.owner
        step = owner._next(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        if step.delay_s:
            time.sleep(step.delay_s)
        anthropic = self.path.rstrip("/").endswith("/messages")
        if step.raw is not None:
            self._reply(200, step.raw, step.headers)
            return
        if step.body is not None:
            self.send_response(200)
            self.send_header("Content-Type", step.content_type)
            self.send_header("Content-Length", str(len(step.body)))
            self.end_headers()
            self.wfile.write(step.body)
            return
        if step.status != 200:
            err = {"type": "api_error", "message": step.error}
            payload = {"type": "error", "error": err} if anthropic else {"error": err}
            self._reply(step.status, payload, step.headers)
            return
        if anthropic:
            content: list[dict[str, Any]]
            if step.tool_input is not None:
                tool = (body.get("tool_choice") or {}).get("name", "tool")
                content = [{"type": "tool_use", "id": "toolu_1", "name": tool, "input": step.tool_input}]
            else:
                content = [{"type": "text", "text": step.text}]
            self._reply(200, {
                "id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model"),
                "content": content,
                "stop_reason": step.finish or ("tool_use" if step.tool_input is not None else "end_turn"),
                "stop_sequence": None,
                "usage": {"input_tokens": step.input_tokens, "output_tokens": step.output_tokens},
            }, step.headers)
            return
        self._reply(200, {
            "id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": step.text},
                         "finish_reason": step.finish or "stop"}],
            "usage": {"prompt_tokens": step.input_tokens, "completion_tokens": step.output_tokens,
                      "total_tokens": step.input_tokens + step.output_tokens},
        }, step.headers)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: FakeModelServer


class FakeModelServer:
    def __init__(self) -> None:
        self._steps: deque[Step] = deque()
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    def script(self, *steps: Step | dict[str, Any]) -> None:
        """Queue replies; a dict is the keyword arguments of a :class:`Step`."""
        with self._lock:
            self._steps.extend(s if isinstance(s, Step) else Step(**s) for s in steps)

    def _next(self, seen: Seen) -> Step:
        with self._lock:
            self.requests.append(seen)
            return self._steps.popleft() if self._steps else Step()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    srv = FakeModelServer()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def closed_port_url() -> str:
    """A 127.0.0.1 URL where nothing listens: the port was bound, then released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def no_sleep() -> list[float]:
    """Pass ``sleep=no_sleep.append`` to a model to record backoff delays instead of waiting."""
    return []
