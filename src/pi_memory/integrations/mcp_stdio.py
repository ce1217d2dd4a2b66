"""The MCP server's stdio transport with two changes:

* a request line whose JSON holds a lone surrogate escape (``"\\ud83d"``, what ``JSON.stringify`` writes for a
  JavaScript string cut inside an emoji) is read with that code point as U+FFFD
  (:func:`pi_memory.safety.replace_unencodable`) instead of being dropped;
* a line that is not JSON is answered with JSON-RPC 2.0's parse error (``-32700``, ``id`` null), and JSON that
  is not a JSON-RPC message with its invalid-request error (``-32600``, ``id`` null): the SDK's stdio reader
  passes such a line to the server as an exception, which logs it and answers nothing, so a client waited for
  an answer that never came (:func:`answer_unreadable`).

Why: the SDK parses each line with pydantic, whose JSON parser refuses lone surrogates; the request is then
answered by nothing and the client waits until it times out, losing the write. Lines without a ``\\u`` escape
(nearly all) are passed on untouched; a line the standard library cannot parse either is passed on as it is, so
the SDK reports its own error for it.

Cost: with an explicit input stream the SDK does not divert file descriptor 0 to the null device while serving
(it still does for standard output), so a child process that reads standard input would read the protocol;
the server starts no such child.
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from pi_memory.safety import replace_unencodable


def clean_line(line: str) -> str:
    """One request line with its lone surrogate escapes replaced (see the module docstring)."""
    if "\\u" not in line and "\\U" not in line:
        return line
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return line
    cleaned = replace_unencodable(message)
    return line if cleaned is message else json.dumps(cleaned, ensure_ascii=False) + "\n"


class _CleanLines(io.TextIOBase):
    """Standard input as UTF-8 text (invalid bytes as U+FFFD, like the SDK), one cleaned line per readline."""

    def __init__(self, binary: Any) -> None:
        self._text = io.TextIOWrapper(binary, encoding="utf-8", errors="replace", newline="\n")

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        line = self._text.readline()
        while line and not line.strip():  # a blank line is no message: not answered with a parse error
            line = self._text.readline()
        return clean_line(line)


def error_for(exc: Exception) -> SessionMessage:
    """The JSON-RPC error answering a line the SDK could not read (``exc``: its pydantic error): ``-32700``
    when the line is not JSON, else ``-32600``; ``id`` is null, as the line's id cannot be trusted."""
    kinds = {e.get("type") for e in exc.errors()} if hasattr(exc, "errors") else set()
    if "json_invalid" in kinds or not kinds:
        code, message = types.PARSE_ERROR, "Parse error: the line is not JSON. Send one JSON-RPC message per line."
    else:
        code, message = types.INVALID_REQUEST, ("Invalid request: the line is JSON but not a JSON-RPC 2.0 message "
                                                "(it needs \"jsonrpc\": \"2.0\" and a method, or a result or error).")
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)))


async def answer_unreadable(source: Any, sink: Any, write_stream: Any) -> None:
    """Pass the SDK's read stream ``source`` on to ``sink``, answering each exception in it (a line it could not
    read) on ``write_stream`` with :func:`error_for` instead of passing it on."""
    async with sink:
        async for item in source:
            if isinstance(item, Exception):
                await write_stream.send(error_for(item))
            else:
                await sink.send(item)


def run_stdio(server: MCPServer) -> None:
    """``server.run()`` (stdio) reading requests through :func:`clean_line` and answering unreadable lines
    (:func:`answer_unreadable`)."""

    async def main() -> None:
        stdin = anyio.wrap_file(_CleanLines(sys.stdin.buffer))
        async with stdio_server(stdin=stdin) as (read_stream, write_stream), anyio.create_task_group() as tg:
            sink, messages = anyio.create_memory_object_stream(0)
            tg.start_soon(answer_unreadable, read_stream, sink, write_stream)
            lowlevel = server._lowlevel_server
            await lowlevel.run(messages, write_stream, lowlevel.create_initialization_options())

    anyio.run(main)
