"""What is stored *beside* a memory's text: metadata, source, history reasons and ``observed_at``.

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
* ``observed_at`` must be an ISO-8601 date or date-time (``2026-03-14``, ``2026-03-14T09:00:00Z``, with an
  offset, or without one = UTC). It is stored normalised to ``YYYY-MM-DDTHH:MM:SS.mmm`` with the offset the
  caller gave (``Z`` for UTC, else ``+HH:MM``): the memory's day is the day the user lived, so a fact said at
  23:30 in California is dated that day, not the next UTC one. The normal form can never carry a line break
  or markup into the recall fence. Anything else is refused with ``ValueError`` (the REST server answers 400). Rows stored before this
  check are still read; :attr:`~pi_memory.semantic.models.SemanticMemory.date` shows only a well-formed day.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pi_memory import safety
from pi_memory.safety.secrets import MAX_DEPTH, redact_value  # noqa: F401  (re-exported: their home is safety)
from pi_memory.semantic.models import MemorySource, parse_iso, to_iso_keep_offset


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



def check_observed_at(value: str | datetime | None) -> str | None:
    """``value`` as ``YYYY-MM-DDTHH:MM:SS.mmm`` plus its offset (``None`` stays ``None``: the caller uses now).

    Raises ``ValueError`` naming the value when it is not an ISO-8601 date or date-time."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        parsed = parse_iso(value) if isinstance(value, (str, datetime)) else None
        normalised = to_iso_keep_offset(parsed) if parsed is not None else None
    except (OverflowError, ValueError):  # e.g. year 1 with a positive offset falls outside datetime's range
        normalised = None
    if normalised is None:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:60] + "…"
        raise ValueError(f"observed_at {shown} is not an ISO-8601 date or date-time; send e.g. \"2026-03-14\" or "
                         "\"2026-03-14T09:00:00Z\", or leave it out to use the time of the request.")
    return normalised
