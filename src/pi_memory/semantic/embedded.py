"""The default backend: semantic memories in the index database (``index.sqlite3``), searched in-process.

Tables and migrations: :mod:`.schema`. Keyword search: :mod:`.keyword` (FTS5 BM25 with bounded work). Vector
search: :mod:`.vectors` (exact float32 matmul over a per-(scope, model) matrix kept in step with SQLite).
Fusion: :func:`~pi_memory.retrieval.fusion.rrf_fuse`.

The embedder's ``model_name`` and ``dim`` are stored with every vector; vectors of different models are never
compared. After a model switch, memories without a vector of the current model are still found by keyword until
:meth:`EmbeddedBackend.reembed` has run (the service starts it on a background thread; ``pi-memory semantic
reembed`` runs it with a progress bar).

Isolation: every statement that reads memories carries the scope filter ``user_id = ? AND project_id = ?
AND agent_id = ?``; per-id methods look the id up *with* that filter, so another scope's id is "not found".
Threads: one lock serialises use of the connection (SQLite connections are not safe for concurrent use);
embedding runs outside it.

Pieces: this module stores (add, update, delete, history, the per-scope vector cache); searching is
:mod:`.embedded_search`, re-embedding after a model switch :mod:`.embedded_reembed`, both mixed into
:class:`EmbeddedBackend`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from pi_memory import safety
from pi_memory.index import segments
from pi_memory.index.db import busy_wait, migrate, transaction
from pi_memory.index.semantic_schema import SCOPE_SQL, SEMANTIC_MIGRATIONS, WORDS_TABLE, salvage_semantic
from pi_memory.retrieval.fusion import RRF_K
from pi_memory.semantic.backend import MemoryChangedError, MemoryNotFoundError, count_query
from pi_memory.semantic.embedded_reembed import REEMBED_BATCH, EmbeddedReembed, ReembedReport
from pi_memory.semantic.embedded_search import EmbeddedSearch
from pi_memory.semantic.models import (
    HistoryEvent,
    MemorySource,
    Scope,
    SemanticMemory,
    fact_day,
    now_iso,
    text_hash,
)
from pi_memory.semantic.sanitize import check_observed_at, clean_metadata, clean_reason, clean_source
from pi_memory.semantic.vectors import VectorMatrix
from pi_memory.terminal_text import holds_control, normalise_newlines, printable

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 4000  # one memory is one fact; the bundled embedder reads only the first 256 tokens anyway
BULK_ROWS = 1000  # an import adding this many memories ends by merging the word index into one segment
CANDIDATES = 50  # keyword and vector candidates fused per search (RRF works on ranks, so depth > top_k)
IDENTITY_KEYS = frozenset({"user_id", "agent_id", "run_id", "project_id", "userId", "agentId", "runId",
                           "projectId", "scope"})  # never taken from metadata (mem0 #6655)
_COLS = ("id, text, user_id, project_id, agent_id, created_at, updated_at, observed_at, status, superseded_by, "
         "superseded_at, source, metadata, hash")

@dataclass(frozen=True)
class TextCheck:
    """:func:`check_text`'s answer: ``text`` as it would be stored (credentials redacted, ends stripped);
    ``refusal`` ``None`` when it may be stored, else ``"empty"``, ``"unreadable"``, ``"control"``, ``"threat"`` or
    ``"long"``;
    ``reason``: that refusal in a few words without the text's figures (a report counts rows by it);
    ``message``: the sentence a caller is told."""

    text: str
    refusal: str | None = None
    reason: str | None = None
    message: str | None = None


def check_text(text: str) -> TextCheck:
    """The one reading of a memory text: redacted once, scanned once (:func:`clean_text` raises its message;
    ``serve import`` counts its reason and keeps history texts that are only empty or unreadable)."""
    if not isinstance(text, str):
        raise ValueError("memory text must be a string")
    if (long := too_long(text)) is not None:  # before any scan: a 2 MB text took 25 s to be told so
        return TextCheck(text.strip(), "long", f"longer than {MAX_TEXT_CHARS:,} characters", long)
    cleaned = safety.redact(safety.replace_unencodable(normalise_newlines(text))).strip()  # a lone surrogate: U+FFFD
    if not cleaned:
        return TextCheck(cleaned, "empty", "empty or unreadable text", "memory text is empty")
    if safety.is_unreadable(cleaned):  # the curated stores' rule (curated.entries.content_problem)
        return TextCheck(cleaned, "unreadable", "empty or unreadable text",
                         f"Not saved: the memory text has no readable text: {safety.UNREADABLE}. Retype the fact, "
                         "or check the encoding of what was sent.")
    if holds_control(cleaned):  # the curated stores' rule too: an escape sequence acts on the screen showing it
        return TextCheck(cleaned, "control", "holds a control character",
                         f"Not saved: the memory text holds a control character ({_first_control(cleaned)}: terminal "
                         "escape codes or similar), which can hide or change text on a screen showing it. Remove it "
                         "and send plain text.")
    threats = safety.scan_threats(cleaned)
    if threats:  # every path that stores text (tool, CLI, REST, capture) ends here
        return TextCheck(cleaned, "threat", f"matched the threat pattern {threats[0].id}",
                         f"Not saved: the text matches the threat pattern {threats[0].id}. Semantic memories are "
                         "recalled into later conversations, so they must read as plain facts, not as instructions "
                         "to a model.")
    if (long := too_long(cleaned)) is not None:  # a redaction marker can make a text longer
        return TextCheck(cleaned, "long", f"longer than {MAX_TEXT_CHARS:,} characters", long)
    return TextCheck(cleaned)


def _first_control(text: str) -> str:
    """The first control character of ``text`` as an escape (``\\x1b``)."""
    return next(printable(ch) for ch in text if holds_control(ch))


def too_long(text: str) -> str | None:
    """Why ``text`` (ends stripped) is too long for one memory, or ``None``: checked on the text as given, before
    any scan or redaction, and again on what would be stored."""
    size = len(text.strip())
    if size <= MAX_TEXT_CHARS:
        return None
    return (f"memory text is {size:,} characters; one memory holds at most {MAX_TEXT_CHARS:,}. Store one short "
            "fact per memory.")


def clean_text(text: str) -> str:
    """What is stored: credentials redacted (:func:`pi_memory.safety.redact`), ends stripped. Raises
    ``ValueError`` for empty, unreadable (only U+FFFD), over-long or hostile text (the threat scanner)."""
    checked = check_text(text)
    if checked.message:
        raise ValueError(checked.message)
    return checked.text


def _clean_metadata(metadata: dict[str, Any] | None) -> dict[str, Any]:
    return clean_metadata(metadata, IDENTITY_KEYS)


def _row_to_memory(r: Sequence[Any]) -> SemanticMemory:
    return SemanticMemory(
        id=r[0], text=r[1], user_id=r[2], project_id=r[3] or None, agent_id=r[4] or None, created_at=r[5],
        updated_at=r[6], observed_at=r[7], status=r[8], superseded_by=r[9], superseded_at=r[10],
        source=MemorySource.model_validate(json.loads(r[11] or "{}")), metadata=json.loads(r[12] or "{}"),
        hash=r[13],
    )


class EmbeddedBackend(EmbeddedSearch, EmbeddedReembed):
    """Semantic memories in SQLite with hybrid (FTS5 BM25 + exact vector) search; see the module docstring.

    ``conn``: an open index connection (:func:`pi_memory.index.open_index`); the semantic migrations are
    applied here, waiting at most ``migrate_wait`` seconds for another process's lock on the index (``None``:
    the connection's busy timeout; then SQLite's "database is locked" is raised). ``embedder``: any
    :class:`pi_memory.embed.Embedder`. ``weights``: RRF weight per candidate list (``"keyword"``, ``"vector"``);
    ``rrf_k``: the RRF constant.
    """

    name = "embedded"

    def __init__(self, conn: sqlite3.Connection, embedder: Any, *, weights: dict[str, float] | None = None,
                 rrf_k: int = RRF_K, candidates: int = CANDIDATES, migrate_wait: float | None = None) -> None:
        self.conn = conn
        self.embedder = embedder
        self.weights = {"keyword": 1.0, "vector": 1.0, **(weights or {})}
        self.rrf_k = rrf_k
        self.candidates = candidates
        self._lock = threading.RLock()
        self._matrices: dict[tuple[tuple[str, str, str], str], VectorMatrix] = {}
        self.last_embed_error: str | None = None
        self.bad_vectors = 0  # stored vectors skipped when loading matrices (damaged or of another dimension)
        self._executor: ThreadPoolExecutor | None = None
        with contextlib.nullcontext() if migrate_wait is None else busy_wait(conn, migrate_wait):
            migrate(conn, SEMANTIC_MIGRATIONS)

    @property
    def lock(self) -> threading.RLock:
        """The lock every use of ``conn`` takes; others that write through ``conn`` (job outcomes) take it too."""
        return self._lock

    @property
    def model(self) -> str:
        return str(self.embedder.model_name)

    # --- embedding ---------------------------------------------------------------------------------------
    def _embed(self, texts: list[str]) -> np.ndarray | None:
        """Vectors for ``texts`` or ``None`` when the embedder fails (logged; keyword search still works)."""
        try:
            out = np.asarray(self.embedder.embed(texts), dtype=np.float32)
            self.last_embed_error = None
            return out
        except Exception as exc:  # noqa: BLE001 - any provider failure degrades to keyword-only
            self.last_embed_error = str(exc)
            log.warning("semantic memory: embedding failed, continuing without vectors: %s", exc)
            return None

    def _embed_query(self, text: str) -> np.ndarray | None:
        from pi_memory.embed.base import carries_meaning

        if not carries_meaning(self.embedder, text):  # "猫", "🚀": only pieces the model does not know
            return None
        try:
            out = np.asarray(self.embedder.embed_query(text), dtype=np.float32)
            self.last_embed_error = None
            return out
        except Exception as exc:  # noqa: BLE001
            self.last_embed_error = str(exc)
            log.warning("semantic memory: query embedding failed, searching by keyword only: %s", exc)
            return None

    # --- low-level helpers (call with the lock held) -----------------------------------------------------
    def _next_seq(self) -> int:
        return int(self.conn.execute("SELECT ifnull(max(seq), 0) + 1 FROM semantic_memories").fetchone()[0])

    def _history(self, scope: Scope, memory_id: str, event: str, old: str | None, new: str | None,
                 related: str | None, reason: str | None, at: str) -> None:
        self.conn.execute(
            "INSERT INTO semantic_history(memory_id, user_id, project_id, agent_id, event, old_text, new_text, "
            "related_id, reason, at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (memory_id, *scope.columns(), event, old, new, related, clean_reason(reason), at))

    def _insert(self, mem: SemanticMemory, vector: np.ndarray | None) -> None:
        self.conn.execute(
            "INSERT INTO semantic_memories(id, user_id, project_id, agent_id, text, hash, status, created_at, "
            "updated_at, observed_at, source, metadata, seq) VALUES (?,?,?,?,?,?,'active',?,?,?,?,?,?)",
            (mem.id, *mem.scope.columns(), mem.text, mem.hash, mem.created_at, mem.updated_at, mem.observed_at,
             json.dumps(mem.source.model_dump(exclude_none=True), ensure_ascii=False),
             json.dumps(mem.metadata, ensure_ascii=False), self._next_seq()))
        if vector is not None:
            self._store_vector(mem.id, mem.scope.columns(), vector, mem.created_at)

    def _store_vector(self, memory_id: str, columns: Sequence[str], vector: np.ndarray, at: str) -> None:
        vec = np.asarray(vector, dtype="<f4").reshape(-1)
        self.conn.execute(
            "INSERT OR REPLACE INTO semantic_vectors(model, user_id, project_id, agent_id, memory_id, dim, vector, "
            "created_at) VALUES (?,?,?,?,?,?,?,?)", (self.model, *columns, memory_id, int(vec.shape[0]), vec.tobytes(), at))

    def _by_hash(self, scope: Scope, digest: str) -> SemanticMemory | None:
        row = self.conn.execute(f"SELECT {_COLS} FROM semantic_memories WHERE {SCOPE_SQL} AND hash = ? "
                                "AND status = 'active' ORDER BY pk DESC LIMIT 1", (*scope.columns(), digest)).fetchone()
        return _row_to_memory(row) if row else None

    def _fetch(self, ids: Sequence[str], scope: Scope) -> dict[str, SemanticMemory]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        # unary + keeps SQLite on the id index (the scope index would scan the whole scope)
        rows = self.conn.execute(f"SELECT {_COLS} FROM semantic_memories WHERE id IN ({marks}) AND "
                                 "+user_id = ? AND +project_id = ? AND +agent_id = ?",
                                 (*ids, *scope.columns())).fetchall()
        return {r[0]: _row_to_memory(r) for r in rows}

    def _matrix(self, scope: Scope) -> VectorMatrix:
        """The scope's matrix for the current model, brought up to date with SQLite (module :mod:`.vectors`)."""
        key = (scope.columns(), self.model)
        matrix = self._matrices.get(key)
        if matrix is None:
            matrix = self._matrices[key] = VectorMatrix(int(self.embedder.dim))
        cols = scope.columns()
        rows = self.conn.execute(f"SELECT id, status, seq FROM semantic_memories WHERE {SCOPE_SQL} AND seq > ?",
                                 (*cols, matrix.seq_seen)).fetchall()
        if not rows:
            return matrix
        active = set()
        newest = matrix.seq_seen  # advanced only once the rows are applied, so a failure is retried next time
        for mid, status, seq in rows:
            newest = max(newest, seq)
            if status == "active":
                active.add(mid)
            else:
                matrix.drop(mid)
        vec_sql = "SELECT memory_id, dim, vector FROM semantic_vectors WHERE model = ? AND " + SCOPE_SQL
        if len(active) > 500:  # a first load: one range scan of the (model, scope) key
            found = self.conn.execute(vec_sql, (self.model, *cols)).fetchall()
        else:
            found = []
            ids = list(active)
            for i in range(0, len(ids), 500):
                chunk = ids[i:i + 500]
                found += self.conn.execute(vec_sql + f" AND memory_id IN ({','.join('?' * len(chunk))})",
                                           (self.model, *cols, *chunk)).fetchall()
        _applied, skipped = matrix.upsert_rows(r for r in found if r[0] in active)
        if skipped:
            self.bad_vectors += skipped
            log.warning("semantic memory: skipped %d stored vector(s) of scope %s that are damaged or of another "
                        "dimension (%d this process); they count as stale: run `pi-memory semantic reembed` to "
                        "repair them. Keyword search still finds those memories.", skipped, scope.key,
                        self.bad_vectors)
        matrix.seq_seen = newest
        return matrix

    def _cache_upsert(self, scope: Scope, memory_id: str, vector: np.ndarray | None) -> None:
        matrix = self._matrices.get((scope.columns(), self.model))
        if matrix is not None and vector is not None:
            matrix.upsert(memory_id, vector)

    def _cache_drop(self, scope: Scope, memory_id: str) -> None:
        for (cols, _model), matrix in self._matrices.items():
            if cols == scope.columns():
                matrix.drop(memory_id)

    # --- SemanticBackend -----------------------------------------------------------------------------------
    def add(self, text: str, *, scope: Scope, source: dict[str, Any] | None = None,
            metadata: dict[str, Any] | None = None, observed_at: str | None = None) -> SemanticMemory:
        """See :meth:`pi_memory.semantic.backend.SemanticBackend.add`."""
        cleaned = clean_text(text)
        metadata = _clean_metadata(metadata)  # before the duplicate check: a control character is refused
        kept_source = clean_source(source)  # as metadata
        observed_at = check_observed_at(observed_at)
        digest = text_hash(cleaned)
        with self._lock:
            existing = self._by_hash(scope, digest)
        if existing is not None:
            return existing
        vecs = self._embed([cleaned])
        vector = vecs[0] if vecs is not None else None
        now = now_iso()
        mem = SemanticMemory(text=cleaned, user_id=scope.user_id, project_id=scope.project_id,
                             agent_id=scope.agent_id, created_at=now, updated_at=now,
                             observed_at=observed_at or now, source=kept_source,
                             metadata=metadata, hash=digest)
        with self._lock, transaction(self.conn):
            again = self._by_hash(scope, digest)  # a concurrent writer may have stored it meanwhile
            if again is not None:
                return again
            self._insert(mem, vector)
            self._history(scope, mem.id, "ADD", None, mem.text, None, (mem.source.kind or None), now)
            segments.settle(self.conn, WORDS_TABLE)  # few word-index segments: fast keyword search
        with self._lock:
            self._cache_upsert(scope, mem.id, vector)
        return mem

    def add_many(self, texts: Sequence[str], *, scope: Scope, source: dict[str, Any] | None = None,
                 observed_at: str | None = None, vectors: np.ndarray | None = None) -> int:
        """Bulk verbatim import (one transaction): texts already stored (normalised) in the scope, or repeated
        in ``texts``, are skipped. ``vectors`` (shape ``(len(texts), dim)``, of the current model) skips
        embedding. Returns the memories added. Used by imports and benchmarks."""
        cleaned = [clean_text(t) for t in texts]
        observed_at = check_observed_at(observed_at)
        if vectors is None:
            vectors = self._embed(cleaned)
        now = now_iso()
        src = clean_source(source)
        added = 0
        with self._lock, transaction(self.conn):
            seen = {r[0] for r in self.conn.execute(
                f"SELECT hash FROM semantic_memories WHERE {SCOPE_SQL} AND status = 'active'", scope.columns())}
            for i, text in enumerate(cleaned):
                digest = text_hash(text)
                if digest in seen:
                    continue
                seen.add(digest)
                mem = SemanticMemory(text=text, user_id=scope.user_id, project_id=scope.project_id,
                                     agent_id=scope.agent_id, created_at=now, updated_at=now,
                                     observed_at=observed_at or now, source=src, hash=digest)
                self._insert(mem, vectors[i] if vectors is not None else None)
                self._history(scope, mem.id, "ADD", None, text, None, "import", now)
                added += 1
            if added >= BULK_ROWS:  # one segment after an import (index.segments)
                segments.optimize(self.conn, WORDS_TABLE)
            elif added:
                segments.settle(self.conn, WORDS_TABLE)
        return added

    def get(self, memory_id: str, *, scope: Scope) -> SemanticMemory | None:
        with self._lock:
            return self._fetch([str(memory_id)], scope).get(str(memory_id))

    def get_many(self, memory_ids: Sequence[str], *, scope: Scope) -> dict[str, SemanticMemory]:
        """``{id: memory}`` for the ids found in ``scope`` (any status; one query); others are left out."""
        with self._lock:
            return self._fetch(list(memory_ids), scope)

    def recall_rows(self, memory_ids: Sequence[str], *, scope: Scope) -> dict[str, tuple[str, str, str]]:
        """``{id: (text, day, created_at)}`` of the active memories among ``memory_ids`` in ``scope`` (one query, no
        model built): what recall's evidence check reads of the many candidates it judges; the few it keeps are
        read whole with :meth:`get_many`."""
        if not memory_ids:
            return {}
        marks = ",".join("?" * len(memory_ids))
        with self._lock:
            rows = self.conn.execute(f"SELECT id, text, observed_at, created_at FROM semantic_memories WHERE id IN "
                                     f"({marks}) AND +user_id = ? AND +project_id = ? AND +agent_id = ? AND "
                                     "+status = 'active'", (*memory_ids, *scope.columns())).fetchall()
        return {r[0]: (r[1], fact_day(r[2], r[3]), r[3] or "") for r in rows}

    def get_all(self, *, scope: Scope, limit: int = 100, include_superseded: bool = False) -> list[SemanticMemory]:
        status = "" if include_superseded else " AND status = 'active'"
        with self._lock:
            rows = self.conn.execute(f"SELECT {_COLS} FROM semantic_memories WHERE {SCOPE_SQL}{status} "
                                     "ORDER BY created_at DESC, pk DESC LIMIT ?",
                                     (*scope.columns(), max(0, int(limit)))).fetchall()
        return [_row_to_memory(r) for r in rows]

    def count(self, *, scope: Scope | None = None, status: str | None = "active") -> int:
        """Memories of ``scope`` (every scope when ``None``) with ``status`` (any when ``None``)."""
        sql, args = count_query(SCOPE_SQL, scope, status, "?")
        with self._lock:
            return int(self.conn.execute(sql, args).fetchone()[0])

    def delete(self, memory_id: str, *, scope: Scope, reason: str | None = None) -> bool:
        with self._lock, transaction(self.conn):
            mem = self._fetch([str(memory_id)], scope).get(str(memory_id))
            if mem is None or mem.status != "active":
                return False
            now = now_iso()
            self.conn.execute(f"UPDATE semantic_memories SET status = 'deleted', updated_at = ?, seq = ? "
                              f"WHERE id = ? AND {SCOPE_SQL}", (now, self._next_seq(), mem.id, *scope.columns()))
            self._history(scope, mem.id, "DELETE", mem.text, None, None, reason, now)
        with self._lock:
            self._cache_drop(scope, mem.id)
        return True

    def update(self, memory_id: str, text: str, *, scope: Scope, reason: str | None = None,
               source: dict[str, Any] | None = None, observed_at: str | None = None) -> SemanticMemory:
        """See the protocol. Extra (this backend only): ``source`` / ``observed_at`` of the new version
        (default: the old memory's source, now). When the new text equals another active memory of the scope,
        the old one is superseded by that memory instead of storing a copy."""
        cleaned = clean_text(text)
        observed_at = check_observed_at(observed_at)
        digest = text_hash(cleaned)
        old = self.get(memory_id, scope=scope)
        if old is None:
            raise MemoryNotFoundError(f"No active memory {memory_id!r} in scope {scope.key}.")
        if old.status != "active":
            raise MemoryChangedError(memory_id, old.status, old.superseded_by)
        if digest == old.hash:
            return old
        vecs = self._embed([cleaned])
        vector = vecs[0] if vecs is not None else None
        now = now_iso()
        new = SemanticMemory(text=cleaned, user_id=scope.user_id, project_id=scope.project_id,
                             agent_id=scope.agent_id, created_at=now, updated_at=now, observed_at=observed_at or now,
                             source=clean_source(source) if source is not None else old.source,
                             metadata=old.metadata, hash=digest)
        with self._lock, transaction(self.conn):
            current = self._fetch([old.id], scope).get(old.id)
            if current is None or current.status != "active":  # another writer superseded or deleted it
                raise MemoryChangedError(memory_id, current.status if current else "deleted",
                                         current.superseded_by if current else None)
            target = self._by_hash(scope, digest)
            if target is None:
                self._insert(new, vector)
                self._history(scope, new.id, "UPDATE", old.text, new.text, old.id, reason, now)
                segments.settle(self.conn, WORDS_TABLE)
                target = new
            self.conn.execute(f"UPDATE semantic_memories SET status = 'superseded', superseded_by = ?, "
                              f"superseded_at = ?, updated_at = ?, seq = ? WHERE id = ? AND {SCOPE_SQL}",
                              (target.id, now, now, self._next_seq(), old.id, *scope.columns()))
            self._history(scope, old.id, "SUPERSEDE", old.text, target.text, target.id, reason, now)
        with self._lock:
            self._cache_drop(scope, old.id)
            if target is new:
                self._cache_upsert(scope, new.id, vector)
        return target

    def history(self, memory_id: str, *, scope: Scope) -> list[HistoryEvent]:
        with self._lock:
            if self._fetch([str(memory_id)], scope).get(str(memory_id)) is None:
                return []
            chain = {str(memory_id)}
            frontier = [str(memory_id)]
            while frontier and len(chain) < 1000:  # both directions of the supersession graph
                marks = ",".join("?" * len(frontier))
                rows = self.conn.execute(
                    f"SELECT id, superseded_by FROM semantic_memories WHERE {SCOPE_SQL} AND "
                    f"(id IN ({marks}) OR superseded_by IN ({marks}))",
                    (*scope.columns(), *frontier, *frontier)).fetchall()
                found = {x for r in rows for x in r if x} - chain
                chain |= found
                frontier = list(found)
            marks = ",".join("?" * len(chain))
            rows = self.conn.execute(
                "SELECT memory_id, event, old_text, new_text, at, reason, related_id FROM semantic_history "
                f"WHERE {SCOPE_SQL} AND memory_id IN ({marks}) ORDER BY at, id", (*scope.columns(), *chain)).fetchall()
        return [HistoryEvent(memory_id=r[0], event=r[1], old_text=r[2], new_text=r[3], at=r[4], reason=r[5],
                             related_id=r[6]) for r in rows]


__all__ = ["REEMBED_BATCH", "SEMANTIC_MIGRATIONS", "EmbeddedBackend", "ReembedReport", "clean_text",
           "salvage_semantic"]
