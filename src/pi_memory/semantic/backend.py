"""The interface every semantic-memory backend implements (embedded SQLite, the REST client, Mem0 Platform).

Contract, for every method:

* **Scope is mandatory and exact.** Every call names one :class:`~pi_memory.semantic.models.Scope`; nothing
  outside it is ever read, returned, changed or used for ranking candidates. A per-id call (``get``,
  ``delete``, ``update``, ``history``) on an id that exists in *another* scope behaves exactly as for an
  unknown id (``None`` / ``False`` / :class:`MemoryNotFoundError` / ``[]``), so ids cannot be probed across
  scopes. (Mem0's own server does not check this; our backends must.)
* **Nothing is erased.** ``delete`` marks a memory ``deleted``; ``update`` stores the new text as a new memory
  and marks the old one ``superseded`` (``superseded_by`` = the new id). Both record :class:`HistoryEvent`
  rows. Only maintenance tools outside this interface may purge rows.
* **Credentials are redacted** (:func:`pi_memory.safety.redact`) before anything is stored; a backend that
  sends text elsewhere redacts it before it leaves the process.
* **Reads exclude superseded and deleted memories** unless asked (``get`` returns any status: it is how a
  caller follows ``superseded_by``).
* ``search`` returns hits best first, at most ``top_k``, ``score`` higher = better (its scale is the
  backend's own: fused RRF for the embedded backend, similarity for a mem0 server); ``similar`` is the
  candidate lookup capture uses before its decision call (for the embedded backend: vector neighbours,
  completed by keyword matches when the embedder cannot be used).
* Errors: :class:`BackendError` (and subclasses) with a message a person or a model can act on.

Implementations: :class:`pi_memory.semantic.embedded.EmbeddedBackend` (the default) and, written against this
file, ``semantic/backends/rest_client.py`` (self-hosted / Mem0 OSS server) and ``semantic/backends/platform.py``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pi_memory.semantic.models import HistoryEvent, Scope, SemanticHit, SemanticMemory

__all__ = ["RECALL_SERVER_DOWN", "SERVER_DOWN_ADVICE", "SERVER_DOWN_STATE", "BackendDownError", "BackendError",
           "MemoryNotFoundError", "SemanticBackend"]


def count_query(scope_clause: str, scope: Scope | None, status: str | None, mark: str) -> tuple[str, list[Any]]:
    """``count()``'s SQL for the two SQL backends (SQLite and PostgreSQL) and its arguments: memories of
    ``scope`` (every scope when ``None``; ``scope_clause`` is the backend's own scope condition) with ``status``
    (any when ``None``); ``mark`` is the driver's placeholder (``?`` or ``%s``)."""
    where, args = [], []
    if scope is not None:
        where.append(scope_clause)
        args += scope.columns()
    if status is not None:
        where.append(f"status = {mark}")
        args.append(status)
    return "SELECT count(*) FROM semantic_memories" + (" WHERE " + " AND ".join(where) if where else ""), args


class BackendError(RuntimeError):
    """A backend operation failed (storage unavailable, server error...). The message says what to do."""


class BackendDownError(BackendError):
    """A remote store that cannot be used now: not reachable, not answering in time, or answering that it cannot
    serve (its database down). Its message is for a person (how to fix it); a model is told less."""


# What a model is told when the team server is down (its error's text, how to fix it, goes to the log): the state
# and the advice are the same words wherever it meets the outage -- the mem0_memory tool
# (``tools.semantic.SERVER_DOWN``) and the recall before a run, on pi and in the Claude Code / Codex hooks
# (:data:`RECALL_SERVER_DOWN`).
SERVER_DOWN_STATE = "The team memory server is not working right now"
SERVER_DOWN_ADVICE = ("Carry on with the task without team memory, and tell the user that the team memory server is "
                      "not answering.")
RECALL_SERVER_DOWN = (f"{SERVER_DOWN_STATE}, so no team memories were recalled for this prompt. "
                      f"{SERVER_DOWN_ADVICE}")


class MemoryNotFoundError(BackendError, KeyError):
    """``update`` named an id that does not exist in the caller's scope (or is no longer active)."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "memory not found"


class MemoryChangedError(MemoryNotFoundError):
    """``update`` named a memory of the caller's scope that is no longer active: superseded (``superseded_by``
    names its newer version) or deleted, perhaps by another writer while this update ran. Callers that only
    know :class:`MemoryNotFoundError` read it as that; the REST server answers 409."""

    def __init__(self, memory_id: str, status: str, superseded_by: str | None = None) -> None:
        self.memory_id, self.status, self.superseded_by = str(memory_id), status, superseded_by
        now = (f"superseded by {superseded_by!r}" if status == "superseded" and superseded_by else
               "superseded" if status == "superseded" else "deleted")
        newest = f" (update {superseded_by!r} instead)" if superseded_by else ""
        super().__init__(f"memory {self.memory_id!r} was changed meanwhile: it is now {now}, so this update was "
                         f"not applied. Read the memory again and update its newest version{newest}.")


@runtime_checkable
class SemanticBackend(Protocol):
    """Storage and search of semantic memories; see the module docstring for the rules all methods follow."""

    name: str  # "embedded", "self-hosted", "platform": shown by status lines

    def add(
        self,
        text: str,
        *,
        scope: Scope,
        source: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        observed_at: str | None = None,
    ) -> SemanticMemory:
        """Store ``text`` verbatim (mem0's ``infer=False`` path: no model call) and return the memory.

        Deduplicated: when an *active* memory of the scope has the same normalised text
        (:func:`~pi_memory.semantic.models.text_hash`), that memory is returned and nothing is written.
        ``source``: ``{"session_id": str, "entry_ids": [str], "kind": str}``; ``metadata``: free-form JSON
        (identity keys such as ``user_id``/``agent_id`` inside it never change the scope);
        ``observed_at``: ISO time the fact was stated (default: now). Raises ``ValueError`` for empty text.
        """
        ...

    def search(self, query: str, *, scope: Scope, top_k: int = 5) -> list[SemanticHit]:
        """Active memories of the scope most relevant to ``query``, best first, at most ``top_k``."""
        ...

    def get(self, memory_id: str, *, scope: Scope) -> SemanticMemory | None:
        """The memory with this id in this scope, whatever its status; ``None`` if unknown or in another
        scope."""
        ...

    def get_all(
        self, *, scope: Scope, limit: int = 100, include_superseded: bool = False
    ) -> list[SemanticMemory]:
        """Memories of the scope, newest first, at most ``limit``. Active only unless
        ``include_superseded`` (then superseded and deleted ones too)."""
        ...

    def delete(self, memory_id: str, *, scope: Scope, reason: str | None = None) -> bool:
        """Mark an active memory deleted (history kept). ``False`` if unknown, in another scope, or not
        active."""
        ...

    def update(self, memory_id: str, text: str, *, scope: Scope, reason: str | None = None) -> SemanticMemory:
        """Supersede an active memory by ``text``: a new memory is stored (same scope, source and metadata,
        ``observed_at`` now) and returned; the old one gets ``status="superseded"``, ``superseded_by`` and
        ``superseded_at``. Raises :class:`MemoryNotFoundError` if the id is unknown, in another scope or not
        active; ``ValueError`` for empty text."""
        ...

    def history(self, memory_id: str, *, scope: Scope) -> list[HistoryEvent]:
        """Events of this memory and of the memories it replaced or was replaced by (its supersession chain),
        oldest first. ``[]`` if the id is unknown or in another scope."""
        ...

    def similar(self, text: str, *, scope: Scope, top_k: int = 5) -> list[SemanticHit]:
        """Active memories closest in meaning to ``text`` (capture's candidate lookup), best first."""
        ...
