"""Lifecycle timing spans for diagnosing a slow start (``PI_TIMING=1`` or ``PI_MEMORY_TIMING=1``).

A foundation: it knows nothing of stores or hosts. The composition roots (the pi bridge's ``main``, the MCP
server) read the environment and call :func:`enable`; capabilities only open spans. When timing is off a span
costs one attribute read and writes nothing. Each finished span is one line on standard error::

    pi-memory timing session-start.load 12.4ms

Span names follow pi-hermes-memory's (``session-start.load``, ``database.quick-check``, ``shutdown.flush``...),
so a user coming from it reads the same words.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO

ENV_SWITCHES = ("PI_TIMING", "PI_MEMORY_TIMING")

_enabled = False
_stream: IO[str] | None = None
_write_lock = threading.Lock()


def wanted(environ: dict) -> bool:
    """Whether an environment asks for timing: either switch set to anything but ``""``/``0``/``false``."""
    return any(str(environ.get(name, "")).strip().lower() not in ("", "0", "false", "no", "off")
               for name in ENV_SWITCHES)


def enable(on: bool = True, stream: IO[str] | None = None) -> None:
    """Turn spans on or off for this process; ``stream`` defaults to ``sys.stderr`` at write time."""
    global _enabled, _stream
    _enabled, _stream = bool(on), stream


def enabled() -> bool:
    return _enabled


def emit(name: str, ms: float, detail: str = "") -> None:
    """Write one finished span (when timing is on)."""
    if not _enabled:
        return
    line = f"pi-memory timing {name} {ms:.1f}ms" + (f" {detail}" if detail else "") + "\n"
    with _write_lock, contextlib.suppress(Exception):
        out = _stream or sys.__stderr__ or sys.stderr
        out.write(line)
        out.flush()


@contextlib.contextmanager
def span(name: str, detail: str = "") -> Iterator[None]:
    """Time the block as ``name``; written when it ends, also when it raises (``failed`` is appended)."""
    if not _enabled:
        yield
        return
    start = time.perf_counter()
    failed = False
    try:
        yield
    except BaseException:
        failed = True
        raise
    finally:
        ms = (time.perf_counter() - start) * 1000
        emit(name, ms, " ".join(p for p in (detail, "failed" if failed else "") if p))
