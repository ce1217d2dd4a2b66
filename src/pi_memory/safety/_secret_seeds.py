"""The secret row of wallet seed phrases (:mod:`.secrets` holds the table): a BIP39 mnemonic, the 12 to 24 words
that give whoever reads them a cryptocurrency wallet and everything in it. The validator takes the match and the
text and returns the phrase's span, or ``None``.

The rule (``seed_phrase``)
--------------------------
A run of 12, 15, 18, 21 or 24 words, each one of the 2,048 words of the BIP39 English list (the list comes from the
``mnemonic`` package, the reference implementation's), written in small letters and separated by spaces, tabs,
line breaks or commas, each word perhaps numbered (``1. abandon 2. ability …``, ``01 abandon`` one a line), counts
when

* its last word carries the phrase's checksum (BIP39 puts 4 to 8 bits of a SHA-256 of the others in it, so a run
  of list words that prose happens to form passes one time in 16 to 256; computed here, ``checksum_ok``), or
* a seed label stands within 60 characters before it (seed, mnemonic, recovery phrase, backup phrase, wallet words,
  助记词, …: ``_LABEL``): a phrase copied with a typo is still a wallet's key.

Its words are (almost) all different: 24 words drawn from 2,048 repeat one in eight times, so more than two repeats
mean a text that says one word again and again ("word word word …"), whose checksum passes one time in 16.

The run starts after a line break, a colon, a quote, a bracket, ``=``, a bullet or a number, at the text's start,
or within 40 characters after a seed label on its line. Prose rarely gets that far: the list has no "the", "a", "of", "to", "is" or "and", and the run is cut at the first
word outside the list. The longest run that qualifies is taken (a run of list words around a 12-word phrase gives
the phrase). Costs: a seed in another language's list (Japanese, Spanish, …), one written in capitals, one in the
middle of a sentence with no label ("I wrote abandon ability … on a card"), and a phrase with a word outside the
list and no label are missed.
"""

from __future__ import annotations

import functools
import hashlib
import re

# A run of 12 to 48 words (a phrase with list words of the prose around it), each taken whole (possessive: a
# failed run is not split again); the words are the validator's to read.
_SEP = r"(?>[ \t]*,[ \t]*|[ \t]*\r?\n[ \t]*|[ \t]+)(?:\d{1,2}[.):]?[ \t]+)?+"
_RUN = rf"(?P<run>[a-z]{{3,8}}+(?:{_SEP}[a-z]{{3,8}}+){{11,47}}+)(?![\w-])"
_LEAD = r"[ \t]*(?:[-*+][ \t]+)?(?:\d{1,2}[.):]?[ \t]+)?+"  # a bullet or a number before the first word
_LABEL_WORDS = r"seed|mnemonic|recovery|wallet|backup|phrase|助记词|助記詞"
# Where a phrase is looked for (walking every run of small words in a text would cost 0.1 s a MB of prose): after
# a line break, a colon, a quote, a bracket or "=" (sre jumps between those characters), at the text's start, and
# after a seed label within 40 characters on its line ("my seed phrase is legal winner …").
SEED_ROWS = (  # (pattern, keywords, anchor, hint)
    (rf"[\n:\"'`=>(\[]{_LEAD}{_RUN}", ("\n", ":", '"', "'", "`", "=", ">", "(", "["), None, None),
    # a text that is only the phrase: any text holds a vowel, so a small hint (compiled in 0.3 ms, not the 7 ms of
    # the row) keeps the row from running, and compiling, on a text that does not start with twelve small words
    (rf"\A{_LEAD}{_RUN}", ("a", "e", "i", "o", "u"), None,
     r"\A[ \t]*(?:[-*+][ \t]+)?(?:[a-z]{3,8}[ \t,\n]+(?:\d{1,2}[.):]?[ \t]+)?){11}[a-z]{3,8}"),
    (rf"(?:{_LABEL_WORDS})[^\n]{{0,40}}?(?<![\w-]){_RUN}", ("seed", "mnemonic", "recovery", "wallet", "backup",
                                                          "phrase", "助记词", "助記詞"), 0, None),
)
_LABEL = re.compile(
    r"(?:seed|mnemonic|recovery|backup|secret|wallet|passphrase)(?:[ \t_-]+(?:phrase|words?|sentence|key))?"
    r"|\b(?:12|15|18|21|24)[ \t-]+words?|助记词|助記詞|シードフレーズ|시드[ \t]*구문", re.IGNORECASE)
_LENGTHS = (24, 21, 18, 15, 12)
_WORDS = re.compile(r"[a-z]+")


@functools.cache
def _index() -> dict[str, int]:
    """Each word of the BIP39 English list and its place (0-2047), from the ``mnemonic`` package (imported on
    first use: most texts never reach it)."""
    from mnemonic import Mnemonic

    return {word: i for i, word in enumerate(Mnemonic("english").wordlist)}


def checksum_ok(words: list[str]) -> bool:
    """Whether ``words`` (12-24 words of the list) end with their BIP39 checksum: the words' 11-bit places make
    entropy + checksum, and the checksum is the first entropy-bits/32 bits of the entropy's SHA-256. Done here
    with a dict (``Mnemonic.check`` looks each word up in a list: milliseconds a phrase)."""
    index = _index()
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
        if word.group() in listed:
            current.append(word)
            continue
        if len(current) >= 12:
            runs.append(current)
        current = []
    if len(current) >= 12:
        runs.append(current)
    return runs


def seed_phrase(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """The span of a BIP39 seed phrase in the match (module docstring), or ``None``."""
    listed = _index()
    words = list(_WORDS.finditer(text, m.start("run"), m.end("run")))
    for run in _runs(words, listed):
        texts = [w.group() for w in run]
        for size in _LENGTHS:
            for first in range(len(run) - size + 1):
                window = texts[first:first + size]
                if len(set(window)) >= size - 2 and checksum_ok(window):
                    return (run[first].start(), run[first + size - 1].end())
        start = run[0].start()
        if len(run) in _LENGTHS and len(set(texts)) >= len(texts) - 2 and _LABEL.search(text, max(0, start - 60), start):
            return (start, run[-1].end())
    return None
