"""Re-embedding after an embedding-model switch (mixed into
:class:`~pi_memory.semantic.embedded.EmbeddedBackend`): which active memories lack a vector of the current
model, and filling them in batches that searches pick up as they land.

A memory is *stale* unless it has a usable vector of the current model: stored under the embedder's
``model_name``, of the embedder's ``dim`` (when that is known without loading a model or calling a server), and
with a blob of exactly ``dim x 4`` bytes. So a vector damaged on disk, or one of another dimension under the same
model name (an OpenAI-compatible model asked for other ``dimensions``), is counted by :meth:`stale_count` and
replaced by :meth:`reembed`, instead of being silently unusable."""

from __future__ import annotations

import inspect
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_memory.index.db import transaction
from pi_memory.index.read_only import refuse_write
from pi_memory.index.semantic_schema import USABLE_INDEX, USABLE_SQL
from pi_memory.semantic.models import now_iso

REEMBED_BATCH = 64  # the batch size the embedder evaluation measured (590 sentences/s on 2 cores)


@dataclass(frozen=True)
class ReembedReport:
    """``embedded``: vectors written now; ``remaining``: active memories still without a vector of ``model``;
    ``pruned``: vectors of other models removed (only with ``prune`` and nothing remaining)."""

    model: str
    embedded: int
    remaining: int
    pruned: int = 0
    error: str | None = None


class EmbeddedReembed:
    """The model-switch methods; the storage they write is the backend's."""

    conn: sqlite3.Connection
    embedder: Any
    _lock: threading.RLock
    last_embed_error: str | None

    model: Any  # property of the backend: the embedder's model name
    _embed: Any
    _store_vector: Any
    _next_seq: Any

    def _known_dim(self) -> int | None:
        """The embedder's dimension when known without loading a model or calling a server, else ``None``."""
        for value in (inspect.getattr_static(self.embedder, "dim", None), getattr(self.embedder, "_dim", None)):
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    def _usable_vector_sql(self) -> tuple[str, tuple[Any, ...]]:
        """``NOT EXISTS`` of this finds the stale active memories ``m`` (module docstring). Answered from the
        index of usable vectors (:data:`~pi_memory.index.semantic_schema.USABLE_INDEX`, whose WHERE the length
        test repeats word for word) when the file has it: a count of 100,000 memories read every vector row."""
        dim = self._known_dim()
        size = ("v.dim = ? AND ", (dim,)) if dim else ("", ())
        named = self.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?",
                                  (USABLE_INDEX,)).fetchone()
        usable = USABLE_SQL.format(v="v.")
        return (f"(SELECT 1 FROM semantic_vectors v{f' INDEXED BY {USABLE_INDEX}' if named else ''} "
                f"WHERE v.memory_id = m.id AND v.model = ? AND {size[0]}{usable})", (self.model, *size[1]))

    def stale_count(self) -> int:
        """Active memories (all scopes) without a usable vector of the current model (module docstring)."""
        usable, args = self._usable_vector_sql()
        with self._lock:
            return int(self.conn.execute(
                f"SELECT count(*) FROM semantic_memories m WHERE m.status = 'active' AND NOT EXISTS {usable}", args
            ).fetchone()[0])

    def models(self) -> dict[str, int]:
        """Vector count per model name."""
        with self._lock:
            return dict(self.conn.execute("SELECT model, count(*) FROM semantic_vectors GROUP BY model").fetchall())

    def reembed(self, progress: Callable[[int, int], None] | None = None, *, batch_size: int = REEMBED_BATCH,
                prune: bool = False, stop: threading.Event | None = None) -> ReembedReport:
        """Embed every active memory (all scopes) that lacks a usable vector of the current model, in batches
        (a damaged or wrong-dimension vector is replaced).

        ``progress(done, total)`` is called after each batch. Each batch is its own transaction and bumps the
        memories' ``seq``, so searches (in this and other processes) pick the vectors up as they land and the
        work resumes where it stopped. ``prune``: afterwards, delete vectors of other models (only when none
        is left to embed). ``stop``: an event that ends the loop between batches.
        """
        refuse_write(self.conn)  # read-only: refused before any embedding
        total = self.stale_count()
        done = 0
        error = None
        if progress:
            progress(0, total)
        while not (stop and stop.is_set()):
            usable, args = self._usable_vector_sql()
            with self._lock:
                rows = self.conn.execute(
                    "SELECT m.id, m.text, m.user_id, m.project_id, m.agent_id FROM semantic_memories m "
                    f"WHERE m.status = 'active' AND NOT EXISTS {usable} ORDER BY m.pk LIMIT ?",
                    (*args, batch_size)).fetchall()
            if not rows:
                break
            vecs = self._embed([r[1] for r in rows])
            if vecs is None:
                error = self.last_embed_error
                break
            now = now_iso()
            with self._lock, transaction(self.conn):
                for (mid, _text, *cols), vec in zip(rows, vecs, strict=True):
                    self._store_vector(mid, cols, vec, now)
                    self.conn.execute("UPDATE semantic_memories SET seq = ? WHERE id = ?", (self._next_seq(), mid))
            done += len(rows)
            if progress:
                progress(done, max(total, done))
        remaining = self.stale_count()
        pruned = 0
        if prune and remaining == 0 and error is None:
            with self._lock, transaction(self.conn):
                pruned = self.conn.execute("DELETE FROM semantic_vectors WHERE model != ?", (self.model,)).rowcount
        return ReembedReport(self.model, done, remaining, pruned, error)

    def start_reembed(self, progress: Callable[[int, int], None] | None = None) -> tuple[threading.Thread, threading.Event]:
        """Run :meth:`reembed` on a daemon thread; returns the thread and an event that stops it."""
        stop = threading.Event()
        thread = threading.Thread(target=self.reembed, kwargs={"progress": progress, "stop": stop},
                                  name="pi-memory-reembed", daemon=True)
        thread.start()
        return thread, stop
