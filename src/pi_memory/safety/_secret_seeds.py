"""The secret row of wallet seed phrases (:mod:`.secrets` holds the table): a BIP39 mnemonic, the 12 to 24 words
that give whoever reads them a cryptocurrency wallet and everything in it. The validator takes the match and the
(folded) text and returns the phrase's span, or ``None``.

The rule (``seed_phrase``)
--------------------------
A run of 12, 15, 18, 21 or 24 words of one of the BIP39 lists the ``mnemonic`` package ships (English, Spanish,
French, Italian, Portuguese, Czech, Turkish, Russian, Japanese, Korean, Chinese simplified and traditional; each
word compared in the folded spelling the rows read: no accents, any case), separated by spaces, tabs, line breaks
or commas, each word perhaps numbered (``1. abandon 2. ability …``, ``01 abandon`` one a line), counts when

* its last word carries the phrase's checksum (BIP39 puts 4 to 8 bits of a SHA-256 of the others in it, so a run
  of list words that prose happens to form passes one time in 16 to 256; computed here, ``checksum_ok``), or
* a seed label stands within 60 characters before it (seed, mnemonic, recovery phrase, backup phrase, wallet words,
  助记词, …: ``_LABEL``): a phrase copied with a typo is still a wallet's key.

Its words are (almost) all different: 24 words drawn from 2,048 repeat one in eight times, so more than two repeats
mean a text that says one word again and again ("word word word …"), whose checksum passes one time in 16.

Where a phrase is looked for: after a line break, a colon, a quote, a bracket, ``=``, a bullet or a number, at the
text's start, within 40 characters after a seed label on its line, and, words separated by spaces only, anywhere
in a sentence ("I wrote excess enable … forward on a card"; ``MID_ROW``). There, with no label, only the checksum
counts and the run of list words may be at most two words longer than the phrase, which must start or end it: a
long run of list words in a language whose list holds many everyday words would otherwise offer many windows to
pass one time in 16. Walking every run of words in a text costs about 0.1 s a MB of prose, so the mid-sentence row
first finds stretches of at least 47 letters and spaces between other characters (one character class, read in a
single pass) and reads words only in those. CJK lists (one Han character, or a kana or Hangul word, a word) have a
row of their own. Costs: a phrase with a word outside the list and no label, and one mid-sentence with commas or
numbers and no label, are missed; a run of list words of another language that happens to pass its checksum is
replaced (one time in 16 for 12 words of list words in a row, which prose rarely forms).
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

from ._text import fold

# A run of 12 to 48 words (a phrase with list words of the prose around it), each taken whole (possessive: a
# failed run is not split again); the words are the validator's to read.
_SEP = r"(?>[ \t]*,[ \t]*|[ \t]*\r?\n[ \t]*|[ \t]+)(?:\d{1,2}[.):]?[ \t]+)?+"
# The letters of the alphabetic lists once folded (accents dropped; Russian keeps some Cyrillic letters).
_LETTERS = r"A-Za-z\u0400-\u04ff"
_WORD = rf"[{_LETTERS}]{{3,10}}+"
_RUN = rf"(?P<run>{_WORD}(?:{_SEP}{_WORD}){{11,47}}+)(?![\w-])"
_LEAD = r"[ \t]*(?:[-*+][ \t]+)?(?:\d{1,2}[.):]?[ \t]+)?+"  # a bullet or a number before the first word
_LABEL_WORDS = r"seed|mnemonic|recovery|wallet|backup|phrase|助记词|助記詞"
# CJK: a Han character, or a kana or Hangul word, a word.
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
SEED_ROWS = (  # (pattern, keywords, anchor, hint)
    (rf"[\n:\"'`=>(\[]{_LEAD}{_RUN}", ("\n", ":", '"', "'", "`", "=", ">", "(", "["), None, None),
    # a text that is only the phrase: any text holds a vowel, so a small hint (compiled in 0.3 ms, not the 7 ms of
    # the row) keeps the row from running, and compiling, on a text that does not start with twelve words
    (rf"\A{_LEAD}{_RUN}", ("a", "e", "i", "o", "u"), None,
     r"\A[ \t]*(?:[-*+][ \t]+)?(?:[^\W\d_]{3,10}[ \t,\n]+(?:\d{1,2}[.):]?[ \t]+)?){11}[^\W\d_]{3,10}"),
    (rf"(?:{_LABEL_WORDS})[^\n]{{0,40}}?(?<![\w-]){_RUN}", ("seed", "mnemonic", "recovery", "wallet", "backup",
                                                          "phrase", "助记词", "助記詞"), 0, None),
    # mid-sentence: a stretch of letters and spaces (12 words of 3+ letters take 47 characters), read in one pass
    # (the hint, the same class alone, keeps the row from compiling for a short text; in prose it is found early)
    (rf"(?<![{_LETTERS} \t])(?P<mid>[{_LETTERS}][{_LETTERS} \t]{{46,}})", (" ",), None, rf"[{_LETTERS} \t]{{47}}"),
    # CJK lists, the words separated by spaces (an ideographic space folds to one)
    # (the hint, four words with spaces between, is found in one pass: the row costs 15 ms a MB of prose that holds
    # CJK words here and there, the hint 3 ms)
    # (a class first, and the group that names the row empty after it: sre then jumps between CJK characters, 3 ms a
    # MB instead of 13)
    (rf"[{_CJK}](?P<cjk>)[{_CJK}]{{0,5}}+(?:[ \t]+[{_CJK}]{{1,6}}+){{11,47}}+", (" ",), None,
     rf"[{_CJK}](?:[ \t]+[{_CJK}]{{1,6}}){{3}}"),
)
_LABEL = re.compile(
    r"(?:seed|mnemonic|recovery|backup|secret|wallet|passphrase)(?:[ \t_-]+(?:phrase|words?|sentence|key))?"
    r"|\b(?:12|15|18|21|24)[ \t-]+words?|助记词|助記詞|シードフレーズ|シ-ドフレ-ズ|시드[ \t]*구문", re.IGNORECASE)
_LENGTHS = (24, 21, 18, 15, 12)
_WORDS = re.compile(r"[^\W\d_]+")
# In a mid-sentence stretch: twelve words of 3-10 letters in a row, or nothing to read.
_TWELVE = re.compile(rf"(?<![{_LETTERS}])(?:[{_LETTERS}]{{3,10}}[ \t]+){{11}}[{_LETTERS}]{{3,10}}(?![{_LETTERS}])")
# English words of no other list (and of no list at all, most of them): twelve words in a row without one of these
# are needed before the other lists are read (loading them all costs about 0.1 s, once a process), so English prose
# never loads them.
_ENGLISH_ONLY_WORDS = """
    the and for with from are was were has had not but your our its than which would should could been being them their
    these those who how some each every both through without within onto per
"""
_ENGLISH_ONLY = frozenset(_ENGLISH_ONLY_WORDS.split())
# The order the lists are tried in: English first (most seeds), the CJK lists last.
_LANGUAGES = ("english", "spanish", "french", "italian", "portuguese", "czech", "turkish", "russian", "japanese",
              "korean", "chinese_simplified", "chinese_traditional")


@functools.cache
def _index(language: str = "english") -> dict[str, int]:
    """Each word of a BIP39 list, folded and lower-cased, and its place (0-2047), from the ``mnemonic`` package
    (imported on first use: most texts never reach it). No two words of one list fold alike."""
    from mnemonic import Mnemonic

    # the lists are stored decomposed (NFKD): composed first, so Hangul reads as the syllables a text holds
    return {fold(unicodedata.normalize("NFC", word)).text.lower(): i for i, word in enumerate(Mnemonic(language).wordlist)}


def checksum_ok(words: list[str], language: str = "english") -> bool:
    """Whether ``words`` (12-24 words of the list) end with their BIP39 checksum: the words' 11-bit places make
    entropy + checksum, and the checksum is the first entropy-bits/32 bits of the entropy's SHA-256. Done here
    with a dict (``Mnemonic.check`` looks each word up in a list: milliseconds a phrase)."""
    index = _index(language)
    bits = 0
    for word in words:
        bits = (bits << 11) | index[word]
    total = 11 * len(words)
    size = total // 33  # checksum bits
    entropy, checksum = bits >> size, bits & ((1 << size) - 1)
    digest = hashlib.sha256(entropy.to_bytes(size * 4, "big")).digest()
    return digest[0] >> (8 - size) == checksum


def _runs(words: list[re.Match[str]], listed: dict[str, int]) -> list[list[re.Match[str]]]:
    """The stretches of consecutive list words that are 12 words or longer."""
    runs: list[list[re.Match[str]]] = []
    current: list[re.Match[str]] = []
    for word in words:
        if word.group().lower() in listed:
            current.append(word)
            continue
        if len(current) >= 12:
            runs.append(current)
        current = []
    if len(current) >= 12:
        runs.append(current)
    return runs


def _windows(size: int, count: int, strict: bool) -> range | tuple[int, ...]:
    """Where a phrase of ``size`` words may start in a run of ``count``: anywhere, or (``strict``) at either end of
    a run at most two words longer."""
    if not strict:
        return range(count - size + 1)
    return tuple(sorted({0, count - size})) if 0 <= count - size <= 2 else ()


def _phrase(run: list[re.Match[str]], language: str, text: str, strict: bool) -> tuple[int, int] | None:
    texts = [w.group().lower() for w in run]
    for size in _LENGTHS:
        for first in _windows(size, len(run), strict):
            window = texts[first:first + size]
            if len(set(window)) >= size - 2 and checksum_ok(window, language):
                return (run[first].start(), run[first + size - 1].end())
    start = run[0].start()
    if len(run) in _LENGTHS and len(set(texts)) >= len(texts) - 2 and _LABEL.search(text, max(0, start - 60), start):
        return (start, run[-1].end())
    return None


def _foreign(words: list[re.Match[str]]) -> bool:
    """Whether twelve words in a row hold no word only English has (``_ENGLISH_ONLY``)."""
    count = 0
    for word in words:
        count = 0 if word.group().lower() in _ENGLISH_ONLY else count + 1
        if count >= 12:
            return True
    return False


def seed_phrase(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """The span of a BIP39 seed phrase in the match (module docstring), or ``None``."""
    groups = m.re.groupindex
    if "mid" in groups:
        start, end = m.span("mid")
        twelve = _TWELVE.search(text, start, end)
        if twelve is None:
            return None
        start, strict, languages = twelve.start(), True, _LANGUAGES[:8]
    elif "cjk" in groups:
        (start, end), strict, languages = m.span(), False, _LANGUAGES[8:]
    else:
        (start, end), strict, languages = m.span("run"), False, _LANGUAGES[:8]
    words = list(_WORDS.finditer(text, start, end))
    for language in languages:
        if language == "spanish" and not _foreign(words):
            return None
        for run in _runs(words, _index(language)):
            span = _phrase(run, language, text, strict)
            if span is not None:
                return span
    return None
