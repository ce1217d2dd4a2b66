"""Text folding and invisible-character checks shared by the threat and secret scanners.

Two jobs, both linear in the length of the text:

* :func:`invisible_findings` — which hidden characters in the *raw* text are dangerous
  (reported as ``invisible_unicode_U+XXXX``) and which are ordinary spelling.
* :func:`fold` — the text the regexes run on: every ignorable character removed and every
  character folded to a "skeleton", with a map from folded offsets back to raw offsets.

What is removed before matching (never reported by itself)
---------------------------------------------------------
Every ``Default_Ignorable_Code_Point`` of Unicode (soft hyphen U+00AD, CGJ U+034F, ALM U+061C,
Hangul fillers U+115F/U+1160/U+3164/U+FFA0, Khmer U+17B4/17B5, Mongolian selectors U+180B–180F,
U+200B–200F, U+202A–202E, U+2060–206F, variation selectors U+FE00–FE0F and U+E0100–E01EF, U+FEFF,
U+FFF0–FFF8, U+1BCA0–1BCA3, U+1D173–1D17A, tags and the rest of U+E0000–E0FFF) plus the blank
U+2800 (braille pattern blank, not formally ignorable but rendered as nothing). So
``"instruc\\u2061tions"`` and ``"sk-proj-abc\\u00addef…"`` read as one word to the patterns.
Terminal escape sequences (``\\x1b[1m``, the one-character CSI U+009B, ``ESC (B``) are blanked, not removed
(:func:`blank_escapes`): their final letter no longer glues the word after them to itself, and offsets hold.

How characters are folded (the "skeleton")
------------------------------------------
Per character: NFKD, then combining marks (Mn/Me) dropped, then NFKC (so ``ｉ`` → ``i``, ``İ`` → ``I``,
``ï`` → ``i``, ``ﬁ`` → ``fi``); dotless ``ı`` → ``i``; and a small table of Cyrillic/Greek letters that
look exactly like Latin ones (``а е о р с у х і ј ѕ`` …) → their Latin twin, so a mixed-script
``ignоre`` still matches. Case is left alone (the regexes ignore case). Trade-offs: combining marks
are stripped from every script (harmless: no pattern is written in those scripts, and a secret
value's span still maps back to the raw text), and the Cyrillic/Greek table folds only letters
that are visually identical, which turns Russian/Greek words into Latin gibberish that no English
pattern matches.

Which invisible characters are reported, and where they are allowed
-------------------------------------------------------------------
The rule: a format character is allowed only where the script that needs it surrounds it.

===================================  ===========================================================
character(s)                         reported unless …
===================================  ===========================================================
U+200C ZWNJ, U+200D ZWJ              between letters/marks of a joining script (Arabic, Persian,
                                     Syriac, Indic, Tibetan, Myanmar, Khmer, Mongolian, …), right
                                     after a virama, or (ZWJ only) between two emoji
U+200B ZWSP                          between two letters of Thai, Lao, Myanmar, Khmer or Tibetan
                                     (scripts written without spaces, where ZWSP marks word breaks)
U+200E LRM, U+200F RLM, U+061C ALM   a right-to-left letter is within 64 characters and the mark
                                     does not split a word of another script (``abc\\u200fdef``)
U+00AD soft hyphen                   it is not inside a word (between two letters/digits)
U+FE0E/U+FE0F (VS15/VS16)            right after an emoji or symbol (❤️, ☎️, ™️, ‼️, keycap 1️⃣)
other variation selectors            a single one right after a CJK ideograph or a math symbol
                                     (standardised and ideographic variation sequences)
U+180B–180F Mongolian selectors      right after a Mongolian letter (U+180E also before one)
U+17B4/U+17B5 Khmer                  right after a Khmer character
U+115F/U+1160 Hangul fillers         next to a conjoining jamo
U+2800 braille blank                 inside a run of braille that has a non-blank cell
U+FEFF                               at offset 0 (a byte-order mark)
tags U+E0020–E007F                   inside an emoji subdivision flag (🏴 + tags + U+E007F)
everything else in the removed set   never (U+034F, U+2060–2064, bidi controls U+202A–202E and
                                     U+2066–2069, U+3164, U+FFA0, other tags, unassigned, …)
===================================  ===========================================================

Each distinct reported character yields one finding at its first reported occurrence. Runs of
tag characters and runs of two or more variation selectors are also *decoded* (tags as ASCII,
selectors as bytes 0–255 the way "emoji smuggling" encodes them) so the threat scanner can scan
the hidden text; see :func:`smuggled_texts`.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from functools import lru_cache

# --------------------------------------------------------------------------------------------
# Character sets
# --------------------------------------------------------------------------------------------
# Default_Ignorable_Code_Point (DerivedCoreProperties.txt) plus U+2800.
_IGNORABLE_CLASS = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
IGNORABLE = re.compile(f"[{_IGNORABLE_CLASS}]")
_IGNORABLE_SET = frozenset(
    chr(cp)
    for lo, hi in (
        (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
        (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x2800, 0x2800),
        (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
        (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
    )
    for cp in range(lo, hi + 1)
)

_NON_ASCII_RUN = re.compile("[^\x00-\x7f]+")
_TAG_RUN = re.compile("[\U000e0020-\U000e007e]+")
_VS_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")
_FLAG_TAGS = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f")

_JOINING_RANGES = (
    (0x0600, 0x08FF),  # Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic, Arabic ext.
    (0x0900, 0x0DFF),  # Devanagari … Sinhala
    (0x0F00, 0x109F),  # Tibetan, Myanmar
    (0x1780, 0x18AF),  # Khmer, Mongolian
    (0x1A00, 0x1BFF),  # Buginese, Tai Tham, Balinese, Sundanese, Batak
    (0xA800, 0xA8FF),  # Syloti Nagri, Phags-pa, Saurashtra, Devanagari ext.
    (0xA980, 0xAAFF),  # Javanese, Myanmar ext., Tai Viet
    (0xFB50, 0xFDFF),  # Arabic presentation forms A
    (0xFE70, 0xFEFE),  # Arabic presentation forms B
    (0x10A00, 0x10A5F),  # Kharoshthi
    (0x11000, 0x11FFF),  # Brahmi and other historic Indic scripts
)
_NO_SPACE_RANGES = ((0x0E00, 0x0EFF), (0x0F00, 0x0FFF), (0x1000, 0x109F), (0x1780, 0x17FF))
_RTL_RANGES = ((0x0590, 0x08FF), (0xFB1D, 0xFDFF), (0xFE70, 0xFEFE), (0x10800, 0x10FFF), (0x1E800, 0x1EFFF))
_EMOJI_RANGES = (
    (0x1F000, 0x1FAFF),
    (0x2600, 0x27BF),
    (0x2300, 0x23FF),
    (0x2B00, 0x2BFF),
    (0xFE0F, 0xFE0F),  # emoji presentation selector
    (0x20E3, 0x20E3),  # combining keycap
)
# Emoji bases that are not in a symbol category (ℹ is Ll; ‼ ⁉ 〽 are punctuation; 〰 is a dash).
_EMOJI_EXTRA = frozenset("\u2139\u203c\u2049\u3030\u303d")
_CJK_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))
_JAMO_RANGES = ((0x1100, 0x11FF), (0xA960, 0xA97F), (0xD7B0, 0xD7FF))

# Right-to-left script characters, without the format characters of the Arabic block (U+0600–0605, ALM
# U+061C, U+06DD, U+08E2), so that an ALM is not its own excuse.
_RTL_LETTER = re.compile(
    "[\u0590-\u05ff\u0606-\u061b\u061d-\u06dc\u06de-\u08e1\u08e3-\u08ff\ufb1d-\ufdff\ufe70-\ufefe"
    "\U00010800-\U00010fff\U0001e800-\U0001efff]"
)


def _in(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def _letter_in(ch: str, ranges) -> bool:
    return _in(ord(ch), ranges) and unicodedata.category(ch)[0] in "LM"


def _emoji_base(ch: str) -> bool:
    return _in(ord(ch), _EMOJI_RANGES) or ch in _EMOJI_EXTRA or unicodedata.category(ch) in ("So", "Sm", "Sc", "Sk")


def _alnum(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LN"


# --------------------------------------------------------------------------------------------
# Invisible characters: where each one is allowed
# --------------------------------------------------------------------------------------------
def _joiner_ok(text: str, i: int) -> bool:
    """ZWNJ/ZWJ at ``i``: between two letters of a joining script, after a virama, or ZWJ between emoji."""
    if i == 0:
        return False
    before = text[i - 1]
    if i + 1 >= len(text):
        return unicodedata.combining(before) == 9 and _letter_in(before, _JOINING_RANGES)
    after = text[i + 1]
    if _letter_in(before, _JOINING_RANGES) and (_letter_in(after, _JOINING_RANGES) or unicodedata.combining(before) == 9):
        return True
    return text[i] == "\u200d" and _in(ord(before), _EMOJI_RANGES) and _in(ord(after), _EMOJI_RANGES)


def _zwsp_ok(text: str, i: int) -> bool:
    return 0 < i < len(text) - 1 and _letter_in(text[i - 1], _NO_SPACE_RANGES) and _letter_in(text[i + 1], _NO_SPACE_RANGES)


def _bidi_mark_ok(text: str, i: int) -> bool:
    """LRM/RLM/ALM: allowed near right-to-left text, unless it splits a word of another script."""
    before = text[i - 1] if i > 0 else " "
    after = text[i + 1] if i + 1 < len(text) else " "
    if _alnum(before) and _alnum(after) and not (_in(ord(before), _RTL_RANGES) or _in(ord(after), _RTL_RANGES)):
        return False
    return _RTL_LETTER.search(text, max(0, i - 64), i + 65) is not None


def _soft_hyphen_ok(text: str, i: int) -> bool:
    return not (0 < i < len(text) - 1 and _alnum(text[i - 1]) and _alnum(text[i + 1]))


def _variation_ok(text: str, i: int) -> bool:
    """A single selector after a base that takes it (emoji/symbol for VS15/16, CJK or math otherwise)."""
    if i == 0:
        return False
    base = text[i - 1]
    if base in _IGNORABLE_SET:  # a run of selectors (or a selector after another format character)
        return False
    cp = ord(text[i])
    if cp in (0xFE0E, 0xFE0F):
        if base in "0123456789#*":
            return i + 1 < len(text) and text[i + 1] == "\u20e3"  # keycap 1️⃣
        return _emoji_base(base)
    if cp <= 0xFE0F:  # VS1–VS14: standardised variants of CJK ideographs, math symbols, Myanmar, …
        return _in(ord(base), _CJK_RANGES) or unicodedata.category(base) == "Sm" or _letter_in(base, ((0x1000, 0x109F),))
    return _in(ord(base), _CJK_RANGES)  # VS17–VS256: ideographic variation sequences


def _mongolian_ok(text: str, i: int) -> bool:
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if before and _letter_in(before, ((0x1800, 0x18AF),)):
        return True
    return text[i] == "\u180e" and bool(after) and _letter_in(after, ((0x1800, 0x18AF),))


def _khmer_ok(text: str, i: int) -> bool:
    return i > 0 and 0x1780 <= ord(text[i - 1]) <= 0x17FF


def _jamo_ok(text: str, i: int) -> bool:
    return (i > 0 and _in(ord(text[i - 1]), _JAMO_RANGES)) or (i + 1 < len(text) and _in(ord(text[i + 1]), _JAMO_RANGES))


_CONTEXT_RULES = {
    "\u200c": _joiner_ok,
    "\u200d": _joiner_ok,
    "\u200b": _zwsp_ok,
    "\u200e": _bidi_mark_ok,
    "\u200f": _bidi_mark_ok,
    "\u061c": _bidi_mark_ok,
    "\u00ad": _soft_hyphen_ok,
    "\u17b4": _khmer_ok,
    "\u17b5": _khmer_ok,
    "\u115f": _jamo_ok,
    "\u1160": _jamo_ok,
    **{chr(cp): _mongolian_ok for cp in range(0x180B, 0x1810)},
}


def _rule(ch: str):
    cp = ord(ch)
    if 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF:
        return _variation_ok
    return _CONTEXT_RULES.get(ch)


_LONE_BRAILLE_BLANKS = re.compile("(?<![\u2800-\u28ff])\u2800+(?![\u2800-\u28ff])")


def invisible_findings(text: str) -> list[tuple[str, int]]:
    """``(char, raw_offset)`` for the first reported occurrence of every dangerous invisible character."""
    present = set(IGNORABLE.findall(text))
    if not present:
        return []
    found = []
    n = len(text)
    for ch in present:
        if ch == "\u2800":  # a blank inside a run of braille with a real cell is a space
            m = _LONE_BRAILLE_BLANKS.search(text)
            if m:
                found.append((ch, m.start()))
            continue
        rule = _rule(ch)
        if rule is None:
            i = _first_unallowed_plain(text, ch)
        elif rule is _bidi_mark_ok:
            i = text.find(ch)
            while i != -1 and rule(text, i):
                i = text.find(ch, i + 1)
        else:
            i = _first_unallowed_local(text, ch, rule, n)
        if i != -1:
            found.append((ch, i))
    return sorted(found, key=lambda f: f[1])


def _first_unallowed_plain(text: str, ch: str) -> int:
    """Characters with no context rule: only a BOM at 0 and the tags of a subdivision flag are allowed."""
    i = text.find(ch)
    if i == 0 and ch == "\ufeff":
        i = text.find(ch, 1)
    if i != -1 and "\U000e0020" <= ch <= "\U000e007f" and "\U0001f3f4" in text:
        allowed = {k for m in _FLAG_TAGS.finditer(text) for k in range(m.start() + 1, m.end())}
        while i in allowed:
            i = text.find(ch, i + 1)
    return i


def _first_unallowed_local(text: str, ch: str, rule, n: int) -> int:
    """First occurrence of ``ch`` that ``rule`` rejects, for rules that only read the two neighbours.
    The distinct neighbour pairs are collected at C speed and judged once each; the text is walked only
    when some pair is rejected."""
    i = text.find(ch)
    for _ in range(32):  # most texts are decided by their first few occurrences
        if i == -1:
            return -1
        if not rule(text[max(0, i - 1) : i + 2], 1 if i else 0):
            return i
        i = text.find(ch, i + 1)
    pairs = set(re.findall(f"(?s)(?<=(.)){re.escape(ch)}(?=(.?))", text))
    if text.startswith(ch):
        pairs.add(("", text[1:2]))
    verdict = {pair: rule(pair[0] + ch + pair[1], 1 if pair[0] else 0) for pair in pairs}
    if all(verdict.values()):
        return -1
    i = text.find(ch)
    while i != -1 and verdict[(text[i - 1] if i else "", text[i + 1] if i + 1 < n else "")]:
        i = text.find(ch, i + 1)
    return i


def smuggled_texts(text: str) -> list[tuple[str, int, int]]:
    """Text hidden in tag-character runs and variation-selector runs, with the raw span of each run."""
    out = []
    for m in _TAG_RUN.finditer(text):
        out.append(("".join(chr(ord(c) - 0xE0000) for c in m.group()), m.start(), m.end()))
    for m in _VS_RUN.finditer(text):
        data = bytes((ord(c) - 0xFE00) if ord(c) <= 0xFE0F else (ord(c) - 0xE0100 + 16) for c in m.group())
        out.append((data.decode("utf-8", errors="ignore"), m.start(), m.end()))
    return out


# --------------------------------------------------------------------------------------------
# Folding with an offset map back to the raw text
# --------------------------------------------------------------------------------------------
_CONFUSABLE = {
    # Cyrillic
    "а": "a", "в": "B", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j",
    "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ɡ": "g",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S", "Ү": "Y", "Ԛ": "Q", "Ԝ": "W",
    # Greek
    "ο": "o", "α": "a", "ι": "i", "ν": "v", "ρ": "p", "υ": "u", "κ": "k",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin letters that case folding leaves apart
    "ı": "i",
    # Latin small capitals (NFKC keeps them): "ᴇɴᴅ ᴜɴᴛʀᴜꜱᴛᴇᴅ" reads as "END UNTRUSTED"
    **dict(zip("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢ", "abcdefghijklmnopqrstuvwyz", strict=True)),
}


@lru_cache(maxsize=8192)
def _fold_char(ch: str) -> str:
    if ch in _IGNORABLE_SET:
        return ""
    if ch in _CONFUSABLE:
        return _CONFUSABLE[ch]
    decomposed = unicodedata.normalize("NFKD", ch)
    stripped = "".join(c for c in decomposed if unicodedata.category(c) not in ("Mn", "Me"))
    out = unicodedata.normalize("NFKC", stripped) if len(stripped) != len(decomposed) else unicodedata.normalize("NFKC", ch)
    return "".join(_CONFUSABLE.get(c, c) for c in out if c not in _IGNORABLE_SET)


# A terminal escape sequence: CSI (``ESC [`` or U+009B, parameters, intermediates, a final byte that is often a
# letter: ``\x1b[31m``), else ESC and the bytes that end its introducer (``ESC ]`` of OSC, ``ESC \\``, ``ESC (B``),
# else a lone ESC or CSI. An OSC's or DCS's payload is text and stays.
_TERMINAL_ESCAPE = re.compile(r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|\x1b[\x20-\x2f]*[\x30-\x7e]|[\x1b\x9b]")


def blank_escapes(text: str) -> str:
    """``text`` with each terminal escape sequence replaced by as many spaces (offsets hold). A sequence's final
    letter glued the next word to it: ``\\x1b[1mghp_...`` hid a GitHub token from the secret rows and
    ``\\x1b[8mignore all previous instructions`` an injection from the threat rows, where a terminal shows the
    token or the words as they are (or hides them from a person, which the scanners must not do)."""
    if "\x1b" not in text and "\x9b" not in text:
        return text
    return _TERMINAL_ESCAPE.sub(lambda m: " " * len(m.group()), text)


def escape_readings(text: str) -> list[str]:
    """The other readings of a text holding a terminal escape (``[]`` without one), each as long as ``text`` so a
    span found in one is a span of ``text``; the scanners match :func:`blank_escapes`'s reading and these too,
    since each reader sees the text another way:

    * the introducers alone blanked (``ESC``, U+009B): a model reads ``\x1bghp_…`` as the token, where a
      terminal takes ``ESC g`` as a sequence and the full blanking hid the token's first letter;
    * every sequence removed (its characters made U+200B, which :func:`fold` drops and maps back): a terminal
      shows ``ghp_A1b2\x1b[0mC3d4…`` and ``ign\x1b[0more`` whole, where blanking split them in two words."""
    if "\x1b" not in text and "\x9b" not in text:
        return []
    return [text.replace("\x1b", " ").replace("\x9b", " "),
            _TERMINAL_ESCAPE.sub(lambda m: "\u200b" * len(m.group()), text)]


class Folded:
    """The folded text, and a map from its offsets back to raw offsets. Terminal escape sequences are blanked
    first (:func:`blank_escapes`: same length, so a raw offset is the same in both).

    Folding is per character, so the folded text is one ``str.translate``. When every character folds to
    exactly one character the offsets are the same; otherwise the map is built on first use: the folded
    length of every raw block of ``_BLOCK`` characters (one ``translate`` per block), then a walk inside
    the one block that holds the offset. A folded character maps to the raw character it came from;
    removed characters inside a span are part of the raw span.
    """

    __slots__ = ("text", "_raw", "_table", "_cum")
    _BLOCK = 1024
    _SCAN = 256

    def __init__(self, raw: str) -> None:
        raw = blank_escapes(raw)
        self._raw = raw
        self._table: dict[int, str] | None = None
        self._cum: list[int] | None = None
        if raw.isascii():
            self.text = raw
            return
        # ASCII characters never fold: only the pieces of _SCAN characters that hold another are looked at
        # (a slice knows at once whether it is ASCII), when most of the text is ASCII.
        mostly_ascii = len(raw.encode("utf-8", "surrogatepass")) - len(raw) < len(raw) // 64
        pieces = [raw[i : i + self._SCAN] for i in range(0, len(raw), self._SCAN)] if mostly_ascii else [raw]
        wide = [piece for piece in pieces if not piece.isascii()]
        table = {ord(ch): out for ch in set().union(*wide) if (out := _fold_char(ch)) != ch}
        if not table:
            self.text = raw
        elif mostly_ascii:  # fold the rest
            fold_run = lambda m: m.group().translate(table)  # noqa: E731
            self.text = "".join(p if p.isascii() else _NON_ASCII_RUN.sub(fold_run, p) for p in pieces)
        else:
            self.text = raw.translate(table)
        if any(len(v) != 1 for v in table.values()):
            self._table = table

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        if self._table is None:
            return (start, end)
        return (self._to_raw(start), self._to_raw(max(start, end - 1)) + 1)

    def _to_raw(self, x: int) -> int:
        raw, table, block = self._raw, self._table, self._BLOCK
        if self._cum is None:
            total, cum = 0, []
            for i in range(0, len(raw), block):
                total += len(raw[i : i + block].translate(table))
                cum.append(total)
            self._cum = cum
        k = bisect_right(self._cum, x)
        if k >= len(self._cum):
            return max(0, len(raw) - 1)
        pos, r = (self._cum[k - 1] if k else 0), k * block
        while True:
            c = raw[r]
            pos += len(table.get(ord(c), c))
            if pos > x:
                return r
            r += 1


@lru_cache(maxsize=4)
def fold(raw: str) -> Folded:
    """The folded form of ``raw`` (cached: the threat and secret scans of one write share it)."""
    return Folded(raw)
