"""The MCP server's stdio transport with one change: a request line whose JSON holds a lone surrogate escape
(``"\\ud83d"``, what ``JSON.stringify`` writes for a JavaScript string cut inside an emoji) is read with that
code point as U+FFFD (:func:`pi_memory.safety.replace_unencodable`) instead of being dropped.

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
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server

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
        return clean_line(self._text.readline())


def run_stdio(server: MCPServer) -> None:
    """``server.run()`` (stdio) reading requests through :func:`clean_line`."""

    async def main() -> None:
        stdin = anyio.wrap_file(_CleanLines(sys.stdin.buffer))
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            lowlevel = server._lowlevel_server
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    anyio.run(main)
