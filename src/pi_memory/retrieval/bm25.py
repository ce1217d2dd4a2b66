"""The ranking engine behind both searches: candidates from an FTS5 index, BM25 computed here.

Two corpora, both word indexes (:mod:`.words`): session messages and memories.

1. **Candidates.** Each clause of the plan (:mod:`.query`) yields its newest ``CANDIDATE_CAP`` matching rows
   under the filters (``ORDER BY rowid DESC``; rows are inserted oldest session first, so this is newest
   first): one FTS5 query, its terms ANDed. (With the first, trigram, indexes a multi-term clause had to be
   driven by its rarest term plus ``LIKE`` checks: FTS5 evaluated ``"rare" AND "common"`` on trigrams in
   30-90 ms at 1M rows; on words it takes about 1 ms.) Terms the index cannot look up are ``LIKE`` conditions;
   a clause of those only scans rows newest first.
2. **Ranking.** BM25 (Robertson & Zaragoza 2009): k1 = 1.2, b = 0.75; for session messages k1 = 0.9, b = 0.4
   (:class:`Corpus`; the defaults of the Anserini toolkit, Yang, Fang and Lin, SIGIR 2017): a chat turn's
   length says little about its relevance, and a term repeated across a window of turns saturates sooner
   (LoCoMo host recall R@10 0.810 -> 0.817, every conversation and both halves up). Term frequency =
   case-insensitive occurrences in the first ``SCORE_CHARS`` characters, counted as the index matches
   (:class:`_TermFreq`), length = the text's characters, document frequency = estimated from the term's newest ``DF_SAMPLE`` matches under the same filters (exact when there are fewer; otherwise their
   density over the id range times the table size). Ties go to the newer row (time, then insertion order).
   SQLite's ``bm25()`` is not used: it counts every row containing each term before returning anything
   (0.25-1.6 s per common term at 1M messages on trigrams; 416 ms p95 on a word index at 1M).
3. **Broadening.** A query without operators that found fewer than ``limit`` rows is completed with the
   newest ``LOOSE_CAP`` matches of each single term (and its stem), ranked after the all-terms rows.
4. **One word, one BM25 term** (:func:`scored_terms`): a broadened word comes as several terms (``paintings``,
   ``paintings*``, ``paint*``); a one-word term that a prefix term of the same search also matches is scored
   through that prefix term alone, so ``paintings`` is not counted two or three times over ``painted`` (what a
   stemming index does: one stem, one weight). LoCoMo keyword list of recall (``benchmarks/locomo_recall.py``):
   R@10 0.712 -> 0.725.

Trade-off of the caps: when a clause matches more than ``CANDIDATE_CAP`` rows only the newest are ranked, so
an older but better match of a very common term can be missed (``capped`` says so; a second term or a filter
narrows the set). Each term's id list is fetched once per search and reused by every step.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sqlite3
from dataclasses import dataclass, field, replace

from pi_memory.index.query import Clause, QueryPlan, Term
from pi_memory.index.words import HAS_CJK, word_tokens

CANDIDATE_CAP = 200  # rows ranked per clause of the query (the newest matches)
LOOSE_CAP = 100  # rows per term when a query is broadened to any of its terms
DF_SAMPLE = 64  # newest matches read to estimate how common a term is
SCORE_CHARS = 4000  # term frequencies are counted in the first SCORE_CHARS characters of a text
K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class Corpus:
    """Where a search looks: FTS table, content table (with alias), id, text expression, time expression, and
    whether the FTS table is the word index (:mod:`.words`) or a trigram index."""

    fts: str
    table: str
    key: str
    text: str
    time: str
    words: bool = False
    k1: float = K1  # BM25's term-frequency saturation and length normalisation for this corpus (module docstring)
    b: float = B


MESSAGES = Corpus("messages_fts", "messages m", "m.id", "m.text", "m.timestamp", words=True, k1=0.9, b=0.4)
MEMORIES = Corpus(
    "memories_fts", "memories mem", "mem.id", "mem.content || ifnull(char(10) || mem.failure_reason, '')",
    "mem.created", words=True,
)


@dataclass
class Ranked:
    """Ranked row ids with their candidate rows ``(id, text prefix, length, time)``, scores and match kind."""

    ids: list[int]
    rows: dict[int, tuple]
    scores: dict[int, float]
    match: dict[int, str]
    strategy: str
    capped: bool
    plan: QueryPlan
    terms: list[Term] = field(default_factory=list)


def _density(ids: list[int], cap: int, total: int) -> float:
    """Rows matching, from the newest ``cap`` matches: exact below the cap, else their density over the id
    range times the table size (matches spread evenly over time)."""
    if len(ids) < cap:
        return float(len(ids))
    return min(float(total), len(ids) * total / max(1, ids[0] - ids[-1] + 1))


class _TermFreq:
    """Occurrences of a term in a lowercased text, counted the way the index matches it.

    Trigram index: substring occurrences; a 1-2 character Latin term (``go``, ``ui``) inside a longer word
    (``going``) counts a quarter (LIKE finds both, ranking prefers the word). Word index: occurrences that
    start at a word boundary, the term's words separated by any non-word characters, and ending at a word
    boundary unless the term is a prefix; a term with CJK counts substring occurrences of its characters.
    Every count starts with ``str.count`` of a literal (fast); a boundary check or a regular expression runs
    only on texts that contain it.
    """

    def __init__(self, term: Term):
        self.low = term.text.lower()
        self.word = None
        self.pattern = None
        self.token = None
        if term.words and not term.short and not HAS_CJK.search(term.text):
            tokens = word_tokens(term.index_text)
            self.prefix = term.prefix
            if len(tokens) == 1:
                self.token = tokens[0]
            else:  # starts with a literal, so the regex engine can search for it fast; start boundary checked apart
                end = "" if term.prefix else r"(?![^\W_])"
                self.pattern = re.compile(r"[\W_]+".join(map(re.escape, tokens)) + end)
                self.low = tokens[0]
        elif term.words and not term.short:
            self.low = "".join(self.low.split())
        elif term.short and term.text.isascii() and term.text.isalnum():
            self.word = re.compile(rf"(?<![a-z0-9]){re.escape(self.low)}(?![a-z0-9])")
        # a substring every counted occurrence contains: a text without it scores 0 with no call (most rows of a
        # window BM25 lack most terms)
        self.probe = self.token if self.token is not None else self.low

    def _tokens(self, text: str) -> int:
        token, size, n, at = self.token, len(self.token), 0, text.find(self.token)
        while at >= 0:
            if (at == 0 or not text[at - 1].isalnum()) and (
                self.prefix or at + size == len(text) or not text[at + size].isalnum()
            ):
                n += 1
            at = text.find(token, at + size)
        return n

    def __call__(self, low_text: str) -> float:
        if self.token is not None:
            return self._tokens(low_text)
        n = low_text.count(self.low)
        if not n:
            return 0
        if self.pattern is not None:
            return sum(1 for m in self.pattern.finditer(low_text) if not m.start() or not low_text[m.start() - 1].isalnum())
        if self.word is None:
            return n
        whole = len(self.word.findall(low_text))
        return whole + 0.25 * (n - whole)


def _single_word(term: Term) -> str | None:
    """The one lower-cased word a word-index term looks up, or ``None`` (a phrase, several words, CJK)."""
    if not term.words or term.phrase or term.short or HAS_CJK.search(term.text):
        return None
    tokens = word_tokens(term.index_text)
    return tokens[0].lower() if len(tokens) == 1 else None


def scored_terms(terms: list[Term]) -> list[Term]:
    """``terms`` without the one-word terms that a prefix term among them also matches (``paintings`` and
    ``paintings*`` when ``paint*`` is there; ``gina`` when ``gina*`` is): each is scored once, through the
    prefix term, whose occurrences include its own. Order kept; other terms are untouched."""
    prefixes = [(w, t) for t in terms if t.prefix and not t.negated and (w := _single_word(t))]
    if not prefixes:
        return terms
    out = []
    for t in terms:
        word = None if t.negated else _single_word(t)
        if word and any(p is not t and word.startswith(pw) and (word != pw or not t.prefix) for pw, p in prefixes):
            continue
        out.append(t)
    return out


@functools.lru_cache(maxsize=4096)
def _key(term: Term) -> str:
    """The FTS5 string of a term without its negation: the cache key of its id list and document frequency
    (remembered: a search asks it of each term a few dozen times, and terms are frozen)."""
    return replace(term, negated=False).fts().lower()


class Engine:
    """One search: a connection, a corpus, filter SQL (``where`` + ``params``) and per-search caches."""

    def __init__(self, conn: sqlite3.Connection, corpus: Corpus, where: list[str], params: list):
        self.conn, self.corpus, self.where, self.params = conn, corpus, where, params
        self.total = max(1, conn.execute(f"SELECT ifnull(max({corpus.key}), 0) FROM {corpus.table}").fetchone()[0])
        self._ids: dict[str, tuple[list[int], int]] = {}  # term -> (newest ids, limit asked)
        self.df: dict[str, float] = {}
        self.cols = f"{corpus.key}, substr({corpus.text}, 1, {SCORE_CHARS}), length({corpus.text}), {corpus.time}"

    # ----------------------------------------------------------------------------------------- SQL pieces
    def _likes(self, terms: list[Term]) -> tuple[list[str], list]:
        conds, args = [], []
        for t in terms:
            conds.append(f"{self.corpus.text} {'NOT ' if t.negated else ''}LIKE ? ESCAPE '\\'")
            args.append(t.like())
        return conds, args

    def _fts_rows(self, expr: str, extra: list[Term], cols: str, limit: int, join: bool = True) -> list[tuple]:
        c = self.corpus
        conds, args = self._likes(extra)
        conds = [*self.where, *conds]
        if not conds and not join:
            sql = f"SELECT {cols} FROM {c.fts} WHERE {c.fts} MATCH ? ORDER BY rowid DESC LIMIT ?"
            return self.conn.execute(sql, [expr, limit]).fetchall()
        tail = "".join(f" AND {x}" for x in conds)
        sql = (
            f"SELECT {cols} FROM {c.fts} JOIN {c.table} ON {c.key} = {c.fts}.rowid WHERE {c.fts} MATCH ?{tail} "
            f"ORDER BY {c.fts}.rowid DESC LIMIT ?"
        )
        return self.conn.execute(sql, [expr, *self.params, *args, limit]).fetchall()

    def _rows_by_id(self, ids: list[int], limit: int) -> list[tuple]:
        c = self.corpus
        conds = [*self.where, f"{c.key} IN (SELECT value FROM json_each(?))"]
        sql = f"SELECT {self.cols} FROM {c.table} WHERE {' AND '.join(conds)} ORDER BY {c.key} DESC LIMIT ?"
        return self.conn.execute(sql, [*self.params, json.dumps(ids), limit]).fetchall()

    def _cached(self, term: Term, limit: int) -> tuple[list[int], bool] | None:
        """The newest ``limit`` ids of ``term`` if already known, with whether they are all its matches."""
        cached = self._ids.get(_key(term))
        if cached is None:
            return None
        ids, asked = cached
        full = len(ids) < asked
        if full or asked >= limit:
            return ids[:limit], full and len(ids) <= limit
        return None

    def term_ids(self, term: Term, limit: int) -> tuple[list[int], bool]:
        """Newest ids matching one long term under the filters, and whether that is all of them."""
        known = self._cached(term, limit)
        if known is not None:
            return known
        rows = self._fts_rows(_key(term), [], f"{self.corpus.fts}.rowid", limit, join=bool(self.where))
        ids = [r[0] for r in rows]
        self._ids[_key(term)] = (ids, limit)
        return ids, len(ids) < limit

    def term_rows(self, term: Term, limit: int) -> list[tuple]:
        """The newest ``limit`` rows matching one long term (by id when its ids are already known)."""
        known = self._cached(term, limit)
        if known is not None:
            return self._rows_by_id(known[0], limit)
        rows = self._fts_rows(_key(term), [], self.cols, limit)
        self._ids[_key(term)] = ([r[0] for r in rows], limit)
        return rows

    def doc_freq(self, term: Term) -> float:
        key = _key(term)
        if key not in self.df:
            ids, _complete = self.term_ids(term, DF_SAMPLE)
            self.df[key] = _density(ids, DF_SAMPLE, self.total)
        return self.df[key]

    # ----------------------------------------------------------------------------------------- candidates
    def clause_rows(self, clause: Clause, cap: int) -> list[tuple]:
        """The newest ``cap`` rows matching ``clause`` (see the module docstring)."""
        longs = [t for t in clause.positives if not t.short]
        expr = clause.match_expression()
        if expr is None:  # short terms only: a LIKE scan, newest first
            conds, args = self._likes(list(clause.terms))
            conds = [*self.where, *conds]
            sql = (
                f"SELECT {self.cols} FROM {self.corpus.table} WHERE {' AND '.join(conds)} "
                f"ORDER BY {self.corpus.key} DESC LIMIT ?"
            )
            return self.conn.execute(sql, [*self.params, *args, cap]).fetchall()
        if len(clause.terms) == 1:
            return self.term_rows(longs[0], cap)
        shorts = [t for t in clause.terms if t.short]
        return self._fts_rows(expr, shorts, self.cols, cap)

    # ----------------------------------------------------------------------------------------- ranking
    def score(self, rows: list[tuple], terms: list[Term]) -> dict[int, float]:
        """BM25 of each row over ``terms`` (each word once: :func:`scored_terms`); a term with no known document
        frequency counts as common."""
        if not rows:
            return {}
        terms = scored_terms(list(terms))
        freqs = [_TermFreq(t) for t in terms]
        avgdl = max(1.0, sum(r[2] for r in rows) / len(rows))
        k1, b = self.corpus.k1, self.corpus.b
        idf = []
        for t in terms:
            n = min(self.df.get(_key(t), float(len(rows))), float(self.total))
            idf.append(math.log(1.0 + (self.total - n + 0.5) / (n + 0.5)))
        scores: dict[int, float] = {}
        for rid, text, length, _ts in rows:
            low = text.lower()
            norm = k1 * (1.0 - b + b * length / avgdl)
            s = 0.0
            for freq, w in zip(freqs, idf, strict=True):
                if freq.probe not in low:
                    continue
                tf = freq(low)
                if tf:
                    s += w * tf * (k1 + 1.0) / (tf + norm)
            scores[rid] = s
        return scores

    def loose_term(self, term: Term) -> Term:
        """The term a broadened search runs: a prefix term only while its whole word alone matches fewer than
        ``LOOSE_CAP`` rows (otherwise the newest ``LOOSE_CAP`` rows of the word itself serve, and the prefix
        query, which merges the rows of every word it starts, is skipped: 16-90 ms for ``message*`` or
        ``string*`` at 1M messages)."""
        if not term.prefix or term.short:
            return term
        exact = replace(term, prefix=False)
        _ids, complete = self.term_ids(exact, LOOSE_CAP)
        return term if complete else exact

    def run(self, plan: QueryPlan, limit: int) -> Ranked:
        rows: dict[int, tuple] = {}
        capped = False
        for clause in plan.clauses:
            found = self.clause_rows(clause, CANDIDATE_CAP)
            capped |= len(found) >= CANDIDATE_CAP
            for r in found:
                rows.setdefault(r[0], r)
        terms = plan.terms
        broaden = not plan.operators and len(rows) < limit and bool(plan.loose)
        extra_rows: dict[int, tuple] = {}
        loose_terms: list[Term] = []
        if broaden:  # rows first: the document frequencies below then come from the ids already read
            for clause in plan.loose:
                term = self.loose_term(clause.terms[0])
                if _key(term) in {_key(t) for t in loose_terms}:
                    continue
                loose_terms.append(term)
                for r in self.clause_rows(Clause((term,)), LOOSE_CAP):
                    if r[0] not in rows:
                        extra_rows.setdefault(r[0], r)
        if len(terms) > 1 or broaden:
            for t in [*terms, *loose_terms]:
                if not t.short:
                    self.doc_freq(t)
        scores = self.score(list(rows.values()), terms)

        def order(ids: list[int], sc: dict[int, float]) -> list[int]:
            out = sorted(ids, reverse=True)  # stable sorts: score, then time, then insertion order
            out.sort(key=lambda i: rows[i][3] or "", reverse=True)
            out.sort(key=lambda i: -round(sc[i], 9))
            return out

        ids = order(list(rows), scores)
        match = dict.fromkeys(ids, "all" if any(c.match_expression() for c in plan.clauses) else "text")
        strategy = "match" if ids else "none"
        all_terms = list(terms)
        if broaden:
            rows.update(extra_rows)
            extra_scores = self.score(list(extra_rows.values()), loose_terms)
            extra = order(list(extra_rows), extra_scores)
            scores.update(extra_scores)
            match.update(dict.fromkeys(extra, "any"))
            if extra:
                strategy = "match+any" if ids else "any"
            ids += extra
            known = {x.text.lower() for x in all_terms}
            all_terms += [t for t in loose_terms if t.text.lower() not in known]
        return Ranked(ids, rows, scores, match, strategy, capped, plan, all_terms)
