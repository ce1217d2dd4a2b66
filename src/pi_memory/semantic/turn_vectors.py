"""Vectors for curated entries and session turns: which rows get one, and the embedding passes that write them.

Two sources of the index database are embedded beside semantic memories (tables: :mod:`.schema`, migrations
003 and 004; search: :mod:`.sources`):

* **Curated entries**: every row of the index's ``memories`` table (the Markdown mirror and the extended
  store). The embedded text is the entry's content, plus its failure reason on a second line when it has one
  (:data:`CURATED_TEXT_SQL`), cut at :data:`EMBED_CHARS`. They are few (tens to thousands), so they are
  embedded lazily: at recall, up to :data:`CURATED_PER_RECALL` entries of the scope that lack a current vector
  (:mod:`.sources`); after each agent run by the session's background worker; and by the CLI backfill.
* **Session turns**: ``messages`` rows of kind ``message`` with role ``user`` or ``assistant`` and at least
  :data:`MIN_TURN_CHARS` characters of text (shorter ones are acknowledgements such as "ok, go ahead"; keyword
  search still finds them). There can be a million of them (about 30 minutes of embedding on 2 cores at
  590 sentences/s), so they are never embedded at recall: the session's background worker embeds the turns it
  has just indexed (at most :data:`TURNS_PER_RUN` per run) and ``pi-memory semantic embed-sessions``
  backfills the rest, newest first. Recall uses the turns that have a vector; keyword search covers the rest.

Models: every vector row carries the embedder's ``model_name`` and ``dim``. A row of another model is never
read for the current one; the passes here embed whatever has no vector *of the current model*, so after a
model switch the old space is replaced, not mixed (``prune`` removes the old rows once nothing is left).

Every pass works in batches of :data:`BATCH` texts, each written in its own transaction, so a pass can stop
(``stop`` event, ``limit``) and resume anywhere, and searches in this and other processes see the vectors as
they land. A row deleted while its batch was being embedded is skipped (the insert checks it still exists).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pi_memory.index.conversation import MIN_TURN_CHARS  # shorter turns are acknowledgements
from pi_memory.index.db import now_iso, transaction
from pi_memory.index.read_only import refuse_write

log = logging.getLogger(__name__)

BATCH = 64  # texts per embedder call: the batch the embedder evaluation measured (590 sentences/s on 2 cores)
EMBED_CHARS = 2000  # the bundled model reads 256 tokens (about 1,000-1,500 characters of English): no need for more
TURNS_PER_RUN = 256  # turns the background worker embeds after one indexing pass (about half a second of work)
CURATED_PER_RECALL = 8  # curated entries a recall may embed before it searches (about 10 ms of work)
CURATED_PER_RUN = 512  # curated entries the background worker embeds after a run

#: The text embedded for a curated entry (alias ``m`` = ``memories``): content, failure reason on a new line.
CURATED_TEXT_SQL = f"substr(m.content || ifnull(char(10) || m.failure_reason, ''), 1, {EMBED_CHARS})"
#: The ``messages`` rows (alias ``m``) that are turns worth a vector.
TURN_SQL = f"m.kind = 'message' AND m.role IN ('user', 'assistant') AND length(m.text) >= {MIN_TURN_CHARS}"

Progress = Callable[[int, int], None]
"""``progress(done, total)``: called before the first batch and after each one."""


@dataclass(frozen=True)
class EmbedReport:
    """One pass: ``embedded`` vectors written, ``remaining`` rows still without a vector of ``model`` (in the
    pass's project, ``None`` when not counted), ``pruned`` vectors of other models removed, ``error`` the
    embedder's failure (the pass stopped there), ``stopped`` the write that failed (a disk that filled up, a
    folder made read-only: the pass stopped there, what it wrote before is kept)."""

    source: str  # "curated" | "sessions"
    model: str
    embedded: int
    remaining: int | None = None
    pruned: int = 0
    error: str | None = None
    stopped: Exception | None = None


def curated_scope_sql(project: str | None) -> tuple[str, list[str]]:
    """``(sql, params)`` keeping the curated entries a scope sees: global entries plus its project's (all
    entries when ``project`` is ``None``, as :func:`pi_memory.index.memory_search` does)."""
    if project is None:
        return "1", []
    return "(m.scope = 'global' OR m.project = ?)", [project]


def turn_scope_sql(project: str | None) -> tuple[str, list[str]]:
    """``(sql, params)`` keeping a project's turns (alias ``m`` = ``messages``; every turn for ``None``). The
    unary ``+`` keeps SQLite scanning ``messages`` by id (newest first) instead of by session."""
    if project is None:
        return "1", []
    return "+m.session_id IN (SELECT id FROM sessions WHERE project_id = ?)", [project]


def _missing_curated(model: str, project: str | None) -> tuple[str, list]:
    where, params = curated_scope_sql(project)
    return (f"FROM memories m WHERE {where} AND NOT EXISTS (SELECT 1 FROM semantic_curated_vectors v "
            f"WHERE v.memory_id = m.id AND v.model = ? AND v.text = {CURATED_TEXT_SQL})", [*params, model])


def _missing_turns(model: str, project: str | None, after_id: int | None) -> tuple[str, list]:
    where, params = turn_scope_sql(project)
    after = " AND m.id > ?" if after_id is not None else ""
    return (f"FROM messages m WHERE {TURN_SQL} AND {where}{after} AND NOT EXISTS (SELECT 1 FROM "
            "semantic_turn_vectors v WHERE v.message_id = m.id AND v.model = ?)",
            [*params, *([after_id] if after_id is not None else []), model])


def count_missing(conn: sqlite3.Connection, source: str, model: str, project: str | None = None) -> int:
    """Curated entries (``source="curated"``) or turns (``"sessions"``) of ``project`` (every project for
    ``None``) without a vector of ``model``. About 1 s per million messages for turns."""
    body, params = (_missing_curated(model, project) if source == "curated"
                    else _missing_turns(model, project, None))
    return int(conn.execute(f"SELECT count(*) {body}", params).fetchone()[0])


def has_missing_curated(conn: sqlite3.Connection, model: str, project: str | None) -> bool:
    """Whether any curated entry of the scope lacks a vector of ``model`` for its current text."""
    body, params = _missing_curated(model, project)
    return conn.execute(f"SELECT 1 {body} LIMIT 1", params).fetchone() is not None


def _vectors(embedder, texts: list[str]) -> np.ndarray:
    out = np.asarray(embedder.embed(texts), dtype="<f4")
    if out.ndim != 2 or out.shape[0] != len(texts):
        raise ValueError(f"the embedder returned shape {out.shape} for {len(texts)} texts")
    return out


#: Per source: the vector table, its key column, the table the key points into, and one more stored column.
_TABLES = {"curated": ("semantic_curated_vectors", "memory_id", "memories", "text"),
           "sessions": ("semantic_turn_vectors", "message_id", "messages", "project_id")}


def _write(conn: sqlite3.Connection, source: str, model: str, rows: Sequence[tuple], vecs: np.ndarray) -> None:
    """Store ``vecs`` for ``rows`` = ``(id, text, extra column value)``, skipping rows deleted meanwhile."""
    table, key, parent, extra = _TABLES[source]
    now = now_iso()
    conn.executemany(
        f"INSERT OR REPLACE INTO {table}({key}, model, dim, vector, created_at, {extra}) "
        f"SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM {parent} WHERE id = ?)",
        [(rid, model, vecs.shape[1], vec.tobytes(), now, value, rid)
         for (rid, _text, value), vec in zip(rows, vecs, strict=True)])


def _run(conn: sqlite3.Connection, embedder, source: str, fetch: Callable[[int], list[tuple]], *,
         project: str | None, limit: int | None, progress: Progress | None, stop: threading.Event | None,
         count: bool, total: int | None) -> EmbedReport:
    """The loop both sources share: fetch a batch of ``(id, text, extra)`` rows, embed, write, repeat."""
    model = str(embedder.model_name)
    done, error = 0, None
    if progress:
        progress(0, total or 0)
    while not (stop and stop.is_set()) and (limit is None or done < limit):
        rows = fetch(BATCH if limit is None else min(BATCH, limit - done))
        if not rows:
            break
        try:
            vecs = _vectors(embedder, [r[1][:EMBED_CHARS] for r in rows])
        except Exception as exc:  # noqa: BLE001 - any provider failure ends the pass; what was written stays
            error = f"{type(exc).__name__}: {exc}"
            log.warning("embedding %s failed after %d vectors: %s", source, done, error)
            break
        try:
            with transaction(conn):
                _write(conn, source, model, rows, vecs)
        except (OSError, sqlite3.OperationalError) as exc:  # full disk, read-only folder: earlier batches stay
            log.warning("writing %s vectors failed after %d: %s", source, done, exc)
            return EmbedReport(source, model, done, None, stopped=exc)
        done += len(rows)
        if progress:
            progress(done, max(total or 0, done))
    remaining = count_missing(conn, source, model, project) if count else None
    return EmbedReport(source, model, done, remaining, error=error)


def embed_curated(conn: sqlite3.Connection, embedder, *, project: str | None = None, limit: int | None = None,
                  progress: Progress | None = None, stop: threading.Event | None = None,
                  count: bool = False) -> EmbedReport:
    """Embed the curated entries of ``project`` (global ones included; every entry for ``None``) that lack a
    vector of the embedder's model for their current text, at most ``limit``. ``count``: fill ``remaining``
    (``progress`` also gets a total). Never raises for an embedder failure: ``error`` says it."""
    model = str(embedder.model_name)
    body, params = _missing_curated(model, project)
    cursor = [0]  # the largest id fetched so far: each batch continues above it

    def fetch(n: int) -> list[tuple]:
        rows = conn.execute(f"SELECT m.id, {CURATED_TEXT_SQL}, {CURATED_TEXT_SQL} {body} AND m.id > ? "
                            "ORDER BY m.id LIMIT ?", [*params, cursor[0], n]).fetchall()
        cursor[0] = rows[-1][0] if rows else cursor[0]
        return rows

    total = count_missing(conn, "curated", model, project) if count or progress else None
    return _run(conn, embedder, "curated", fetch, project=project, limit=limit, progress=progress, stop=stop,
                count=count, total=total)


def embed_turns(conn: sqlite3.Connection, embedder, *, project: str | None = None, after_id: int | None = None,
                limit: int | None = None, progress: Progress | None = None, stop: threading.Event | None = None,
                count: bool = False) -> EmbedReport:
    """Embed session turns (module docstring) of ``project`` (every project for ``None``) that lack a vector of
    the embedder's model, newest first, at most ``limit``. ``after_id``: only messages with a larger id (the
    worker passes the largest id before its indexing pass, so it embeds what that pass added). ``count``:
    fill ``remaining`` (of the whole project, whatever ``after_id``). Never raises for an embedder failure:
    ``error`` says it."""
    model = str(embedder.model_name)
    body, params = _missing_turns(model, project, after_id)
    cursor: list[int | None] = [None]  # the smallest id fetched so far: each batch continues below it

    def fetch(n: int) -> list[tuple]:
        below = "" if cursor[0] is None else " AND m.id < ?"
        rows = conn.execute(
            f"SELECT m.id, m.text, ifnull((SELECT project_id FROM sessions s WHERE s.id = m.session_id), '') "
            f"{body}{below} ORDER BY m.id DESC LIMIT ?",
            [*params, *([] if cursor[0] is None else [cursor[0]]), n]).fetchall()
        cursor[0] = rows[-1][0] if rows else cursor[0]
        return rows

    total = count_missing(conn, "sessions", model, project) if (count or progress) and after_id is None else None
    return _run(conn, embedder, "sessions", fetch, project=project, limit=limit, progress=progress, stop=stop,
                count=count, total=total)


def backfill(conn: sqlite3.Connection, embedder, *, project: str | None = None, limit: int | None = None,
             prune: bool = False, progress: Callable[[str, int, int], None] | None = None,
             stop: threading.Event | None = None) -> tuple[list[EmbedReport], int]:
    """What ``pi-memory semantic embed-sessions`` does: embed every curated entry, then up to ``limit`` turns
    (newest first), of ``project`` (everything for ``None``) that lack a vector of the embedder's model.
    ``progress(source, done, total)``; ``prune``: afterwards delete other models' vectors, only when nothing
    is left to embed anywhere in the pass. Returns the reports (the turns' is missing when the curated pass
    failed) and the vectors pruned. An index that cannot be written (:func:`pi_memory.index.read_only.refuse_write`) is refused
    before anything is embedded; a write failing later (the disk filled up) ends the pass with the report's
    ``stopped``, or raises when nothing was written yet."""
    refuse_write(conn)
    reports: list[EmbedReport] = []
    for source, run, cap in (("curated", embed_curated, None), ("sessions", embed_turns, limit)):
        step = (lambda done, total, source=source: progress(source, done, total)) if progress else None
        reports.append(run(conn, embedder, project=project, limit=cap, progress=step, stop=stop, count=True))
        if reports[-1].stopped is not None and not any(r.embedded for r in reports):
            raise reports[-1].stopped  # nothing was written: the write's own refusal says so
        if reports[-1].error or reports[-1].stopped is not None:
            break
    finished = len(reports) == 2 and all(r.remaining == 0 and r.error is None for r in reports)
    pruned = prune_other_models(conn, str(embedder.model_name)) if prune and finished and project is None else 0
    return reports, pruned


def prune_other_models(conn: sqlite3.Connection, model: str) -> int:
    """Delete curated and turn vectors of every model but ``model``; returns the rows removed."""
    with transaction(conn):
        return sum(conn.execute(f"DELETE FROM {t} WHERE model != ?", (model,)).rowcount
                   for t in ("semantic_curated_vectors", "semantic_turn_vectors"))


def vector_counts(conn: sqlite3.Connection) -> dict[str, dict[str, int]]:
    """``{"curated": {model: n}, "sessions": {model: n}}``: stored vectors per source and model."""
    return {name: dict(conn.execute(f"SELECT model, count(*) FROM {table} GROUP BY model").fetchall())
            for name, table in (("curated", "semantic_curated_vectors"), ("sessions", "semantic_turn_vectors"))}


def max_message_id(conn: sqlite3.Connection) -> int:
    """The largest ``messages`` id (0 when empty): pass it as ``after_id`` after the next indexing pass."""
    return int(conn.execute("SELECT ifnull(max(id), 0) FROM messages").fetchone()[0])
