"""The REST wire format both ends of the self-hosted backend share: scope fields, result items, history rows
and request bodies (Mem0's OSS REST shape; see :mod:`.rest_client` and :mod:`.rest_server`). It imports
neither httpx nor starlette, so the client and the server each load only their own side."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

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

PROJECT_MARK = ":project:"
IDENTITY_KEYS = frozenset({"user_id", "agent_id", "run_id", "project_id", "actor_id", "userId", "agentId",
                           "runId", "projectId", "actorId", "scope"})  # never taken from metadata (mem0 #6655)
_EVENTS = {"ADD", "UPDATE", "DELETE", "SUPERSEDE"}


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


def score_details(raw: Any) -> ScoreDetails:
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


_KINDS = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "true or false",
          type(None): "null"}
_SAYS = {"string_type": "must be a string", "bool_type": "must be true or false",
         "bool_parsing": "must be true or false", "int_type": "must be a whole number",
         "int_parsing": "must be a whole number", "int_from_float": "must be a whole number",
         "dict_type": "must be a JSON object", "list_type": "must be a list", "missing": "is required"}
_UNIONS = {  # fields that take several shapes: one sentence for the field, not one per shape
    "messages": 'must be a list of messages such as [{"role": "user", "content": "…"}], one such message, or a string',
    "content": 'must be a string or a list of parts such as [{"type": "text", "text": "…"}]',
}
_WIRE_NAMES = {"project_id": "run_id"}  # the scope's own field names, as a client sends them


def _wire(text: str) -> str:
    for ours, theirs in _WIRE_NAMES.items():
        text = text.replace(ours, theirs)
    return text


def pretty_errors(exc: ValidationError) -> list[str]:
    """``["field: problem", ...]`` for an error message, in the request's own terms: a field's place as the
    client wrote it (``messages.0.content``, ``run_id``), never a model or type name of the server; one
    sentence for a field that takes several shapes."""
    found: list[tuple[str, str]] = []
    for err in exc.errors(include_url=False):
        # a union's member tags ("list[Message]", "str") and model names are the server's, not the request's
        loc = [str(p) for p in err.get("loc", ()) if isinstance(p, int) or not (set(str(p)) & set("[]") or
                                                                                 str(p)[:1].isupper() or
                                                                                 str(p) in ("str", "int", "dict"))]
        where = _wire(".".join(loc))
        kind = err.get("type", "")
        if not where and kind in ("model_type", "dict_type"):
            got = _KINDS.get(type(err.get("input")), "something else")
            line = f"the request body must be one JSON object (with fields such as \"user_id\"), not {got}"
        elif loc and loc[-1] in _UNIONS and not kind.startswith("value_error"):
            line = f"{where}: {_UNIONS[loc[-1]]}"
        else:
            said = _SAYS.get(kind) or _wire(str(err.get("msg", "invalid")).removeprefix("Value error, "))
            line = f"{where or 'body'}: {said}"
        if (where, line) not in found:
            found.append((where, line))
    # a union field that failed inside one of its shapes (messages.0.content) is told there, not as a whole too
    return [line for where, line in found if not (where and any(w.startswith(where + ".") for w, _ in found))]


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
    metadata: Any = None  # refused when given: an update keeps the stored metadata (rest_handlers.update)


class SearchBody(_ScopedBody):
    query: str
    filters: dict[str, Any] | None = None
    top_k: int | None = None
    limit: int | None = None  # Mem0 v1's name for top_k
    mode: str | None = None  # ours: "similar" = capture's candidate lookup


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
