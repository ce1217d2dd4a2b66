"""Safety checks for text that pi-memory stores or injects into prompts.

Public API
----------
* ``Finding(id, category, span)`` — one hit; ``span`` is a raw-text ``(start, end)`` or ``None``.
* ``scan_threats(text) -> list[Finding]`` — prompt injection (including chat-template tokens and
  disguised spellings), role hijack, prompt leak, C2 behaviour, remote code execution (download-and-run,
  reverse shells), exfiltration, persistence, hidden HTML and invisible Unicode (see ``threats`` for the
  id table, ``_threat_patterns`` for the narrowings that keep ordinary notes clean, ``_text`` for the
  Unicode rules).
* ``scan_secrets(text) -> list[Finding]`` — credentials (category ``"secret"``; see ``secrets``).
* ``redact(text) -> str`` — secret values replaced by ``[REDACTED:<id>]``; ``redact_value(obj)`` the same for
  every string in a JSON-like value.
* ``quoted_name(text) -> str`` — a typed name for an error message: redacted, cut at 80 characters, quoted.
* ``secret_spans(text) -> list[SecretSpan]`` — every secret value's ``(start, end, id)`` in raw offsets.
* ``check_write(text) -> Finding | None`` — the first threat, else the first secret, else ``None``.
* ``refusal_message(finding, where="memory") -> str`` — why a write was refused and what to do instead.
* ``blocked_marker(filename, ids) -> str`` — the line that replaces a hostile entry in a prompt snapshot.
* ``for_model(text, marker) -> str`` — what a model may be shown of text someone else wrote: ``marker(ids)``
  with a ``Ref <hash>`` for hostile text, redacted credentials otherwise (``shown``); ``blocked`` (the
  marker alone, or ``None``), ``with_ref``, ``ref_hash``,
  ``blocked_session_marker(ids)`` (the stand-in for a past session's message).
* ``is_unreadable(text)`` — nothing but U+FFFD and blanks: text that stores nothing readable (``unencodable``).
* ``replace_unencodable(value)`` — lone surrogates (``"\ud83d"``, ``argv`` bytes that are not UTF-8) replaced by
  U+FFFD in a string or in the strings of a parsed JSON value; called at every input edge (see ``unencodable``).
* ``fold(text) -> Folded`` — the folded text the scanners match on (``.text``) and ``.raw_span(start, end)``
  back to raw offsets; for callers that match their own patterns the same way (the recall fence markers).

Both scanners match on folded text (ignorable characters removed, NFKD + marks stripped + NFKC, exact
look-alike letters mapped) and report spans in the raw text. Every scan is linear in the text length.
"""

from __future__ import annotations

from ._redact_value import redact_value
from ._text import Folded, fold
from ._threat_patterns import INVISIBLE_UNICODE
from ._threats_beacon import IMAGE_BEACON_IDS
from .secrets import SECRET, SecretSpan, redact, scan_secrets, secret_spans
from .shown import blocked, blocked_session_marker, for_model, ref_hash, with_ref
from .threats import Finding, scan_threats
from .unencodable import UNREADABLE, is_unreadable, replace_unencodable

__all__ = [
    "Finding",
    "Folded",
    "UNREADABLE",
    "blocked",
    "blocked_marker",
    "blocked_session_marker",
    "for_model",
    "is_unreadable",
    "ref_hash",
    "with_ref",
    "check_write",
    "fold",
    "redact",
    "redact_value",
    "refusal_message",
    "replace_unencodable",
    "scan_secrets",
    "scan_threats",
    "SecretSpan",
    "secret_spans",
    "quoted_name",
]


def quoted_name(text: str, limit: int = 80) -> str:
    """A name a person or model typed, for an error message: credentials redacted, cut at ``limit``
    characters with ``…`` (a 10,000-character name is not repeated whole), quoted as ``repr`` does."""
    shown = redact(text)
    return repr(shown if len(shown) <= limit else shown[:limit] + "…")


def check_write(text: str) -> Finding | None:
    """Return the finding that should stop ``text`` from being written, or ``None`` if it is clean."""
    threats = scan_threats(text)
    if threats:
        return threats[0]
    secrets = scan_secrets(text)
    return secrets[0] if secrets else None


def refusal_message(finding: Finding, where: str = "memory") -> str:
    """A short refusal for a person and an LLM: what was found, why it matters, what to do next."""
    if finding.category == SECRET:
        return (
            f"Not saved: the {where} text contains a credential ({finding.id}), and secrets must never be "
            f"stored there. Save where the secret lives instead of its value, e.g. "
            f"\"API key is in ~/.config/x (env OPENAI_API_KEY)\"."
        )
    if finding.category == INVISIBLE_UNICODE:
        return (
            f"Not saved: the {where} text contains a hidden character ({finding.id}), which can smuggle "
            f"instructions into future system prompts. Remove it and save the plain text."
        )
    if finding.id in IMAGE_BEACON_IDS:
        return (
            f"Not saved: the {where} text matches the threat pattern {finding.id} (exfiltration): it has or asks "
            f"for an image whose URL carries data (a placeholder, a data parameter, or secrets or messages put "
            f"into it), and a client loads such an image by itself, sending that data to the image's host. Keep "
            f"the fact without the image, or give the image's plain URL with no placeholder and no data in it."
        )
    kind = "" if finding.category == finding.id else f" ({finding.category})"
    return (
        f"Not saved: the {where} text matches the threat pattern {finding.id}{kind}; "
        f"{where} content is injected into future system prompts, so it must not read like an instruction "
        f"to the model. Rephrase it as a plain fact (e.g. \"User prefers X\") without that wording."
    )


def blocked_marker(filename: str, ids: list[str]) -> str:
    """The stand-in shown in a prompt snapshot for an entry that failed the threat scan."""
    return (
        f"[BLOCKED: {filename} entry contained threat pattern(s): {', '.join(ids)}. "
        f"It was kept out of the prompt and is shown to you only as this marker; to delete it, give its Ref as "
        f"oldText to memory_remove.]"
    )
