"""Query terms of the semantic store's trigram keyword index: :func:`keyword_terms` reads a natural-language
query into substring terms (English stop words dropped, a crude suffix cut, CJK as character trigrams) and
:func:`fts_expression` quotes them into one FTS5 expression. Fusion and ranking are the engine's
(:mod:`pi_memory.retrieval`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pi_memory.index.query import STOP_WORDS
from pi_memory.index.words import CJK_STOP, HAS_CJK

MIN_TERM_CHARS = 3  # the trigram tokenizer indexes nothing shorter
MAX_TERMS = 12  # bounds the FTS5 expression (each term is one phrase of trigrams)

WORD = re.compile(r"[^\W_][\w'’.+#-]*[\w+#]|[^\W_]", re.UNICODE)
_CJK_OR_NOT = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+|"
                         "[^\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_SUFFIXES = (("ing", 6), ("ies", 5), ("ed", 5), ("es", 5), ("s", 4))


def _stem(word: str) -> str:
    """A crude English suffix cut (``prefers`` → ``prefer``, ``running`` → ``runn``): terms match as
    substrings in the trigram index, so the stem also finds ``preferred`` and ``preference``."""
    for suffix, min_len in _SUFFIXES:
        if len(word) >= min_len and word.endswith(suffix) and not word.endswith("ss"):
            stem = word[: -len(suffix)]
            return stem if len(stem) >= MIN_TERM_CHARS else word
    return word


def _cjk_trigrams(word: str) -> list[str]:
    """``word`` with each run of CJK characters (written without spaces: a whole sentence is one "word")
    replaced by its overlapping character trigrams that hold a content character (:data:`CJK_STOP`, hiragana:
    function characters): ``机房在哪个城市`` -> ``机房在 房在哪 哪个城 个城市``. A trigram index
    matches them inside any sentence; a run of two characters stays as it is (too short for that index, but
    kept for substring checks)."""
    if not HAS_CJK.search(word):
        return [word]
    out: list[str] = []
    for piece in _CJK_OR_NOT.findall(word):
        if not HAS_CJK.match(piece) or len(piece) < MIN_TERM_CHARS:
            out.append(piece)
            continue
        out += [piece[i:i + 3] for i in range(len(piece) - 2)
                if any(ch not in CJK_STOP and not "\u3040" <= ch <= "\u309f" for ch in piece[i:i + 3])]
    return out


def keyword_terms(query: str) -> list[str]:
    """Search terms of a natural-language query: lower-cased words, English stop words dropped (when any
    other word is left), stemmed, at least 3 characters (shorter ones cannot match a trigram index), at most
    ``MAX_TERMS``, first occurrence order. CJK text becomes character trigrams (:func:`_cjk_trigrams`); a
    two-character CJK word is kept."""
    words = [w.strip(".'’-").lower() for w in WORD.findall(query or "")]
    words = [p for w in words if w for p in _cjk_trigrams(w)]
    content = [w for w in words if w not in STOP_WORDS]
    if content:
        words = content
    out: list[str] = []
    for word in words:
        term = _stem(word)
        if (len(term) >= MIN_TERM_CHARS or HAS_CJK.match(term) and len(term) == 2) and term not in out:
            out.append(term)
        if len(out) >= MAX_TERMS:
            break
    return out


def fts_expression(terms: Sequence[str]) -> str | None:
    """An FTS5 MATCH expression matching any of ``terms``; every term is quoted, so no user text is ever
    read as FTS5 syntax. ``None`` for no terms."""
    quoted = ['"' + t.replace('"', '""') + '"' for t in terms if t]
    return " OR ".join(quoted) if quoted else None
