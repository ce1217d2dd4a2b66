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
* A metadata key or value (at any depth) holding a C0/C1 control character other than tab and newline is
  refused with ``ValueError`` naming the field (the REST server's 400), as a memory text holding one is:
  metadata comes back in every result and is shown on screens, where an escape sequence would act.
* A memory's ``source`` (``session_id``, ``entry_ids``, ``kind`` and any extra field) is refused the same way,
  for the same reason: every read returns it.
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
from pi_memory.safety._redact_value import MAX_DEPTH, redact_value  # noqa: F401  (re-exported: their home is safety)
from pi_memory.semantic.models import MemorySource, parse_iso, to_iso_keep_offset
from pi_memory.terminal_text import holds_control, printable


def clean_metadata(metadata: dict[str, Any] | None, identity_keys: Iterable[str]) -> dict[str, Any]:
    """Caller metadata without ``identity_keys`` and with every string redacted (module docstring); a
    ``ValueError`` naming the field when a key or value holds a control character (:func:`check_no_control`)."""
    drop = frozenset(identity_keys)
    kept = {k: v for k, v in (metadata or {}).items() if k not in drop}
    return redact_value(check_no_control(kept, "metadata"))


def clean_source(source: dict[str, Any] | MemorySource | None) -> MemorySource:
    """The :class:`MemorySource` to store, every string field (and extra field) redacted; a ``ValueError`` naming
    the field (``source.session_id``) when a key or value holds a control character, refused as metadata is
    (:func:`check_no_control`): a source comes back in every read too."""
    if isinstance(source, MemorySource):
        source = source.model_dump(exclude_none=True)
    return MemorySource.model_validate(redact_value(check_no_control(dict(source or {}), "source")))


def clean_reason(reason: str | None) -> str | None:
    """A history ``reason`` as stored: redacted, ends stripped, ``None`` when empty."""
    if reason is None:
        return None
    cleaned = safety.redact(str(reason)).strip()
    return cleaned or None



NUL = "\x00"


def nul_place(value: Any, where: str = "") -> str | None:
    """Where ``value`` (a string, or dicts and lists of them, keys included) holds a NUL character (U+0000):
    ``where`` extended to the key or index (``metadata.note``, ``messages[0].content``), else ``None``."""
    found = _place(value, where, lambda text: NUL in text)
    return found[0] if found else None


def _place(value: Any, where: str, holds: Any) -> tuple[str, str] | None:
    """``(where, the string)`` of the first string in ``value`` (keys included) for which ``holds`` is true."""
    if isinstance(value, str):
        return (where or "the text", value) if holds(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{where}.{key}" if where else str(key)
            if isinstance(key, str) and holds(key):
                return (f"the key {key!r} of {where}" if where else f"the key {key!r}", key)
            found = _place(item, inner, holds)
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _place(item, f"{where}[{i}]", holds)
            if found:
                return found
    return None


def check_no_control(value: Any, what: str) -> Any:
    """``value`` unchanged; ``ValueError`` naming the field (``metadata.note``, ``the key 'a\\x1b' of metadata``)
    and the character when a string in it, keys included, holds a C0/C1 control character other than tab and
    newline (:func:`pi_memory.terminal_text.holds_control`, the rule of every store's text).

    Decision: metadata is refused, not cleaned, as a memory's text is. It is returned by every read and shown by
    the CLI and the inspector, where an escape sequence would act on the screen; the sender should see and fix
    it rather than have other values stored in its name."""
    found = _place(value, what, holds_control)
    if found is None:
        return value
    where, text = found
    ch = next(c for c in text if holds_control(c))
    import unicodedata

    label = unicodedata.name(ch, "") or {"\x1b": "ESC", "\x7f": "DEL", "\x00": "NUL"}.get(ch, "")
    shown = f"U+{ord(ch):04X}" + (f" {label}" if label else "")
    raise ValueError(f"{printable(where)} holds a control character ({shown}), which can hide or change text on a "
                     "screen showing it. Nothing was stored; remove it (tab and newline are fine) and send the "
                     "request again.")


def check_no_nul(value: Any, what: str) -> Any:
    """``value`` unchanged; ``ValueError`` when it holds a NUL character (U+0000) anywhere (:func:`nul_place`).

    Decision: the team store refuses such text rather than dropping the character. PostgreSQL cannot keep a
    NUL in text or JSON, and a NUL in a fact is a sign of binary data or a broken encoder, which the sender
    should see and fix rather than have a changed text stored in its name."""
    place = nul_place(value, what)
    if place:
        shown = place.replace(NUL, "\\u0000")
        raise ValueError(f"{shown} holds a NUL character (U+0000), which a memory cannot keep; remove it and send "
                         "the text again.")
    return value


def id_problem(name: str, value: str, *, max_chars: int = 256, example: str = "alice",
               spaces: bool = False) -> str | None:
    """Why ``value`` may not be the id ``name`` (a user id, ``agent_id``, ``run_id``), in words, or ``None``.

    Ids are stored as written (never redacted) and shown in every result, ``token list``, the audit log and
    exports, so they must be plain names: not too long, no spaces (unless ``spaces``: a scope's ids may hold
    a plain space, as settings' ``userId`` may), no control characters (a terminal escape
    would act on the screen of whoever lists them), no invisible or direction-changing characters (U+202E
    RIGHT-TO-LEFT OVERRIDE shows ``alice\u202eecila`` as another name), and nothing the secret detector of
    :mod:`pi_memory.safety` reads as a credential."""
    import unicodedata

    if len(value) > max_chars:
        return f"{name} is {len(value):,} characters long; use at most {max_chars} (e.g. {example})."
    for i, ch in enumerate(value, 1):
        category = unicodedata.category(ch)
        if (ch.isspace() and not (spaces and ch == " ")) or category in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            what = ("a space" if ch == " " else "a white-space character" if ch.isspace() else
                    "a control character" if category == "Cc" else "an invisible formatting character")
            label = unicodedata.name(ch, "") or {"\x1b": "ESC", "\x7f": "DEL"}.get(ch, "")
            shown = f"U+{ord(ch):04X}" + (f" {label}" if label else "")
            return (f"{name} holds {what} ({shown}) at character {i}; an id is one plain word that reads the "
                    f"same everywhere it is shown. Type it without that character (e.g. {example}).")
    findings = safety.scan_secrets(value)
    if findings:
        return (f"{name} looks like a credential ({findings[0].id}); ids are stored as written and shown in "
                f"results, the audit log and exports. Pick a plain name for {name} (e.g. {example}) and keep "
                "secrets out of ids.")
    return None


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
