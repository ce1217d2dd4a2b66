"""Keyword candidates for semantic search: FTS5 BM25 over the store's word index (``semantic_words``, the
project's word rules: :mod:`pi_memory.index.words`), restricted to the scope's active memories, bounded work.

FTS5 scores every row that matches before it can sort, 1-3 µs per row on the evaluation machine (measured at
100k memories; ``benchmarks/semantic_latency.py``), so a query word found in most memories ("user", "use")
would cost tens of milliseconds. On tables larger than ``KEYWORD_BUDGET`` rows the work is bounded:

1. each term's document frequency is read from the index's vocabulary (``semantic_words_vocab``, an
   ``fts5vocab`` table): exact for a word, the sum over its words for a prefix (``prefer*``: ``prefer``,
   ``preferred``, ``preference``...; an upper bound, as a row may hold several), the smallest of its words for
   a phrase (``"ops 4821"``, ``"机 房"``: an upper bound);
2. terms are taken rarest first while the rows to score stay under ``KEYWORD_BUDGET``; a term found in more
   than ``COMMON_FRACTION`` of the rows is dropped (its BM25 weight is small: log(1 + 0.8/0.2) ≈ 1.6, against
   ≈ 6.9 for a term in 0.1 % of rows) -- vector search covers what such words meant;
3. when even the rarest term is that common, only its newest matches are scored (a rowid floor).

Ranking runs in FTS5 alone first (cheap), then the scope's active rows are kept; when other scopes or inactive
rows crowd that first pass out, the ranking is redone inside the join. Query terms: :func:`word_terms`.
"""

from __future__ import annotations

import logging
import sqlite3
import unicodedata

from pi_memory.index.semantic_schema import M_SCOPE_SQL, VOCAB_TABLE, WORDS_TABLE
from pi_memory.index.words import HAS_CJK
from pi_memory.semantic.terms import WordTerm, word_terms

log = logging.getLogger(__name__)

KEYWORD_BUDGET = 2000  # rows FTS5 may score per keyword search
COMMON_FRACTION = 0.2  # terms in more rows than this fraction are dropped from large tables


def _folded(token: str) -> str:
    """``token`` as the vocabulary holds it: lower case, diacritics removed (``unicode61 remove_diacritics
    2``; for text outside ASCII an approximation, checked by :func:`_term_df`)."""
    if token.isascii() or HAS_CJK.search(token):  # a CJK token is one character, never decomposed (Hangul)
        return token
    return "".join(ch for ch in unicodedata.normalize("NFD", token) if not unicodedata.combining(ch))


def _token_df(conn: sqlite3.Connection, token: str, prefix: bool) -> int:
    key = _folded(token)
    if not prefix:
        row = conn.execute(f"SELECT doc FROM {VOCAB_TABLE} WHERE term = ?", (key,)).fetchone()
        return row[0] if row else 0
    end = key[:-1] + chr(min(ord(key[-1]) + 1, 0x10FFFF))
    return conn.execute(f"SELECT ifnull(sum(doc), 0) FROM {VOCAB_TABLE} WHERE term >= ? AND term < ?",
                        (key, end)).fetchone()[0]


def _term_df(conn: sqlite3.Connection, term: WordTerm) -> int:
    """Rows holding ``term`` (module docstring, step 1). A term outside ASCII that the vocabulary lacks is
    counted by a search (up to ``KEYWORD_BUDGET + 1`` rows), in case the tokenizer folds it otherwise."""
    last = len(term.tokens) - 1
    df = min(_token_df(conn, tok, term.prefix and i == last) for i, tok in enumerate(term.tokens))
    if df == 0 and not all(tok.isascii() for tok in term.tokens):
        df = conn.execute(f"SELECT count(*) FROM (SELECT rowid FROM {WORDS_TABLE} WHERE {WORDS_TABLE} MATCH ? "
                          "LIMIT ?)", (term.fts(), KEYWORD_BUDGET + 1)).fetchone()[0]
    return df


def plan_terms(conn: sqlite3.Connection, terms: list[WordTerm]) -> tuple[list[WordTerm], int | None]:
    """``(terms to score, lowest rowid to score or None)`` for ``terms`` (module docstring, steps 1-3)."""
    top = conn.execute("SELECT ifnull(max(pk), 0) FROM semantic_memories").fetchone()[0]
    if top <= KEYWORD_BUDGET:
        return terms, None
    df = {term: _term_df(conn, term) for term in terms}
    kept: list[WordTerm] = []
    work = 0
    for term in sorted(terms, key=lambda t: df[t]):
        if df[term] == 0:
            continue
        if kept and (df[term] > COMMON_FRACTION * top or work + df[term] > KEYWORD_BUDGET):
            continue
        kept.append(term)
        work += df[term]
    floor = None
    if work > KEYWORD_BUDGET:  # even the rarest term is very common: score only its newest matches
        floor = int(top - top * KEYWORD_BUDGET / work)
    return kept, floor


def keyword_candidates(conn: sqlite3.Connection, query: str, scope_columns: tuple[str, str, str],
                       limit: int) -> list[tuple[str, float]]:
    """``(id, bm25)`` of the scope's active memories matching any term of ``query``, best (lowest bm25) first,
    at most ``limit`` (module docstring). Every term is quoted, so no user text is read as FTS5 syntax; never
    raises for the query text."""
    terms = word_terms(query)
    if not terms:
        return []
    try:
        kept, floor = plan_terms(conn, terms)
        if not kept:
            return []
        expr = " OR ".join(t.fts() for t in kept)
        bound = " AND rowid >= ?" if floor is not None else ""
        base = (floor,) if floor is not None else ()
        inner = max(limit * 4, 200)
        fts = WORDS_TABLE
        sql = (f"SELECT m.id, f.score FROM (SELECT rowid, bm25({fts}) AS score FROM {fts} "
               f"WHERE {fts} MATCH ?{bound} ORDER BY score LIMIT ?) f JOIN semantic_memories m "
               f"ON m.pk = f.rowid WHERE {M_SCOPE_SQL} AND m.status = 'active' ORDER BY f.score LIMIT ?")
        rows = conn.execute(sql, (expr, *base, inner, *scope_columns, limit)).fetchall()
        if len(rows) < limit:
            crowded = conn.execute(f"SELECT count(*) FROM (SELECT rowid FROM {fts} WHERE {fts} "
                                   f"MATCH ?{bound} LIMIT ?)", (expr, *base, inner + 1)).fetchone()[0] > inner
            if crowded:
                sql = (f"SELECT m.id, bm25({fts}) AS score FROM {fts} JOIN semantic_memories m "
                       f"ON m.pk = {fts}.rowid WHERE {fts} MATCH ?"
                       f"{bound.replace('rowid', f'{fts}.rowid')} AND {M_SCOPE_SQL} AND m.status = 'active' "
                       "ORDER BY score LIMIT ?")
                rows = conn.execute(sql, (expr, *base, *scope_columns, limit)).fetchall()
    except sqlite3.OperationalError as exc:  # every term is quoted; this is a safety net
        log.warning("semantic keyword search failed for %r: %s", query[:200], exc)
        return []
    return [(r[0], float(r[1])) for r in rows]
