"""The REST server's ASGI app: routes, bearer-token middleware and the JSON error answers
(:func:`create_app`). What each route takes and answers: :mod:`.rest_server`."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from pi_memory.semantic.backend import BackendError, MemoryNotFoundError
from pi_memory.semantic.backends.rest_client import TOKEN_ENV
from pi_memory.semantic.backends.rest_handlers import BackendFactory, CaptureFn, RestService
from pi_memory.semantic.backends.rest_requests import ApiError, address_problem

log = logging.getLogger("pi_memory.semantic.backends.rest_server")

OPEN_PATHS = frozenset({"/health"})


class _Auth:
    """Pure ASGI middleware: a bearer-token check on every path outside ``OPEN_PATHS``.

    ``token``: the one shared team token (constant-time comparison; it acts as an admin). ``resolve``: per-user
    tokens (:class:`~pi_memory.semantic.backends.team_auth.TokenStore.resolve`), which checks the shared token
    itself. The request's :class:`~pi_memory.semantic.backends.team_auth.Principal` goes to
    ``request.state.principal`` for the handlers' per-user checks."""

    def __init__(self, app: ASGIApp, token: str | None, resolve: Callable[[bytes], Any] | None = None,
                 revoked: Callable[[bytes], Any] | None = None, shared: bool = False) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.resolve = resolve
        self.revoked = revoked  # team_auth.TokenStore.revoked: the record of a revoked token, to say so
        self.shared = shared or self.token is not None  # a shared team token is accepted too (the 401's words)

    def _principal(self, presented: bytes) -> Any:
        if self.resolve is not None:
            principal = self.resolve(presented)
            if principal is not None or self.token is None:
                return principal
        if self.token is not None and hmac.compare_digest(presented, self.token):
            from pi_memory.semantic.backends.team_auth import SHARED, Principal

            return Principal(None, True, SHARED)
        return None

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if (self.token is None and self.resolve is None) or scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            problem = scope["type"] == "http" and address_problem(scope["path"], scope.get("query_string", b""))
            if problem:
                await JSONResponse({"error": problem}, status_code=400)(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v for k, v in scope.get("headers", [])}
        presented = b""
        auth = headers.get("authorization", b"")
        if auth[:7].lower() == b"bearer ":
            presented = auth[7:].strip()
        elif headers.get("x-api-key"):
            presented = headers["x-api-key"].strip()
        principal = None
        if presented:
            try:
                principal = await run_in_threadpool(self._principal, presented)
            except Exception as exc:  # the token table is unreachable: say so instead of "wrong token"
                said = str(exc) if isinstance(exc, BackendError) else f"{exc}. Try again shortly."
                response = JSONResponse({"error": f"cannot check the token now: {said}"}, status_code=503)
                await response(scope, receive, send)
                return
        if principal is None:
            response = JSONResponse({"error": await self._refusal(presented)}, status_code=401,
                                    headers={"WWW-Authenticate": 'Bearer realm="pi-memory"'})
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        problem = address_problem(scope.get("path", ""), scope.get("query_string", b""))
        if problem:
            await JSONResponse({"error": problem}, status_code=400)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _refusal(self, presented: bytes) -> str:
        """The 401's text: the token is missing, revoked (its id and when: a revoked token is no secret to its
        holder), or no token of this server."""
        record = None
        if presented and self.revoked is not None:
            try:
                record = await run_in_threadpool(self.revoked, presented)
            except Exception:  # noqa: BLE001 - the plain answer below still holds
                record = None
        if record is not None:
            return (f"unauthorised: this bearer token (id {record.id}, user {record.user_id!r}) was revoked at "
                    f"{record.revoked_at}. Ask the server's admin for a new one (`pi-memory serve token create "
                    f"--user {record.user_id}`) and put it in the client's settings.")
        if self.resolve is None:
            where = f"the token the server printed at start (or its --token / ${TOKEN_ENV})"
        elif self.shared:
            where = ("your own token (`pi-memory serve token create --user NAME`, made by the server's admin) or the "
                     f"team's shared token this server was started with (its --token, --token-file or ${TOKEN_ENV})")
        else:
            where = ("your own token, which the server's admin makes with `pi-memory serve token create --user "
                     "NAME`; this server takes per-user tokens only")
        why = "missing" if not presented else "wrong: it is no token this server knows"
        return f"unauthorised: the bearer token is {why}. Send 'Authorization: Bearer <token>' with {where}."


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


def create_app(backend_factory: BackendFactory, token: str | None, *, capture: CaptureFn | None = None,
               tokens: Any = None, projects: Any = None) -> Starlette:
    """The ASGI app. ``backend_factory()`` is called once, on the first request that needs the backend.

    ``token``: the bearer token every route but ``/health`` requires; ``None`` turns auth off (tests, or a
    caller that protects the app otherwise). ``capture``: runs ``infer=true`` adds (see ``CaptureFn``);
    ``None`` makes them a 400. ``tokens``: a :class:`~pi_memory.semantic.backends.team_auth.TokenStore` (the
    team server): per-user tokens, each request confined to its token's user, every write audited.
    ``projects``: a :class:`~pi_memory.semantic.backends.team_projects.ProjectRoutes` (the team server's shared
    project stores, ``/projects/{project}/entries``).
    """
    service = RestService(backend_factory, capture, tokens=tokens)
    routes = [
        Route("/health", service.health, methods=["GET"]),
        Route("/whoami", service.whoami, methods=["GET"]),
        Route("/memories", service.add, methods=["POST"]),
        Route("/memories", service.list_all, methods=["GET"]),
        Route("/memories/{memory_id}", service.get, methods=["GET"]),
        Route("/memories/{memory_id}", service.update, methods=["PUT"]),
        Route("/memories/{memory_id}", service.delete, methods=["DELETE"]),
        Route("/memories/{memory_id}/history", service.history, methods=["GET"]),
        Route("/search", service.search, methods=["POST"]),
    ]
    if projects is not None:
        routes += [Route("/projects/{project}/entries", projects.read, methods=["GET"]),
                   Route("/projects/{project}/entries", projects.write, methods=["POST"])]
    handlers: dict[Any, Any] = {ApiError: _api_error, HTTPException: _http_error,
                                MemoryNotFoundError: _plain(404), ValueError: _plain(400), BackendError: _plain(503),
                                Exception: _crash}
    auth = Middleware(_Auth, token=token, resolve=tokens.resolve if tokens is not None else None,
                      revoked=tokens.revoked if tokens is not None else None,
                      shared=tokens is not None and tokens.shared is not None)
    app = Starlette(routes=routes, middleware=[auth], exception_handlers=handlers)
    app.state.service = service
    return app
