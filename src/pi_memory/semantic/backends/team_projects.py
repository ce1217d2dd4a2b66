"""The shared project stores of the team server: the curated entries of a project, edited by a whole team.

A project store is what ``projects/<name>-<id>/MEMORY.md`` is on one machine (the ``project`` target of
:class:`~pi_memory.curated.MemoryStore`), kept in PostgreSQL instead: table ``project_stores``, one row per
(project, target) holding the entries as a JSON list and a ``version`` that every write bumps. A team names a
project by a name of its own (``acme-api``), not by a checkout's path, so every member's clone reaches the same
store.

Every rule is the curated store's, inherited, not copied: :class:`TeamProjectStore` is a ``MemoryStore`` whose
storage hooks read and write the row. A batch is all or nothing, content is checked by the same scanner
(``safety.check_write``: credentials and prompt-injection refused), the same character limit (the server's
``projectCharLimit``, default 2,200) with the same usage line, the same add / replace / remove matching. The
row is locked (``SELECT … FOR UPDATE``) from the read to the write, so concurrent writers on any number of
``serve`` processes are serialised by the database: each applies its operations to the entries the previous
writer left, and no acknowledged write is lost. A writer that wants to be sure nobody changed the store since
it read it sends ``expectedVersion``; a mismatch is a 409 with the current entries and version, nothing
written. The audit row of a write is inserted in the same transaction as the write.

Who may read and write (decision): a team server serves one team, so every token it accepts -- each user's,
an admin's, the shared team token -- may read and edit every project store on it, as every member of a
repository may edit its files. Per-user tokens still matter: the audit log names the user of every write
(``pi-memory serve audit``). A team whose projects must be kept apart runs one server (or database) per group.

REST (under the server's bearer-token auth):

* ``GET /projects/{project}/entries`` → ``{project, target, entries, entryCount, usage, limit, version}``
* ``POST /projects/{project}/entries`` ``{operations: [{action: add|replace|remove, content?, oldText?, place?}],
  expectedVersion?}`` (``place`` of an add: ``{after?, before?, index?}``, where it goes; a learning undo puts an
  entry back where it stood) → the curated store's result (``success``, ``code``, ``message`` / ``error``,
  ``entryCount``, ``usage``, ``currentEntries`` …) plus ``project``, ``version``, ``placed`` (the operations whose
  place it read: a server older than places ignores them and sends no ``placed``) and, when applied, ``entries``
  (the store as the write left it, for the client's mirror); 200 when applied, 422 when
  the store's rules refused it (``code`` says which: ``threat``, ``secret``, ``over_limit``, ``no_match`` …),
  409 on a version mismatch.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from psycopg.types.json import Jsonb
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pi_memory import safety
from pi_memory.curated import MemoryStore, Operation
from pi_memory.curated import entries as fmt
from pi_memory.curated.retry_guard import RetryGuard
from pi_memory.semantic.backends.postgres import connection
from pi_memory.semantic.backends.rest_requests import ApiError, read_body
from pi_memory.semantic.models import now_iso

TARGET = "project"
PROJECT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$")
MAX_OPERATIONS = 50


def _as_text(entries: list[str]) -> bytes:
    """The entries as the curated store's parser reads them. Two trailing delimiters (empty entries, which the
    parser drops) keep a store of one long entry from reading as hand-written Markdown (``plain_markdown``
    drift, whose remedy is a file tool): a row holds checked entries only, it never drifts."""
    return (fmt.serialise(entries) + "§\n§\n").encode("utf-8")


class VersionConflict(Exception):
    def __init__(self, version: int, entries: list[str]) -> None:
        super().__init__(f"version {version}")
        self.version, self.entries = version, entries


def project_problem(name: str) -> str | None:
    """Why ``name`` may not name a project store, in words, or ``None``: not a plain name, or one the secret
    scanner reads as a credential (a store stored under such a name before is renamed at the server's start:
    :mod:`.pg_clean`)."""
    if not PROJECT_NAME.match(name or ""):
        return (f"project {name!r} is not a valid project name: use 1-128 letters, digits, '.', '_', '~' or '-', "
                "starting with a letter or digit (e.g. acme-api)")
    findings = safety.scan_secrets(name)
    if findings:
        return (f"the project name looks like a credential ({findings[0].id}); names are stored as written and "
                "shown in the audit log. Name the project store with a plain name (e.g. acme-api) and keep secrets "
                "out of names.")
    return None


def check_project(name: str) -> str:
    """``name`` when it may name a project store, else a 400 saying why (:func:`project_problem`)."""
    problem = project_problem(name)
    if problem is not None:
        raise ApiError(400, problem)
    return name


class TeamProjectStore(MemoryStore):
    """One project's shared store in the team database (see the module docstring); one instance per request.

    ``principal`` (:class:`~.team_auth.Principal`) and ``tokens`` (:class:`~.team_auth.TokenStore`): who
    writes, for the audit row; ``expected_version``: refuse unless the row is at that version."""

    keeps_bytes = False  # the row keeps entries, not a file's bytes: no layout to report or give back

    def __init__(self, pool: Any, project: str, char_limit: int, *, tokens: Any = None, principal: Any = None,
                 expected_version: int | None = None) -> None:
        super().__init__(Path("/nonexistent-team-store"), project_char_limit=char_limit)
        self.pool, self.project, self.tokens, self.principal = pool, project, tokens, principal
        self.expected_version = expected_version
        self.version = 0
        self.files = {TARGET: Path("/nonexistent-team-store") / project}  # never opened: the row is the store
        self.names = {TARGET: f"the team project store {project!r}"}
        self._live, self._drift = {TARGET: []}, {TARGET: None}
        self._seen = {TARGET: None}
        self._guard = RetryGuard([TARGET], limit=1 << 30)  # the per-turn loop guard belongs to the client's store
        self._conn: Any = None
        self._ops: list[str] = []

    def _row(self, conn: Any, lock: bool) -> tuple[list[str], int]:
        row = conn.execute("SELECT entries, version FROM project_stores WHERE project_id = %s AND target = %s"
                           + (" FOR UPDATE" if lock else ""), (self.project, TARGET)).fetchone()
        return (list(row[0]), int(row[1])) if row else ([], 0)

    @contextmanager
    def _locked(self, target: str):
        with connection(self.pool) as conn, conn.transaction():
            conn.execute("INSERT INTO project_stores(project_id, target, updated_at) VALUES (%s, %s, %s) "
                         "ON CONFLICT DO NOTHING", (self.project, TARGET, now_iso()))
            self._conn = conn
            try:
                yield
            finally:
                self._conn = None

    def _read_locked(self, target: str) -> bytes | None:
        entries, self.version = self._row(self._conn, lock=True)
        self._live[TARGET] = entries  # a refusal's count and usage describe the store as it is now
        if self.expected_version is not None and self.expected_version != self.version:
            raise VersionConflict(self.version, entries)
        return _as_text(entries)

    def _read_unlocked(self, target: str) -> bytes | None:
        with connection(self.pool) as conn:
            entries, self.version = self._row(conn, lock=False)
        return _as_text(entries)

    def _publish(self, target: str, entries: list[str], text: str | None = None) -> None:
        self.version = self._conn.execute(
            "UPDATE project_stores SET entries = %s, version = version + 1, updated_at = %s, updated_by = %s "
            "WHERE project_id = %s AND target = %s RETURNING version",
            (Jsonb(entries), now_iso(), getattr(self.principal, "user_id", None) or "shared", self.project,
             TARGET)).fetchone()[0]
        if self.tokens is not None and self.principal is not None:
            self.tokens.audit(self.principal, "project-write", f"project:{self.project}", None,
                              {"version": self.version, "operations": self._ops, "entries": len(entries)},
                              conn=self._conn)

    def run(self, operations: list[Operation]) -> Any:
        self._ops = [op.action for op in operations]
        with connection(self.pool) as conn:  # a refusal before the locked read describes the store as it is
            self._live[TARGET], self.version = self._row(conn, lock=False)
        return self.apply(TARGET, operations, single=len(operations) == 1)


class OperationsBody(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    operations: list[Operation] = Field(min_length=1, max_length=MAX_OPERATIONS)
    expected_version: int | None = Field(default=None, ge=0)


class ProjectRoutes:
    """The two routes over the team database's pool; ``char_limit``: the server's ``projectCharLimit``."""

    def __init__(self, pool: Any, tokens: Any, char_limit: int) -> None:
        self.pool, self.tokens, self.char_limit = pool, tokens, char_limit

    def store(self, request: Request, **kw: Any) -> TeamProjectStore:
        project = check_project(request.path_params["project"])
        return TeamProjectStore(self.pool, project, self.char_limit, tokens=self.tokens,
                                principal=getattr(request.state, "principal", None), **kw)

    async def read(self, request: Request) -> Response:
        store = self.store(request)
        result = await run_in_threadpool(store.read, TARGET)
        return JSONResponse({"project": store.project, "target": TARGET, "entries": result.entries or [],
                             "entryCount": result.entry_count, "usage": result.usage, "limit": self.char_limit,
                             "version": store.version})

    async def write(self, request: Request) -> Response:
        body = await read_body(request, OperationsBody)
        store = self.store(request, expected_version=body.expected_version)
        try:
            result = await run_in_threadpool(store.run, body.operations)
        except VersionConflict as conflict:
            return JSONResponse({"error": f"the project store {store.project!r} is at version {conflict.version}, "
                                          f"not {body.expected_version}: someone changed it since you read it. "
                                          "Nothing was written; read it again and redo the change.",
                                 "code": "version_conflict", "project": store.project, "version": conflict.version,
                                 "currentEntries": conflict.entries}, status_code=409)
        extra = {"entries": store.entries(TARGET)} if result.success else {}  # the client's store mirrors them
        placed = sum(op.place is not None for op in body.operations)  # a client learns this server places adds
        return JSONResponse({**result.to_dict(), "project": store.project, "version": store.version,
                             "placed": placed, **extra}, status_code=200 if result.success else 422)


__all__ = ["ProjectRoutes", "TeamProjectStore", "VersionConflict", "check_project", "project_problem"]
