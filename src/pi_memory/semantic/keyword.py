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
   memories), as a word when the word alone is that common (a prefix's expansion is read whole).

The index keeps no row lengths (``columnsize=0``, as ``memories_fts``): reading each scored row's length cost
3-4x the scoring (2,000 rows: 3.6 ms with lengths, 0.8-1.3 ms without, 100k memories), and memories are
sentences of similar length, so BM25 here weighs rarity and repetition, not length. Each kept term is scored
by its own FTS5 query and a row's BM25 is the sum (:func:`_ranked_sql`); equal scores put the newest memory
first. The scope's active rows are then taken best first, a page at a time (other scopes' rows may fill one). Query terms: :func:`word_terms`.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import replace

from pi_memory.index.semantic_schema import WORDS_TABLE
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


def _ranked_sql(kept: list[WordTerm], floor: int | None) -> tuple[str, list]:
    """SQL (and its parameters but the last two, ``LIMIT`` and ``OFFSET``) of the rows matching a kept term
    (from ``floor`` on) with their BM25, best first, equal scores newest first. Each term is its own FTS5 query
    and a row's BM25 the sum of its terms' scores (BM25 is a sum over the query's terms): in an index without
    row lengths FTS5 gives NULL for a row that lacks one of an ``OR``'s terms."""
    fts = WORDS_TABLE
    bound, base = (" AND rowid >= ?", [floor]) if floor is not None else ("", [])
    one = f"SELECT rowid, bm25({fts}) AS score FROM {fts} WHERE {fts} MATCH ?{bound}"
    params = [p for term in kept for p in (term.fts(), *base)]
    if len(kept) == 1:
        return f"{one} ORDER BY score, rowid DESC LIMIT ? OFFSET ?", params
    union = " UNION ALL ".join([one] * len(kept))
    return (f"SELECT rowid, sum(score) AS total FROM ({union}) GROUP BY rowid ORDER BY total, rowid DESC "
            "LIMIT ? OFFSET ?", params)


def keyword_candidates(conn: sqlite3.Connection, query: str, scope_columns: tuple[str, str, str],
                       limit: int, replaced: list[int] | None = None) -> list[tuple[str, float]]:
    """``(id, bm25)`` of the scope's active memories matching any term of ``query``, best (lowest bm25) first,
    equal scores newest first, at most ``limit`` (module docstring). Every term is quoted, so no user text is
    read as FTS5 syntax; never raises for the query text. ``replaced``: a list that receives the primary keys
    of the scope's superseded memories among the rows read on the way, best first (no further row is read:
    recall checks what they said, :mod:`pi_memory.retrieval.superseded`)."""
    terms = word_terms(query)
    if not terms:
        return []
    try:
        kept, floor = plan_terms(conn, terms)
        if not kept:
            return []
        sql, params = _ranked_sql(kept, floor)
        out: list[tuple[str, float]] = []
        offset, step = 0, max(limit + limit // 2, 60)  # 1.5x what is wanted: 4x (200) cost ~0.3-0.8 ms of lookups
        while True:  # the scope's active rows, best first; other scopes' rows may crowd a first page out
            chunk = conn.execute(sql, (*params, step, offset)).fetchall()
            rows = {pk: (mid, status) for pk, mid, *scope, status in conn.execute(  # by primary key, scope here
                "SELECT pk, id, user_id, project_id, agent_id, status FROM semantic_memories WHERE pk IN "
                f"({','.join('?' * len(chunk))})", [pk for pk, _ in chunk]) if tuple(scope) == scope_columns}
            out += [(rows[pk][0], float(score)) for pk, score in chunk if rows.get(pk, ("", ""))[1] == "active"]
            if replaced is not None:
                replaced += [pk for pk, _ in chunk if rows.get(pk, ("", ""))[1] == "superseded"]
            if len(out) >= limit or len(chunk) < step:
                break
            offset, step = offset + step, step * 4
    except sqlite3.OperationalError as exc:  # every term is quoted; this is a safety net
        log.warning("semantic keyword search failed for %r: %s", query[:200], exc)
        return []
    return out[:limit]
