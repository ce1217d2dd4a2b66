"""What is stored *beside* a memory's text: metadata, source and history reasons.

The contract is that credentials are redacted before anything is stored (:func:`pi_memory.safety.redact`).
The memory text goes through :func:`pi_memory.semantic.embedded.clean_text`; this module does the same for
every other string a caller can hand in, so a key pasted into ``metadata``, ``source.session_id`` or a delete
``reason`` is stored (and returned, and logged in history) as ``[REDACTED:<id>]``.

Decisions
---------
* Metadata is redacted recursively: string values, string keys, and strings inside lists and nested dicts.
  Numbers, booleans and ``None`` are kept as they are. Nesting deeper than :data:`MAX_DEPTH` is stored as the
  redacted ``str()`` of the rest (JSON bodies can nest arbitrarily; a memory's metadata has no reason to).
* Identity keys (``user_id``, ``projectId``...) are dropped from metadata: scope comes only from the explicit
  id fields (mem0 #6655). Each caller passes its own key set.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pi_memory import safety
from pi_memory.semantic.models import MemorySource

MAX_DEPTH = 16


def redact_value(value: Any, depth: int = 0) -> Any:
    """``value`` with every string in it redacted (dict keys and values, list items), recursively."""
    if isinstance(value, str):
        return safety.redact(value)
    if depth >= MAX_DEPTH and isinstance(value, (dict, list, tuple)):
        return safety.redact(str(value))
    if isinstance(value, dict):
        return {(safety.redact(k) if isinstance(k, str) else k): redact_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, depth + 1) for v in value]
    return value


def clean_metadata(metadata: dict[str, Any] | None, identity_keys: Iterable[str]) -> dict[str, Any]:
    """Caller metadata without ``identity_keys`` and with every string redacted (module docstring)."""
    drop = frozenset(identity_keys)
    return redact_value({k: v for k, v in (metadata or {}).items() if k not in drop})


def clean_source(source: dict[str, Any] | MemorySource | None) -> MemorySource:
    """The :class:`MemorySource` to store, every string field (and extra field) redacted."""
    if isinstance(source, MemorySource):
        source = source.model_dump(exclude_none=True)
    return MemorySource.model_validate(redact_value(dict(source or {})))


def clean_reason(reason: str | None) -> str | None:
    """A history ``reason`` as stored: redacted, ends stripped, ``None`` when empty."""
    if reason is None:
        return None
    cleaned = safety.redact(str(reason)).strip()
    return cleaned or None

