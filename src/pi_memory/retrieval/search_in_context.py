"""``session_search`` ranked in context with turn vectors (:func:`pi_memory.retrieval.search.session_search` with an
embedder): the keyword matches read in context and the turns nearest by meaning, fused as recall fuses session
turns (:mod:`.turns_in_context`), under recall's evidence floor for the turns found by meaning alone."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

from pi_memory.index.filters import project_ids
from pi_memory.retrieval import context
from pi_memory.retrieval.bm25 import Engine, Ranked


def in_context(conn: sqlite3.Connection, query: str, ranked: Ranked, eng: Engine | None,
               project: str | Path | None, until: str, embedder: Any, min_similarity: float,
               candidates: int) -> Ranked:
    """``ranked`` re-ordered as recall orders session turns (:func:`pi_memory.retrieval.search.session_search`;
    ``until``: its ``as_of`` as a stored timestamp, ``candidates``: how many of each list are read); matches and scores of the
    turns it brings in are added. A turn holding no query word, in it or around it (``match: "meaning"``), is
    kept only when its own cosine meets ``min_similarity`` raised for the query's scripts
    (:func:`pi_memory.retrieval.floors.script_floor`, recall's floor), or a turn next to it in its session does
    (:func:`pi_memory.retrieval.context.context_evidence`, as recall reads the floor): the nearest turns of a query
    nothing is about ("zzzqqq xylophone") are no hits."""
    from pi_memory.retrieval import turns_in_context, vector_lists

    matches = [(mid, ranked.scores.get(mid, 0.0)) for mid in ranked.ids[:candidates]]
    hits = [] if eng is None or not matches else context.rank(conn, eng, ranked.terms or ranked.plan.terms, matches,
                                                              candidates, until=until)
    keyword = [(h.id, h.score) for h in hits]
    qvec, vector, projects = None, [], None
    if embedder is not None and query.strip():
        projects = None if project is None or not str(project).strip() else project_ids(conn, project)
        qvec, vector = vector_lists.nearest_turns(conn, embedder, query, projects, candidates, until)
    worded: set[int] = set()  # vector-found turns holding a query word in them or around them (score_more)
    more = getattr(hits, "score_more", None)

    def score_more(*args: Any) -> Any:
        found = more(*args)
        worded.update(m for m, s in found.items() if s > 0)
        return found

    order = turns_in_context.rank(conn, query, keyword, vector, qvec, str(getattr(embedder, "model_name", "")) or None,
                                  until=until, project=projects[0] if projects is not None and len(projects) == 1 else None,
                                  score_more=score_more if more is not None else None)
    if not order:
        return ranked
    listed = dict(keyword)
    match = {r.id: ranked.match.get(r.id) or ("context" if r.id in listed or r.id in worded else "meaning")
             for r in order}
    # a turn found by meaning alone is kept only when its own cosine meets recall's floor (raised per script)
    from pi_memory.retrieval.floors import script_floor  # (its stemmers load only for a search with vectors)

    floor = script_floor(query, min_similarity)
    meets = {r.id for r in order if r.cosine is not None and r.cosine >= floor}
    # and as recall reads it in context: a turn next to one that meets it in its session passes too
    # (context.context_evidence: the answer after a question that means what the query means)
    lifted = context.context_evidence(conn, [r.id for r in order if match[r.id] == "meaning" and r.id not in meets],
                                      meets, until) if floor > 0 else set()
    order = [r for r in order if match[r.id] != "meaning" or r.id in meets or r.id in lifted or floor <= 0]
    return replace(ranked, ids=[r.id for r in order], scores={r.id: r.score for r in order},
                   match={r.id: match[r.id] for r in order})


def hits_note(cap_note: str | None, hits: list[Any]) -> str | None:
    """The note of a session search that found something: ``cap_note`` (how it was capped or broadened), and how many hits were found by
    meaning alone (``match: "meaning"``), so a reader tells them from the hits holding the query's words."""
    meaning, total = sum(h.match == "meaning" for h in hits), len(hits)
    said = None
    if total == 1 and meaning:
        said = "This hit was found by meaning alone (match: meaning): no word of the query is in it or around it."
    elif meaning:
        said = (f"{'All' if meaning == total else meaning} of these {total} hits "
                f"{'was' if meaning == 1 else 'were'} found by meaning alone (match: meaning): no word of the query "
                f"is in {'it' if meaning == 1 else 'them'} or around {'it' if meaning == 1 else 'them'}.")
    return " ".join(n for n in (cap_note, said) if n) or None
