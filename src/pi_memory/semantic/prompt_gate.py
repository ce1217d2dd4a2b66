"""Which prompts deserve a recall search (:func:`should_recall`, :func:`skip_reason`), in a module of its own.

It imports only :mod:`re` and :mod:`unicodedata`, so a host that must decide quickly (the prompt hook, a
process of its own for every prompt: :mod:`pi_memory.integrations.hooks.handlers`) skips a trivial prompt without loading the search stack.
:mod:`pi_memory.semantic.recall` re-exports both functions.
"""

from __future__ import annotations

import re
import unicodedata

_TRIVIAL_TEXT = """
    ok okay okey k kk oki yes y yep yeah yup ya yea no n nope nah sure thanks thank you thx ty tysm cheers
    please pls plz continue go on ahead proceed next lgtm done good great nice cool perfect fine alright right
    correct agreed got it sounds do that this exactly awesome excellent ack roger wow
"""
TRIVIAL_WORDS = frozenset(_TRIVIAL_TEXT.split())
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
MAX_TRIVIAL_WORDS = 4


def should_recall(prompt: str | None) -> bool:
    """``False`` for prompts not worth a search: empty or whitespace, a ``/command``, or a short reply made
    only of acknowledgement words (``ok``, ``thanks``, ``yes``, ``no``, ``continue``, ``lgtm``...) with any
    punctuation and emoji (``👍``, ``✅``). Everything else is searched."""
    text = (prompt or "").strip()
    if not text or text.startswith("/"):
        return False
    words = [w.casefold() for w in _WORDS.findall(text)]
    if not words:  # only punctuation, symbols or emoji
        return False
    return not (len(words) <= MAX_TRIVIAL_WORDS and all(w in TRIVIAL_WORDS for w in words))


def skip_reason(prompt: str | None) -> str | None:
    """Why :func:`should_recall` skips ``prompt`` (a sentence for a person), or ``None`` when it is searched."""
    text = (prompt or "").strip()
    if not text:
        return "the prompt is empty"
    if text.startswith("/"):
        return f"the prompt is a command ({text.split()[0]}), not a question"
    if should_recall(text):
        return None
    if all(unicodedata.category(ch).startswith(("P", "Z")) for ch in text):  # "???", "...": 👍 is a reply
        return "the prompt has no words, only punctuation"
    if all(unicodedata.category(ch).startswith(("C", "P", "Z")) for ch in text):  # control and format characters
        return "the prompt has no words, only control characters"
    return "the prompt is a short acknowledgement (ok, thanks, yes...) with nothing to look up"
