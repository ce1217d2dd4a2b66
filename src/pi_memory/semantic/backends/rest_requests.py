"""Reading a request of the REST server: a size-bounded JSON body into its pydantic model, the scope from Mem0's
id fields (query string, body, or both for ``PUT``), query parameters, and :class:`ApiError`, the one way a
handler answers ``{"error": "<what to fix>"}`` with a status. Used by :mod:`.rest_handlers`."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from pi_memory import safety
from pi_memory.semantic import sanitize
from pi_memory.semantic.backends.rest_wire import (
    IDENTITY_KEYS,
    AddBody,
    Message,
    UpdateBody,
    pretty_errors,
    scope_from_wire,
)
from pi_memory.semantic.models import Scope

MAX_BODY_BYTES = 1 << 20  # 1 MiB: a memory is one fact of at most 4,000 characters; a capture turn fits easily
# Messages in one add: each is stored (or read by the extraction model) in turn, so 20,000 tiny ones within the
# 1 MiB ran for minutes, past every client's timeout. A chat turn is a few messages; pi-memory's client sends
# one. 200 keeps the slowest request within a few seconds (docs/architecture.md, "One add holds at most 200").
MAX_MESSAGES = 200


class ApiError(Exception):
    """An error answered as ``{"error": message, **extra}`` with HTTP ``status``."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


async def read_body(request: Request, model: type[BaseModel]) -> Any:
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
    try:  # lone surrogates ("\ud83d" escapes, which pydantic's parser refuses) become U+FFFD
        data = json.loads(raw)
        place = sanitize.nul_place(data)
    except (ValueError, RecursionError) as exc:
        raise ApiError(400, f"invalid request body: it is not JSON ({exc}); send one JSON object") from exc
    if place:
        raise ApiError(400, f"invalid request body: {place} holds a NUL character (\\u0000), which the server "
                            "cannot store. Nothing was stored; remove the character and send the request again.")
    try:
        return model.model_validate(safety.replace_unencodable(data))
    except (ValueError, RecursionError) as exc:
        if not isinstance(exc, ValidationError):
            raise ApiError(400, f"invalid request body: it is not JSON ({exc}); send one JSON object") from exc
        raise ApiError(400, "invalid request body: " + "; ".join(pretty_errors(exc))) from exc


def address_problem(path: str, query_string: bytes) -> str | None:
    """Why a request's address cannot be served (a NUL character, ``%00``, in its path or query string), or
    ``None``. No memory id, scope id or reason can hold one, and PostgreSQL would fail on it."""
    if "\x00" in path or b"%00" in query_string or b"\x00" in query_string:
        where = "path" if "\x00" in path else "query string"
        return (f"the request's {where} holds a NUL character (%00), which no memory id, user_id, agent_id, "
                "run_id or reason can contain; remove it and send the request again.")
    return None


def scope_of(user_id: str | None, agent_id: str | None, run_id: str | None) -> Scope:
    try:
        return scope_from_wire(user_id, agent_id, run_id)
    except ValueError as exc:
        raise ApiError(400, str(exc)) from exc


def check_new_scope(scope: Scope) -> Scope:
    """``scope`` for an add; 400 when one of its ids is not a plain name: one that looks like a credential, or
    holds invisible or direction-changing characters (:func:`~pi_memory.semantic.sanitize.id_problem`). Only
    adds are refused: what was stored under such an id before can still be read, updated and deleted (the
    team store rewrites such stored ids at its start instead: :mod:`.pg_clean`)."""
    for name, value, example in (("user_id", scope.user_id, "'alice'"), ("agent_id", scope.agent_id, "'ci-runner'"),
                                 ("run_id", scope.project_id, "'release-2026'")):
        problem = sanitize.id_problem(name, value, example=example, spaces=True) if value else None
        if problem:
            raise ApiError(400, f"{problem} Nothing was stored.")
    return scope


def update_scope(body: UpdateBody, query: Any) -> Scope:
    """The scope a ``PUT`` names: the query string's, the body's, or both when they agree (module docstring)."""
    keys = ("user_id", "agent_id", "run_id")
    in_query = {k: query.get(k) for k in keys if query.get(k)}
    in_body = {k: getattr(body, k) for k in keys if getattr(body, k)}
    if not in_query or not in_body:
        return scope_of(*((in_query or in_body).get(k) for k in keys))
    from_query, from_body = scope_of(*(in_query.get(k) for k in keys)), scope_of(*(in_body.get(k) for k in keys))
    if from_query != from_body:
        raise ApiError(400, f"the body names scope {describe_ids(in_body)} but the query string names "
                            f"{describe_ids(in_query)}; an update keeps a memory in the scope it was stored in and "
                            "cannot move it. Send the memory's own user_id, agent_id and run_id (in the query "
                            "string, the body, or the same in both); to keep the fact under another scope, add it "
                            "there (POST /memories) and delete this one.")
    return from_query


def describe_ids(ids: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in ids.items())


def not_found(memory_id: str, *, active: bool = False) -> ApiError:
    state = "active " if active else ""
    return ApiError(404, f"no {state}memory {memory_id!r} in this scope (check the id and that user_id, agent_id "
                         "and run_id are the ones it was stored with)")


def messages_of(body: AddBody) -> list[Message]:
    if body.text is not None and body.messages is not None:
        raise ApiError(400, "send either messages or text, not both")
    if body.text is not None:
        return [Message(role="user", content=body.text)]
    if body.messages is None:
        raise ApiError(400, "messages (or text) is required")
    if isinstance(body.messages, str):
        return [Message(role="user", content=body.messages)]
    if isinstance(body.messages, Message):
        return [body.messages]
    if len(body.messages) > MAX_MESSAGES:
        raise ApiError(413, f"the request holds {len(body.messages):,} messages; one request may hold at most "
                            f"{MAX_MESSAGES} (a conversation turn needs a few). Nothing was stored; split the "
                            f"messages into requests of at most {MAX_MESSAGES} each and send them one after another.")
    return list(body.messages)


def clean_metadata(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """Caller metadata without identity keys (scope comes only from the explicit id fields, mem0 #6655) and with
    every string redacted (:mod:`pi_memory.semantic.sanitize`)."""
    return sanitize.clean_metadata(metadata, IDENTITY_KEYS)


def int_param(value: Any, name: str, default: int, maximum: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ApiError(400, f"{name} must be an integer, not {value!r}") from None
    if isinstance(value, bool) or not 1 <= number <= maximum:
        raise ApiError(400, f"{name} must be between 1 and {maximum}, not {value!r}")
    return number


def bool_param(value: str | None, name: str) -> bool:
    if value is None or value.lower() in ("", "0", "false", "no"):
        return False
    if value.lower() in ("1", "true", "yes"):
        return True
    raise ApiError(400, f"{name} must be true or false, not {value!r}")
