"""``RestBackend``: the ``self-hosted`` semantic backend, over HTTP to ``pi-memory serve`` or a Mem0 OSS server.

It speaks Mem0's OSS REST shape (``/memories``, ``/search``, ``/memories/{id}``, ``/memories/{id}/history``;
see :mod:`.rest_server` for the exact bodies), so the same client serves both kinds of server. The scope goes
out as Mem0's ``user_id`` / ``agent_id`` / ``run_id`` (``run_id`` carries our ``project_id``; with
``composite_user_id=True`` the project goes inside ``user_id`` as ``"<user>:project:<hash>"``, the form the
seed extension used, so its memories on an existing Mem0 server stay visible).

Scope is enforced here too, not only trusted to the server:

* every returned item's ``user_id`` / ``agent_id`` / ``run_id`` must name exactly the caller's scope, or the
  item is dropped (a ``get`` of it is ``None``), so a Mem0 server -- whose per-id routes do not check scope,
  and whose filters match any agent/run when one is left out -- never shows another scope's memory;
* before ``update`` / ``delete`` / ``history`` on a server that does not say it checks scope (its
  ``GET /health`` lacks ``"scope_checked": true``; Mem0 has no such route), the memory is fetched and its
  scope compared first. On Mem0 the history of a memory that no longer exists cannot be proven to be the
  caller's, so it is ``[]``.

Text is credential-redacted (:func:`pi_memory.safety.redact`) before it leaves the process. Connection
failures are retried a couple of times (connect errors only: a request that reached the server is never
repeated); then :class:`ServerUnreachableError` says how to start the server or switch backend.

This module also holds the wire format both ends share (scope fields, items, history rows, request bodies);
the server imports it from here, so using the client never imports starlette.
"""

from __future__ import annotations

import os
import time
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

from pi_memory import safety
from pi_memory.semantic.backend import BackendError, MemoryNotFoundError
from pi_memory.semantic.models import (
    HistoryEvent,
    MemorySource,
    Scope,
    ScoreDetails,
    SemanticHit,
    SemanticMemory,
    now_iso,
    parse_iso,
    to_iso,
    to_iso_keep_offset,
)
from pi_memory.semantic.sanitize import clean_metadata, clean_reason, clean_source

__all__ = [
    "IDENTITY_KEYS", "TOKEN_ENV", "AddBody", "Message", "RestBackend", "SearchBody", "ServerRefusedError", "ServerUnreachableError",
    "UpdateBody", "history_to_row", "item_to_memory", "memory_to_item", "pretty_errors", "row_to_history",
    "scope_from_wire", "scope_to_wire",
]

TOKEN_ENV = "PI_MEMORY_SERVER_TOKEN"
PROJECT_MARK = ":project:"
IDENTITY_KEYS = frozenset({"user_id", "agent_id", "run_id", "project_id", "actor_id", "userId", "agentId",
                           "runId", "projectId", "actorId", "scope"})  # never taken from metadata (mem0 #6655)

CONNECT_RETRIES = 2
CONNECT_TIMEOUT_S = 3.0
RETRY_BACKOFF_S = (0.05, 0.2)
MAX_FETCH = 100  # results per search request: the self-hosted server's cap (rest_handlers.MAX_TOP_K)
MAX_LIST = 1000  # memories per list request: the self-hosted server's cap (rest_handlers.MAX_LIST)
_EVENTS = {"ADD", "UPDATE", "DELETE", "SUPERSEDE"}


# --- wire format (shared with rest_server) -----------------------------------------------------------------
def scope_from_wire(user_id: str | None, agent_id: str | None = None, run_id: str | None = None) -> Scope:
    """The scope named by Mem0's id fields. ``run_id`` is our ``project_id``; a composite ``user_id``
    ``"<user>:project:<hash>"`` is split. Raises ``ValueError`` (the text says which field to fix)."""
    user = (user_id or "").strip()
    if not user:
        raise ValueError("user_id is required: name the scope with user_id (plus agent_id / run_id when the "
                         "memories were stored with them); memories are only found within their own scope")
    project = (run_id or "").strip() or None
    if PROJECT_MARK in user:
        base, _, embedded = user.rpartition(PROJECT_MARK)
        if base.strip() and embedded.strip():
            if project is not None and project != embedded.strip():
                raise ValueError(f"user_id names project {embedded.strip()!r} but run_id is {project!r}; "
                                 "send one of them")
            user, project = base.strip(), embedded.strip()
    try:
        return Scope(user_id=user, agent_id=(agent_id or "").strip() or None, project_id=project)
    except ValidationError as exc:
        raise ValueError("; ".join(pretty_errors(exc))) from exc


def scope_to_wire(scope: Scope, *, composite_user_id: bool = False) -> dict[str, str]:
    """Mem0 id fields for ``scope`` (absent parts left out). ``composite_user_id``: put the project inside
    ``user_id`` the way the seed extension did (``"<user>:project:<hash>"``) instead of in ``run_id``."""
    if composite_user_id:
        wire = {"user_id": scope.user_key}
    else:
        wire = {"user_id": scope.user_id}
        if scope.project_id:
            wire["run_id"] = scope.project_id
    if scope.agent_id:
        wire["agent_id"] = scope.agent_id
    return wire


def memory_to_item(mem: SemanticMemory, hit: SemanticHit | None = None) -> dict[str, Any]:
    """A memory as a Mem0 result item plus our extras (see :mod:`.rest_server`)."""
    item: dict[str, Any] = {
        "id": mem.id, "memory": mem.text, "hash": mem.hash, "created_at": mem.created_at,
        "updated_at": mem.updated_at, "user_id": mem.user_id, "agent_id": mem.agent_id, "run_id": mem.project_id,
        "metadata": mem.metadata, "observed_at": mem.observed_at, "status": mem.status,
        "superseded_by": mem.superseded_by, "superseded_at": mem.superseded_at,
        "source": mem.source.model_dump(exclude_none=True),
    }
    if hit is not None:
        item["score"] = hit.score
        item["score_details"] = hit.details.model_dump(exclude_none=True)
    return item


def _details(raw: Any) -> ScoreDetails:
    """Our server's ``score_details`` (cosine, ranks: recall's similarity floor reads them); Mem0's server sends
    none, and anything malformed counts as none."""
    if not isinstance(raw, dict):
        return ScoreDetails()
    try:
        return ScoreDetails.model_validate(raw)
    except ValidationError:
        return ScoreDetails()


def history_to_row(event: HistoryEvent, index: int) -> dict[str, Any]:
    """A history event as a Mem0 history row (``id`` is ``<memory_id>:<n>``, n counting from 1)."""
    return {
        "id": f"{event.memory_id}:{index}", "memory_id": event.memory_id, "old_memory": event.old_text,
        "new_memory": event.new_text, "event": event.event, "created_at": event.at, "updated_at": event.at,
        "is_deleted": 1 if event.event == "DELETE" else 0, "reason": event.reason, "related_id": event.related_id,
    }


def pretty_errors(exc: ValidationError) -> list[str]:
    """``["field: problem", ...]`` for an error message."""
    out = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "body"
        out.append(f"{where}: {err.get('msg', 'invalid')}")
    return out


# --- request bodies (validated by the server) ------------------------------------------------------------
class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")  # Mem0 clients send fields we do not use (output_format, ...)


class Message(_Lenient):
    role: str = "user"
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""


class _ScopedBody(_Lenient):
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None


class AddBody(_ScopedBody):
    messages: list[Message] | Message | str | None = None
    text: str | None = None
    metadata: dict[str, Any] | None = None
    infer: bool | None = None
    source: dict[str, Any] | None = None
    observed_at: str | None = None
    prompt: str | None = None
    memory_type: str | None = None


class UpdateBody(_ScopedBody):
    text: str | None = None
    data: str | None = None  # Mem0 v1's name for text
    reason: str | None = None


class SearchBody(_ScopedBody):
    query: str
    filters: dict[str, Any] | None = None
    top_k: int | None = None
    limit: int | None = None  # Mem0 v1's name for top_k
    mode: str | None = None  # ours: "similar" = capture's candidate lookup


class ServerUnreachableError(BackendError):
    """No connection could be made to the memory server (down, wrong address, firewall)."""


class ServerRefusedError(BackendError):
    """The server refused the token: ``status`` 401 (missing, wrong, revoked) or 403; ``detail``: its text."""

    def __init__(self, message: str, status: int, detail: str) -> None:
        super().__init__(message)
        self.status, self.detail = status, detail


def _iso(value: Any, keep_offset: bool = False) -> str | None:
    """A wire time in our form: UTC, or with ``keep_offset`` (``observed_at``) the offset the server sent."""
    parsed = parse_iso(value) if isinstance(value, str) else None
    if not parsed:
        return None
    return to_iso_keep_offset(parsed) if keep_offset else to_iso(parsed)


def item_to_memory(item: dict[str, Any]) -> SemanticMemory:
    """A Mem0 (or pi-memory server) result item as a :class:`SemanticMemory`. Raises ``ValueError`` when the
    item has no id, no text or no scope. ``hash`` is recomputed with our normalisation (Mem0's is MD5)."""
    memory_id = item.get("id")
    text = item.get("memory") if item.get("memory") is not None else item.get("text")
    if not memory_id or not isinstance(text, str):
        raise ValueError("the server returned an item without id or memory text")
    scope = scope_from_wire(item.get("user_id"), item.get("agent_id"), item.get("run_id"))
    created = _iso(item.get("created_at")) or now_iso()
    status = item.get("status") if item.get("status") in ("active", "superseded", "deleted") else "active"
    source = item.get("source") if isinstance(item.get("source"), dict) else {}
    metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    return SemanticMemory(
        id=str(memory_id), text=text, user_id=scope.user_id, agent_id=scope.agent_id,
        project_id=scope.project_id, created_at=created, updated_at=_iso(item.get("updated_at")) or created,
        observed_at=_iso(item.get("observed_at"), keep_offset=True), status=status,
        superseded_by=item.get("superseded_by") or None, superseded_at=_iso(item.get("superseded_at")),
        source=MemorySource.model_validate(source), metadata=metadata,
    )


def row_to_history(row: dict[str, Any], memory_id: str) -> HistoryEvent | None:
    """A Mem0 history row as a :class:`HistoryEvent` (``None`` for an event kind we do not know)."""
    event = str(row.get("event") or "").upper()
    if event not in _EVENTS:
        return None
    return HistoryEvent(
        memory_id=str(row.get("memory_id") or memory_id), event=event,  # type: ignore[arg-type]
        old_text=row.get("old_memory"), new_text=row.get("new_memory"),
        at=_iso(row.get("created_at")) or _iso(row.get("updated_at")) or now_iso(),
        reason=row.get("reason"), related_id=row.get("related_id"),
    )


def _results(data: Any) -> list[dict[str, Any]]:
    """The result list of a Mem0 answer: ``{"results": [...]}`` (v1.1+) or a bare list (older servers)."""
    items = data.get("results") if isinstance(data, dict) else data
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _error_text(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:300].strip() or response.reason_phrase
    if isinstance(data, dict):
        detail = data.get("error") or data.get("detail") or data.get("message")
        if detail:
            return str(detail)[:500]
    return str(data)[:300]


class RestBackend:
    """A :class:`~pi_memory.semantic.backend.SemanticBackend` over HTTP (see the module docstring).

    ``base_url``: ``http(s)://host:port`` of the server. ``token``: bearer token (default
    ``$PI_MEMORY_SERVER_TOKEN``; ``None`` sends none, for a Mem0 server without auth). ``timeout``: seconds per
    request. ``transport``: an ``httpx`` transport (tests).
    """

    name = "self-hosted"

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 10, *,
                 composite_user_id: bool = False, connect_retries: int = CONNECT_RETRIES,
                 transport: httpx.BaseTransport | None = None) -> None:
        url = (base_url or "").strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"the memory server URL (settings \"backend\": {{\"baseUrl\": ...}}) must start with "
                             f"http:// or https://, not {base_url!r} (e.g. http://127.0.0.1:8765)")
        if timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        self.base_url = url
        self.composite_user_id = composite_user_id
        self.connect_retries = max(0, int(connect_retries))
        token = token if token is not None else os.environ.get(TOKEN_ENV)
        headers = {"Accept": "application/json", "User-Agent": "pi-memory-rest-client"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
            headers["X-API-Key"] = token  # Mem0's v2 server reads this header
        timeouts = httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_S))
        self._http = httpx.Client(base_url=url, timeout=timeouts, headers=headers, transport=transport,
                                  follow_redirects=False)
        self._timeout = timeout
        self._scope_checked: bool | None = None

    # --- plumbing -------------------------------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RestBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, method: str, path: str, *, params: dict[str, Any] | None = None,
              json: Any = None) -> httpx.Response:
        last: Exception | None = None
        for attempt in range(self.connect_retries + 1):
            try:
                return self._http.request(method, path, params=params, json=json)
            except httpx.ConnectError as exc:  # refused / no route / DNS: fails fast, worth a retry
                last = exc
                if attempt < self.connect_retries:
                    time.sleep(RETRY_BACKOFF_S[min(attempt, len(RETRY_BACKOFF_S) - 1)])
            except httpx.ConnectTimeout as exc:  # already waited the connect timeout: do not wait again
                last = exc
                break
            except httpx.TimeoutException as exc:
                raise BackendError(f"the memory server at {self.base_url} did not answer {method} {path} within "
                                   f"{self._timeout:g} s; it may be overloaded -- retry, or raise the timeout") from exc
            except httpx.HTTPError as exc:
                raise BackendError(f"talking to the memory server at {self.base_url} failed: {exc}") from exc
        raise ServerUnreachableError(
            f"the memory server at {self.base_url} is not reachable ({type(last).__name__}: {last}); start it "
            "with `pi-memory serve` or switch the semantic backend to embedded") from last

    def _call(self, method: str, path: str, *, params: dict[str, Any] | None = None, json: Any = None,
              missing_ok: bool = False) -> Any:
        """Send and decode. ``missing_ok``: 404 gives ``None`` instead of an error."""
        response = self._send(method, path, params=params, json=json)
        if response.status_code == 404 and missing_ok:
            return None
        if response.status_code in (401, 403):
            detail = _error_text(response)
            raise ServerRefusedError(f"the memory server at {self.base_url} refused the request "
                                     f"({response.status_code}: {detail}); give the client the server's token "
                                     f"(settings, or ${TOKEN_ENV})", response.status_code, detail)
        if response.status_code >= 400:
            raise BackendError(f"the memory server at {self.base_url} answered {method} {path} with "
                               f"{response.status_code}: {_error_text(response)}")
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise BackendError(f"the memory server at {self.base_url} sent a reply that is not JSON for "
                               f"{method} {path}; is that URL a pi-memory or Mem0 server?") from exc

    def _ids(self, scope: Scope) -> dict[str, str]:
        return scope_to_wire(scope, composite_user_id=self.composite_user_id)

    @staticmethod
    def _path(memory_id: str) -> str:
        return "/memories/" + quote(str(memory_id), safe="")

    def server_checks_scope(self) -> bool:
        """True when the server says it checks scope on per-id routes (``pi-memory serve`` does; Mem0 not)."""
        if self._scope_checked is None:
            response = self._send("GET", "/health")
            try:
                data = response.json() if response.status_code == 200 else {}
            except ValueError:
                data = {}
            self._scope_checked = isinstance(data, dict) and data.get("scope_checked") is True
        return self._scope_checked

    def whoami(self) -> dict[str, Any] | None:
        """``GET /whoami`` (``user_id``, ``admin``, ``token_id``); ``None`` from a server without it (Mem0)."""
        data = self._call("GET", "/whoami", missing_ok=True)
        return data if isinstance(data, dict) else None

    def _own(self, item: dict[str, Any], scope: Scope) -> SemanticMemory | None:
        """The item as a memory if it is exactly in ``scope``; ``None`` for another scope's or a broken item."""
        try:
            mem = item_to_memory(item)
        except ValueError:
            return None
        return mem if mem.scope == scope else None

    # --- SemanticBackend ------------------------------------------------------------------------------------
    def add(self, text: str, *, scope: Scope, source: dict[str, Any] | None = None,
            metadata: dict[str, Any] | None = None, observed_at: str | None = None) -> SemanticMemory:
        cleaned = safety.redact(text if isinstance(text, str) else "").strip()
        if not cleaned:
            raise ValueError("memory text is empty")
        body: dict[str, Any] = {
            "messages": [{"role": "user", "content": cleaned}], **self._ids(scope), "infer": False,
            "metadata": clean_metadata(metadata, IDENTITY_KEYS),
        }
        if source:
            body["source"] = clean_source(source).model_dump(exclude_none=True)
        if observed_at:
            body["observed_at"] = observed_at
        results = _results(self._call("POST", "/memories", json=body))
        if not results or not results[0].get("id"):
            raise BackendError(f"the memory server at {self.base_url} stored nothing for this add (empty result)")
        first = results[0]
        mem = self._own(first, scope)
        if mem is None and "user_id" not in first:  # Mem0's add answers {id, memory, event} only
            fetched = self._call("GET", self._path(first["id"]), params=self._ids(scope), missing_ok=True)
            mem = self._own(fetched, scope) if isinstance(fetched, dict) else None
            if mem is None:
                mem = SemanticMemory(id=str(first["id"]), text=str(first.get("memory") or cleaned),
                                     user_id=scope.user_id, agent_id=scope.agent_id, project_id=scope.project_id,
                                     observed_at=observed_at, source=MemorySource.model_validate(source or {}))
        if mem is None:
            raise BackendError(f"the memory server at {self.base_url} filed the memory under another scope; "
                               "refusing to use it (check the server version)")
        return mem

    def _search(self, query: str, scope: Scope, top_k: int, mode: str | None) -> list[SemanticHit]:
        if top_k < 1:
            return []
        query = safety.redact(query or "").strip()
        if not query:
            return []
        fetch = min(MAX_FETCH, top_k if self.server_checks_scope() else top_k * 3)  # clamped: never a 400
        body: dict[str, Any] = {"query": query, "filters": self._ids(scope), "top_k": fetch, "limit": fetch}
        if mode:
            body["mode"] = mode
        hits = []
        for item in _results(self._call("POST", "/search", json=body)):
            mem = self._own(item, scope)
            if mem is not None and mem.status == "active":
                score = item.get("score")
                hits.append(SemanticHit(memory=mem, score=float(score) if isinstance(score, int | float) else 0.0,
                                        details=_details(item.get("score_details"))))
        return hits[:top_k]

    def search(self, query: str, *, scope: Scope, top_k: int = 5) -> list[SemanticHit]:
        return self._search(query, scope, top_k, None)

    def similar(self, text: str, *, scope: Scope, top_k: int = 5) -> list[SemanticHit]:
        return self._search(text, scope, top_k, "similar")

    def get(self, memory_id: str, *, scope: Scope) -> SemanticMemory | None:
        if not str(memory_id or "").strip():
            return None
        data = self._call("GET", self._path(memory_id), params=self._ids(scope), missing_ok=True)
        return self._own(data, scope) if isinstance(data, dict) else None

    def get_all(self, *, scope: Scope, limit: int = 100, include_superseded: bool = False) -> list[SemanticMemory]:
        if limit < 1:
            return []
        fetch = min(limit, MAX_LIST)
        params: dict[str, Any] = {**self._ids(scope), "limit": fetch, "top_k": fetch}
        if include_superseded:
            params["include_superseded"] = "true"
        mems = [m for i in _results(self._call("GET", "/memories", params=params))
                if (m := self._own(i, scope)) is not None and (include_superseded or m.status == "active")]
        mems.sort(key=lambda m: m.created_at, reverse=True)
        return mems[:limit]

    def _precheck(self, memory_id: str, scope: Scope) -> SemanticMemory | None:
        """On a server that does not check scope: the memory if it is the caller's (else ``None``)."""
        return self.get(memory_id, scope=scope)

    def delete(self, memory_id: str, *, scope: Scope, reason: str | None = None) -> bool:
        if not self.server_checks_scope():
            mem = self._precheck(memory_id, scope)
            if mem is None or mem.status != "active":
                return False
        params: dict[str, Any] = dict(self._ids(scope))
        if clean_reason(reason):
            params["reason"] = clean_reason(reason)
        return self._call("DELETE", self._path(memory_id), params=params, missing_ok=True) is not None

    def update(self, memory_id: str, text: str, *, scope: Scope, reason: str | None = None) -> SemanticMemory:
        cleaned = safety.redact(text if isinstance(text, str) else "").strip()
        if not cleaned:
            raise ValueError("memory text is empty")
        not_found = MemoryNotFoundError(f"No active memory {memory_id!r} in scope {scope.key}.")
        if not self.server_checks_scope():
            mem = self._precheck(memory_id, scope)
            if mem is None or mem.status != "active":
                raise not_found
        body: dict[str, Any] = {"text": cleaned, **self._ids(scope)}
        if clean_reason(reason):
            body["reason"] = clean_reason(reason)
        data = self._call("PUT", self._path(memory_id), params=self._ids(scope), json=body, missing_ok=True)
        if data is None:
            raise not_found
        if isinstance(data, dict) and isinstance(data.get("result"), dict):
            new = self._own(data["result"], scope)
        else:  # Mem0 edits in place and answers {"message": ...}
            new = self.get(memory_id, scope=scope)
        if new is None:
            raise BackendError(f"the memory server at {self.base_url} accepted the update of {memory_id!r} but the "
                               "result cannot be read back in this scope")
        return new

    def history(self, memory_id: str, *, scope: Scope) -> list[HistoryEvent]:
        if not str(memory_id or "").strip():
            return []
        if not self.server_checks_scope() and self._precheck(memory_id, scope) is None:
            return []
        data = self._call("GET", self._path(memory_id) + "/history", params=self._ids(scope), missing_ok=True)
        events = [row_to_history(r, memory_id) for r in _results(data)]
        out = [e for e in events if e is not None]
        out.sort(key=lambda e: e.at)
        return out
