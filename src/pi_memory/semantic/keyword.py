"""Keyword candidates for semantic search: FTS5 (trigram) BM25 over the scope's active memories, bounded work.

FTS5 scores every row that matches before it can sort, 1-3 µs per row on the evaluation machine (measured at
100k memories; ``benchmarks/semantic_latency.py``), so a query word found in most memories ("user", "use")
would cost tens of milliseconds. On tables larger than ``KEYWORD_BUDGET`` rows the work is bounded:

1. each term's document frequency is estimated from its newest ``DF_SAMPLE`` matches (exact below the sample,
   else their density over the rowid range times the table size -- one cheap ``ORDER BY rowid DESC LIMIT``);
2. terms are taken rarest first while the rows to score stay under ``KEYWORD_BUDGET``; a term found in more
   than ``COMMON_FRACTION`` of the rows is dropped (its BM25 weight is small: log(1 + 0.8/0.2) ≈ 1.6, against
   ≈ 6.9 for a term in 0.1 % of rows) -- vector search covers what such words meant;
3. when even the rarest term is that common, only its newest matches are scored (a rowid floor).

Ranking runs in FTS5 alone first (cheap), then the scope's active rows are kept; when other scopes or inactive
rows crowd that first pass out, the ranking is redone inside the join.
"""

from __future__ import annotations

import logging
import sqlite3

from pi_memory.index.semantic_schema import M_SCOPE_SQL
from pi_memory.semantic.terms import fts_expression, keyword_terms

log = logging.getLogger(__name__)

KEYWORD_BUDGET = 2000  # rows FTS5 may score per keyword search
COMMON_FRACTION = 0.2  # terms in more rows than this fraction are dropped from large tables
DF_SAMPLE = 64  # newest matches read to estimate a term's document frequency


def plan_terms(conn: sqlite3.Connection, terms: list[str]) -> tuple[list[str], int | None]:
    """``(terms to score, lowest rowid to score or None)`` for ``terms`` (module docstring, steps 1-3)."""
    top = conn.execute("SELECT ifnull(max(pk), 0) FROM semantic_memories").fetchone()[0]
    if top <= KEYWORD_BUDGET:
        return terms, None
    df: dict[str, float] = {}
    for term in terms:  # the newest DF_SAMPLE matches: exact below the sample, else their density
        ids = [r[0] for r in conn.execute(
            "SELECT rowid FROM semantic_fts WHERE semantic_fts MATCH ? ORDER BY rowid DESC LIMIT ?",
            (fts_expression([term]), DF_SAMPLE))]
        df[term] = len(ids) if len(ids) < DF_SAMPLE else len(ids) * top / max(1, ids[0] - ids[-1] + 1)
    kept: list[str] = []
    work = 0.0
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
    at most ``limit`` (module docstring). Never raises for the query text."""
    terms = keyword_terms(query)
    if not terms:
        return []
    try:
        kept, floor = plan_terms(conn, terms)
        expr = fts_expression(kept)
        if expr is None:
            return []
        bound = " AND rowid >= ?" if floor is not None else ""
        base = (floor,) if floor is not None else ()
        inner = max(limit * 4, 200)
        sql = ("SELECT m.id, f.score FROM (SELECT rowid, bm25(semantic_fts) AS score FROM semantic_fts "
               f"WHERE semantic_fts MATCH ?{bound} ORDER BY score LIMIT ?) f JOIN semantic_memories m "
               f"ON m.pk = f.rowid WHERE {M_SCOPE_SQL} AND m.status = 'active' ORDER BY f.score LIMIT ?")
        rows = conn.execute(sql, (expr, *base, inner, *scope_columns, limit)).fetchall()
        if len(rows) < limit:
            crowded = conn.execute(f"SELECT count(*) FROM (SELECT rowid FROM semantic_fts WHERE semantic_fts "
                                   f"MATCH ?{bound} LIMIT ?)", (expr, *base, inner + 1)).fetchone()[0] > inner
            if crowded:
                sql = ("SELECT m.id, bm25(semantic_fts) AS score FROM semantic_fts JOIN semantic_memories m "
                       f"ON m.pk = semantic_fts.rowid WHERE semantic_fts MATCH ?"
                       f"{bound.replace('rowid', 'semantic_fts.rowid')} AND {M_SCOPE_SQL} AND m.status = 'active' "
                       "ORDER BY score LIMIT ?")
                rows = conn.execute(sql, (expr, *base, *scope_columns, limit)).fetchall()
    except sqlite3.OperationalError as exc:  # every term is quoted; this is a safety net
        log.warning("semantic keyword search failed for %r: %s", query, exc)
        return []
    return [(r[0], float(r[1])) for r in rows]
