"""``PlatformBackend``: the ``platform`` semantic backend, Mem0 Cloud through the ``mem0ai`` client.

Optional: ``pip install 'pi-memory[platform]'`` and a Mem0 API key (``MEM0_API_KEY`` or the ``apiKey``
setting). Hosts show :data:`PLATFORM_DISCLOSURE` once before the first capture in this mode.

How our scope maps onto Mem0 Cloud: the whole scope goes into Mem0's ``user_id`` as
:attr:`Scope.key <pi_memory.semantic.models.Scope.key>` (``"<user>:project:<hash>:agent:<agentId>"``, parts
left out when absent), and ``agent_id`` / ``run_id`` are not used. Mem0 Cloud files a memory added with both a
user and an agent as separate per-entity records, so an AND of entity filters can miss it and an OR mixes
scopes; one composite id keeps every scope exact and is the form the seed extension used for the user part.

Scope is enforced client-side too: an item fetched by id must carry the caller's ``user_id``, and an item in
a filtered list that carries another ``user_id`` is dropped. ``update`` / ``delete`` / ``history`` fetch the
memory first and act only when it is the caller's. Mem0 Cloud edits in place and deletes for real, so the
"superseded, never erased" promise of the embedded backend does not hold here (Mem0 keeps its own history).

Nothing here touches the network until the first call: construction only checks that the extra is installed
and that an API key is known, so status lines can be built offline.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

from pi_memory import safety
from pi_memory.semantic.backend import BackendError, MemoryNotFoundError
from pi_memory.semantic.backends.rest_wire import IDENTITY_KEYS, item_to_memory, row_to_history
from pi_memory.semantic.models import HistoryEvent, Scope, SemanticHit, SemanticMemory
from pi_memory.semantic.sanitize import clean_metadata, clean_source

__all__ = ["INSTALL_HINT", "PLATFORM_DISCLOSURE", "MissingExtraError", "PlatformBackend"]

INSTALL_HINT = "pip install 'pi-memory[platform]'"
API_KEY_ENV = "MEM0_API_KEY"
PLATFORM_DISCLOSURE = (
    "Semantic memory is in platform mode: the turns it captures (your messages and the agent's replies, with "
    "credentials redacted) and the searches it runs are sent to Mem0's cloud service, which processes them "
    "with its own models and stores the results on its servers. That text leaves this machine. To keep memory "
    "on machines you control, switch the semantic backend to embedded (the default) or to a self-hosted "
    "server (`pi-memory serve`)."
)


class MissingExtraError(BackendError):
    """The optional ``mem0ai`` package is not installed."""


def _mem0_installed() -> bool:
    try:
        return importlib.util.find_spec("mem0") is not None
    except (ImportError, ValueError):
        return False


def _missing() -> MissingExtraError:
    return MissingExtraError(f"platform mode needs the Mem0 client, which is not installed: run {INSTALL_HINT} "
                             f"(into {sys.prefix}), or switch the semantic backend to embedded")


def _results(data: Any) -> list[dict[str, Any]]:
    items = data.get("results", data.get("memories")) if isinstance(data, dict) else data
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


class PlatformBackend:
    """A :class:`~pi_memory.semantic.backend.SemanticBackend` over Mem0 Cloud (see the module docstring).

    ``api_key``: default ``$MEM0_API_KEY``. ``host``: the API base URL (default Mem0's). ``org_id`` /
    ``mem0_project_id``: Mem0 organisation and project (Mem0's own project, not ours). ``client``: an object
    with ``MemoryClient``'s methods, used instead of building one (tests, custom transports).
    """

    name = "platform"
    disclosure = PLATFORM_DISCLOSURE

    def __init__(self, api_key: str | None = None, *, host: str | None = None, org_id: str | None = None,
                 mem0_project_id: str | None = None, client: Any = None) -> None:
        self._client = client
        self._options = {"host": host, "org_id": org_id, "project_id": mem0_project_id}
        self._api_key = (api_key or os.environ.get(API_KEY_ENV) or "").strip()
        if client is None:
            if not _mem0_installed():
                raise _missing()
            if not self._api_key:
                raise BackendError(f"platform mode needs a Mem0 API key: set ${API_KEY_ENV} or \"apiKey\" in the "
                                   "semantic memory settings (or switch the backend to embedded)")

    def _mem0(self) -> Any:
        if self._client is None:
            os.environ.setdefault("MEM0_TELEMETRY", "false")  # no usage pings beyond the API calls themselves
            try:
                from mem0 import MemoryClient  # type: ignore[import-not-found]
            except ImportError as exc:
                raise _missing() from exc
            options = {k: v for k, v in self._options.items() if v}
            try:
                self._client = MemoryClient(api_key=self._api_key, **options)
            except Exception as exc:  # the client validates the key with a request
                raise BackendError(f"could not connect to Mem0 Cloud: {exc}. Check the API key and the network, "
                                   "or switch the semantic backend to embedded") from exc
        return self._client

    def _run(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BackendError:
            raise
        except Exception as exc:  # mem0ai raises its own APIError / httpx errors
            raise BackendError(f"Mem0 Cloud {what} failed: {type(exc).__name__}: {exc}") from exc

    @staticmethod
    def _user(scope: Scope) -> str:
        return scope.key

    def _own(self, item: dict[str, Any], scope: Scope, *, listed: bool) -> SemanticMemory | None:
        """The item as a memory of ``scope``. By id (``listed=False``) it must carry our ``user_id``; in a list
        filtered by ``user_id`` a missing one is taken as the filter's, another one is dropped."""
        user = item.get("user_id")
        if user != self._user(scope) and (user is not None or not listed):
            return None
        fields = {k: v for k, v in item.items() if k not in ("user_id", "agent_id", "run_id")}
        meta = fields.get("metadata") if isinstance(fields.get("metadata"), dict) else {}
        if isinstance(meta.get("pi_memory_source"), dict):  # what add() stored there
            fields.setdefault("source", meta["pi_memory_source"])
        if isinstance(meta.get("observed_at"), str):
            fields.setdefault("observed_at", meta["observed_at"])
        try:
            mem = item_to_memory({**fields, "user_id": scope.user_id, "agent_id": scope.agent_id,
                                  "run_id": scope.project_id})
        except ValueError:
            return None
        return mem

    # --- SemanticBackend ------------------------------------------------------------------------------------
    def add(self, text: str, *, scope: Scope, source: dict[str, Any] | None = None,
            metadata: dict[str, Any] | None = None, observed_at: str | None = None) -> SemanticMemory:
        cleaned = safety.redact(text if isinstance(text, str) else "").strip()
        if not cleaned:
            raise ValueError("memory text is empty")
        meta = clean_metadata(metadata, IDENTITY_KEYS)
        if source:
            meta["pi_memory_source"] = clean_source(source).model_dump(exclude_none=True)
        if observed_at:
            meta["observed_at"] = observed_at
        client = self._mem0()
        data = self._run("add", client.add, [{"role": "user", "content": cleaned}], user_id=self._user(scope),
                         metadata=meta or None, infer=False, async_mode=False)
        first = next(iter(_results(data)), {})
        memory_id = first.get("id") or first.get("event_id")
        if not memory_id:
            raise BackendError("Mem0 Cloud accepted the memory but returned no id; it may still be processing")
        return SemanticMemory(id=str(memory_id), text=str(first.get("memory") or cleaned), user_id=scope.user_id,
                              agent_id=scope.agent_id, project_id=scope.project_id, observed_at=observed_at,
                              source=clean_source(source), metadata=meta)

    def search(self, query: str, *, scope: Scope, top_k: int = 5) -> list[SemanticHit]:
        query = safety.redact(query or "").strip()
        if not query or top_k < 1:
            return []
        client = self._mem0()
        data = self._run("search", client.search, query, filters={"user_id": self._user(scope)}, top_k=top_k)
        hits = []
        for item in _results(data):
            mem = self._own(item, scope, listed=True)
            if mem is not None:
                score = item.get("score")
                hits.append(SemanticHit(memory=mem, score=float(score) if isinstance(score, int | float) else 0.0))
        return hits[:top_k]

    def similar(self, text: str, *, scope: Scope, top_k: int = 5) -> list[SemanticHit]:
        return self.search(text, scope=scope, top_k=top_k)

    def get(self, memory_id: str, *, scope: Scope) -> SemanticMemory | None:
        if not str(memory_id or "").strip():
            return None
        client = self._mem0()
        try:
            data = client.get(str(memory_id))
        except Exception:  # Mem0 answers an unknown id with an error; treat every failure here as "not yours"
            return None
        return self._own(data, scope, listed=False) if isinstance(data, dict) else None

    def get_all(self, *, scope: Scope, limit: int = 100, include_superseded: bool = False) -> list[SemanticMemory]:
        if limit < 1:
            return []
        client = self._mem0()
        data = self._run("list", client.get_all, filters={"user_id": self._user(scope)})
        mems = [m for i in _results(data) if (m := self._own(i, scope, listed=True)) is not None]
        mems.sort(key=lambda m: m.created_at, reverse=True)
        return mems[:limit]

    def delete(self, memory_id: str, *, scope: Scope, reason: str | None = None) -> bool:
        if self.get(memory_id, scope=scope) is None:
            return False
        self._run("delete", self._mem0().delete, str(memory_id))
        return True

    def update(self, memory_id: str, text: str, *, scope: Scope, reason: str | None = None) -> SemanticMemory:
        cleaned = safety.redact(text if isinstance(text, str) else "").strip()
        if not cleaned:
            raise ValueError("memory text is empty")
        old = self.get(memory_id, scope=scope)
        if old is None:
            raise MemoryNotFoundError(f"No active memory {memory_id!r} in scope {scope.key}.")
        self._run("update", self._mem0().update, str(memory_id), text=cleaned)
        return self.get(memory_id, scope=scope) or SemanticMemory(**{**old.model_dump(), "text": cleaned, "hash": ""})

    def history(self, memory_id: str, *, scope: Scope) -> list[HistoryEvent]:
        if self.get(memory_id, scope=scope) is None:
            return []
        data = self._run("history", self._mem0().history, str(memory_id))
        events = [row_to_history(r, str(memory_id)) for r in _results(data)]
        return sorted((e for e in events if e is not None), key=lambda e: e.at)
