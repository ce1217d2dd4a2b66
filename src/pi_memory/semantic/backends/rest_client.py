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

The wire format both ends share is in :mod:`.rest_wire` (re-exported here).
"""

from __future__ import annotations

import os
import time
from typing import Any
from urllib.parse import quote

import httpx

from pi_memory import safety
from pi_memory.safety.urls import redact_url
from pi_memory.semantic.backend import BackendDownError, BackendError, MemoryChangedError, MemoryNotFoundError
from pi_memory.semantic.backends import rest_memo
from pi_memory.semantic.backends.rest_wire import (  # noqa: F401  (re-exported: the wire format's old home)
    IDENTITY_KEYS,
    PROJECT_MARK,
    AddBody,
    Message,
    SearchBody,
    UpdateBody,
    history_to_row,
    item_to_memory,
    memory_to_item,
    pretty_errors,
    row_to_history,
    scope_from_wire,
    scope_to_wire,
    score_details,
)
from pi_memory.semantic.models import (
    HistoryEvent,
    MemorySource,
    Scope,
    SemanticHit,
    SemanticMemory,
)
from pi_memory.semantic.sanitize import clean_metadata, clean_reason, clean_source

__all__ = [
    "IDENTITY_KEYS", "TOKEN_ENV", "AddBody", "Message", "RestBackend", "SearchBody", "ServerRefusedError", "ServerTimeoutError",
    "ServerUnavailableError", "ServerUnreachableError",
    "UpdateBody", "history_to_row", "item_to_memory", "memory_to_item", "pretty_errors", "row_to_history",
    "scope_from_wire", "scope_to_wire",
]

TOKEN_ENV = "PI_MEMORY_SERVER_TOKEN"

CONNECT_RETRIES = 2
CONNECT_TIMEOUT_S = 3.0
DOWN_WINDOW_S = 30.0  # a server found not answering is not asked again for this long (each call would wait again)
WHOAMI_WAIT_S = 1.0  # asked at a start when the settings name no user: a server that is up answers in ms
RETRY_BACKOFF_S = (0.05, 0.2)
MAX_FETCH = 100  # results per search request: the self-hosted server's cap (rest_handlers.MAX_TOP_K)
MAX_LIST = 1000  # memories per list request: the self-hosted server's cap (rest_handlers.MAX_LIST)


class ServerUnreachableError(BackendDownError):
    """No connection could be made to the memory server (down, wrong address, firewall)."""


class ServerTimeoutError(BackendDownError):
    """The memory server took the connection but did not answer within the request's time (hung, overloaded)."""


class ServerUnavailableError(BackendDownError):
    """The memory server answered 502, 503 or 504: it runs but cannot serve memories now (its database is down)."""


class ServerRefusedError(BackendError):
    """The server refused the token: ``status`` 401 (missing, wrong, revoked) or 403; ``detail``: its text."""

    def __init__(self, message: str, status: int, detail: str) -> None:
        super().__init__(message)
        self.status, self.detail = status, detail


def _results(data: Any) -> list[dict[str, Any]]:
    """The result list of a Mem0 answer: ``{"results": [...]}`` (v1.1+) or a bare list (older servers)."""
    items = data.get("results") if isinstance(data, dict) else data
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _json_object(response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


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
                 transport: httpx.BaseTransport | None = None, down_window: float = DOWN_WINDOW_S) -> None:
        url = (base_url or "").strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"the memory server URL (settings \"backend\": {{\"baseUrl\": ...}}) must start with "
                             f"http:// or https://, not {redact_url(base_url or '')!r} (e.g. http://127.0.0.1:8765)")
        if timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        self.base_url = url
        self.shown_url = redact_url(url)  # in messages: never the credentials of the address
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
        self.down_window = down_window  # a server found down is remembered for the process (rest_memo)
        self._token_key = rest_memo.token_key(url, token)  # whose the token is, kept under a digest only

    # --- plumbing -------------------------------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RestBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, method: str, path: str, *, params: dict[str, Any] | None = None,
              json: Any = None) -> httpx.Response:
        self.raise_if_down()
        try:
            response = self._request(method, path, params=params, json=json)
        except (ServerUnreachableError, ServerTimeoutError) as exc:
            kind = "timeout" if isinstance(exc, ServerTimeoutError) else "unreachable"
            rest_memo.mark_down(self.base_url, self.down_window, kind, str(exc))
            raise
        rest_memo.mark_up(self.base_url)
        return response

    def raise_if_down(self) -> None:
        """Raise the error the server gave when this process (or a hook process before it, :mod:`.rest_memo`)
        found it not answering less than ``down_window`` seconds ago: it is not asked again meanwhile."""
        down = rest_memo.down(self.base_url)
        if down is not None:
            left, kind, text = down
            raise (ServerTimeoutError if kind == "timeout" else ServerUnreachableError)(
                f"{text} (not asked again for {max(left, 1):.0f} s)")

    def limit_wait(self, seconds: float) -> None:
        """Wait at most ``seconds`` for each request from now on (never longer than the settings' timeout): a
        caller with a deadline of its own (a hook's time ceiling) gets a server that does not answer as
        :class:`ServerTimeoutError` in time, and so remembers it as down."""
        seconds = max(0.05, round(min(float(seconds), self._timeout), 2))
        self._timeout = seconds
        self._http.timeout = httpx.Timeout(seconds, connect=min(seconds, CONNECT_TIMEOUT_S))

    def _request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
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
                raise ServerTimeoutError(f"the memory server at {self.shown_url} did not answer {method} {path} within "
                                   f"{self._timeout:g} s; it may be overloaded -- retry, or raise the timeout") from exc
            except httpx.HTTPError as exc:
                raise BackendError(f"talking to the memory server at {self.shown_url} failed: {exc}") from exc
        raise ServerUnreachableError(
            f"the memory server at {self.shown_url} is not reachable ({type(last).__name__}: {last}); start it "
            "with `pi-memory serve` or switch the semantic backend to embedded") from last

    def _call(self, method: str, path: str, *, params: dict[str, Any] | None = None, json: Any = None,
              missing_ok: bool = False) -> Any:
        """Send and decode. ``missing_ok``: 404 gives ``None`` instead of an error."""
        response = self._send(method, path, params=params, json=json)
        if response.status_code == 404 and missing_ok:
            return None
        if response.status_code == 409 and missing_ok:  # our server: the memory was superseded or deleted meanwhile
            data = _json_object(response)
            if data.get("memory_status") in ("superseded", "deleted") and data.get("id"):
                raise MemoryChangedError(str(data["id"]), str(data["memory_status"]), data.get("superseded_by") or None)
        if response.status_code in (401, 403):
            detail = _error_text(response)
            fix = ("" if response.status_code == 403 else  # a 403's text says what to change (rest_handlers)
                   f"; give the client a token of that server (settings' \"apiKey\", or ${TOKEN_ENV})")
            raise ServerRefusedError(f"the memory server at {self.shown_url} refused the request "
                                     f"({response.status_code}: {detail}){fix}", response.status_code, detail)
        if response.status_code in (502, 503, 504):
            raise ServerUnavailableError(f"the memory server at {self.shown_url} answered {method} {path} with "
                                         f"{response.status_code}: {_error_text(response)}")
        if response.status_code >= 400:
            raise BackendError(f"the memory server at {self.shown_url} answered {method} {path} with "
                               f"{response.status_code}: {_error_text(response)}")
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise BackendError(f"the memory server at {self.shown_url} sent a reply that is not JSON for "
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
            try:  # a 503: our team server whose database is down, which checks scope all the same
                data = response.json() if response.status_code in (200, 503) else {}
            except ValueError:
                data = {}
            self._scope_checked = isinstance(data, dict) and data.get("scope_checked") is True
        return self._scope_checked

    def whoami(self) -> dict[str, Any] | None:
        """``GET /whoami`` (``user_id``, ``admin``, ``token_id``); ``None`` from a server without it (Mem0)."""
        data = self._call("GET", "/whoami", missing_ok=True)
        return data if isinstance(data, dict) else None

    def token_user(self, wait: float = WHOAMI_WAIT_S) -> str | None:
        """The user this client's token belongs to when it is a user's token (``GET /whoami``, waiting at most
        ``wait`` seconds, no retry), else ``None``: an admin or the shared token, no token, a server without
        that route (Mem0) or one that did not answer (the requests that follow say what is wrong).

        The answer is kept for the process per (server URL, token) (:mod:`.rest_memo`: the token as a digest
        only), so a process that opens the backend again does not ask again; a server in its down window is not
        asked at all."""
        known, user = rest_memo.known_user(self._token_key)
        if known:
            return user
        if rest_memo.down(self.base_url) is not None:
            return None
        try:
            response = self._http.get("/whoami", timeout=httpx.Timeout(min(self._timeout, wait)))
        except httpx.HTTPError:
            return None  # not kept: asked again at the next open
        if response.status_code not in (200, 404, 405):  # 401, 5xx: no answer about the token
            return None
        data = _json_object(response) if response.status_code == 200 else {}
        user = data.get("user_id")
        user = user.strip() if isinstance(user, str) and user.strip() and data.get("admin") is False else None
        rest_memo.keep_user(self._token_key, user)
        return user

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
            raise BackendError(f"the memory server at {self.shown_url} stored nothing for this add (empty result)")
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
            raise BackendError(f"the memory server at {self.shown_url} filed the memory under another scope; "
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
                                        details=score_details(item.get("score_details"))))
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
            raise BackendError(f"the memory server at {self.shown_url} accepted the update of {memory_id!r} but the "
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
