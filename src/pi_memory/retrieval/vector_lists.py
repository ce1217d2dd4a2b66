"""The vector lists of one recall: curated entries and session turns ranked by cosine, from the matrices of
:mod:`pi_memory.semantic.sources`, and skills (``skills_vector``, :mod:`pi_memory.retrieval.sources_skills`).

Recall fuses ranked lists (:mod:`pi_memory.retrieval.engine`). For semantic memories the embedded backend gives
a keyword and a vector list; this module adds a vector list for each of the other two sources when recall
includes them: ``curated_vector`` (the index's ``memories`` rows: the curated Markdown mirror and the extended
store) and ``sessions_vector`` (session turns; :mod:`pi_memory.retrieval.turns_in_context` fuses it with the
session keyword list over one pool). ``curated_vector`` weighs as much as the curated keyword list
(:data:`WEIGHTS`; recall's ``weights`` argument overrides it).

How one recall runs (:func:`start`, then :meth:`VectorLists.merge`):

1. a worker thread embeds the query **once** (the same vector serves the semantic backend's vector list:
   :meth:`~pi_memory.semantic.embedded.EmbeddedBackend.candidate_lists` takes it as a ``Future``) while the
   calling thread runs the keyword searches;
2. curated entries lacking a vector of the current model are embedded a few at a time
   (:func:`pi_memory.semantic.sources.ensure_curated`);
3. each source's matrix is searched (:func:`pi_memory.semantic.sources.nearest`) and the winners are read back.

Nothing here raises into recall: a failure (embedder down, database busy) is logged and leaves the keyword
lists. With no vectors stored at all, the vector lists are empty and recall is keyword-only for these sources.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pi_memory.semantic import turn_vectors as tv
from pi_memory.semantic.sources import ensure_curated, nearest, submit

log = logging.getLogger(__name__)

WEIGHTS = {"curated_vector": 1.0, "skills_vector": 1.0}


def _curated_hits(conn: sqlite3.Connection, model: str, dim: int, project: str | None, qvec: np.ndarray,
                  limit: int, as_of: str | None = None) -> list[tuple[str, float, Any]]:
    where, params = tv.curated_scope_sql(project)
    read = ("SELECT v.id, m.id, m.content, m.created FROM semantic_curated_vectors v JOIN memories m "
            "ON m.id = v.memory_id WHERE v.id IN ({ids}) AND +v.model = ? "
            f"AND v.text = {tv.CURATED_TEXT_SQL} AND {where}")
    from pi_memory.retrieval.engine import RecallHit

    return [(f"c:{mid}", cos, RecallHit("curated", str(mid), content, (created or "")[:10], when=created or ""))
            for cos, (_, mid, content, created) in nearest(conn, "curated", model, dim, project, qvec, limit,
                                                             read, params) if not _after(created, as_of)]


def _after(when: str | None, as_of: str | None) -> bool:
    """Whether a row written at ``when`` is later than ``as_of`` (both stored timestamp text; undated: never).
    Checked here rather than in the read-back: a row the read-back does not return is taken for a deleted one
    and leaves the in-memory matrix, so an earlier ``as_of`` would hide newer rows from later recalls."""
    return as_of is not None and bool(when) and when > as_of


# --- session turns -----------------------------------------------------------------------------------------------
def _turn_hits(conn: sqlite3.Connection, model: str, dim: int, project: str | None, qvec: np.ndarray,
               limit: int, as_of: str | None = None) -> list[tuple[str, float, Any]]:
    check, params = ("", []) if project is None else (" AND s.project_id = ?", [project])
    read = ("SELECT v.id, s.session_key, m.entry_id, m.line, m.timestamp, m.id FROM semantic_turn_vectors v "
            "JOIN messages m ON m.id = v.message_id JOIN sessions s ON s.id = m.session_id "
            f"WHERE v.id IN ({{ids}}) AND +v.model = ?{check}")
    found = nearest(conn, "sessions", model, dim, project, qvec, limit, read, params)
    from pi_memory.retrieval.engine import RecallHit

    out = []
    for cos, (_, session_key, entry_id, line, timestamp, mid) in found:  # text: read when judged (fill_texts)
        if _after(timestamp, as_of):  # nothing written after the moment asked about
            continue
        key = f"t:{session_key}#{entry_id or line}"
        out.append((key, cos, RecallHit("session", key[2:], "", (timestamp or "")[:10], when=timestamp or "",
                                        message_id=mid)))
    return out


def fill_texts(conn: sqlite3.Connection | None, hits: Sequence[Any]) -> None:
    """Give the session ``hits`` the vector list found (their ``text`` is ``""`` until judged: most never are)
    their role and opening (``SESSION_SNIPPET_CHARS``). One statement; a turn deleted since keeps ``""``."""
    wanted = [h for h in hits if h.kind == "session" and not h.text and h.message_id]
    if not wanted or conn is None:
        return
    ids = sorted({h.message_id for h in wanted})
    rows = {r[0]: r for r in conn.execute(
        f"SELECT id, role, text FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids)}
    for h in wanted:
        if h.message_id in rows:
            _, role, text = rows[h.message_id]
            h.text = f"{role}: {_snippet(text)}"


def nearest_turns(conn: sqlite3.Connection, embedder: Any, query: str, projects: Sequence[str] | None, limit: int,
                  as_of: str | None = None) -> tuple[np.ndarray | None, list[tuple[int, float]]]:
    """The query's vector and ``(message id, cosine)`` of the turns nearest to it, best first, in ``projects``
    (project ids; ``None``: every project): what ``session_search`` fuses with its keyword list. ``(None, [])``
    when the embedder fails (logged: the search goes on by keyword)."""
    qvec = _embed(embedder, query)
    if qvec is None:
        return None, []
    model, dim = str(embedder.model_name), int(qvec.shape[-1])
    found: list[tuple[int, float]] = []
    for project in (projects if projects is not None else [None]):
        found += [(hit.message_id, cos) for _, cos, hit in _turn_hits(conn, model, dim, project, qvec, limit, as_of)]
    found.sort(key=lambda x: -x[1])
    return qvec, list(dict(reversed(found[:limit])).items())[::-1]


def turn_keys(conn: sqlite3.Connection, message_ids: Sequence[int]) -> list[tuple[str, int]]:
    """``(key, message id)`` of session messages, in the order given: the recall key of a turn is
    ``t:<session key>#<entry id or line>``, the same as the vector list's. One query, no message text."""
    if not message_ids:
        return []
    rows = {r[0]: r for r in conn.execute(
        "SELECT m.id, s.session_key, m.entry_id, m.line FROM messages m JOIN sessions s ON s.id = m.session_id "
        f"WHERE m.id IN ({','.join('?' * len(message_ids))})", list(message_ids))}
    return [(f"t:{rows[mid][1]}#{rows[mid][2] or rows[mid][3]}", mid) for mid in message_ids if mid in rows]


def turn_days(conn: sqlite3.Connection | None, wanted: Mapping[str, int]) -> dict[str, str]:
    """``key -> timestamp`` of the session messages ``wanted`` (key -> message id); one query."""
    if not wanted or conn is None:
        return {}
    ids = sorted(set(wanted.values()))
    stamp = dict(conn.execute(f"SELECT id, timestamp FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids))
    return {key: stamp.get(mid) or "" for key, mid in wanted.items()}


def load_turns(conn: sqlite3.Connection, wanted: Mapping[str, Sequence[int]], items: dict[str, Any],
               keywords: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Read the turns ``wanted`` (key -> message id, then the ids of the matches that lent it its keyword score:
    :func:`pi_memory.retrieval.context.spread`) into ``items`` as recall hits, replacing what is there, with
    their day and ``coverage`` = share of ``keywords`` in the turn and its lenders together (a turn found through
    the question before it carries that question's evidence; a lender written more than
    :data:`~pi_memory.retrieval.context.NEAR_HOURS` apart lends nothing). Returns ``key -> (role, whole text)``: a hit's
    ``text`` is its snippet, made by :func:`snippet_turns` for the hits recall keeps (most read here fail the
    evidence floor, and a snippet costs a secret scan). One query; rows deleted since the search are left out."""
    if not wanted:
        return {}
    from pi_memory.retrieval.context import near_in_time
    from pi_memory.retrieval.engine import RecallHit, keyword_coverage

    ids = sorted({mid for mids in wanted.values() for mid in mids})
    rows = {r[0]: r for r in conn.execute(
        f"SELECT id, role, timestamp, text FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids)}
    whole: dict[str, tuple[str, str]] = {}
    for key, (mid, *lent) in wanted.items():
        if mid in rows:
            _, role, timestamp, text = rows[mid]
            hit = RecallHit("session", key[2:], f"{role}: …", (timestamp or "")[:10], when=timestamp or "",
                            message_id=mid)
            hit.coverage = keyword_coverage(keywords, "\n".join(
                [text, *(rows[m][3] for m in lent if m in rows and near_in_time(timestamp, rows[m][2]))]))
            items[key] = hit
            whole[key] = (role, text)
    return whole


def snippet_turns(hits: Sequence[Any], whole: Mapping[str, tuple[str, str]], terms: Sequence[Any]) -> None:
    """Give the ``hits`` that :func:`load_turns` read (``whole``: recall key -> role and text) their text: the
    role and the window of the text around the query's ``terms`` (:func:`pi_memory.index.snippets.make_snippet`,
    the window ``session_search`` shows, without its ``**`` highlights: :func:`~.engine.format_recall`)."""
    from pi_memory.index.snippets import make_snippet
    from pi_memory.retrieval.engine import SESSION_SNIPPET_CHARS

    for hit in hits:
        found = whole.get("t:" + hit.id) if hit.kind == "session" else None
        if found is not None:
            role, text = found
            hit.text = f"{role}: {make_snippet(text, terms, SESSION_SNIPPET_CHARS, highlight=False)[0]}"  # no marks


def _snippet(text: str) -> str:
    from pi_memory.retrieval.engine import SESSION_SNIPPET_CHARS

    return text if len(text) <= SESSION_SNIPPET_CHARS else text[:SESSION_SNIPPET_CHARS].rstrip() + " …"


# --- one recall --------------------------------------------------------------------------------------------------
@dataclass
class VectorLists:
    """The pending vector lists of one recall. ``query_vector``: a ``Future`` of the query's embedding
    (``None`` in it when the embedder failed), for the semantic backend's own vector list."""

    query_vector: Future
    job: Future
    cosines: dict[str, float] = field(default_factory=dict)
    model: str = ""  # the embedder's model name (turn vectors of this model are read)

    def merge(self, lists: dict[str, list[str]], items: dict[str, Any]) -> None:
        """Wait for the lists and add them: ``lists[name]`` = keys best first, ``items`` gets a hit for every
        key it does not hold yet (a keyword hit's snippet wins). ``cosines``: the cosine of each key."""
        try:
            found: Mapping[str, list[tuple[str, float, Any]]] = self.job.result()
        except Exception as exc:  # noqa: BLE001 - vector lists are an addition; keyword lists stand alone
            log.warning("vector lists of curated entries / session turns / skills failed: %s", exc, exc_info=True)
            return
        for name, hits in found.items():
            keys: list[str] = []
            for key, cos, hit in hits:
                if key in self.cosines:  # two rows of one turn (same session entry): keep the better
                    continue
                self.cosines[key] = cos
                keys.append(key)
                items.setdefault(key, hit)
            lists[name] = keys


def _search(embedder, qvec: np.ndarray | None, sources: set[str], conn: sqlite3.Connection, project: str | None,
            limit: int, as_of: str | None = None, skills: dict[str, Any] | None = None,
            ) -> dict[str, list[tuple[str, float, Any]]]:
    if qvec is None:
        return {}
    model, dim = str(embedder.model_name), int(qvec.shape[-1])
    out: dict[str, list[tuple[str, float, Any]]] = {}
    if "curated" in sources:
        ensure_curated(conn, embedder, project)
        out["curated_vector"] = _curated_hits(conn, model, dim, project, qvec, limit, as_of)
    if "sessions" in sources:
        out["sessions_vector"] = _turn_hits(conn, model, dim, project, qvec, limit, as_of)
    if "skills" in sources and skills:
        from pi_memory.retrieval.sources_skills import vector_hits

        out["skills_vector"] = vector_hits(conn, embedder, qvec, skills, limit)
    return out


def start(backend: Any, query: str, *, scope: Any, include: Iterable[str], conn: sqlite3.Connection | None,
          limit: int, embedder: Any = None, as_of: str | None = None,
          skills: dict[str, Any] | None = None) -> VectorLists | None:
    """Start the vector lists of curated entries, session turns and ``skills`` (recall key -> hit:
    :mod:`pi_memory.retrieval.sources_skills`) for one recall (module docstring), or ``None`` when there is
    nothing to do: no such source included, no index connection, or no embedder (``embedder``, else the
    backend's: remote backends have none, so those sources stay keyword-only). ``as_of`` (stored timestamp
    form): rows dated after it are left out."""
    sources = {"curated", "sessions"} & set(include) | ({"skills"} & set(include) if skills else set())
    embedder = embedder if embedder is not None else getattr(backend, "embedder", None)
    if not sources or conn is None or embedder is None:
        return None
    qf: Future = Future()
    project = getattr(scope, "project_id", None)

    def job() -> dict[str, list[tuple[str, float, Any]]]:
        qvec = None
        try:
            qvec = _embed(embedder, query)
        finally:
            qf.set_result(qvec)
        from pi_memory.index.parallel import reader

        return _search(embedder, qvec, sources, reader(conn), project, limit, as_of, skills)  # in parallel

    return VectorLists(qf, submit(job), model=str(embedder.model_name))


def _embed(embedder: Any, query: str) -> np.ndarray | None:
    """The query's embedding, or ``None`` (logged) when the embedder fails: recall goes on by keyword. Also
    ``None`` for a query made only of pieces the model does not know (:func:`pi_memory.embed.carries_meaning`):
    its vector would be the same as every such text's."""
    from pi_memory.embed.base import carries_meaning

    if not carries_meaning(embedder, query):
        return None
    try:
        return np.asarray(embedder.embed_query(query), dtype=np.float32)
    except Exception as exc:  # noqa: BLE001 - any provider failure: keyword lists only
        log.warning("query embedding failed, recalling by keyword only: %s", exc)
        return None


def _done(value: Any) -> Future:
    future: Future = Future()
    future.set_result(value)
    return future


def by_deadline(backend: Any, query: str, pending: VectorLists | None, deadline: float) -> VectorLists | None:
    """The vector lists of one recall bounded by ``deadline`` (a :func:`time.monotonic` value), for a caller
    with a hard time limit (the prompt hook: a cold process loads the embedding model, seconds on a busy
    machine). The query is embedded on a worker thread (when :func:`start` did not already) while the calling
    thread runs the keyword searches; whatever is not ready by ``deadline`` is left out: no query vector means
    no vector list at all (the semantic backend's included), so recall is keyword-only and its evidence floor
    (keyword coverage) decides alone. Logged (``vectors skipped``). ``None``: the backend has no embedder."""
    embedder = getattr(backend, "embedder", None)
    if pending is None:
        if embedder is None:
            return None
        pending = VectorLists(submit(_embed, embedder, query), _done({}))
    try:
        pending.query_vector.result(timeout=max(0.0, deadline - time.monotonic()))
    except FutureTimeout:
        log.warning("vectors skipped: the query embedding was not ready by the recall deadline; "
                    "recalled by keyword only")
        return VectorLists(_done(None), _done({}))
    try:
        pending.job.result(timeout=max(0.0, deadline - time.monotonic()))
    except FutureTimeout:
        log.warning("vectors of curated entries / session turns skipped: not searched by the recall deadline")
        return VectorLists(pending.query_vector, _done({}))
    except Exception:  # noqa: BLE001 - merge() logs the failure
        pass
    return pending


