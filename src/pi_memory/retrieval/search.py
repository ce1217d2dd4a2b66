"""``session_search`` and ``memory_search``: ranked, filtered, bounded full-text search over the index.

The query text becomes a plan (:mod:`.query`, never an error), the plan is run and ranked by :mod:`.engine`
(candidates from the word index, BM25, broadening to any term), and the top hits get their provenance, a
highlighted snippet (:mod:`.snippets`) and the output caps of :mod:`.results`. Filter values that are invalid
(an unknown role, an unreadable date) raise :class:`SearchInputError` with the accepted values
(:mod:`.filters`). ``memory_search`` also records the use of the memories it returns.

Measured figures (latency at 10k/100k/1M messages) are printed by ``benchmarks/search_latency.py``.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pi_memory.index.db import busy_wait, now_iso
from pi_memory.index.filters import (
    CATEGORIES,
    ROLES,
    TARGETS,
    SearchInputError,
    choice,
    parse_time,
    project_ids,
    unknown_project,
)
from pi_memory.index.query import QueryPlan, describe, plan_query
from pi_memory.index.read_only import read_only
from pi_memory.index.redaction import redaction_pending
from pi_memory.index.results import (
    MAX_LIMIT,
    MAX_MEMORY_CHARS,
    MAX_SNIPPET_CHARS,
    MIN_SNIPPET_CHARS,
    MemoryHit,
    SearchResult,
    SessionHit,
    cap_output,
)
from pi_memory.index.snippets import make_snippet
from pi_memory.retrieval import bm25 as engine
from pi_memory.retrieval import context
from pi_memory.retrieval.bm25 import MEMORIES, MESSAGES, Corpus, Engine, Ranked
from pi_memory.retrieval.search_in_context import hits_note
from pi_memory.retrieval.search_in_context import in_context as rank_in_context
from pi_memory.safety import redact, replace_unencodable

__all__ = [
    "SearchInputError",
    "make_snippet",
    "memory_search",
    "parse_time",
    "project_ids",
    "session_ranking",
    "session_ranking_in_context",
    "session_search",
]


USE_WAIT_S = 0.25  # how long a search's usage counter waits for another process's write lock on the index
MAX_QUERY_CHARS = 1000  # a longer query is cut: it is echoed in the result and must not blow the output cap


def _cap_query(query: str | None) -> str | None:
    """At most ``MAX_QUERY_CHARS``, cut at the last white space before the limit (never inside a word, which
    would become a required fragment) when there is one; a lone surrogate (a Python caller's ``"\\ud83d"``,
    which SQLite cannot be given) becomes U+FFFD."""
    if not isinstance(query, str):
        return query
    query = replace_unencodable(query)
    if len(query) <= MAX_QUERY_CHARS:
        return query
    cut = query[:MAX_QUERY_CHARS]
    space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
    return cut[:space] if space > 0 else cut


def _search(
    conn: sqlite3.Connection, corpus: Corpus, query: str | None, where: list[str], params: list, limit: int
) -> Ranked:
    return _run(conn, corpus, query, where, params, limit)[0]


def _run(
    conn: sqlite3.Connection, corpus: Corpus, query: str | None, where: list[str], params: list, limit: int,
    question: bool = False,
) -> tuple[Ranked, Engine | None]:
    """The ranking and the engine that made it (its document frequencies serve further scoring; ``None`` when
    nothing ran). ``question``: the query is read as a question ranked in context (``plan_query``)."""
    plan = plan_query(query, words=corpus.words, question=question)
    if plan.empty:
        return Ranked([], {}, {}, {}, "none", False, plan), None
    engine = Engine(conn, corpus, where, params)
    try:
        return engine.run(plan, limit), engine
    except sqlite3.OperationalError:  # an expression SQLite still rejects: read the query without operators
        plain = plan_query(query, operators=False, words=corpus.words, question=question)
        engine = Engine(conn, corpus, where, params)
        try:
            return engine.run(plain, limit), engine
        except sqlite3.OperationalError:
            return Ranked([], {}, {}, {}, "none", False, plain), None


def _clamp(value: int | None, lo: int, hi: int, default: int) -> int:
    try:
        number = int(value) if value is not None else default
    except (TypeError, ValueError):
        number = default
    return max(lo, min(hi, number))


def _cap_note(ranked: Ranked, noun: str = "messages", filters: str = "project, role, since, until") -> str | None:
    notes = []
    if ranked.capped:
        notes.append(
            f"Many {noun} match; the newest {engine.CANDIDATE_CAP} matches were ranked. Add a term or a filter "
            f"({filters}) to reach older ones."
        )
    if ranked.strategy in ("any", "match+any"):
        notes.append("Some hits contain only some of the terms (match: any).")
    return " ".join(notes) or None


# ---------------------------------------------------------------------------------------------- public
def session_search(
    conn: sqlite3.Connection,
    query: str | None,
    limit: int = 10,
    project: str | Path | None = None,
    role: str | None = None,
    since: str | date | datetime | None = None,
    until: str | date | datetime | None = None,
    snippet_chars: int = 300,
    as_of: str | date | datetime | None = None,
    embedder: Any = None,
    min_similarity: float = 0.40,
) -> SearchResult:
    """Search past session messages. Never raises for the query text; invalid filters raise
    :class:`SearchInputError` with the accepted values. ``as_of``: the moment the question is asked (default
    now): messages written after it are never returned (undated ones are kept); ``until`` narrows further.

    With ``embedder`` (the tool gets semantic memory's), a query of plain words (no quotes or operators) without
    a role, ``since`` or ``until`` filter is ranked as recall ranks session turns (:mod:`.turns_in_context`):
    the keyword matches and the turns around them, each read with its window of neighbours, fused with the
    turns nearest by meaning (their turn vectors, :mod:`pi_memory.semantic.turn_vectors`). A turn found through
    its neighbours (or holding a query word below the keyword list's cut) has ``match: "context"``, one found by
    its vector alone ``match: "meaning"``, and such a turn is kept only when its own cosine meets
    ``min_similarity`` (recall's evidence floor, setting ``recallMinSimilarity`` passed by the composition root,
    default :data:`pi_memory.retrieval.floors.DEFAULT_MIN_SIMILARITY`;
    raised per script of the query: :func:`pi_memory.retrieval.floors.script_floor`; ``0``: no floor). The
    result's note counts the hits found by meaning alone. Otherwise
    (no embedder, operators, filters) the matches are ranked by BM25 alone, strictly: every hit holds the
    terms, which is what a search for a literal (an address, an error code) wants. With an embedder and none of
    those filters the query is read as a question (:func:`pi_memory.index.plan_query` ``question=True``:
    ``kind``, ``type``, ``go``... are stop words too, unless nothing else is left; quoted phrases are kept);
    otherwise every word counts."""
    query = _cap_query(query)
    limit = _clamp(limit, 1, MAX_LIMIT, 10)
    snippet_chars = _clamp(snippet_chars, MIN_SNIPPET_CHARS, MAX_SNIPPET_CHARS, 300)
    where, params = _session_filters(conn, project, role, since, until, as_of)
    if embedder is not None and not _turn_vectors_readable(conn):
        embedder = None
    in_context = embedder is not None and role is None and since is None and until is None
    ranked, eng = _run(conn, MESSAGES, query, where, params, max(limit, CONTEXT_CANDIDATES) if in_context else limit,
                       question=in_context)
    if in_context and not ranked.plan.operators and not any(t.phrase for t in ranked.plan.terms):
        ranked = rank_in_context(conn, query or "", ranked, eng, project, _as_of(as_of), embedder, min_similarity,
                                 CONTEXT_CANDIDATES)
    top = ranked.ids[:limit]
    hits: list[SessionHit] = []
    if top:
        meta = {
            r[0]: r
            for r in conn.execute(
                "SELECT m.id, m.role, m.kind, m.tool_name, m.branch, m.timestamp, m.line, m.entry_id, "
                "f.path, s.session_key, s.source, s.cwd, s.project_name, s.project_id, m.text "
                "FROM messages m JOIN session_files f ON f.id = m.file_id JOIN sessions s ON s.id = m.session_id "
                f"WHERE m.id IN ({','.join('?' * len(top))})",
                top,
            )
        }
        redacted = not redaction_pending(conn)  # rows are redacted when written, once migration 008 is done
        seen: set[tuple] = set()
        for mid in top:
            r = meta[mid]
            same = (r[8], r[7] if r[7] is not None else r[6], r[2], r[3], r[14])
            if same in seen:  # the same entry stored twice (an index written before repeats were merged)
                continue
            seen.add(same)
            rank = len(hits) + 1
            text = r[14] if redacted else redact(r[14])
            snippet, cut = make_snippet(text, ranked.terms, snippet_chars, redacted=True)
            hits.append(
                SessionHit(
                    rank=rank, score=round(ranked.scores.get(mid, 0.0), 4), match=ranked.match[mid],
                    snippet=snippet, truncated=cut, text_chars=len(text), role=r[1], kind=r[2],
                    tool_name=r[3], branch=r[4], timestamp=r[5], line=r[6], entry_id=r[7], file=r[8],
                    session_id=r[9], source=r[10], cwd=r[11], project=r[12], project_id=r[13],
                )
            )
    result = SearchResult(
        kind="session", query=query or "", strategy=ranked.strategy, expression=describe(ranked.plan),
        count=len(hits), results=hits,
        note=hits_note(_cap_note(ranked), hits) if hits else _session_empty_note(conn, ranked.plan, since, until,
                                                                                  as_of, project),
    )
    return cap_output(result)


def _session_empty_note(conn: sqlite3.Connection, plan: QueryPlan, since: Any, until: Any, as_of: Any,
                        project: Any = None) -> str:
    """Why a session search found nothing when the terms are not the reason: no session indexed, a project no
    session belongs to (:func:`~pi_memory.index.filters.unknown_project`), or a time window no message can be in
    (the filters were read already, so they parse)."""
    if conn.execute("SELECT NOT EXISTS(SELECT 1 FROM messages)").fetchone()[0]:
        return "No session is indexed yet, so there is nothing to search (pi-memory index-sessions indexes them)."
    if project is not None and str(project).strip() and (unknown := unknown_project(conn, project)):
        return unknown
    lo, hi, moment = parse_time(since), parse_time(until, upper=True), _as_of(as_of)
    if lo and hi and lo > hi:
        return f"The since time ({lo}) is after the until time ({hi}), so no message can match. Swap them."
    if lo and lo > moment:
        return (f"The since time ({lo}) is after the moment searched as of ({moment}): no message written by then "
                "can match. Use an earlier since time.")
    from pi_memory.index.segments import not_back

    left = not_back(conn)
    if left and not plan.empty:  # the word index is refilled after a repair (index.segments), newest first
        return (f"No matches among the messages searchable now: {left:,} older messages are still being put back "
                "into the search index after a repair, so an older match may be missing (`pi-memory "
                "index-sessions` brings them all back).")
    return _empty_note(plan)


CONTEXT_CANDIDATES = 50  # keyword matches read in context by a plain-words session_search (recall's pool)


def _turn_vectors_readable(conn: sqlite3.Connection) -> bool:
    """Whether ``conn`` can read the turn vectors. A writable index has their tables (the semantic backend that
    gave the embedder made them). An index opened for reading only (:mod:`pi_memory.index.read_only`) gets them
    here: from the file, or attached empty when semantic memory never ran in that folder; when the file's are
    from an older version (refused, nothing is migrated), the search is keyword-only."""
    from pi_memory.index.read_only import read_only

    if read_only(conn) is None:
        return True
    from pi_memory.index.db import migrate
    from pi_memory.index.semantic_schema import SEMANTIC_MIGRATIONS

    try:
        migrate(conn, SEMANTIC_MIGRATIONS)  # reading only: checks and attaches, writes nothing
    except sqlite3.OperationalError:
        return False
    return True


def session_ranking(
    conn: sqlite3.Connection, query: str | None, limit: int = 10, project: str | Path | None = None
) -> list[tuple[int, float]]:
    """``(message id, score)`` of the best ``limit`` messages for ``query``, best first (score: higher is
    better, comparable within one call only): the ranking of :func:`session_search` without provenance,
    snippets or output caps. For callers that fuse it with other lists and read only the winners' rows
    (``messages.id``), such as recall before an agent run; about 5 ms cheaper than ``session_search`` at
    50 hits. Never raises for the query text; an unknown ``project`` name matches nothing."""
    ranked, _engine, limit = _session_ranked(conn, query, limit, project)
    return [(mid, ranked.scores.get(mid, 0.0)) for mid in ranked.ids[:limit]]


def _session_ranked(
    conn: sqlite3.Connection, query: str | None, limit: int, project: str | Path | None,
    as_of: str | date | datetime | None = None, question: bool = False,
) -> tuple[Ranked, Engine | None, int]:
    """The keyword ranking behind :func:`session_ranking` and :func:`session_ranking_in_context` (``question``:
    read as a question, :func:`pi_memory.index.plan_query`), its engine and the clamped limit."""
    limit = _clamp(limit, 1, MAX_LIMIT, 10)
    where, params = _session_filters(conn, project, None, None, None, as_of)
    ranked, engine = _run(conn, MESSAGES, _cap_query(query), where, params, limit, question=question)
    return ranked, engine, limit


def session_ranking_in_context(
    conn: sqlite3.Connection,
    query: str | None,
    limit: int = 10,
    project: str | Path | None = None,
    window: int = context.WINDOW,
    weight: float = context.WEIGHT,
    as_of: str | date | datetime | None = None,
) -> list[context.ContextHit]:
    """The best ``limit`` session turns for ``query`` read in context (:mod:`.context`): keyword matches, the
    turns around them, each scored by BM25 over its own text plus its window of ``window`` turns each side.
    For recall before an agent run, where the answer after a question counts; ``session_search`` keeps strict
    matching. The query is read as a question (question fillers dropped: :data:`pi_memory.index.query.
    QUESTION_STOP_WORDS`). Never raises for the query text; an unknown ``project`` name matches nothing. ``as_of`` (default
    now): no message written after it (:func:`session_search`). Neighbours after ``as_of`` are not read either."""
    ranked, engine, limit = _session_ranked(conn, query, limit, project, as_of, question=True)
    matches = [(mid, ranked.scores.get(mid, 0.0)) for mid in ranked.ids[:limit]]
    if not matches or engine is None:
        return []
    return context.rank(conn, engine, ranked.terms or ranked.plan.terms, matches, limit, window, weight,
                        until=_as_of(as_of))


def _session_filters(
    conn: sqlite3.Connection,
    project: str | Path | None,
    role: str | None,
    since: str | date | datetime | None,
    until: str | date | datetime | None,
    as_of: str | date | datetime | None = None,
) -> tuple[list[str], list]:
    """The WHERE terms (on ``messages m``) and their parameters of the session filters; invalid values raise
    :class:`SearchInputError`. ``as_of`` (default now) keeps undated messages, unlike ``until``."""
    where: list[str] = []
    params: list = []
    if project is not None and str(project).strip():
        ids = project_ids(conn, project)
        # one primary-key lookup per candidate row: the search is driven by the word index or by ids, and the
        # form `m.session_id IN (SELECT id FROM sessions WHERE project_id ...)` built the list of every session
        # of the project for each statement (about 3 ms a statement at 5,000 sessions)
        where.append(
            f"(SELECT s.project_id FROM sessions s WHERE s.id = m.session_id) IN ({','.join('?' * len(ids))})"
        )
        params += ids
    if choice(role, ROLES, "role"):
        where.append("m.role = ?")
        params.append(role)
    lo, hi = parse_time(since), parse_time(until, upper=True)
    if lo:
        where.append("m.timestamp >= ?")
        params.append(lo)
    if hi:
        where.append("m.timestamp <= ?")
        params.append(hi)
    moment = _as_of(as_of)
    newest = conn.execute("SELECT max(timestamp) FROM messages").fetchone()[0]  # one seek of messages_time
    if newest is not None and newest > moment:  # else nothing is dated after it: no condition, and a one-word
        where.append("(m.timestamp IS NULL OR m.timestamp <= ?)")  # search reads the word index alone (3x faster)
        params.append(moment)
    return where, params


def _as_of(as_of: str | date | datetime | None) -> str:
    """``as_of`` as a stored timestamp (end of the day for a bare date); ``None``: now."""
    return now_iso() if as_of is None or (isinstance(as_of, str) and not as_of.strip()) else str(
        parse_time(as_of, upper=True))


def _empty_note(plan: QueryPlan) -> str:
    if plan.empty and plan.query.strip():
        if plan.excludes:
            return "The query only excludes terms (NOT ...), so nothing can match it. Add a term to search for."
        return "The query has no word to search for (only quotes, operators or punctuation). Add a word to search for."
    if plan.empty:
        return "The query is empty; nothing to search for."
    return "No matches. Try fewer or shorter terms, or a different spelling."


def memory_search(
    conn: sqlite3.Connection,
    query: str | None,
    limit: int = 10,
    target: str | None = None,
    category: str | None = None,
    project: str | Path | None = None,
    snippet_chars: int = 300,
    record_use: bool = True,
    blocks: Iterable[Any] | None = None,
) -> SearchResult:
    """Search stored memories (Markdown mirror and extended store) and, given ``blocks``
    (:class:`pi_memory.blocks.Block` in effect), the memory blocks (:mod:`.sources_blocks`: the same BM25,
    the two rankings merged by RRF; ``target="block"`` searches blocks only, another ``target`` or a
    ``category`` memories only).

    ``project`` keeps global memories plus those of that project (a memory scoped to another project is
    left out); without it every memory is searched. Returned memories get ``last_used`` = now and
    ``hit_count`` + 1 (unless ``record_use`` is False).
    """
    query = _cap_query(query)
    limit = _clamp(limit, 1, MAX_LIMIT, 10)
    snippet_chars = _clamp(snippet_chars, MIN_SNIPPET_CHARS, MAX_SNIPPET_CHARS, 300)
    block_hits: list = []
    if blocks is not None and target in (None, "block") and category is None:
        from pi_memory.retrieval.sources_blocks import block_hits as rank_blocks

        block_hits, block_ranked = rank_blocks(blocks, query, limit, snippet_chars)
    if target == "block":
        return _blocks_only(query, block_hits, block_ranked if blocks is not None else None)
    where: list[str] = []
    params: list = []
    if choice(target, TARGETS, "target"):
        where.append("mem.target = ?")
        params.append(target)
    if choice(category, CATEGORIES, "category"):
        where.append("mem.category = ?")
        params.append(category)
    if project is not None and str(project).strip():
        ids = project_ids(conn, project)
        where.append(f"(mem.scope = 'global' OR mem.project IN ({','.join('?' * len(ids))}))")
        params += ids
    ranked = _search(conn, MEMORIES, query, where, params, limit)
    top = ranked.ids[:limit]
    hits: list[MemoryHit] = []
    if top:
        marks = ",".join("?" * len(top))
        if record_use and read_only(conn) is None:  # an index opened for reading only keeps its counts
            # busy or read-only: the search result matters more than the usage counter, which waits at most
            # USE_WAIT_S for another process's lock (it waited the connection's 10 s, then was dropped anyway)
            with contextlib.suppress(sqlite3.OperationalError), busy_wait(conn, USE_WAIT_S):
                conn.execute(
                    f"UPDATE memories SET last_used = ?, hit_count = hit_count + 1 WHERE id IN ({marks})",
                    [now_iso(), *top],
                )
        meta = {
            r[0]: r
            for r in conn.execute(
                "SELECT id, content, scope, project, target, category, failure_reason, source, created, "
                f"last_used, hit_count FROM memories WHERE id IN ({marks})",
                top,
            )
        }
        redacted = not redaction_pending(conn)
        for rank, mid in enumerate(top, 1):
            r = meta[mid]
            if not redacted:
                r = (*r[:1], redact(r[1]), *r[2:6], redact(r[6]) if r[6] else r[6], *r[7:])
            full = r[1] + ("\n" + r[6] if r[6] else "")
            snippet, _cut = make_snippet(full, ranked.terms, snippet_chars, redacted=True)
            hits.append(
                MemoryHit(
                    rank=rank, score=round(ranked.scores.get(mid, 0.0), 4), match=ranked.match[mid], id=mid,
                    content=r[1][:MAX_MEMORY_CHARS], truncated=len(r[1]) > MAX_MEMORY_CHARS, snippet=snippet,
                    scope=r[2], project=r[3], target=r[4], category=r[5], failure_reason=r[6], source=r[7],
                    created=r[8], last_used=r[9], hit_count=r[10],
                )
            )
    empty = None
    if block_hits:
        from pi_memory.retrieval.sources_blocks import merged

        hits = merged(hits, block_hits, limit)
    if not hits:
        stored = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        empty = "No memories are stored yet." if not stored and not blocks else _empty_note(ranked.plan)
    result = SearchResult(
        kind="memory", query=query or "", strategy=ranked.strategy, expression=describe(ranked.plan),
        count=len(hits), results=hits,
        note=_cap_note(ranked, "memories", "target, category, project") if hits else empty,
    )
    return cap_output(result)


def _blocks_only(query: str | None, hits: list, ranked: Ranked | None) -> SearchResult:
    """The result of ``memory_search(target="block")`` (``ranked``: the blocks' ranking; ``None``: no block
    was searched)."""
    plan = ranked.plan if ranked is not None else plan_query(query, words=True)
    note = None if hits else ("There are no memory blocks to search." if ranked is None else _empty_note(plan))
    return cap_output(SearchResult(kind="memory", query=query or "", strategy=ranked.strategy if ranked else "none",
                                   expression=describe(plan), count=len(hits), results=hits, note=note))
