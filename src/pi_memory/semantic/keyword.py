"""Keyword candidates for semantic search: FTS5 BM25 over the store's word index (``semantic_words``, the
project's word rules: :mod:`pi_memory.index.words`), restricted to the scope's active memories, bounded work.

FTS5 scores every row that matches before it can sort, 1-3 µs per row on the evaluation machine (measured at
100k memories; ``benchmarks/semantic_latency.py``), so a query word found in most memories ("user", "use")
would cost tens of milliseconds. On tables larger than ``KEYWORD_BUDGET`` rows the work is bounded:

1. each term's document frequency is counted in the index, exactly, up to ``KEYWORD_BUDGET`` rows (a
   ``LIMIT`` the index stops at: 0.13 ms for a word in every row at 100k); a term in more rows is *common*.
   Phrases (``"ops 4821"``, ``"机 房"``) and prefixes (``prefer*``) are counted as the search will match them.
   (An ``fts5vocab`` table gives exact counts of any size, but reads the whole list of rows of a word to count
   it: 4 ms for a word in every row at 100k, the largest part of a search; no count above the budget is
   needed.)
2. the other terms are taken rarest first while the rows to score stay under ``KEYWORD_BUDGET``; a term found
   in more than ``COMMON_FRACTION`` of the rows is dropped (its BM25 weight is small: log(1 + 0.8/0.2) ≈ 1.6,
   against ≈ 6.9 for a term in 0.1 % of rows) -- vector search covers what such words meant; common terms
   are dropped too (they cannot fit in the budget);
3. when every term is common, only the newest ``KEYWORD_BUDGET`` matches of one of them are scored (a rowid
   floor: that many rows exactly): the one whose newest matches reach furthest back (the sparsest over recent
   memories), as a word, not a prefix (a common prefix's expansion is read whole).

The index keeps no row lengths (``columnsize=0``, as ``memories_fts``): reading each scored row's length cost
3-4x the scoring (2,000 rows: 3.6 ms with lengths, 0.8-1.3 ms without, 100k memories), and memories are
sentences of similar length, so BM25 here weighs rarity and repetition, not length; equal scores put the
newest memory first. Ranking runs in FTS5 alone first (cheap), then the scope's active rows are kept; when other scopes or inactive
rows crowd that first pass out, the ranking is redone inside the join. Query terms: :func:`word_terms`.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import replace

from pi_memory.index.semantic_schema import M_SCOPE_SQL, WORDS_TABLE
from pi_memory.semantic.terms import WordTerm, word_terms

log = logging.getLogger(__name__)

KEYWORD_BUDGET = 2000  # rows FTS5 may score per keyword search
COMMON_FRACTION = 0.2  # terms in more rows than this fraction are dropped from large tables


def _count(conn: sqlite3.Connection, term: WordTerm) -> int:
    """Rows matching ``term``, counted up to ``KEYWORD_BUDGET + 1``: the index reads no further."""
    return conn.execute(f"SELECT count(*) FROM (SELECT rowid FROM {WORDS_TABLE} WHERE {WORDS_TABLE} MATCH ? "
                        "LIMIT ?)", (term.fts(), KEYWORD_BUDGET + 1)).fetchone()[0]


def _rows(conn: sqlite3.Connection, term: WordTerm) -> tuple[int | None, WordTerm]:
    """``(rows holding term, form)``: the exact count up to ``KEYWORD_BUDGET``, ``None`` above it, with the form
    found that common. A prefix counts its word first: when the word alone is that common, its expansion
    (which FTS5 reads whole: 3.5 ms for a word in every row at 100k) is never read."""
    word = replace(term, prefix=False)
    if term.prefix and _count(conn, word) > KEYWORD_BUDGET:
        return None, word
    n = _count(conn, term)
    return (None if n > KEYWORD_BUDGET else n), term


def _newest_floor(conn: sqlite3.Connection, term: WordTerm) -> int:
    """The rowid of ``term``'s ``KEYWORD_BUDGET``-th newest match: scoring from there scores that many rows."""
    row = conn.execute(f"SELECT rowid FROM {WORDS_TABLE} WHERE {WORDS_TABLE} MATCH ? ORDER BY rowid DESC "
                       "LIMIT 1 OFFSET ?", (term.fts(), KEYWORD_BUDGET - 1)).fetchone()
    return row[0] if row else 0


def plan_terms(conn: sqlite3.Connection, terms: list[WordTerm]) -> tuple[list[WordTerm], int | None]:
    """``(terms to score, lowest rowid to score or None)`` for ``terms`` (module docstring, steps 1-3)."""
    top = conn.execute("SELECT ifnull(max(pk), 0) FROM semantic_memories").fetchone()[0]
    if top <= KEYWORD_BUDGET:
        return terms, None
    counted = {term: _rows(conn, term) for term in terms}
    rare = sorted((t for t in terms if counted[t][0]), key=lambda t: counted[t][0] or 0)
    kept: list[WordTerm] = []
    work = 0
    for term in rare:
        df = counted[term][0] or 0
        if kept and (df > COMMON_FRACTION * top or work + df > KEYWORD_BUDGET):
            continue
        kept.append(term)
        work += df
    common = [form for n, form in counted.values() if n is None]
    if kept or not common:
        return kept, None
    floors = {form: _newest_floor(conn, form) for form in common}  # every term is common: step 3
    sparsest = min(common, key=lambda form: floors[form])
    return [sparsest], floors[sparsest]


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
               f"WHERE {fts} MATCH ?{bound} ORDER BY score, rowid DESC LIMIT ?) f JOIN semantic_memories m "
               f"ON m.pk = f.rowid WHERE {M_SCOPE_SQL} AND m.status = 'active' "
               "ORDER BY f.score, f.rowid DESC LIMIT ?")
        rows = conn.execute(sql, (expr, *base, inner, *scope_columns, limit)).fetchall()
        if len(rows) < limit:
            crowded = conn.execute(f"SELECT count(*) FROM (SELECT rowid FROM {fts} WHERE {fts} "
                                   f"MATCH ?{bound} LIMIT ?)", (expr, *base, inner + 1)).fetchone()[0] > inner
            if crowded:
                sql = (f"SELECT m.id, bm25({fts}) AS score FROM {fts} JOIN semantic_memories m "
                       f"ON m.pk = {fts}.rowid WHERE {fts} MATCH ?"
                       f"{bound.replace('rowid', f'{fts}.rowid')} AND {M_SCOPE_SQL} AND m.status = 'active' "
                       f"ORDER BY score, {fts}.rowid DESC LIMIT ?")
                rows = conn.execute(sql, (expr, *base, *scope_columns, limit)).fetchall()
    except sqlite3.OperationalError as exc:  # every term is quoted; this is a safety net
        log.warning("semantic keyword search failed for %r: %s", query[:200], exc)
        return []
    return [(r[0], float(r[1])) for r in rows]
