"""Query terms of the semantic store.

* :func:`word_terms` reads a natural-language query into :class:`WordTerm` s for the store's word index
  (``semantic_words``: the project's word rules, :mod:`pi_memory.index.words`): English stop words dropped, the
  crude suffix cut of :func:`_stem`, then a prefix query when the stem has 4+ characters (``prefers`` ->
  ``prefer*``, which finds ``preferred`` and ``preference`` as the trigram substring did), else the word as
  written and its stem; a word the tokenizer splits (``OPS-4821``, ``svc_ser29``) is a phrase of its tokens,
  and a compound of words (``celery.exceptions.TimeoutError``) also brings each of its words
  (:func:`pi_memory.index.query.compound_parts`), so a memory naming them apart is a candidate;
  runs of CJK characters become phrases of two characters (their bigrams that hold a content character).
* :func:`keyword_terms` reads the same query into substring terms (stop words dropped, the suffix cut, CJK as
  character trigrams): recall's keyword evidence (:mod:`pi_memory.retrieval.lang`) and the team store's
  ``tsvector`` query use them; :func:`fts_expression` quotes strings into one FTS5 expression.

Fusion and ranking are the engine's (:mod:`pi_memory.retrieval`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pi_memory.index.query import MIN_PREFIX_CHARS, STOP_WORDS, compound_parts
from pi_memory.index.words import CJK_RANGES, CJK_STOP, HAS_CJK, word_tokens

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
    other word is left), a possessive cut (``John's`` -> ``john``, as :func:`word_terms` cuts it: the suffix cut
    alone left ``john'``, which a text saying ``John:`` or ``John`` does not hold), stemmed, at least 3 characters (shorter ones cannot match a trigram index), at most
    ``MAX_TERMS``, first occurrence order. CJK text becomes character trigrams (:func:`_cjk_trigrams`); a
    two-character CJK word is kept."""
    words = [w.strip(".'’-").lower() for w in WORD.findall(query or "")]
    words = [p for w in words if w for p in _cjk_trigrams(w)]
    content = [w for w in words if w not in STOP_WORDS]
    if content:
        words = content
    out: list[str] = []
    for word in words:
        if word.endswith(_POSSESSIVE) and len(word) > 3:
            word = word[:-2]
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


_WORD_SCRIPTS = re.compile(f"[{CJK_RANGES}]+|[^{CJK_RANGES}]+")
_POSSESSIVE = ("'s", "\u2019s")


@dataclass(frozen=True)
class WordTerm:
    """One term of the word index: ``tokens`` (lower-cased, as the tokenizer cuts them; several make a phrase)
    and ``prefix`` (the last token also matches longer words)."""

    tokens: tuple[str, ...]
    prefix: bool = False

    def fts(self) -> str:
        """The term as an FTS5 string, quoted (tokens hold only letters and digits: nothing to escape, but a
        quote would be doubled all the same), ``*`` after it for a prefix."""
        return '"' + " ".join(self.tokens).replace('"', '""') + '"' + ("*" if self.prefix else "")


def _cjk_terms(run: str) -> list[WordTerm]:
    """A run of CJK characters as phrases of two characters: ``机房`` -> ``"机 房"``; a longer run (a sentence:
    those scripts put no space between words) gives its bigrams holding a content character (:data:`CJK_STOP`
    and hiragana are function characters): ``机房在哪个城市`` -> ``机 房``, ``房 在``, ``个 城``, ``城 市``. A lone
    content character is itself."""
    if len(run) == 1:
        return [WordTerm((run,))] if _content(run) else []
    return [WordTerm((run[i], run[i + 1])) for i in range(len(run) - 1)
            if _content(run[i]) or _content(run[i + 1])]


def _content(ch: str) -> bool:
    return ch not in CJK_STOP and not "\u3040" <= ch <= "\u309f"


def _latin_terms(word: str) -> list[WordTerm]:
    """One word of a script with spaces (module docstring): a prefix term for a stem of 4+ characters, else the
    word and its stem as written; one character alone is no term."""
    if word.endswith(_POSSESSIVE) and len(word) > 3:
        word = word[:-2]
    stem = _stem(word)
    tokens = tuple(word_tokens(stem))
    if not tokens or len(tokens) == 1 and len(tokens[0]) < 2:
        return []
    if len(tokens[-1]) >= MIN_PREFIX_CHARS:
        return [WordTerm(tokens, prefix=True)]
    out = [WordTerm(tokens)]
    whole = tuple(word_tokens(word))
    if whole != tokens:  # "uses" -> "use" and "uses": a 3-character stem is too short for a prefix
        out.append(WordTerm(whole))
    return out


def word_terms(query: str) -> list[WordTerm]:
    """The :class:`WordTerm` s of a natural-language query (module docstring), first occurrence order, each
    once, at most ``MAX_TERMS``. Stop words are dropped when any other word is left. Never raises."""
    words = [w.strip(".'’-").lower() for w in WORD.findall(query or "")]
    pieces = [p for w in words if w for p in _WORD_SCRIPTS.findall(w)]
    content = [p for p in pieces if p not in STOP_WORDS]
    out: list[WordTerm] = []
    for piece in content or pieces:
        cjk = HAS_CJK.match(piece)
        for term in _cjk_terms(piece) if cjk else [
                *_latin_terms(piece.strip(".'’-")), *(t for part in compound_parts(piece) for t in _latin_terms(part))]:
            if term not in out:
                out.append(term)
            if len(out) >= MAX_TERMS:
                return out
    return out
