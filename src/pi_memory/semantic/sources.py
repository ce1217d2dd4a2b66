"""Vector candidates of curated entries and session turns: the in-memory matrices of their vectors, kept in step
with SQLite, and the nearest rows of one (:func:`nearest`). The engine (:mod:`pi_memory.retrieval.vector_lists`)
turns them into recall's vector lists; nothing here ranks beyond the cosine order.

Curated entries (few) that lack a vector of the current model are embedded a few at a time when recall asks
(:func:`ensure_curated`): when the database changed since the last look (``PRAGMA data_version`` and the
connection's own change count), up to :data:`~.turn_vectors.CURATED_PER_RECALL` entries are embedded and stored
through a short-lived second connection that waits at most :data:`WRITE_WAIT_S` for the write lock (a busy
database only delays them to a later recall).

Matrices: one per (database file, source, model, project), cached for the life of the process and shared by
every connection to that file. Rows are keyed by the vector row's ``id`` (``AUTOINCREMENT``, never reused), so
bringing a matrix up to date is one indexed query for ``id > last seen`` (usually empty). A vector whose row
was deleted (its message or entry went, or it was re-embedded) stays in memory until it comes up as a
candidate: reading it back fails, it is dropped, and when more than half of a search's candidates were stale
the matrix is reloaded on the next search. The turns' matrix also maps message ids to its rows, checked
against the index's record of vector rows that went (:mod:`.turn_matrix`). A load reads at most :data:`MAX_MATRIX_ROWS` vectors (the most
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
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from pi_memory.index.db import database_file
from pi_memory.index.read_only import skipped
from pi_memory.semantic import turn_vectors as tv
from pi_memory.semantic.turn_matrix import TurnMatrix
from pi_memory.semantic.vectors import VectorMatrix

log = logging.getLogger(__name__)

MAX_MATRIX_ROWS = 250_000
WRITE_WAIT_S = 0.2  # how long a recall waits for the write lock to store curated vectors
LOAD_CHUNK = 10_000  # vector rows decoded at a time while loading (bounds the memory of a large load)
STALE_RELOAD_FRACTION = 0.5
OVERFETCH = 1.5  # candidates taken from a matrix per wanted one (stale rows are dropped after reading back)

_cache: dict[tuple[str, str, str, str], VectorMatrix] = {}
_cache_lock = threading.Lock()
_curated_seen: dict[tuple[str, str, str, int], tuple[int, int]] = {}
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


def _project_key(project: str | None) -> str:
    return "*" if project is None else project


# --- matrices ------------------------------------------------------------------------------------------------
def _matrix_key(conn: sqlite3.Connection, source: str, model: str, project: str | None) -> tuple[str, str, str, str]:
    return (database_file(conn) or f"memory:{id(conn)}", source, model, _project_key(project))


def _load_sql(source: str, project: str | None) -> tuple[str, list[Any]]:
    """``(sql, params)`` reading ``(id, dim, vector)`` of one matrix above an id (first parameter after the
    model), and for turns their ``message_id`` (:class:`~.turn_matrix.TurnMatrix`); newest first, capped."""
    if source == "sessions":
        read = "SELECT id, dim, vector, message_id FROM semantic_turn_vectors"
        if project is None:
            # unary + : walk the rowid range above the last id seen instead of sorting the model's rows
            return f"{read} WHERE +model = ? AND id > ?", []
        return f"{read} WHERE model = ? AND id > ? AND project_id = ?", [project]
    where, params = tv.curated_scope_sql(project)
    return ("SELECT v.id, v.dim, v.vector FROM semantic_curated_vectors v JOIN memories m ON m.id = v.memory_id "
            f"WHERE v.model = ? AND v.id > ? AND {where}", params)


def matrix(conn: sqlite3.Connection, source: str, model: str, dim: int, project: str | None) -> VectorMatrix:
    """The cached matrix of ``source`` ("curated" | "sessions") for ``model`` in ``project``'s view, brought up
    to date with the database (module docstring). ``seq_seen`` is the largest vector row id applied. The turns'
    matrix is a :class:`~.turn_matrix.TurnMatrix`: the rows of vectors gone since the last look are applied to
    its message map first, and the read and the changes are one step under the matrix lock."""
    key = _matrix_key(conn, source, model, project)
    with _cache_lock:
        mat = _cache.get(key)
        if mat is None or mat.dim != dim:
            mat = _cache[key] = TurnMatrix(dim) if source == "sessions" else VectorMatrix(dim)
    sql, extra = _load_sql(source, project)
    with mat.lock:
        if isinstance(mat, TurnMatrix):
            mapped = mat.forget_gone(conn)
            apply: Callable[[list], Any] = lambda rows: mat.apply_rows(rows, mapped)  # noqa: E731
        else:
            apply = mat.upsert_rows
        cur = conn.execute(sql + " ORDER BY 1 DESC LIMIT ?", [model, mat.seq_seen, *extra, MAX_MATRIX_ROWS])
        top = mat.seq_seen
        while rows := cur.fetchmany(LOAD_CHUNK):
            top = max(top, rows[0][0])
            apply(rows)
        mat.seq_seen = top
    return mat


def cached(conn: sqlite3.Connection, source: str, model: str, dim: int, project: str | None) -> VectorMatrix | None:
    """The matrix :func:`matrix` keeps for these arguments, as it is (no database read), or ``None``."""
    key = _matrix_key(conn, source, model, project)
    with _cache_lock:
        mat = _cache.get(key)
    return mat if mat is not None and mat.dim == dim else None


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
            key = _matrix_key(conn, source, model, project)
            if _cache.get(key) is mat:
                del _cache[key]


# --- curated entries ---------------------------------------------------------------------------------------------
def ensure_curated(conn: sqlite3.Connection, embedder, project: str | None) -> None:
    """Embed and store a few of the scope's curated entries that lack a current vector (module docstring, 2)."""
    model = str(embedder.model_name)
    db = database_file(conn)
    # data_version and total_changes are counters of one connection: the state is that connection's (each recall
    # worker thread reads through its own: :mod:`pi_memory.index.parallel`)
    key = (db or f"memory:{id(conn)}", model, _project_key(project), id(conn))
    state = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes)
    if _curated_seen.get(key) == state:
        return
    _curated_seen[key] = state
    if not tv.has_missing_curated(conn, model, project) or skipped(conn, "embedding curated entries"):
        return  # read-only: keyword search covers them
    writer = sqlite3.connect(db, timeout=WRITE_WAIT_S, isolation_level=None) if db else conn
    try:
        if writer is not conn:
            writer.execute("PRAGMA foreign_keys = ON")
        report = tv.embed_curated(writer, embedder, project=project, limit=tv.CURATED_PER_RECALL)
        if report.error:
            log.warning("curated entries not embedded: %s", report.error)
        elif report.stopped is not None:  # busy, or the folder stopped taking writes: a later recall tries again
            log.info("curated entries not embedded now (%s); keyword search covers them", report.stopped)
    except sqlite3.OperationalError as exc:  # busy: another recall will try again
        log.info("curated entries not embedded now (%s); keyword search covers them", exc)
    finally:
        if writer is not conn:
            writer.close()


def nearest(conn: sqlite3.Connection, source: str, model: str, dim: int, project: str | None, qvec: np.ndarray,
             limit: int, read: str, params: list[Any]) -> list[tuple[float, tuple]]:
    """``(cosine, row)`` of the nearest vectors of ``source``, best first: ``read`` (SQL whose first column is
    the vector row id, with ``{ids}`` where the ids go and the project check in it) reads the rows back; ids it
    does not return are stale and leave the matrix, so ``read`` may leave out only rows that are gone, never
    rows a caller does not want this time (an ``as_of`` is applied to what this returns:
    :mod:`pi_memory.retrieval.vector_lists`)."""
    mat = matrix(conn, source, model, dim, project)
    found = mat.search(qvec, int(limit * OVERFETCH) + 1)
    if not found:
        return []
    rows = {r[0]: r for r in conn.execute(read.format(ids=",".join("?" * len(found))),
                                          [*(vid for vid, _ in found), model, *params])}
    _drop_stale(conn, source, model, project, mat, [vid for vid, _ in found if vid not in rows], len(found))
    return [(cos, rows[vid]) for vid, cos in found if vid in rows]


def warm(conn: sqlite3.Connection, embedder: Any, scope: Any, include: Iterable[str]) -> None:
    """Load the scope's matrices now (about 1 s per 100,000 turn vectors) so the first recall does not wait."""
    project = getattr(scope, "project_id", None)
    dim = getattr(embedder, "dim", None)
    if not dim:  # a remote embedder learns its dimension from its first answer
        return
    for source in {"curated", "sessions"} & set(include):
        matrix(conn, source, str(embedder.model_name), int(dim), project)
