"""Vector candidate lists of curated entries and session turns, for :func:`pi_memory.semantic.recall.recall`.

Recall fuses ranked lists by reciprocal rank fusion. For semantic memories the embedded backend gives a keyword
and a vector list; this module adds a vector list for each of the other two sources when recall includes them:
``curated_vector`` (the index's ``memories`` rows: the curated Markdown mirror and the extended store) and
``sessions_vector`` (session turns). Default RRF weights (:data:`WEIGHTS`; recall's ``weights`` argument
overrides them): ``curated_vector`` equals the curated keyword list (1.0); ``sessions_vector`` is 0.1 against
the session keyword list's 0.5. Measured on LoCoMo (``benchmarks/locomo_recall.py --recall``, keyword list read
in context, :mod:`pi_memory.index.context`): R@10 0.716 keyword only, 0.686 at 0.3, 0.705 at 0.2, 0.724 at
0.1; the turn vectors alone reach 0.499 (one short chat turn is little for the small model). At 0.1 (and at
0.2) a turn found by its vector alone ranks after the 50 keyword candidates, so vectors re-order the turns both
lists found and fill in when few turns match by keyword: recall by meaning is kept for prompts that share no
word with any turn.

How one recall runs (:func:`start`, then :meth:`VectorLists.merge`):

1. a worker thread embeds the query **once** (the same vector serves the semantic backend's vector list:
   :meth:`~pi_memory.semantic.embedded.EmbeddedBackend.candidate_lists` takes it as a ``Future``) while the
   calling thread runs the keyword searches;
2. curated: when the database changed since the last look (``PRAGMA data_version`` and the connection's own
   change count), up to :data:`~.turn_vectors.CURATED_PER_RECALL` entries of the scope that lack a vector of
   the current model are embedded and stored through a short-lived second connection that waits at most
   :data:`WRITE_WAIT_S` for the write lock (a busy database only delays them to a later recall);
3. each source's matrix is brought up to date and searched (exact cosine: float32 matrix-vector product over
   unit vectors, :class:`~pi_memory.semantic.vectors.VectorMatrix`), and the winners are read back from SQLite.

Matrices: one per (database file, source, model, project), cached for the life of the process and shared by
every connection to that file. Rows are keyed by the vector row's ``id`` (``AUTOINCREMENT``, never reused), so
bringing a matrix up to date is one indexed query for ``id > last seen`` (usually empty). A vector whose row
was deleted (its message or entry went, or it was re-embedded) stays in memory until it comes up as a
candidate: reading it back fails, it is dropped, and when more than half of a search's candidates were stale
the matrix is reloaded on the next search. A load reads at most :data:`MAX_MATRIX_ROWS` vectors (the most
recently embedded; 1.5 KB each at 384 dimensions, so 250,000 rows hold about 390 MB); the rest are found by
keyword only.

Isolation: a scope with a project sees its project's turns and curated entries plus global curated entries,
never another project's; a scope without a project (``userIdScope: "exact"``) sees all of them, as the
keyword searches do. The project is part of the matrix key *and* re-checked when candidates are read back.

Nothing here raises into recall: a failure (embedder down, database busy) is logged and leaves the keyword
lists. With no vectors stored at all, the vector lists are empty and recall is keyword-only for these sources.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pi_memory.semantic import turn_vectors as tv
from pi_memory.semantic.vectors import VectorMatrix

log = logging.getLogger(__name__)

WEIGHTS = {"curated_vector": 1.0, "sessions_vector": 0.1}  # module docstring: measured on LoCoMo
MAX_MATRIX_ROWS = 250_000
WRITE_WAIT_S = 0.2  # how long a recall waits for the write lock to store curated vectors
LOAD_CHUNK = 10_000  # vector rows decoded at a time while loading (bounds the memory of a large load)
STALE_RELOAD_FRACTION = 0.5
OVERFETCH = 1.5  # candidates taken from a matrix per wanted one (stale rows are dropped after reading back)

_cache: dict[tuple[str, str, str, str], VectorMatrix] = {}
_cache_lock = threading.Lock()
_curated_seen: dict[tuple[str, str, str], tuple[int, int]] = {}
_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _cache_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="pi-memory-sources")
        return _pool


def submit(fn: Callable[..., Any], *args: Any) -> Future:
    """Run ``fn(*args)`` on the recall worker threads (the pool the vector lists use); its ``Future``."""
    return _executor().submit(fn, *args)


def database_file(conn: sqlite3.Connection) -> str:
    """The main database file of ``conn`` (``""`` for an in-memory one)."""
    return str(conn.execute("PRAGMA database_list").fetchone()[2] or "")


def _project_key(project: str | None) -> str:
    return "*" if project is None else project


# --- matrices ------------------------------------------------------------------------------------------------
def _load_sql(source: str, project: str | None) -> tuple[str, list[Any]]:
    """``(sql, params)`` reading ``(id, dim, vector)`` of one matrix above an id (first parameter after the
    model); newest first, capped."""
    if source == "sessions":
        if project is None:
            # unary + : walk the rowid range above the last id seen instead of sorting the model's rows
            return "SELECT id, dim, vector FROM semantic_turn_vectors WHERE +model = ? AND id > ?", []
        return ("SELECT id, dim, vector FROM semantic_turn_vectors WHERE model = ? AND id > ? AND project_id = ?",
                [project])
    where, params = tv.curated_scope_sql(project)
    return ("SELECT v.id, v.dim, v.vector FROM semantic_curated_vectors v JOIN memories m ON m.id = v.memory_id "
            f"WHERE v.model = ? AND v.id > ? AND {where}", params)


def matrix(conn: sqlite3.Connection, source: str, model: str, dim: int, project: str | None) -> VectorMatrix:
    """The cached matrix of ``source`` ("curated" | "sessions") for ``model`` in ``project``'s view, brought up
    to date with the database (module docstring). ``seq_seen`` is the largest vector row id applied."""
    key = (database_file(conn) or f"memory:{id(conn)}", source, model, _project_key(project))
    with _cache_lock:
        mat = _cache.get(key)
        if mat is None or mat.dim != dim:
            mat = _cache[key] = VectorMatrix(dim)
    sql, extra = _load_sql(source, project)
    cur = conn.execute(sql + " ORDER BY 1 DESC LIMIT ?", [model, mat.seq_seen, *extra, MAX_MATRIX_ROWS])
    with mat.lock:
        top = mat.seq_seen
        while rows := cur.fetchmany(LOAD_CHUNK):
            top = max(top, rows[0][0])
            mat.upsert_rows(rows)
        mat.seq_seen = top
    return mat


def forget(conn: sqlite3.Connection | None = None) -> None:
    """Drop the cached matrices (of ``conn``'s database file, or all): the next search loads them again."""
    with _cache_lock:
        db = database_file(conn) if conn is not None else None
        for key in [k for k in _cache if db is None or k[0] == db]:
            del _cache[key]
        _curated_seen.clear()


def _drop_stale(conn: sqlite3.Connection, source: str, model: str, project: str | None, mat: VectorMatrix,
                stale: list[int], searched: int) -> None:
    for vid in stale:
        mat.drop(vid)
    if searched and len(stale) > STALE_RELOAD_FRACTION * searched:  # e.g. the sessions were reindexed
        with _cache_lock:
            key = (database_file(conn) or f"memory:{id(conn)}", source, model, _project_key(project))
            if _cache.get(key) is mat:
                del _cache[key]


# --- curated entries ---------------------------------------------------------------------------------------------
def _ensure_curated(conn: sqlite3.Connection, embedder, project: str | None) -> None:
    """Embed and store a few of the scope's curated entries that lack a current vector (module docstring, 2)."""
    model = str(embedder.model_name)
    db = database_file(conn)
    key = (db or f"memory:{id(conn)}", model, _project_key(project))
    state = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes)
    if _curated_seen.get(key) == state:
        return
    _curated_seen[key] = state
    if not tv.has_missing_curated(conn, model, project):
        return
    writer = sqlite3.connect(db, timeout=WRITE_WAIT_S, isolation_level=None) if db else conn
    try:
        if writer is not conn:
            writer.execute("PRAGMA foreign_keys = ON")
        report = tv.embed_curated(writer, embedder, project=project, limit=tv.CURATED_PER_RECALL)
        if report.error:
            log.warning("curated entries not embedded: %s", report.error)
    except sqlite3.OperationalError as exc:  # busy: another recall will try again
        log.info("curated entries not embedded now (%s); keyword search covers them", exc)
    finally:
        if writer is not conn:
            writer.close()


def _nearest(conn: sqlite3.Connection, source: str, model: str, dim: int, project: str | None, qvec: np.ndarray,
             limit: int, read: str, params: list[Any]) -> list[tuple[float, tuple]]:
    """``(cosine, row)`` of the nearest vectors of ``source``, best first: ``read`` (SQL whose first column is
    the vector row id, with ``{ids}`` where the ids go and the project check in it) reads the rows back; ids it
    does not return are stale and leave the matrix."""
    mat = matrix(conn, source, model, dim, project)
    found = mat.search(qvec, int(limit * OVERFETCH) + 1)
    if not found:
        return []
    rows = {r[0]: r for r in conn.execute(read.format(ids=",".join("?" * len(found))),
                                          [*(vid for vid, _ in found), model, *params])}
    _drop_stale(conn, source, model, project, mat, [vid for vid, _ in found if vid not in rows], len(found))
    return [(cos, rows[vid]) for vid, cos in found if vid in rows]


def _curated_hits(conn: sqlite3.Connection, model: str, dim: int, project: str | None, qvec: np.ndarray,
                  limit: int, as_of: str | None = None) -> list[tuple[str, float, Any]]:
    where, params = tv.curated_scope_sql(project)
    if as_of is not None:
        where, params = f"{where} AND (m.created IS NULL OR m.created <= ?)", [*params, as_of]
    read = ("SELECT v.id, m.id, m.content, m.created FROM semantic_curated_vectors v JOIN memories m "
            "ON m.id = v.memory_id WHERE v.id IN ({ids}) AND +v.model = ? "
            f"AND v.text = {tv.CURATED_TEXT_SQL} AND {where}")
    from pi_memory.semantic.recall import RecallHit

    return [(f"c:{mid}", cos, RecallHit("curated", str(mid), content, (created or "")[:10], when=created or ""))
            for cos, (_, mid, content, created) in _nearest(conn, "curated", model, dim, project, qvec, limit,
                                                             read, params)]


# --- session turns -----------------------------------------------------------------------------------------------
def _turn_hits(conn: sqlite3.Connection, model: str, dim: int, project: str | None, qvec: np.ndarray,
               limit: int, as_of: str | None = None) -> list[tuple[str, float, Any]]:
    check, params = ("", []) if project is None else (" AND s.project_id = ?", [project])
    if as_of is not None:  # nothing written after the moment asked about
        check, params = f"{check} AND (m.timestamp IS NULL OR m.timestamp <= ?)", [*params, as_of]
    read = ("SELECT v.id, s.session_key, m.entry_id, m.line, m.role, m.timestamp, m.text FROM semantic_turn_vectors v "
            "JOIN messages m ON m.id = v.message_id JOIN sessions s ON s.id = m.session_id "
            f"WHERE v.id IN ({{ids}}) AND +v.model = ?{check}")
    found = _nearest(conn, "sessions", model, dim, project, qvec, limit, read, params)
    from pi_memory.semantic.recall import RecallHit

    out = []
    for cos, (_, session_key, entry_id, line, role, timestamp, text) in found:
        key = f"t:{session_key}#{entry_id or line}"
        out.append((key, cos, RecallHit("session", key[2:], f"{role}: {_snippet(text)}", (timestamp or "")[:10],
                                        when=timestamp or "")))
    return out


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
               terms: Sequence[Any], keywords: Sequence[str]) -> None:
    """Read the turns ``wanted`` (key -> message id, then the ids of the matches that lent it its keyword score:
    :func:`pi_memory.index.context.spread`) into ``items`` as recall hits, replacing what is there: role,
    the window of the text around the query's ``terms`` (:func:`pi_memory.index.snippets.make_snippet`, as
    ``session_search`` shows it) and day; ``coverage`` = share of ``keywords`` in the turn and its lenders
    together (a turn found through the question before it carries that question's evidence). One query; rows
    deleted since the search are left out."""
    if not wanted:
        return
    from pi_memory.index.snippets import make_snippet
    from pi_memory.semantic.recall import SESSION_SNIPPET_CHARS, RecallHit, keyword_coverage

    ids = sorted({mid for mids in wanted.values() for mid in mids})
    rows = {r[0]: r for r in conn.execute(
        f"SELECT id, role, timestamp, text FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids)}
    for key, (mid, *lent) in wanted.items():
        if mid in rows:
            _, role, timestamp, text = rows[mid]
            snippet = make_snippet(text, terms, SESSION_SNIPPET_CHARS)[0]
            hit = RecallHit("session", key[2:], f"{role}: {snippet}", (timestamp or "")[:10], when=timestamp or "")
            hit.coverage = keyword_coverage(keywords, "\n".join([text, *(rows[m][3] for m in lent if m in rows)]))
            items[key] = hit


def _snippet(text: str) -> str:
    from pi_memory.semantic.recall import SESSION_SNIPPET_CHARS

    return text if len(text) <= SESSION_SNIPPET_CHARS else text[:SESSION_SNIPPET_CHARS].rstrip() + " …"


# --- one recall --------------------------------------------------------------------------------------------------
@dataclass
class VectorLists:
    """The pending vector lists of one recall. ``query_vector``: a ``Future`` of the query's embedding
    (``None`` in it when the embedder failed), for the semantic backend's own vector list."""

    query_vector: Future
    job: Future
    cosines: dict[str, float] = field(default_factory=dict)

    def merge(self, lists: dict[str, list[str]], items: dict[str, Any]) -> None:
        """Wait for the lists and add them: ``lists[name]`` = keys best first, ``items`` gets a hit for every
        key it does not hold yet (a keyword hit's snippet wins). ``cosines``: the cosine of each key."""
        try:
            found: Mapping[str, list[tuple[str, float, Any]]] = self.job.result()
        except Exception as exc:  # noqa: BLE001 - vector lists are an addition; keyword lists stand alone
            log.warning("vector lists of curated entries / session turns failed: %s", exc, exc_info=True)
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
            limit: int, as_of: str | None = None) -> dict[str, list[tuple[str, float, Any]]]:
    if qvec is None:
        return {}
    model, dim = str(embedder.model_name), int(qvec.shape[-1])
    out: dict[str, list[tuple[str, float, Any]]] = {}
    if "curated" in sources:
        _ensure_curated(conn, embedder, project)
        out["curated_vector"] = _curated_hits(conn, model, dim, project, qvec, limit, as_of)
    if "sessions" in sources:
        out["sessions_vector"] = _turn_hits(conn, model, dim, project, qvec, limit, as_of)
    return out


def start(backend: Any, query: str, *, scope: Any, include: Iterable[str], conn: sqlite3.Connection | None,
          limit: int, embedder: Any = None, as_of: str | None = None) -> VectorLists | None:
    """Start the vector lists of curated entries and session turns for one recall (module docstring), or
    ``None`` when there is nothing to do: neither source included, no index connection, or no embedder
    (``embedder``, else the backend's: remote backends have none, so those sources stay keyword-only).
    ``as_of`` (stored timestamp form): rows dated after it are left out."""
    sources = {"curated", "sessions"} & set(include)
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
        return _search(embedder, qvec, sources, conn, project, limit, as_of)

    return VectorLists(qf, _executor().submit(job))


def _embed(embedder: Any, query: str) -> np.ndarray | None:
    """The query's embedding, or ``None`` (logged) when the embedder fails: recall goes on by keyword."""
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


def warm(conn: sqlite3.Connection, embedder: Any, scope: Any, include: Iterable[str]) -> None:
    """Load the scope's matrices now (about 1 s per 100,000 turn vectors) so the first recall does not wait."""
    project = getattr(scope, "project_id", None)
    dim = getattr(embedder, "dim", None)
    if not dim:  # a remote embedder learns its dimension from its first answer
        return
    for source in {"curated", "sessions"} & set(include):
        matrix(conn, source, str(embedder.model_name), int(dim), project)
