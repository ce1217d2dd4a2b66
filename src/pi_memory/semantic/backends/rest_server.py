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
* team server only (PostgreSQL): ``GET /projects/{project}/entries`` and ``POST /projects/{project}/entries``
  ``{operations, expectedVersion?}``, the shared project stores (:mod:`.team_projects`)
* ``GET /health`` → ``{"status": "ok", "service": "pi-memory", "scope_checked": true, "infer": bool}``
  (the team server: a 503 with ``"status": "unavailable"`` and ``error`` while its database does not answer)
* ``GET /whoami`` → ``{"user_id", "admin", "token_id", "auth"}``: whom the token acts for (never the token)

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

What a request may not carry (decided on a tester's report of 500s and credentials echoed back):

* a NUL character (U+0000) anywhere: in a JSON body (text, metadata keys and values, reason, query...) or in
  the address (``/memories/%00``, ``?reason=%00``) is a 400 naming where it is. It is refused, not dropped: a
  NUL in a fact means binary data or a broken encoder, which the sender should see; PostgreSQL cannot keep one.
* on an add, a ``user_id`` / ``agent_id`` / ``run_id`` that the secret detector reads as a credential, or that
  holds an invisible or direction-changing character: ids are stored as written and shown in every result, the
  audit log and exports. Reading, updating and deleting under such an id stay possible; the team store rewrites
  such ids stored before this check at every start (:mod:`.pg_clean`), so there they name nothing any more.
* ``metadata`` on a ``PUT``: an update replaces the text only, so the field is a 400 rather than silently
  ignored.

A ``PUT`` on a memory of the scope that is no longer active (superseded or deleted, by a concurrent ``PUT`` for
instance) is a 409 ``{"error", "id", "memory_status", "superseded_by"}`` that says to update the newest version;
an id unknown in the scope stays a 404.

Trust model (say it plainly): the bearer token is one shared team token. Any holder can act as any
``user_id`` (and agent, project) just by naming it: scope checks stop id probing and changes *across* scopes,
they are not per-user authorisation. Hand the token only to those who may see every memory on the server; run
a server per group that must be kept apart. (``pi-memory serve --help`` and the README say the same.)

Differences from Mem0's OSS server: ``user_id`` is always required and per-id routes need the scope; an unknown
id is 404 (Mem0: ``200 null``); ``PUT`` supersedes (a new id, the old memory kept as ``superseded``) and
``DELETE`` marks deleted, both keeping history; ``hash`` is SHA-256 of the normalised text (Mem0: MD5);
``infer`` defaults to true for ``messages`` (as Mem0) but false for ``text``, and ``infer=true`` needs an
extraction model on the server (else 400); a verbatim add of an exact duplicate answers the stored memory with
event ``NOOP``; ``filters`` take only id equality (anything else is 400, never silently widened), ``threshold``
/ ``rerank`` are ignored (scores are fused ranks); there is no ``/configure``, ``/reset``, bulk ``DELETE
/memories`` or v2 auth route.

The pieces (this module re-exports their public names): :mod:`.rest_app` (routes, auth, error answers),
:mod:`.rest_handlers` (what each route does), :mod:`.rest_requests` (reading bodies, scopes and parameters),
:mod:`.rest_runner` (bind and token rules, :func:`serve`, :class:`ServerThread`).
"""

from __future__ import annotations

from pi_memory.semantic.backends.rest_app import OPEN_PATHS, create_app
from pi_memory.semantic.backends.rest_client import IDENTITY_KEYS, TOKEN_ENV
from pi_memory.semantic.backends.rest_handlers import (
    API_VERSION,
    MAX_LIST,
    MAX_TOP_K,
    SERVICE,
    BackendFactory,
    CaptureFn,
    RestService,
)
from pi_memory.semantic.backends.rest_requests import MAX_BODY_BYTES, ApiError
from pi_memory.semantic.backends.rest_runner import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    MIN_NETWORK_TOKEN_CHARS,
    ServeError,
    ServerThread,
    check_bind,
    embedded_backend_factory,
    is_loopback,
    model_capture,
    resolve_token,
    serve,
)

__all__ = [
    "API_VERSION", "DEFAULT_HOST", "DEFAULT_PORT", "IDENTITY_KEYS", "MAX_BODY_BYTES", "MAX_LIST", "MAX_TOP_K",
    "MIN_NETWORK_TOKEN_CHARS", "OPEN_PATHS", "SERVICE", "TOKEN_ENV", "ApiError", "BackendFactory", "CaptureFn",
    "RestService", "ServeError", "ServerThread", "check_bind", "create_app", "embedded_backend_factory",
    "is_loopback", "model_capture", "resolve_token", "serve",
]
