"""Text printed to a terminal with what would act on the terminal, or hide from the reader, shown as escapes.

A stored entry, a skill or a model's note can hold characters a person should see rather than have the
terminal act on:

* C0 and C1 control characters other than tab and newline (``ESC``, ``BEL``, ``CSI``...): an escape sequence
  rewrites a line, clears the screen or retitles the window. Shown as ``\\x1b``.
* Format characters that draw nothing or reorder what follows: the bidi embeddings, overrides and isolates
  (U+202A-U+202E, U+2066-U+2069: a right-to-left override prints ``abc`` as ``cba``), the zero-width space
  U+200B, the word joiner and invisible operators U+2060-U+2064, the deprecated format characters
  U+206A-U+206F, the byte-order mark U+FEFF, the line and paragraph separators U+2028/U+2029, the combining
  grapheme joiner U+034F, the Mongolian vowel separator U+180E, the interlinear annotation marks
  U+FFF9-U+FFFB and the tag characters U+E0000-U+E007F (outside a flag: ``🏴`` followed by tags). Shown as
  ``\\u202e`` (``\\U000e0041`` past U+FFFF).
* The joiners and marks some scripts are spelled with are left alone where that script is: U+200C (ZWNJ) and
  U+200D (ZWJ) between two letters that are not ASCII (Persian ``می‌خواهم``, Hindi) or two emoji parts (``👩‍💻``);
  U+200E (LRM), U+200F (RLM) and U+061C (ALM) within 64 characters of a right-to-left letter (Hebrew, Arabic,
  Persian), where they keep numbers and Latin words in order. Anywhere else they are escaped too. These are the
  places the invisible-character scanner (:mod:`pi_memory.safety`) lets them through, so a text written
  through a store prints as it was written, and only a file edited by hand shows escapes.

Nothing here changes what is stored; it is for the eyes of a person only.
"""

from __future__ import annotations

import re
import unicodedata

_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_ALWAYS = ("\u034f\u180e\u200b\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
           "\U000e0000-\U000e007f")
_IN_SCRIPT = "\u061c\u200c-\u200f"
_SHOWN = re.compile(f"[{_CONTROL}{_ALWAYS}{_IN_SCRIPT}]")
CONTROL = re.compile(f"[{_CONTROL}]")  # what a store refuses: C0/C1 controls, tab and newline excepted
_RTL_LETTER = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe\U00010800-\U00010fff\U0001e800-\U0001efff]")
_FLAG = "\U0001f3f4"
_TAGS = ("\U000e0000", "\U000e007f")


def _joins(ch: str) -> bool:
    """A neighbour a ZWNJ/ZWJ may stand beside: a letter or mark that is not ASCII, or an emoji part."""
    return ord(ch) > 0x7F and unicodedata.category(ch)[0] in "LM" or unicodedata.category(ch) == "So"


def _kept(text: str, i: int) -> bool:
    """Whether the format character at ``i`` is part of how its script is written (module docstring)."""
    ch = text[i]
    if ch in "\u200c\u200d":
        return 0 < i < len(text) - 1 and _joins(text[i - 1]) and _joins(text[i + 1])
    if ch in "\u200e\u200f\u061c":
        return _RTL_LETTER.search(text, max(0, i - 64), i + 65) is not None
    if _TAGS[0] <= ch <= _TAGS[1]:
        j = i
        while j > 0 and _TAGS[0] <= text[j - 1] <= _TAGS[1]:
            j -= 1
        return j > 0 and text[j - 1] == _FLAG
    return False


def _escape(ch: str) -> str:
    cp = ord(ch)
    return f"\\x{cp:02x}" if cp <= 0xFF else f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def printable(text: str) -> str:
    """``text`` with control characters and hidden format characters shown as escapes (module docstring)."""
    if not _SHOWN.search(text):
        return text
    return _SHOWN.sub(lambda m: m.group() if _kept(text, m.start()) else _escape(m.group()), text)


def holds_control(text: str) -> bool:
    """Whether ``text`` holds a C0/C1 control character (tab and newline excepted): what every store refuses
    (the curated stores, standing rules, blocks, semantic memories on every path: tool, CLI, REST, import)."""
    return bool(CONTROL.search(text))


def normalise_newlines(text: str) -> str:
    """CRLF and CR as LF: the line breaks a store keeps (a CR is otherwise a control character it refuses)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def holds_hidden(text: str) -> bool:
    """Whether :func:`printable` would show anything in ``text`` as an escape."""
    return printable(text) != text


def reworded(text: str | None, pairs: tuple[tuple[str, str], ...]) -> str | None:
    """``text`` (a result written for a model) in a person's words: each ``(model's phrase, person's phrase)`` of
    ``pairs`` replaced, in order (``None`` stays ``None``). The curated stores' and the skill store's tables use it."""
    if text is None:
        return None
    for model, person in pairs:
        text = text.replace(model, person)
    return text
