"""Per-user bearer tokens and the audit log of the team server (PostgreSQL tables ``api_tokens``, ``audit_log``).

A token is ``pim_<id>_<secret>``: the id names the row (so ``token list`` and ``token revoke ID`` need no
secret), the secret is 32 random bytes. Only ``sha256(token)`` is stored; the token itself is shown once, by
``pi-memory serve token create``. A user's token reaches only scopes whose ``user_id`` is that user (the REST
handlers check every request against :class:`Principal`); an admin token may act for any user. The shared
team token (``--token``) stays available and acts as an admin named ``shared``.

Every write through the server is recorded in ``audit_log`` with the token's id and user, in the transaction of
the write itself (all or nothing: a memory is never written without its audit row, nor audited without being
written). The REST handlers run a request's backend calls :meth:`TokenStore.writing_as` its principal; the
PostgreSQL backend calls :meth:`TokenStore.on_history` for each history event it records, inside its
transaction, and the row is added there.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from pi_memory import safety
from pi_memory.semantic.backends.postgres import connection
from pi_memory.semantic.models import now_iso
from pi_memory.semantic.sanitize import id_problem

PREFIX = "pim_"
_ID = re.compile(r"[0-9a-f]{12}")  # secrets.token_hex(6)
_SHOWABLE = re.compile(r"[A-Za-z0-9_.-]{1,24}")
SHARED = "shared"
# The request being served on this thread: (its principal, the action prefix: "" or "capture-").
_WRITER: ContextVar[tuple[Principal, str] | None] = ContextVar("pi_memory_team_writer", default=None)
_ACTIONS = {"ADD": "add", "UPDATE": "update", "DELETE": "delete"}  # a SUPERSEDE goes with its UPDATE


@dataclass(frozen=True)
class Principal:
    """Who a request acts as: ``user_id`` (``None`` for the shared team token), ``admin``, ``token_id``."""

    user_id: str | None
    admin: bool
    token_id: str

    def may_act_for(self, user_id: str) -> bool:
        return self.admin or self.user_id == user_id


@dataclass(frozen=True)
class Revocation:
    """What ``token revoke`` did: ``record`` (the token named, when there is one), ``done`` (revoked now) or
    ``problem`` (why not, in words, without any secret)."""

    record: TokenRecord | None
    done: bool
    problem: str | None


@dataclass(frozen=True)
class TokenRecord:
    id: str
    user_id: str
    admin: bool
    label: str | None
    created_at: str
    revoked_at: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "userId": self.user_id, "admin": self.admin, "label": self.label,
                "createdAt": self.created_at, "revokedAt": self.revoked_at}


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenStore:
    """Tokens and audit rows in the team database (``pool``: :func:`.postgres.open_pool`)."""

    def __init__(self, pool: Any, shared_token: str | None = None) -> None:
        self.pool = pool
        self.shared = shared_token.encode() if shared_token else None

    def create(self, user_id: str, *, admin: bool = False, label: str | None = None) -> tuple[TokenRecord, str]:
        """A new token for ``user_id``: its record and the token (shown once, never stored)."""
        user_id = (user_id or "").strip()
        if not user_id:
            raise ValueError("a token needs a user id: name the user it acts for, e.g. --user alice")
        problem = id_problem("the user id", user_id, max_chars=200, example="--user alice") or _unusable(user_id)
        if problem:
            raise ValueError(problem + " No token was created.")
        label = safety.redact(label) if label else label  # shown by `token list`: no credential in it
        token_id = secrets.token_hex(6)
        token = f"{PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
        record = TokenRecord(token_id, user_id, admin, label, now_iso(), None)
        with connection(self.pool) as conn:
            conn.execute("INSERT INTO api_tokens(id, user_id, admin, token_hash, label, created_at) "
                         "VALUES (%s,%s,%s,%s,%s,%s)", (token_id, user_id, admin, _hash(token), label,
                                                        record.created_at))
        return record, token

    def list(self, include_revoked: bool = False) -> list[TokenRecord]:
        where = "" if include_revoked else " WHERE revoked_at IS NULL"
        with connection(self.pool) as conn:
            rows = conn.execute("SELECT id, user_id, admin, label, created_at, revoked_at FROM api_tokens"
                                f"{where} ORDER BY created_at, id").fetchall()
        return [TokenRecord(*r) for r in rows]

    def revoke(self, token_id: str) -> bool:
        """Revoke the token with this id; ``False`` when there is no such active token."""
        with connection(self.pool) as conn:
            cur = conn.execute("UPDATE api_tokens SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
                               (now_iso(), token_id))
            return cur.rowcount == 1

    def record(self, token_id: str) -> TokenRecord | None:
        """The token with this id (active or revoked), else ``None``."""
        with connection(self.pool) as conn:
            row = conn.execute("SELECT id, user_id, admin, label, created_at, revoked_at FROM api_tokens WHERE id = %s",
                               (token_id,)).fetchone()
        return TokenRecord(*row) if row else None

    def revoke_named(self, given: str) -> Revocation:
        """Revoke the token ``given`` names: its id (what ``token list`` shows) or the whole token as ``token
        create`` printed it (its secret must be that token's). The outcome's ``problem`` says in words why
        nothing was revoked; no text of it ever holds a secret (a whole token is named by its id part)."""
        given = (given or "").strip()
        whole = given.startswith(PREFIX)
        token_id = id_part(given) if whole else given
        if token_id is None:
            return Revocation(None, False, "what you gave starts like a token (pim_) but is not a whole one "
                              "(pim_<id>_<secret>) nor a token id; nothing was revoked. Give the id `pi-memory serve "
                              "token list` shows, or the whole token exactly as `token create` printed it.")
        record = self.record(token_id)
        if record is None:
            if whole:
                return Revocation(None, False, f"no token of this database has the id {token_id} (the token you gave "
                                               "is not one of this database's); nothing was revoked. `pi-memory "
                                               "serve token list` shows the ids.")
            shown = repr(given) if _showable(given) else "you gave (not repeated: it is not an id and may be a secret)"
            return Revocation(None, False, f"No token has the id {shown}; nothing was revoked. `pi-memory serve "
                                           "token list` shows the ids.")
        if whole:
            with connection(self.pool) as conn:
                row = conn.execute("SELECT id FROM api_tokens WHERE token_hash = %s", (_hash(given),)).fetchone()
            if row is None or row[0] != token_id:
                return Revocation(record, False, f"the token you gave names id {token_id} (user {record.user_id!r}), "
                                                 "but its secret is not that token's (mistyped or cut short?); "
                                                 "nothing was revoked. To revoke that token by its id: pi-memory "
                                                 f"serve token revoke {token_id}")
        if record.revoked_at:
            return Revocation(record, False, f"token {token_id} (user {record.user_id!r}) was already revoked at "
                                             f"{record.revoked_at}; every server refuses it. Nothing to do.")
        if not self.revoke(token_id):  # revoked meanwhile by someone else
            return Revocation(self.record(token_id), False, f"token {token_id} was revoked meanwhile; nothing to do.")
        return Revocation(self.record(token_id), True, None)

    def resolve(self, presented: bytes) -> Principal | None:
        """The principal of a presented bearer token, or ``None`` (unknown, revoked or malformed)."""
        if self.shared is not None and hmac.compare_digest(presented, self.shared):
            return Principal(None, True, SHARED)
        token = _ours(presented)
        if token is None:
            return None
        with connection(self.pool) as conn:
            row = conn.execute("SELECT id, user_id, admin FROM api_tokens WHERE token_hash = %s AND revoked_at IS NULL",
                               (_hash(token),)).fetchone()
        return Principal(row[1], bool(row[2]), row[0]) if row else None

    def revoked(self, presented: bytes) -> TokenRecord | None:
        """The record of a presented token that was revoked (so the refusal can say so), else ``None``."""
        token = _ours(presented)
        if token is None:
            return None
        with connection(self.pool) as conn:
            row = conn.execute("SELECT id, user_id, admin, label, created_at, revoked_at FROM api_tokens WHERE "
                               "token_hash = %s AND revoked_at IS NOT NULL", (_hash(token),)).fetchone()
        return TokenRecord(*row) if row else None

    def has_tokens(self) -> bool:
        with connection(self.pool) as conn:
            return conn.execute("SELECT 1 FROM api_tokens WHERE revoked_at IS NULL LIMIT 1").fetchone() is not None

    def audit(self, principal: Principal, action: str, scope_key: str, memory_id: str | None = None,
              detail: dict[str, Any] | None = None, conn: Any = None) -> None:
        """Record a write; ``conn``: a connection whose open transaction the row joins (all or nothing)."""
        if conn is None:
            with connection(self.pool) as own:
                return self.audit(principal, action, scope_key, memory_id, detail, own)
        conn.execute("INSERT INTO audit_log(at, token_id, user_id, admin, action, memory_id, scope, detail) "
                     "VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
                     (now_iso(), principal.token_id, principal.user_id or SHARED, principal.admin, action,
                      memory_id, scope_key, Jsonb(detail or {})))

    @staticmethod
    @contextmanager
    def writing_as(principal: Principal, prefix: str = "") -> Iterator[None]:
        """Backend writes inside this block are audited as ``principal``'s (``prefix``: ``"capture-"`` for the
        writes of a capture)."""
        token = _WRITER.set((principal, prefix))
        try:
            yield
        finally:
            _WRITER.reset(token)

    def on_history(self, conn: Any, event: str, memory_id: str, scope_key: str, related: str | None) -> None:
        """The backend's hook for one history event, called inside the write's transaction (``conn``): the
        audit row of the principal :meth:`writing_as` names joins it. Outside such a block (a CLI copy, a
        script on the backend) nothing is audited."""
        writer = _WRITER.get()
        action = _ACTIONS.get(event)
        if writer is None or action is None:
            return
        principal, prefix = writer
        detail = {"previous": related} if event == "UPDATE" and related else None
        self.audit(principal, prefix + action, scope_key, memory_id, detail, conn=conn)

    def audit_rows(self, limit: int = 100, user_id: str | None = None) -> list[dict[str, Any]]:
        args: list[Any] = []
        where = ""
        if user_id:
            where, args = " WHERE user_id = %s", [user_id]
        with connection(self.pool) as conn:
            rows = conn.execute("SELECT at, token_id, user_id, admin, action, memory_id, scope, detail FROM audit_log"
                                f"{where} ORDER BY id DESC LIMIT %s", (*args, int(limit))).fetchall()
        keys = ("at", "tokenId", "userId", "admin", "action", "memoryId", "scope", "detail")
        return [dict(zip(keys, r, strict=True)) for r in rows]


__all__ = ["Principal", "Revocation", "TokenRecord", "TokenStore", "id_part"]


def _unusable(user_id: str) -> str | None:
    """Why no request could act for ``user_id`` (so its token would be refused on every request), else ``None``:
    a request's ``user_id`` is read as the server reads it (:func:`~.rest_wire.scope_from_wire`), and a token
    reaches only the user that reading gives."""
    from pi_memory.semantic.backends.rest_wire import PROJECT_MARK, scope_from_wire

    try:
        read = scope_from_wire(user_id)
    except ValueError as exc:
        return f"the user id {user_id!r} cannot name a user ({exc})."
    if read.user_id == user_id and read.project_id is None:
        return None
    return (f"the user id {user_id!r} holds {PROJECT_MARK!r}: the server reads a user_id 'NAME{PROJECT_MARK}PROJECT' "
            f"as user {read.user_id!r} in project {read.project_id!r}, so a token for {user_id!r} would be refused "
            f"on every request (403). Name the user alone (e.g. --user {read.user_id}): a user's token reaches all "
            "of that user's projects.")


def _ours(presented: bytes) -> str | None:
    """``presented`` as one of our tokens (ASCII, our prefix, at most 200 characters), else ``None``."""
    try:
        token = presented.decode("ascii")
    except UnicodeDecodeError:
        return None
    return token if token.startswith(PREFIX) and len(token) <= 200 else None


def id_part(token: str) -> str | None:
    """The id of a whole token ``pim_<id>_<secret>`` (never its secret), else ``None``."""
    token_id, sep, secret = token.removeprefix(PREFIX).partition("_")
    return token_id if token.startswith(PREFIX) and sep and secret and _ID.fullmatch(token_id) else None


def _showable(given: str) -> bool:
    """Whether a ``token revoke`` argument that names no token may be repeated in the refusal: short, one plain
    word and nothing the secret scanner knows (a pasted secret is never echoed)."""
    return bool(_SHOWABLE.fullmatch(given)) and safety.redact(given) == given
