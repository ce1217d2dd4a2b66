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
    gracias muchas vale sí si claro perfecto bien dale listo adelante sigue
    merci beaucoup oui non d accord parfait bon vas y continue
    danke schön schoen ja nein gut genau weiter klar passt bitte sehr
    obrigado obrigada sim não valeu beleza certo pode
    grazie sì va bene perfetto prego avanti
    спасибо большое да нет ок хорошо ладно давай продолжай понял отлично
    好 好的 谢谢 多谢 可以 是的 对 继续 行 嗯 没问题
    はい ありがとう ありがとうございます お願いします 了解 続けて いいえ うん
    ممنون مرسی باشه بله نه خیلی ادامه متشکرم
    네 감사합니다 고마워 좋아요 계속
"""  # acknowledgements in the languages recall is measured in: "gracias" alone passed the floor (cosine 0.407)
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


# The characters of a prompt that recall reads whole; of a longer one, at most this many (:func:`recall_text`).
# The bundled embedder reads 256 tokens (about 1,000-1,500 characters) and the session keyword search the first 1,000
# characters of what it is given (``retrieval.search.MAX_QUERY_CHARS``: the same value, so every list of a
# recall reads the same text, the question after a paste included), while every step that read the prompt whole
# (date phrases, keyword terms, the script of the text) grew with it: a pasted 100 KB log took 0.4-0.5 s to
# recall for, and before the date reader was made linear, 16-49 s. A paste usually comes with its question before
# or after it, as a paragraph or a line of its own (:func:`_asked`): that part alone is read, since 500 characters
# of paste around it were enough to drown its words and its meaning (a fresh tester's log + "What is the staging
# database host?" recalled nothing). Without one, the first and last 500 characters are; so too when the ask is
# a short pointer at the paste ("Fix this:" + a log), which names no subject of its own.
RECALL_CHARS = 1000
_MIN_ASK_WORDS = 3
_PARAGRAPHS = re.compile(r"\n[ \t]*\n")


def _points_at_paste(piece: str) -> bool:
    """Whether ``piece`` (an end of a long prompt) is a short ask about the rest: under ``_MIN_ASK_WORDS`` words
    ending with a colon or a question mark ("Fix this:", "why?")."""
    return piece.endswith((":", "：", "?", "？")) and 0 < len(_WORDS.findall(piece)) < _MIN_ASK_WORDS


def _asked(prompt: str) -> str | None:
    """The part of a long prompt that asks: of its first and last paragraph (else line), one of at least
    ``_MIN_ASK_WORDS`` words that fits in :data:`RECALL_CHARS`, the one ending with "?" first, else the last,
    else the first; ``None`` when neither fits, or when an end is a short ask about the rest ("Fix this:" before
    a log, "why?" after it: :func:`_points_at_paste`), since then the paste is what the prompt is about and its
    other end is one line of it (a log's last line), not a question."""
    for pieces in (_PARAGRAPHS.split(prompt.strip()), prompt.strip().splitlines()):
        if len(pieces) < 2:
            continue
        ends = [p.strip() for p in (pieces[-1], pieces[0])]
        if any(_points_at_paste(p) for p in ends):
            return None
        fit = [p for p in ends if len(p) <= RECALL_CHARS and len(_WORDS.findall(p)) >= _MIN_ASK_WORDS]
        if fit:
            return next((p for p in fit if p.endswith(("?", "？"))), fit[0])
    return None


def recall_text(prompt: str) -> str:
    """``prompt`` as recall reads it: whole up to :data:`RECALL_CHARS` characters; else the paragraph or line
    that asks (:func:`_asked`); else its first and last ``RECALL_CHARS // 2`` characters joined by a line break,
    each cut at white space (never inside a word) when there is some."""
    if len(prompt) <= RECALL_CHARS:
        return prompt
    if (asked := _asked(prompt)) is not None:
        return asked
    half = RECALL_CHARS // 2
    head, tail = prompt[:half], prompt[-half:]
    cut = max(head.rfind(c) for c in " \n\t")
    head = head[:cut] if cut > 0 else head
    cut = min((i for i in (tail.find(c) for c in " \n\t") if i >= 0), default=-1)
    tail = tail[cut + 1:] if 0 <= cut < len(tail) - 1 else tail
    return f"{head}\n{tail}"
