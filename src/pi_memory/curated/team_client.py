"""The project store kept on a team server (``teamProjectStore`` in the settings): the client side.

:class:`TeamProjectClient` reads and writes one shared project store over the team server's REST API
(``/projects/{project}/entries``, :mod:`pi_memory.semantic.backends.team_projects`). The server applies the
curated store's own rules under a database row lock (scanner, character limit, all or nothing), so the client
sends the operations as they are and turns the answer back into a :class:`~pi_memory.curated.MemoryResult`.
A server that cannot be reached is an ``io_error`` result saying so: nothing is written locally instead (a
team's store must not fork into private copies). The server's answers are read by :mod:`.team_answers`: no text
of the server reaches a model unchecked; a token is never sent over plain HTTP to another machine unless the
settings say ``insecureHttp``.

Time: every request has a wall-clock deadline over all of it (connecting, sending, the headers and the whole
body), ``timeoutSeconds`` by default. httpx bounds each read and write only, so a server sending a byte a
second would hold a request for ever; a :class:`_Cutoff` shuts the request's socket when its time is up, and
the request ends with :func:`~.team_answers.no_answer` as one that got no answer. :func:`bounded` shortens that
time for a host's start (the Claude Code / Codex session-start hook; a pi session's and the MCP server's start
and the pi bridge's frozen snapshot, :data:`START_WAIT_S`): a server that does not answer within it costs the
start the project part only, and the requests after the block get ``timeoutSeconds`` again.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pi_memory.curated import entries as fmt
from pi_memory.curated import messages as msg
from pi_memory.curated.results import MemoryResult
from pi_memory.curated.team_answers import (
    entry_list,
    no_answer,
    not_asked,
    plain_http_refusal,
    result_fields,
    server_words,
    too_long,
)
from pi_memory.safety.urls import redact_url

if TYPE_CHECKING:  # httpx (~100 ms to import) loads only when a team project store is configured
    import httpx

TARGET = "project"
# What a pi session's start and the MCP server's start (and the pi bridge's frozen snapshot, built at the first
# prompt and after a compaction) give a team server to answer, instead of timeoutSeconds (10 s by default): a
# team server's answer takes well under a second when it is up (a row read; a new TLS connection across a
# continent is 3 round trips, about 0.5 s), and 2 s is a pause a person notices but accepts at a start. The
# Claude Code / Codex hooks give it less (``hooks.TEAM_SHARE`` of their 2 s ceiling), since their whole answer
# must fit in that ceiling; the pi bridge's requests get 10 s from the extension, which a 10 s wait would miss.
START_WAIT_S = 2.0
# What a team request made by a pi tool call gets at most: the pi extension gives the bridge 10 s a request
# (``RPC_TIMEOUT_MS``) and marks it dead past that, so a hung team server waited the default timeoutSeconds (10 s)
# and cost the session its memory; at 8 s the tool answers "did not answer" instead.
TOOL_WAIT_S = 8.0
# The longest answer read from a team server: a store's entries and the lists a refusal carries are a few KB to a
# few hundred KB; a server sending more is broken or hostile, and reading it whole would hold it all in memory.
MAX_ANSWER_BYTES = 8 * 1024 * 1024


class TeamProjectError(RuntimeError):
    """The team server could not be reached or answered something unexpected; the message says which.
    ``waited``: the seconds it was given, when it did not answer in time."""

    def __init__(self, message: str, waited: float | None = None) -> None:
        super().__init__(message)
        self.waited = waited


class TeamProjectClient:
    """``url``: the team server; ``project``: the team's name of the store; ``token``: a bearer token of it;
    ``insecure_http``: send the token over plain HTTP to another machine all the same (the setting says so)."""

    def __init__(self, url: str, project: str, token: str | None, timeout: float = 10.0,
                 transport: httpx.BaseTransport | None = None, insecure_http: bool = False) -> None:
        import httpx

        self.url, self.project, self.timeout = url.rstrip("/"), project, timeout
        self.refusal = plain_http_refusal(self.url, token, insecure_http)  # set: no request is sent
        self.deadline: float | None = None  # time.monotonic() after which nothing is asked (:func:`bounded`)
        self.bound_for = "start"  # what set that deadline: "start" or "tool" (the words of a cut-off request)
        self._late: TeamProjectError | None = None  # the last request that was not answered in time
        headers = {"Authorization": f"Bearer {token}"} if token and not self.refusal else {}
        # No kept-alive connections: each request's socket is new, so its _Cutoff can reach it (a reused one
        # reports no connect). A team store gets a request or two per session start and per memory change.
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout, transport=transport,
                                  limits=httpx.Limits(max_keepalive_connections=0))
        self.version: int | None = None

    @property
    def name(self) -> str:
        return f"team project store {self.project!r} on {redact_url(self.url)}"

    def _call(self, method: str, **kw: Any) -> dict[str, Any]:
        import httpx

        if self.refusal:
            raise TeamProjectError(self.refusal)
        wait = self.timeout if self.deadline is None else min(self.timeout, self.deadline - time.monotonic())
        if wait <= 0.01:  # the earlier request's timeout says it best
            raise self._late or TeamProjectError(not_asked(self.name, self.bound_for), waited=0.0)
        cutoff = _Cutoff(wait)
        try:
            with self._http.stream(method, f"/projects/{self.project}/entries", timeout=wait,
                                   extensions={"trace": cutoff.trace}, **kw) as r:
                data = bytearray()  # the whole body, within the same time (the cutoff ends a server that dribbles it)
                for chunk in r.iter_bytes():
                    data += chunk
                    if len(data) > MAX_ANSWER_BYTES:  # no store's answer is this long: a broken or hostile server
                        raise TeamProjectError(too_long(self.name, MAX_ANSWER_BYTES, method))
        except TeamProjectError:
            raise
        except Exception as exc:
            if cutoff.fired or isinstance(exc, httpx.TimeoutException):  # whatever a cut socket raised
                bound = self.bound_for if wait < self.timeout else None  # a start's or a tool call's time (bounded)
                self._late = TeamProjectError(no_answer(self.name, round(wait, 2), method, bound), waited=wait)
                raise self._late from exc
            if not isinstance(exc, httpx.HTTPError):
                raise
            why = server_words(str(exc)) or "no detail"  # a protocol error can quote the server's bytes
            raise TeamProjectError(f"the {self.name} cannot be reached ({type(exc).__name__}: {why}); nothing was "
                                   "changed. Check that the server runs and teamProjectStore.url.") from exc
        finally:
            cutoff.cancel()
        text = data.decode("utf-8", errors="replace")
        try:
            body = json.loads(text)
        except ValueError:
            body = {}
        if r.status_code in (200, 409, 422) and isinstance(body, dict):
            version = body.get("version")
            if isinstance(version, int) and not isinstance(version, bool):
                self.version = version
            return {**body, "_status": r.status_code}
        said = server_words(body.get("error") if isinstance(body, dict) else None) or server_words(text)
        said = f': "{said}"' if said else ""
        hint = " Check the token in $PI_MEMORY_SERVER_TOKEN (teamProjectStore.tokenEnv)." if r.status_code == 401 else ""
        raise TeamProjectError(f"the {self.name} answered HTTP {r.status_code}{said}.{hint}")

    def entries(self) -> list[str]:
        """The store's entries now (raises :class:`TeamProjectError`)."""
        entries = entry_list(self._call("GET").get("entries") or [])
        if entries is None:
            raise TeamProjectError(f"the {self.name} sent entries pi-memory cannot read (not a list of texts); "
                                   "nothing was changed. Tell the user: the server may be a different program.")
        return entries

    def apply(self, operations: list[Any]) -> tuple[MemoryResult, list[str] | None]:
        """Send ``operations`` (:class:`~pi_memory.curated.Operation`) as one all-or-nothing batch: the server's
        result and, after a write, the store's entries (raises :class:`TeamProjectError` when there is none)."""
        ops = [op.model_dump(by_alias=True, exclude_none=True) for op in operations]
        body = self._call("POST", json={"operations": ops})
        body.pop("_status", None)
        entries = entry_list(body.pop("entries", None))
        fields = result_fields(body, operations, self.name)  # our words, the server's checked (team_answers)
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


class _Cutoff:
    """The wall-clock bound of one request: ``seconds`` after it starts, the sockets it opened are shut in
    both directions, which ends a read or write that is waiting (httpx raises a read or protocol error then;
    :attr:`fired` says it was this). The sockets come from httpcore's ``trace`` extension (the connection's TCP
    stream and, for https, its TLS stream); connecting itself is bounded by httpx's connect timeout, which is
    never more than ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._socks: list[Any] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if not event.endswith(("connect_tcp.complete", "connect_unix_socket.complete", "start_tls.complete")):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is None:
            return
        with self._lock:
            self._socks.append(sock)
            late = self.fired
        if late:  # connected just as the time ran out
            _shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            socks = list(self._socks)
        for sock in socks:
            _shut(sock)

    def cancel(self) -> None:
        self._timer.cancel()


def _shut(sock: Any) -> None:
    with contextlib.suppress(OSError, ValueError):  # closed already, or the TCP socket a TLS one took over
        sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def bounded(store: Any, seconds: float | None, latest: float | None = None, bound_for: str = "start",
            ) -> Iterator[None]:
    """Within the block, ``store``'s team project store (none: nothing to do) gets ``seconds`` from now to
    answer, and nothing past ``latest`` (a :func:`time.monotonic` value): a request still running then is cut
    off (:func:`~.team_answers.no_answer`), one asked later is not sent (the earlier one's error again, or
    :func:`~.team_answers.not_asked`). So a start that reads the store twice (the stores, then the snapshot)
    waits once. After the block every request gets ``timeoutSeconds`` again. ``seconds`` and ``latest`` both
    ``None``: no bound."""
    team = getattr(store, "team_project", None)
    ends = [t for t in (latest, None if seconds is None else time.monotonic() + seconds) if t is not None]
    if team is None or not ends:
        yield
        return
    before = team.deadline, team._late, team.bound_for
    team.deadline, team._late, team.bound_for = min(ends), None, bound_for
    try:
        yield
    finally:
        team.deadline, team._late, team.bound_for = before


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def from_settings(settings: Any) -> TeamProjectClient | None:
    """The client ``settings.team_project_store`` describes (resolved by :func:`pi_memory.config.load_settings`)."""
    team = getattr(settings, "team_project_store", None)
    if not team:
        return None
    return TeamProjectClient(team["url"], team["project"], team.get("token"), team.get("timeout", 10.0),
                             insecure_http=bool(team.get("insecureHttp")))


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


__all__ = ["START_WAIT_S", "TOOL_WAIT_S", "TeamProjectClient", "TeamProjectError", "apply", "bounded", "from_settings", "load"]
