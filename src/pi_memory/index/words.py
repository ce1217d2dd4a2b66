"""How text is cut into searchable words: FTS5 ``unicode61`` plus one token per CJK character.

The message index (``messages_fts``), the memory index (``memories_fts``) and the semantic store's index
(``semantic_words``) are word indexes. SQLite's
``unicode61`` tokenizer (with ``remove_diacritics 2``) splits on anything that is not a letter or a digit
(``_`` included), folds case in every script and removes diacritics, several on one letter too (``café``
matches ``cafe``, ``Việt`` matches ``viet``). It keeps a run of CJK characters as one token, because those scripts do not put
spaces between words, so a CJK word inside a sentence could not be found. :func:`fts_form` therefore puts a
space around every CJK character before the text is indexed, and a CJK query term becomes a phrase of single
characters (``缓存`` -> ``"缓 存"``): it matches wherever those characters are adjacent, which is what a
substring search gave. Latin text is left as it is.

Why not the trigram tokenizer (what both indexes used first): it emits about one token per character, which
made indexing 3.5x slower (6.8 against 20+ MB/s of JSONL, ``benchmarks/index_throughput.py --variants``) and
left rare words made of common trigrams slow to find at 1M rows (memory_search p95 42.8 ms at 1M memories on
trigram). Messages and memories use the same word index rules, so both searches read a query the same way.
"""

from __future__ import annotations

import re

CJK_RANGES = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
    "\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003134f"
)
"""Code point ranges indexed one character at a time: CJK (Han, kana, Hangul, bopomofo, CJK punctuation,
full/half-width forms) and the other scripts written without spaces between words (Thai, Lao, Myanmar,
Khmer). Called "CJK" throughout for short."""

HAS_CJK = re.compile(f"[{CJK_RANGES}]")
_ONE_CJK = re.compile(f"([{CJK_RANGES}])")
_WORD = re.compile(r"[^\W_]+")


TOKENIZER = "unicode61 remove_diacritics 2"


def clean_text(text: str) -> str:
    """``text`` with lone UTF-16 surrogates (an emoji cut in half by a truncating tool, kept by JSON) replaced
    by U+FFFD: SQLite stores UTF-8, which cannot hold them, and one would fail the whole file."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def fts_form(text: str) -> str | None:
    """The text as it goes into the word index: ``None`` when it has no CJK character (indexed as it is),
    else the text with a space on both sides of every CJK character."""
    if not HAS_CJK.search(text):
        return None
    return _ONE_CJK.sub(r" \1 ", text)


SQL_FTS_FORM = "pm_fts_form"
"""The SQL function every index connection gets (:func:`register`): ``pm_fts_form(text)`` is the text as the
word index takes it (:func:`fts_form`, or the text itself). The ``memories`` and ``semantic_memories`` triggers
call it, so every writer indexes CJK the same way. Changing :func:`fts_form` needs a migration that rebuilds
``memories_fts`` and ``semantic_words``: a contentless index must be told, on delete, exactly the text it
indexed."""


def register(conn) -> None:
    """Add ``pm_fts_form`` to a ``sqlite3`` connection (deterministic, so SQLite may use it in triggers)."""
    conn.create_function(SQL_FTS_FORM, 1, _sql_fts_form, deterministic=True)


def _sql_fts_form(text):
    if not isinstance(text, str):
        return text
    return fts_form(text) or text


def has_word(text: str) -> bool:
    """True when the tokenizer finds at least one token in ``text`` (a letter or digit in any script)."""
    return _WORD.search(text) is not None


def word_tokens(text: str) -> list[str]:
    """The lowercased tokens of ``text`` as the index sees them (CJK characters one by one)."""
    return _WORD.findall((fts_form(text) or text).lower())


CJK_STOP = frozenset("的了是在我你他她它们这那有和就都也吗呢吧啊哪里什么怎么个不要会能到说对把被给让从向与及或么呀嘛")
"""Chinese function characters; with the hiragana (Japanese particles and endings) they do not make a
:func:`cjk_bigrams` bigram on their own."""
_CJK_RUNS = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]{4,}")


def _content(ch: str) -> bool:
    return ch not in CJK_STOP and not "\u3040" <= ch <= "\u309f"


def cjk_bigrams(text: str) -> list[str]:
    """The character bigrams of ``text``'s runs of four or more CJK characters (longer than most words: a phrase
    or a sentence) that hold a content character,
    in order, each once: ``机房在哪个城市`` -> ``机房 房在 个城 城市`` (``在哪``, ``哪个`` are only function
    characters). For broadening a CJK query term that is a whole sentence: its words are somewhere in it."""
    out: dict[str, None] = {}
    for m in _CJK_RUNS.finditer(text or ""):
        run = m.group(0)
        for i in range(len(run) - 1):
            gram = run[i:i + 2]
            if _content(gram[0]) or _content(gram[1]):
                out.setdefault(gram)
    return list(out)
