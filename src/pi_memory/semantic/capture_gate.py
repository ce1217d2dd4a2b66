"""Which turns capture skips before any model call: turns with nothing durable in them.

Ten turns of "thanks!" / "You're welcome!" cost ten extraction calls (about 440 input tokens each: the prompt
is most of it) that can only answer ``{"facts": []}``. :func:`skip_reason` reads the turn, without a model, and
names why it is skipped, or returns ``None`` when the model should read it. A turn is skipped when:

1. **the user side is a bare command** (``/compact``, ``/model``): the words are the command's, and what the
   assistant printed for it is tool output, not something the user said. A command with arguments
   (``/plan move the build to pnpm``) is read like any prompt;
2. **both sides are trivial**: the user side by recall's trivial-prompt rules
   (:func:`pi_memory.retrieval.recall.should_recall`: empty, a short acknowledgement such as "ok", "thanks",
   "lgtm", an emoji) or a pure acknowledgement as below ("Thank you so much, that works!"), and the assistant side empty or a pure acknowledgement of a few words
   (at most :data:`MAX_ACK_WORDS`, every word one of :data:`ACK_WORDS`: "You're welcome!", "Glad I could
   help.", "Done."); a substantial answer to "thanks" is still read;
3. **the whole turn has fewer than :data:`MIN_CONTENT_WORDS` content words**: words of two or more letters
   that are neither English stop words nor trivial words ("thanks", "ok", "welcome", "hello"), numbers and
   identifiers included; any
   word with a non-ASCII letter counts (so a short CJK sentence is read). "I use pnpm." / "Noted." has two
   ("use", "pnpm") and is read; "hola" / "¡Hola!" has one and is skipped.

The counts of each rule are reported by :class:`~pi_memory.semantic.models.CaptureReport` (``skip_rule``) and
kept in the index's job outcomes, so ``pi-memory semantic status`` shows how many calls were saved.
"""

from __future__ import annotations

import re

from pi_memory.index.query import STOP_WORDS
from pi_memory.retrieval.recall import TRIVIAL_WORDS, should_recall

MAX_ACK_WORDS = 12
MIN_CONTENT_WORDS = 2
_ACK_TEXT = """
    you re welcome glad happy help helped helping could can i m am to be of any time anytime no problem np
    problems my pleasure let me know if there anything else need just ask sounds good great got it will do
    understood noted sure thing absolutely of course course all set done here for that s it is was were
    again always hope this helps enjoy have a nice day see later bye goodbye thank you thanks ok okay
    so much very lot really a ton appreciate appreciated works worked that's
    谢谢 多谢 谢谢你 好的 好 不客气 没问题 收到 ありがとう ありがとうございます どういたしまして 了解 はい
    감사합니다 고마워요 네 알겠습니다 천만에요 merci gracias danke obrigado grazie de rien nada bitte
"""
ACK_WORDS = frozenset(_ACK_TEXT.split()) | TRIVIAL_WORDS
# words that never count as content: stop words, recall's trivial words and the politest of the rest
_NOT_CONTENT = STOP_WORDS | TRIVIAL_WORDS | frozenset(
    ["welcome", "glad", "pleasure", "np", "hi", "hello", "hey", "hola", "bye"])
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)

RULES = ("command", "acknowledgement", "few content words")


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORDS.findall(text or "")]


def is_acknowledgement(text: str) -> bool:
    """Empty, or at most :data:`MAX_ACK_WORDS` words, all of them acknowledgement words (punctuation and emoji
    ignored)."""
    words = _words(text)
    return len(words) <= MAX_ACK_WORDS and all(w in ACK_WORDS for w in words)


def content_words(text: str) -> int:
    """Words of at least two characters that are neither stop words nor trivial words; a word with a
    non-ASCII letter always counts (every CJK character of a run counts once)."""
    count = 0
    for word in _words(text):
        if not word.isascii():
            if word in ACK_WORDS:  # 谢谢, ありがとう: the ASCII ones are in _NOT_CONTENT when they never count
                continue
            count += sum(1 for ch in word if ord(ch) >= 0x2E80) or 1  # CJK runs have no spaces between words
        elif len(word) >= 2 and word not in _NOT_CONTENT:
            count += 1
    return count


def skip_rule(user_text: str, assistant_text: str) -> tuple[str, str] | None:
    """``(rule, reason)`` when the turn is skipped (``rule`` one of :data:`RULES`, ``reason`` a sentence for a
    person), else ``None``. See the module docstring."""
    user = (user_text or "").strip()
    if user.startswith("/") and len(user.split()) == 1:
        return "command", f"the user side is the command {user[:40]}, with nothing to remember"
    # a command with arguments is read; "Thank you so much!" is as trivial as "thanks"
    user_trivial = not user.startswith("/") and (not should_recall(user) or is_acknowledgement(user))
    if user_trivial and is_acknowledgement(assistant_text):
        what = "empty" if not user else "a short acknowledgement"
        return "acknowledgement", f"the user's message is {what} and the answer is a short acknowledgement"
    found = content_words(user) + content_words(assistant_text)
    if found < MIN_CONTENT_WORDS:
        return "few content words", (f"the turn has {found} content word{'' if found == 1 else 's'} "
                                     f"(at least {MIN_CONTENT_WORDS} are needed to hold a fact)")
    return None
