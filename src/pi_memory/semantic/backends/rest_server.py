"""``pi-memory serve``: semantic memory over HTTP, in the request and response shapes of Mem0's OSS server.

Routes (every one but ``GET /health`` needs ``Authorization: Bearer <token>`` when the app has a token;
``X-API-Key: <token>``, which Mem0's v2 server reads, works too):

* ``POST /memories`` ``{messages: [{role, content}] | str  or  text, user_id, agent_id?, run_id?, metadata?,
  infer?, source?, observed_at?}`` → ``{"results": [item + event]}``
* ``GET /memories?user_id&agent_id&run_id&limit&include_superseded`` → ``{"results": [item]}``
* ``GET /memories/{id}?<scope>`` → item; ``PUT /memories/{id}`` ``{text, <scope>, reason?}`` →
  ``{"message", "id", "previous_id", "result": item}``; ``DELETE /memories/{id}?<scope>&reason`` →
  ``{"message", "id"}``; ``GET /memories/{id}/history?<scope>`` → ``[row]`` (a bare list, as Mem0)
* ``POST /search`` ``{query, filters?: {user_id, agent_id, run_id} or top-level ids, top_k?, mode?}`` →
  ``{"results": [item + score]}``; ``mode: "similar"`` is capture's candidate lookup
* ``GET /health`` → ``{"status": "ok", "service": "pi-memory", "scope_checked": true, "infer": bool}``

Items are Mem0's ``{id, memory, hash, created_at, updated_at, user_id, agent_id, run_id, metadata, score?}``
plus ``observed_at``, ``status``, ``superseded_by``, ``superseded_at``, ``source``; history rows are Mem0's
``{id, memory_id, old_memory, new_memory, event, created_at, updated_at, is_deleted}`` plus ``reason`` and
``related_id``. Errors are ``{"error": "<what to fix>"}``.

Scope (what Mem0's server gets wrong: mem0 #6655, #6277, #5121): ``user_id`` (required), ``agent_id`` and
``run_id``, which carries our ``project_id``; the seed's composite ``user_id`` ``"<user>:project:<hash>"``
names the same scope as ``user_id=<user>&run_id=<hash>``. Scopes are exact (``?user_id=alice`` lists the
memories stored with no agent and no project). Ids come only from those fields, never from ``metadata``
(identity keys there are dropped). Per-id routes need the scope and answer an unknown id and another scope's
id with the same 404, so ids cannot be probed.

``PUT`` and a scope that disagrees (decided in review of the semantic-memory issue): an update names its
memory's scope in the query string (as ``GET``/``DELETE``), in the body (as Mem0 clients do), or in both. When
both are given and they name different scopes (compared as scopes, so ``user_id=alice&run_id=p`` equals the
composite ``"alice:project:p"``), the request is a 400 that says an update cannot move a memory to another
scope and what to send instead. That answer depends on the request alone, never on where the id exists, so it
leaks nothing: the same request with an unknown id gets the same 400. A ``PUT`` whose one scope is not the
memory's -- the body alone naming another user, say -- is looked up in that scope and gets the same 404 as
``GET`` and ``DELETE`` would; a 400 that said "this memory belongs to another scope" would tell any token
holder which ids exist where.

Differences from Mem0's OSS server: ``user_id`` is always required and per-id routes need the scope; an unknown
id is 404 (Mem0: ``200 null``); ``PUT`` supersedes (a new id, the old memory kept as ``superseded``) and
``DELETE`` marks deleted, both keeping history; ``hash`` is SHA-256 of the normalised text (Mem0: MD5);
``infer`` defaults to true for ``messages`` (as Mem0) but false for ``text``, and ``infer=true`` needs an
extraction model on the server (else 400); a verbatim add of an exact duplicate answers the stored memory with
event ``NOOP``; ``filters`` take only id equality (anything else is 400, never silently widened), ``threshold``
/ ``rerank`` are ignored (scores are fused ranks); there is no ``/configure``, ``/reset``, bulk ``DELETE
/memories`` or v2 auth route.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from pi_memory.semantic.backend import BackendError, MemoryNotFoundError, SemanticBackend
from pi_memory.semantic.backends.rest_client import (
    IDENTITY_KEYS,
    TOKEN_ENV,
    AddBody,
    Message,
    SearchBody,
    UpdateBody,
    history_to_row,
    memory_to_item,
    pretty_errors,
    scope_from_wire,
)
from pi_memory.semantic.models import Scope, now_iso

__all__ = [
    "DEFAULT_HOST", "DEFAULT_PORT", "TOKEN_ENV", "ServeError", "ServerThread", "check_bind",
    "create_app", "embedded_backend_factory", "is_loopback", "model_capture", "resolve_token", "serve",
]

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
SERVICE = "pi-memory"
API_VERSION = 1
MIN_NETWORK_TOKEN_CHARS = 16
MAX_BODY_BYTES = 1 << 20
MAX_TOP_K = 100
MAX_LIST = 1000
OPEN_PATHS = frozenset({"/health"})

BackendFactory = Callable[[], SemanticBackend]
# capture(backend, messages=[{"role", "content"}], scope=Scope, metadata=dict, source=dict | None,
#         observed_at=str | None, instructions=str | None) -> CaptureReport
CaptureFn = Callable[..., Any]


class ServeError(RuntimeError):
    """The server cannot start as asked (unsafe bind, bad token); the message says what to change."""


class ApiError(Exception):
    """An error answered as ``{"error": message}`` with ``status``."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


# --- the app ----------------------------------------------------------------------------------------------
class _Auth:
    """Pure ASGI middleware: a constant-time bearer-token check on every path outside ``OPEN_PATHS``."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token.encode() if token else None

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if self.token is None or scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v for k, v in scope.get("headers", [])}
        presented = b""
        auth = headers.get("authorization", b"")
        if auth[:7].lower() == b"bearer ":
            presented = auth[7:].strip()
        elif headers.get("x-api-key"):
            presented = headers["x-api-key"].strip()
        if not presented or not hmac.compare_digest(presented, self.token):
            why = "missing" if not presented else "wrong"
            response = JSONResponse(
                {"error": f"unauthorised: the bearer token is {why}. Send 'Authorization: Bearer <token>' with "
                          f"the token the server printed at start (or its --token / ${TOKEN_ENV})."},
                status_code=401, headers={"WWW-Authenticate": 'Bearer realm="pi-memory"'})
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


class _Service:
    """The route handlers over one lazily built backend."""

    def __init__(self, backend_factory: BackendFactory, capture: CaptureFn | None) -> None:
        self._factory = backend_factory
        self._backend: SemanticBackend | None = None
        self._lock = threading.Lock()
        self.capture = capture

    def backend(self) -> SemanticBackend:
        with self._lock:
            if self._backend is None:
                self._backend = self._factory()
            return self._backend

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        def run() -> Any:
            return fn(self.backend(), *args, **kwargs)

        return await run_in_threadpool(run)

    # handlers ------------------------------------------------------------------------------------------
    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok", "service": SERVICE, "api": API_VERSION, "scope_checked": True,
                             "infer": self.capture is not None})

    async def add(self, request: Request) -> Response:
        body = await _body(request, AddBody)
        scope = _scope(body.user_id, body.agent_id, body.run_id)
        if body.memory_type:
            raise ApiError(400, f"memory_type {body.memory_type!r} is not supported by this server; leave it out")
        messages = _messages(body)
        metadata = _clean_metadata(body.metadata)
        infer = body.infer if body.infer is not None else body.text is None
        if infer:
            return await self._infer(body, messages, scope, metadata)
        texts = [(m.role, m.text().strip()) for m in messages if m.role != "system" and m.text().strip()]
        if not texts:
            raise ApiError(400, "nothing to store: every message is empty or a system message")
        started = now_iso()

        def store(backend: SemanticBackend) -> list[dict[str, Any]]:
            out = []
            for role, text in texts:
                extra = {} if role == "user" else {"role": role}
                mem = backend.add(text, scope=scope, source=body.source, observed_at=body.observed_at,
                                  metadata={**metadata, **extra})
                out.append({**memory_to_item(mem), "event": "NOOP" if mem.created_at < started else "ADD"})
            return out

        return JSONResponse({"results": await self.call(store)})

    async def _infer(self, body: AddBody, messages: list[Message], scope: Scope,
                     metadata: dict[str, Any]) -> Response:
        if self.capture is None:
            raise ApiError(400, "infer=true needs an extraction model, and this server has none configured. "
                                "Send \"infer\": false to store the messages verbatim, or configure a model "
                                "(see `pi-memory semantic status`) and restart the server.")
        turn = [{"role": m.role, "content": m.text()} for m in messages if m.role != "system" and m.text().strip()]
        if not turn:
            raise ApiError(400, "nothing to capture: every message is empty or a system message")
        capture = self.capture

        def run(backend: SemanticBackend) -> Any:
            return capture(backend, messages=turn, scope=scope, metadata=metadata, source=body.source,
                           observed_at=body.observed_at, instructions=body.prompt)

        report = await self.call(run)
        results = [{"id": e.id, "memory": e.text, "event": e.event, "previous_memory": e.previous_text,
                    "previous_id": e.previous_id} for e in report.events]
        payload = {"results": results, "capture": report.to_public()}
        if report.status == "error":
            errors = "; ".join(report.errors) or report.message or "unknown error"
            return JSONResponse({"error": f"capture failed: {errors}", **payload}, status_code=502)
        return JSONResponse(payload)

    async def list_all(self, request: Request) -> Response:
        q = request.query_params
        scope = _scope(q.get("user_id"), q.get("agent_id"), q.get("run_id"))
        limit = _int_param(q.get("limit") or q.get("top_k"), "limit", 100, MAX_LIST)
        include = _bool_param(q.get("include_superseded"), "include_superseded")
        mems = await self.call(lambda b: b.get_all(scope=scope, limit=limit, include_superseded=include))
        return JSONResponse({"results": [memory_to_item(m) for m in mems]})

    async def get(self, request: Request) -> Response:
        memory_id, scope = _id_and_scope(request)
        mem = await self.call(lambda b: b.get(memory_id, scope=scope))
        if mem is None:
            raise _not_found(memory_id)
        return JSONResponse(memory_to_item(mem))

    async def update(self, request: Request) -> Response:
        memory_id = request.path_params["memory_id"]
        body = await _body(request, UpdateBody)
        scope = _update_scope(body, request.query_params)
        text = body.text if body.text is not None else body.data
        if text is None or not text.strip():
            raise ApiError(400, "text is required: send {\"text\": \"the corrected fact\"}")
        try:
            new = await self.call(lambda b: b.update(memory_id, text, scope=scope, reason=body.reason))
        except MemoryNotFoundError as exc:
            raise _not_found(memory_id, active=True) from exc
        return JSONResponse({"message": "Memory updated successfully!", "id": new.id, "previous_id": memory_id,
                             "result": memory_to_item(new)})

    async def delete(self, request: Request) -> Response:
        memory_id, scope = _id_and_scope(request)
        reason = request.query_params.get("reason")
        if not await self.call(lambda b: b.delete(memory_id, scope=scope, reason=reason)):
            raise _not_found(memory_id, active=True)
        return JSONResponse({"message": "Memory deleted successfully!", "id": memory_id})

    async def history(self, request: Request) -> Response:
        memory_id, scope = _id_and_scope(request)
        events = await self.call(lambda b: b.history(memory_id, scope=scope))
        if not events:
            raise _not_found(memory_id)
        return JSONResponse([history_to_row(e, i) for i, e in enumerate(events, 1)])

    async def search(self, request: Request) -> Response:
        body = await _body(request, SearchBody)
        ids = {"user_id": body.user_id, "agent_id": body.agent_id, "run_id": body.run_id}
        for key, value in (body.filters or {}).items():
            if key not in ids:
                raise ApiError(400, f"filter {key!r} is not supported: this server filters by user_id, agent_id "
                                    "and run_id equality only")
            if value is not None and not isinstance(value, str):
                raise ApiError(400, f"filter {key!r} must be a plain string id (operators are not supported)")
            if value is not None and ids[key] is not None and ids[key] != value:
                raise ApiError(400, f"{key} is given twice with different values ({ids[key]!r} and {value!r})")
            ids[key] = value if value is not None else ids[key]
        scope = _scope(ids["user_id"], ids["agent_id"], ids["run_id"])
        query = body.query.strip()
        if not query:
            raise ApiError(400, "query is empty")
        top_k = _int_param(body.top_k if body.top_k is not None else body.limit, "top_k", 10, MAX_TOP_K)
        if body.mode not in (None, "search", "similar"):
            raise ApiError(400, f"mode {body.mode!r} is not one of: search, similar")
        similar = body.mode == "similar"
        hits = await self.call(lambda b: (b.similar if similar else b.search)(query, scope=scope, top_k=top_k))
        return JSONResponse({"results": [memory_to_item(h.memory, h) for h in hits]})


async def _body(request: Request, model: type[BaseModel]) -> Any:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise ApiError(413, f"request body is larger than {MAX_BODY_BYTES} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():  # bounded even without a Content-Length (chunked uploads)
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiError(413, f"request body is larger than {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        raise ApiError(400, "the request needs a JSON body")
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise ApiError(400, "invalid request body: " + "; ".join(pretty_errors(exc))) from exc


def _scope(user_id: str | None, agent_id: str | None, run_id: str | None) -> Scope:
    try:
        return scope_from_wire(user_id, agent_id, run_id)
    except ValueError as exc:
        raise ApiError(400, str(exc)) from exc


def _update_scope(body: UpdateBody, query: Any) -> Scope:
    """The scope a ``PUT`` names: the query string's, the body's, or both when they agree (module docstring)."""
    keys = ("user_id", "agent_id", "run_id")
    in_query = {k: query.get(k) for k in keys if query.get(k)}
    in_body = {k: getattr(body, k) for k in keys if getattr(body, k)}
    if not in_query or not in_body:
        return _scope(*((in_query or in_body).get(k) for k in keys))
    from_query, from_body = _scope(*(in_query.get(k) for k in keys)), _scope(*(in_body.get(k) for k in keys))
    if from_query != from_body:
        raise ApiError(400, f"the body names scope {_describe(in_body)} but the query string names "
                            f"{_describe(in_query)}; an update keeps a memory in the scope it was stored in and "
                            "cannot move it. Send the memory's own user_id, agent_id and run_id (in the query "
                            "string, the body, or the same in both); to keep the fact under another scope, add it "
                            "there (POST /memories) and delete this one.")
    return from_query


def _describe(ids: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in ids.items())


def _id_and_scope(request: Request) -> tuple[str, Scope]:
    q = request.query_params
    return request.path_params["memory_id"], _scope(q.get("user_id"), q.get("agent_id"), q.get("run_id"))


def _not_found(memory_id: str, *, active: bool = False) -> ApiError:
    state = "active " if active else ""
    return ApiError(404, f"no {state}memory {memory_id!r} in this scope (check the id and that user_id, agent_id "
                         "and run_id are the ones it was stored with)")


def _messages(body: AddBody) -> list[Message]:
    if body.text is not None and body.messages is not None:
        raise ApiError(400, "send either messages or text, not both")
    if body.text is not None:
        return [Message(role="user", content=body.text)]
    if body.messages is None:
        raise ApiError(400, "messages (or text) is required")
    if isinstance(body.messages, str):
        return [Message(role="user", content=body.messages)]
    return [body.messages] if isinstance(body.messages, Message) else list(body.messages)


def _clean_metadata(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """Caller metadata without identity keys: scope comes only from the explicit id fields (mem0 #6655)."""
    return {k: v for k, v in (metadata or {}).items() if k not in IDENTITY_KEYS}


def _int_param(value: Any, name: str, default: int, maximum: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ApiError(400, f"{name} must be an integer, not {value!r}") from None
    if isinstance(value, bool) or not 1 <= number <= maximum:
        raise ApiError(400, f"{name} must be between 1 and {maximum}, not {value!r}")
    return number


def _bool_param(value: str | None, name: str) -> bool:
    if value is None or value.lower() in ("", "0", "false", "no"):
        return False
    if value.lower() in ("1", "true", "yes"):
        return True
    raise ApiError(400, f"{name} must be true or false, not {value!r}")


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return JSONResponse({"error": exc.message, **exc.extra}, status_code=exc.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = {404: f"no route {request.method} {request.url.path}; see GET /health and the Mem0 routes",
               405: f"{request.method} is not allowed on {request.url.path}"}.get(exc.status_code, str(exc.detail))
    return JSONResponse({"error": message}, status_code=exc.status_code, headers=exc.headers)


def _plain(status: int) -> Callable[[Request, Exception], Any]:
    async def handler(request: Request, exc: Exception) -> Response:
        if status >= 500:
            log.warning("%s %s failed: %s", request.method, request.url.path, exc)
        return JSONResponse({"error": str(exc)}, status_code=status)

    return handler


async def _crash(request: Request, exc: Exception) -> Response:
    log.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"error": f"internal server error ({type(exc).__name__}); see the server log"},
                        status_code=500)


def create_app(backend_factory: BackendFactory, token: str | None, *, capture: CaptureFn | None = None) -> Starlette:
    """The ASGI app. ``backend_factory()`` is called once, on the first request that needs the backend.

    ``token``: the bearer token every route but ``/health`` requires; ``None`` turns auth off (tests, or a
    caller that protects the app otherwise). ``capture``: runs ``infer=true`` adds (see ``CaptureFn``);
    ``None`` makes them a 400.
    """
    service = _Service(backend_factory, capture)
    routes = [
        Route("/health", service.health, methods=["GET"]),
        Route("/memories", service.add, methods=["POST"]),
        Route("/memories", service.list_all, methods=["GET"]),
        Route("/memories/{memory_id}", service.get, methods=["GET"]),
        Route("/memories/{memory_id}", service.update, methods=["PUT"]),
        Route("/memories/{memory_id}", service.delete, methods=["DELETE"]),
        Route("/memories/{memory_id}/history", service.history, methods=["GET"]),
        Route("/search", service.search, methods=["POST"]),
    ]
    handlers: dict[Any, Any] = {ApiError: _api_error, HTTPException: _http_error,
                                MemoryNotFoundError: _plain(404), ValueError: _plain(400), BackendError: _plain(503),
                                Exception: _crash}
    app = Starlette(routes=routes, middleware=[Middleware(_Auth, token=token)], exception_handlers=handlers)
    app.state.service = service
    return app


# --- running it -------------------------------------------------------------------------------------------
def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def resolve_token(token: str | None) -> tuple[str, bool]:
    """``(token, generated)``: ``token`` if given, else ``$PI_MEMORY_SERVER_TOKEN``, else a new random one."""
    for candidate in (token, os.environ.get(TOKEN_ENV)):
        if candidate is not None:
            candidate = candidate.strip()
            if not candidate:
                raise ServeError(f"the server token is empty; pass --token or set ${TOKEN_ENV} to a secret value")
            if any(ord(c) < 33 or ord(c) > 126 for c in candidate):
                raise ServeError("the server token must be printable ASCII without spaces")
            return candidate, False
    return secrets.token_urlsafe(32), True


def check_bind(host: str, token: str, generated: bool) -> None:
    """Refuse to listen beyond this machine without a deliberately chosen, long enough token."""
    if is_loopback(host):
        return
    if generated:
        raise ServeError(f"refusing to listen on {host!r} (reachable from other machines) without a token you chose: "
                         f"pass --token or set ${TOKEN_ENV}, and give the same token to the clients. "
                         f"Or keep the default host {DEFAULT_HOST}.")
    if len(token) < MIN_NETWORK_TOKEN_CHARS:
        raise ServeError(f"refusing to listen on {host!r} with a token of {len(token)} characters; use at least "
                         f"{MIN_NETWORK_TOKEN_CHARS} (e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)")


def embedded_backend_factory(data_dir: Path | str, embedder: dict[str, Any] | None = None) -> BackendFactory:
    """A factory for the default backend: the index database in ``data_dir``; ``embedder``: the settings'
    ``embedder`` block (default: the bundled model)."""

    def build() -> SemanticBackend:
        from pi_memory.embed import get_embedder
        from pi_memory.index.db import open_index
        from pi_memory.semantic.embedded import EmbeddedBackend

        return EmbeddedBackend(open_index(Path(data_dir)), get_embedder(embedder))

    return build


def model_capture(model: Any, custom_instructions: str | None = None) -> CaptureFn:
    """A ``CaptureFn`` running :func:`pi_memory.semantic.capture.capture_turn` with ``model``: the user messages
    of the request are the turn's user text, the others its assistant text. A request's ``prompt`` replaces
    ``custom_instructions``. (The pipeline stores no caller metadata on the facts it writes.)"""
    from pi_memory.semantic.capture import capture_turn

    def capture(backend: SemanticBackend, *, messages: list[dict[str, str]], scope: Scope, metadata: dict[str, Any],
                source: dict[str, Any] | None, observed_at: str | None, instructions: str | None) -> Any:
        user = "\n\n".join(m["content"] for m in messages if m["role"] == "user")
        assistant = "\n\n".join(m["content"] for m in messages if m["role"] != "user")
        return capture_turn(backend, model, user_text=user, assistant_text=assistant, scope=scope,
                            observed_at=observed_at, source=source,
                            custom_instructions=instructions or custom_instructions)

    return capture


class ServerThread:
    """Run an app with uvicorn in a background thread (tests, demos): ``with ServerThread(app) as s: s.url``.

    ``port=0`` picks a free port; ``url`` is known once the context is entered."""

    def __init__(self, app: ASGIApp, host: str = DEFAULT_HOST, port: int = 0, *, startup_timeout: float = 20.0):
        import uvicorn

        self.host = host
        self.port = port
        self._timeout = startup_timeout
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                                    lifespan="off", access_log=False))
        self._thread = threading.Thread(target=self._run, name="pi-memory-server", daemon=True)

    def _run(self) -> None:
        asyncio.run(self.server.serve())

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + self._timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise ServeError(f"the test server did not start on {self.host}:{self.port}")
            time.sleep(0.01)
        sockets = [s for srv in getattr(self.server, "servers", []) for s in srv.sockets]
        if sockets:
            self.port = sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, token: str | None = None,
          data_dir: Path | str | None = None, *, capture: CaptureFn | None = None,
          embedder: dict[str, Any] | None = None, log_level: str = "info",
          announce: Callable[[str], None] | None = None) -> None:
    """Serve the embedded backend of ``data_dir`` (default: the configured data root) until interrupted.

    Raises :class:`ServeError` before binding when the host/token combination is unsafe."""
    import uvicorn

    token, generated = resolve_token(token)
    check_bind(host, token, generated)
    if data_dir is None:
        from pi_memory.config import load_settings

        data_dir = load_settings().data_dir
    data_dir = Path(data_dir).expanduser().resolve()
    try:  # open now, so a broken index or embedder setting stops the start instead of every request
        backend = embedded_backend_factory(data_dir, embedder)()
    except Exception as exc:
        raise ServeError(f"cannot open the semantic memory in {data_dir}: {exc}") from exc
    app = create_app(lambda: backend, token, capture=capture)
    say = announce or (lambda line: print(line, file=sys.stderr, flush=True))
    shown = f"[{host}]" if ":" in host else host
    say(f"pi-memory server: http://{shown}:{port or '<port chosen by the system, see below>'} (data: {data_dir})")
    if generated:
        say(f"token (generated for this run; pass --token or set ${TOKEN_ENV} to keep one): {token}")
    else:
        say("token: the one given with --token / $" + TOKEN_ENV)
    say("clients: semantic backend \"self-hosted\" with this URL and token; stop with Ctrl+C")
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False)
