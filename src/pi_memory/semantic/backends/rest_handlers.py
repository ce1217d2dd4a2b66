"""The route handlers of the REST server (:class:`RestService`): each reads its request with
:mod:`.rest_requests`, runs the backend call on a worker thread and answers Mem0's shapes
(:func:`~pi_memory.semantic.backends.rest_client.memory_to_item`). Routes and errors: :mod:`.rest_server`."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pi_memory.semantic.backend import MemoryChangedError, MemoryNotFoundError, SemanticBackend
from pi_memory.semantic.backends.rest_requests import (
    ApiError,
    bool_param,
    check_new_scope,
    clean_metadata,
    int_param,
    messages_of,
    not_found,
    read_body,
    scope_of,
    update_scope,
)
from pi_memory.semantic.backends.rest_wire import (
    AddBody,
    Message,
    SearchBody,
    UpdateBody,
    history_to_row,
    memory_to_item,
)
from pi_memory.semantic.embedded import clean_text
from pi_memory.semantic.models import Scope, now_iso
from pi_memory.semantic.sanitize import check_observed_at, clean_reason, clean_source

SERVICE = "pi-memory"
API_VERSION = 1
MAX_TOP_K = 100  # search results per request
MAX_LIST = 1000  # memories per GET /memories
HEALTH_WAIT_S = 2.0  # GET /health's wait for the team database's SELECT 1: a database that is up answers in ms

BackendFactory = Callable[[], SemanticBackend]
# capture(backend, messages=[{"role", "content"}], scope=Scope, metadata=dict, source=dict | None,
#         observed_at=str | None, instructions=str | None) -> CaptureReport
CaptureFn = Callable[..., Any]


class RestService:
    """The route handlers over one lazily built backend (built by the factory on first use, then shared)."""

    def __init__(self, backend_factory: BackendFactory, capture: CaptureFn | None, tokens: Any = None) -> None:
        self._factory = backend_factory
        self._tokens = tokens  # team_auth.TokenStore: every write audited (in its own transaction when it can be)
        self._backend: SemanticBackend | None = None
        self._lock = threading.Lock()
        self.capture = capture
        self._ping: asyncio.Future | None = None  # the database check GET /health is waiting for

    def backend(self) -> SemanticBackend:
        with self._lock:
            if self._backend is None:
                self._backend = self._factory()
                if self._tokens is not None and hasattr(self._backend, "on_history"):  # PostgreSQL
                    self._backend.on_history = self._tokens.on_history
            return self._backend

    def _audited_by_backend(self) -> bool:
        return self._tokens is not None and getattr(self.backend(), "on_history", None) is not None

    def scope(self, request: Request, user_id: str | None, agent_id: str | None, run_id: str | None, *,
              new: bool = False) -> Scope:
        """The scope a request names, checked against its token: a user's token acts only for that user (a
        request naming no user_id acts for the token's user); an admin or the shared token for anyone.
        ``new`` (an add): its ids must be plain names (:func:`check_new_scope`), checked first, so a client whose
        configured id is a credential is told that, not that its token belongs to someone else (a start may
        have rewritten the token's user id: :mod:`.pg_clean`)."""
        principal = getattr(request.state, "principal", None)
        if principal is not None and not principal.admin and not (user_id or "").strip():
            user_id = principal.user_id
        scope = scope_of(user_id, agent_id, run_id)
        return self.authorise(request, check_new_scope(scope) if new else scope)

    @staticmethod
    def authorise(request: Request, scope: Scope) -> Scope:
        principal = getattr(request.state, "principal", None)
        if principal is not None and not principal.may_act_for(scope.user_id):
            raise ApiError(403, f"this token belongs to user {principal.user_id!r} and may not act for user "
                                f"{scope.user_id!r}. If the token is yours, set \"userId\": "
                                f"\"{principal.user_id}\" in the client's pi-memory settings (or leave "
                                "\"userId\" out: pi-memory then acts as the token's user); to act for the other "
                                "user, use that user's own token or an admin token")
        return scope

    async def audit(self, request: Request, action: str, scope: Scope, memory_id: str | None = None,
                    **detail: Any) -> None:
        """The audit row of a write, after it, for a backend that cannot add it inside the write's own
        transaction (PostgreSQL does: :meth:`write`)."""
        principal = getattr(request.state, "principal", None)
        if self._tokens is not None and principal is not None and not self._audited_by_backend():
            await run_in_threadpool(self._tokens.audit, principal, action, scope.key, memory_id, detail or None)

    async def write(self, request: Request, fn: Callable[[SemanticBackend], Any], prefix: str = "") -> Any:
        """``fn(backend)`` run as the request's principal, so the backend's writes are audited inside their own
        transactions (``prefix``: ``"capture-"`` for a capture's writes)."""
        principal = getattr(request.state, "principal", None)

        def run() -> Any:
            if self._tokens is None or principal is None:
                return fn(self.backend())
            with self._tokens.writing_as(principal, prefix):
                return fn(self.backend())

        return await run_in_threadpool(run)

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        def run() -> Any:
            return fn(self.backend(), *args, **kwargs)

        return await run_in_threadpool(run)

    def id_and_scope(self, request: Request) -> tuple[str, Scope]:
        q = request.query_params
        return request.path_params["memory_id"], self.scope(request, q.get("user_id"), q.get("agent_id"),
                                                            q.get("run_id"))

    # handlers ------------------------------------------------------------------------------------------
    async def health(self, request: Request) -> Response:
        """``ok``, or for a team server whose database does not answer a ``SELECT 1`` within
        :data:`HEALTH_WAIT_S` a 503 whose ``error`` says so (a load balancer then stops sending requests)."""
        body = {"status": "ok", "service": SERVICE, "api": API_VERSION, "scope_checked": True,
                "infer": self.capture is not None}
        problem = await self._database_problem()
        if problem:
            return JSONResponse({**body, "status": "unavailable", "error": problem}, status_code=503)
        return JSONResponse(body)

    async def _database_problem(self) -> str | None:
        """What is wrong with the team database (one check at a time, shared by concurrent health requests),
        or ``None``; the embedded store has nothing to check here."""
        pool = getattr(self._tokens, "pool", None)
        if pool is None:
            return None
        from pi_memory.semantic.backends.pg_connect import ping

        if self._ping is None or self._ping.done():
            self._ping = asyncio.ensure_future(run_in_threadpool(ping, pool))
        try:
            return await asyncio.wait_for(asyncio.shield(self._ping), HEALTH_WAIT_S)
        except TimeoutError:
            return (f"the team database did not answer a check (SELECT 1) within {HEALTH_WAIT_S:g} s (paused, "
                    "overloaded or its host unreachable); the server cannot read or write memories until it "
                    "answers. Check the PostgreSQL server.")

    async def whoami(self, request: Request) -> Response:
        """Whom the request's token acts for: ``{"user_id", "admin", "token_id"}`` (``user_id`` ``null`` for the
        shared team token, and everything ``null`` with ``"auth": false`` when the server checks no token). It
        never echoes the token. The memory inspector names the server's user with it."""
        principal = getattr(request.state, "principal", None)
        if principal is None:
            return JSONResponse({"user_id": None, "admin": True, "token_id": None, "auth": False})
        return JSONResponse({"user_id": principal.user_id, "admin": principal.admin,
                             "token_id": principal.token_id, "auth": True})

    async def add(self, request: Request) -> Response:
        body = await read_body(request, AddBody)
        scope = self.scope(request, body.user_id, body.agent_id, body.run_id, new=True)
        if body.memory_type:
            raise ApiError(400, f"memory_type {body.memory_type!r} is not supported by this server; leave it out")
        messages = messages_of(body)
        try:
            metadata = clean_metadata(body.metadata)
            source = clean_source(body.source).model_dump(exclude_none=True) if body.source else None
        except ValueError as exc:  # a control character in a key or value: the field is named
            raise ApiError(400, f"invalid request body: {exc}") from exc
        try:
            body.observed_at = check_observed_at(body.observed_at)
        except ValueError as exc:
            raise ApiError(400, str(exc)) from exc
        infer = body.infer if body.infer is not None else body.text is None
        if infer:
            return await self._infer(request, body, messages, scope, metadata, source)
        texts = [(m.role, m.text().strip()) for m in messages if m.role != "system" and m.text().strip()]
        if not texts:
            raise ApiError(400, "nothing to store: every message is empty or a system message")
        for i, (_role, text) in enumerate(texts, 1):  # all or nothing: check every message before storing any
            try:
                clean_text(text)
            except ValueError as exc:
                where = f"message {i} of {len(texts)}: " if len(texts) > 1 else ""
                raise ApiError(400, f"{where}{exc} Nothing was stored from this request; fix or leave out that "
                                    "message and send the request again.") from exc
        started = now_iso()

        def store(backend: SemanticBackend) -> list[dict[str, Any]]:
            out = []
            for role, text in texts:
                extra = {} if role == "user" else {"role": role}
                mem = backend.add(text, scope=scope, source=source, observed_at=body.observed_at,
                                  metadata={**metadata, **extra})
                out.append({**memory_to_item(mem), "event": "NOOP" if mem.created_at < started else "ADD"})
            return out

        results = await self.write(request, store)
        for item in results:
            if item["event"] == "ADD":
                await self.audit(request, "add", scope, item["id"])
        return JSONResponse({"results": results})

    async def _infer(self, request: Request, body: AddBody, messages: list[Message], scope: Scope, metadata: dict[str, Any],
                     source: dict[str, Any] | None) -> Response:
        if self.capture is None:
            raise ApiError(400, "infer=true needs an extraction model, and this server has none configured. "
                                "Send \"infer\": false to store the messages verbatim, or configure a model "
                                "(see `pi-memory semantic status`) and restart the server.")
        turn = [{"role": m.role, "content": m.text()} for m in messages if m.role != "system" and m.text().strip()]
        if not turn:
            raise ApiError(400, "nothing to capture: every message is empty or a system message")
        capture = self.capture

        def run(backend: SemanticBackend) -> Any:
            return capture(backend, messages=turn, scope=scope, metadata=metadata, source=source,
                           observed_at=body.observed_at, instructions=body.prompt)

        report = await self.write(request, run, "capture-")
        for event in report.events:
            if event.event in ("ADD", "UPDATE", "DELETE"):
                await self.audit(request, "capture-" + event.event.lower(), scope, event.id)
        results = [{"id": e.id, "memory": e.text, "event": e.event, "previous_memory": e.previous_text,
                    "previous_id": e.previous_id} for e in report.events]
        payload = {"results": results, "capture": report.to_public()}
        if report.status == "error":
            errors = "; ".join(report.errors) or report.message or "unknown error"
            return JSONResponse({"error": f"capture failed: {errors}", **payload}, status_code=502)
        return JSONResponse(payload)

    async def list_all(self, request: Request) -> Response:
        q = request.query_params
        scope = self.scope(request, q.get("user_id"), q.get("agent_id"), q.get("run_id"))
        limit = int_param(q.get("limit") or q.get("top_k"), "limit", 100, MAX_LIST)
        include = bool_param(q.get("include_superseded"), "include_superseded")
        mems = await self.call(lambda b: b.get_all(scope=scope, limit=limit, include_superseded=include))
        return JSONResponse({"results": [memory_to_item(m) for m in mems]})

    async def get(self, request: Request) -> Response:
        memory_id, scope = self.id_and_scope(request)
        mem = await self.call(lambda b: b.get(memory_id, scope=scope))
        if mem is None:
            raise not_found(memory_id)
        return JSONResponse(memory_to_item(mem))

    async def update(self, request: Request) -> Response:
        memory_id = request.path_params["memory_id"]
        body = await read_body(request, UpdateBody)
        scope = self.authorise(request, update_scope(body, request.query_params))
        text = body.text if body.text is not None else body.data
        if body.metadata is not None:  # refused rather than ignored: the caller would believe it applied
            raise ApiError(400, "an update changes a memory's text only: its metadata stays as it was stored. "
                                "Nothing was changed; send the update without \"metadata\", or store the fact "
                                "again with the new metadata (POST /memories) and delete this one.")
        if text is None or not text.strip():
            raise ApiError(400, "text is required: send {\"text\": \"the corrected fact\"}")
        try:
            new = await self.write(request, lambda b: b.update(memory_id, text, scope=scope,
                                                                 reason=clean_reason(body.reason)))
        except MemoryChangedError as exc:  # superseded or deleted, perhaps by a concurrent request
            raise ApiError(409, str(exc), id=exc.memory_id, memory_status=exc.status,
                           superseded_by=exc.superseded_by) from exc
        except MemoryNotFoundError as exc:
            raise not_found(memory_id, active=True) from exc
        await self.audit(request, "update", scope, new.id, previous=memory_id)
        return JSONResponse({"message": "Memory updated successfully!", "id": new.id, "previous_id": memory_id,
                             "result": memory_to_item(new)})

    async def delete(self, request: Request) -> Response:
        memory_id, scope = self.id_and_scope(request)
        reason = clean_reason(request.query_params.get("reason"))
        if not await self.write(request, lambda b: b.delete(memory_id, scope=scope, reason=reason)):
            raise not_found(memory_id, active=True)
        await self.audit(request, "delete", scope, memory_id)
        return JSONResponse({"message": "Memory deleted successfully!", "id": memory_id})

    async def history(self, request: Request) -> Response:
        memory_id, scope = self.id_and_scope(request)
        events = await self.call(lambda b: b.history(memory_id, scope=scope))
        if not events:
            raise not_found(memory_id)
        return JSONResponse([history_to_row(e, i) for i, e in enumerate(events, 1)])

    async def search(self, request: Request) -> Response:
        body = await read_body(request, SearchBody)
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
        scope = self.scope(request, ids["user_id"], ids["agent_id"], ids["run_id"])
        query = body.query.strip()
        if not query:
            raise ApiError(400, "query is empty")
        top_k = int_param(body.top_k if body.top_k is not None else body.limit, "top_k", 10, MAX_TOP_K)
        if body.mode not in (None, "search", "similar"):
            raise ApiError(400, f"mode {body.mode!r} is not one of: search, similar")
        similar = body.mode == "similar"
        hits = await self.call(lambda b: (b.similar if similar else b.search)(query, scope=scope, top_k=top_k))
        return JSONResponse({"results": [memory_to_item(h.memory, h) for h in hits]})
