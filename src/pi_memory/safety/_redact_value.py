"""Secrets redacted in a structured value (a memory's metadata or source, an audit row, a tool outcome): every
string of it, at any depth, through :func:`pi_memory.safety.secrets.redact`."""

from __future__ import annotations

from typing import Any

from .secrets import redact

MAX_DEPTH = 16


def redact_value(value: Any, depth: int = 0) -> Any:
    """``value`` with every string in it redacted (dict keys and values, list items), recursively; past
    ``MAX_DEPTH`` levels a container is redacted as its ``str``."""
    if isinstance(value, str):
        return redact(value)
    if depth >= MAX_DEPTH and isinstance(value, (dict, list, tuple)):
        return redact(str(value))
    if isinstance(value, dict):
        return {(redact(k) if isinstance(k, str) else k): redact_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, depth + 1) for v in value]
    return value
