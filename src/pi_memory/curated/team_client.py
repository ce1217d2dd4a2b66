"""The project store kept on a team server (``teamProjectStore`` in the settings): the client side.

:class:`TeamProjectClient` reads and writes one shared project store over the team server's REST API
(``/projects/{project}/entries``, :mod:`pi_memory.semantic.backends.team_projects`). The server applies the
curated store's own rules under a database row lock (scanner, character limit, all or nothing), so the client
sends the operations as they are and turns the answer back into a :class:`~pi_memory.curated.MemoryResult`.
A server that cannot be reached is an ``io_error`` result saying so: nothing is written locally instead (a
team's store must not fork into private copies).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_memory.curated import entries as fmt
from pi_memory.curated import messages as msg
from pi_memory.curated.results import MemoryResult

if TYPE_CHECKING:  # httpx (~100 ms to import) loads only when a team project store is configured
    import httpx

TARGET = "project"


class TeamProjectError(RuntimeError):
    """The team server could not be reached or answered something unexpected; the message says which."""


class TeamProjectClient:
    """``url``: the team server; ``project``: the team's name of the store; ``token``: a bearer token of it."""

    def __init__(self, url: str, project: str, token: str | None, timeout: float = 10.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        import httpx

        self.url, self.project = url.rstrip("/"), project
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout, transport=transport)
        self.version: int | None = None

    @property
    def name(self) -> str:
        return f"team project store {self.project!r} on {self.url}"

    def _call(self, method: str, **kw: Any) -> dict[str, Any]:
        import httpx

        try:
            r = self._http.request(method, f"/projects/{self.project}/entries", **kw)
        except httpx.HTTPError as exc:
            raise TeamProjectError(f"the {self.name} cannot be reached ({type(exc).__name__}: {exc}); nothing was "
                                   "changed. Check that the server runs and teamProjectStore.url.") from exc
        try:
            body = r.json()
        except ValueError:
            body = {}
        if r.status_code in (200, 409, 422) and isinstance(body, dict):
            if "version" in body:
                self.version = int(body["version"])
            return {**body, "_status": r.status_code}
        why = body.get("error") if isinstance(body, dict) else None
        hint = " Check the token in $PI_MEMORY_SERVER_TOKEN (teamProjectStore.tokenEnv)." if r.status_code == 401 else ""
        raise TeamProjectError(f"the {self.name} answered {r.status_code}: {why or r.text[:200]}.{hint}")

    def entries(self) -> list[str]:
        """The store's entries now (raises :class:`TeamProjectError`)."""
        return list(self._call("GET").get("entries") or [])

    def apply(self, operations: list[Any]) -> tuple[MemoryResult, list[str] | None]:
        """Send ``operations`` (:class:`~pi_memory.curated.Operation`) as one all-or-nothing batch: the server's
        result and, after a write, the store's entries (raises :class:`TeamProjectError` when there is none)."""
        ops = [op.model_dump(by_alias=True, exclude_none=True) for op in operations]
        body = self._call("POST", json={"operations": ops})
        body.pop("_status", None)
        entries = body.pop("entries", None)
        fields = {k: v for k, v in body.items() if k in MemoryResult.model_fields or
                  k in {f.alias for f in MemoryResult.model_fields.values()}}
        if body.get("code") == "version_conflict":  # only sent with expectedVersion, which this client does not
            fields["code"] = "changed_on_disk"
        result = MemoryResult.model_validate({**fields, "target": TARGET})
        # A server older than places reads an add's place as nothing (unknown fields are ignored) and appends it:
        # the closest it can do. The result says so; its ``placed`` count is missing then.
        asked = sum(op.get("place") is not None for op in ops)
        if result.success and asked > _count(body.get("placed")):
            result.notice = msg.not_placed(f"the {self.name}", asked - _count(body.get("placed")))
        return result, entries

    def close(self) -> None:
        self._http.close()


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def from_settings(settings: Any) -> TeamProjectClient | None:
    """The client ``settings.team_project_store`` describes (resolved by :func:`pi_memory.config.load_settings`)."""
    team = getattr(settings, "team_project_store", None)
    if not team:
        return None
    return TeamProjectClient(team["url"], team["project"], team.get("token"), team.get("timeout", 10.0))


def load(store: Any) -> fmt.Analysis:
    """``MemoryStore._load`` of a team project store: the server's entries (unreachable: the last ones known,
    reported as ``unreadable``)."""
    try:
        analysis = fmt.Analysis(entries=store.team_project.entries())
    except TeamProjectError as exc:
        analysis = fmt.Analysis(entries=store._live[TARGET], drift="unreadable", detail=str(exc))
    store._live[TARGET] = analysis.entries
    store._drift[TARGET] = analysis if analysis.drift else None
    return analysis


def apply(store: Any, operations: list[Any], key: str) -> MemoryResult:
    """``MemoryStore.apply`` of a team project store: the server checks and applies the batch; its answer is the
    result. A refusal counts toward the store's per-turn retry limit, as a local one does; a write updates the
    store's live entries and its ``on_change`` mirror. ``key``: the call's identity for that loop guard."""
    try:
        result, entries = store.team_project.apply(operations)
    except TeamProjectError as exc:
        store._guard.note(TARGET, key)
        return store._result(TARGET, False, "io_error", error=str(exc))
    if not result.success:
        store._guard.note(TARGET, key, int(result.code != "changed_on_disk"))
        return result
    if entries is not None and entries != store._live[TARGET]:
        store._live[TARGET] = entries
        store._notify(TARGET, entries)
    return result


__all__ = ["TeamProjectClient", "TeamProjectError", "apply", "from_settings", "load"]
