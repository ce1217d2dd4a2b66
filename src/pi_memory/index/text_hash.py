"""The hash of a semantic memory's text (``semantic_memories.hash``): the index computes it again when it redacts
a stored row (:mod:`.redaction_semantic`), the semantic store when it writes one (it re-exports both names from
:mod:`pi_memory.semantic.models`)."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_SPACE = re.compile(r"\s+")


def normalise_text(text: str) -> str:
    """The comparison form used for dedup and exact-duplicate checks: Unicode NFC, ``casefold()``, runs of
    whitespace collapsed to one space, ends stripped (the seed's dedup rule)."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text).casefold()).strip()


def text_hash(text: str) -> str:
    """SHA-256 (hex) of :func:`normalise_text` -- equal for texts that dedup treats as the same."""
    return hashlib.sha256(normalise_text(text).encode("utf-8", "surrogatepass")).hexdigest()
