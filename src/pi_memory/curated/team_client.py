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
the request ends with :func:`~.team_answers.no_answer` as one that got no answer. Resolving the server's host
name is inside that time too: the request runs on a thread of its own, and a lookup that hangs (a DNS server
that does not answer) is given up at the deadline like a silent server (the thread is left to end with the
lookup; nothing it gets later is used). :func:`bounded` shortens that
time for a host's start (the Claude Code / Codex session-start hook; a pi session's and the MCP server's start
and the pi bridge's frozen snapshot, :data:`START_WAIT_S`): a server that does not answer within it costs the
start the project part only, and the requests after the block get ``timeoutSeconds`` again.

A server that did not answer in time or could not be reached is remembered for :data:`DOWN_WINDOW_S`: a start
in that time (a pi session's frozen snapshot right after its ``hello``, the MCP server's ``memory://snapshot``
after its start) does not wait for it again and reads it as unreachable at once
(:func:`~.team_answers.not_asked_again`); a tool call still asks, and any answer ends the window.
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
    not_asked_again,
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
# How long a team server that did not answer in time (or could not be reached) is not waited for again by a start
# in this process: a pi session's start asks twice (``hello`` reads the stores, then the first prompt's frozen
# snapshot), and a hung server cost it two START_WAIT_S (4 s). 30 s covers a session's start and the first prompt
# typed after it; a server back up after that is asked at the next start. Tool calls ask whatever this says.
DOWN_WINDOW_S = 30.0
# Why a request did not get a usable answer (TeamProjectError.kind): "timeout" (no answer within the time: the
# server, or resolving its host name, hung), "refused" (nothing listens at the address), "unresolved" (the host name
# does not resolve), "unreachable" (another network error), "http" (an HTTP error status: ``status``), "answer" (a
# broken answer), "not_ours" (an answer that is not a team server's: a login page, a proxy's, another program's),
# "plain_http" (not sent: plain HTTP to another machine), "not_asked" (no time was left, or a start
# in DOWN_WINDOW_S after the server was found down).
_NO_SERVER = ("timeout", "refused", "unresolved", "unreachable")
_down: dict[str, tuple[float, TeamProjectError]] = {}  # server url -> (time.monotonic() it was found down, why)
_down_lock = threading.Lock()


class TeamProjectError(RuntimeError):
    """The team server could not be reached or answered something unexpected; the message (a model's words)
    says which. ``kind``: why, in one word (see :data:`_NO_SERVER` and the comment above it); ``waited``: the
    seconds it was given, when it did not answer in time; ``status``: the HTTP status of an error answer;
    ``connected``: whether a connection was made before the time ran out (``False``: the host name did not
    resolve in time or the connection was not accepted); ``bound``: what gave it less than timeoutSeconds
    (``"start"``, ``"tool"``, ``"command"``: :func:`bounded`), ``None`` when it had them all."""

    def __init__(self, message: str, waited: float | None = None, kind: str = "answer", status: int | None = None,
                 connected: bool = True, bound: str | None = None) -> None:
        super().__init__(message)
        self.waited, self.kind, self.status, self.connected, self.bound = waited, kind, status, connected, bound


class TeamProjectClient:
    """``url``: the team server; ``project``: the team's name of the store; ``token``: a bearer token of it;
    ``insecure_http``: send the token over plain HTTP to another machine all the same (the setting says so)."""

    def __init__(self, url: str, project: str, token: str | None, timeout: float = 10.0,
                 transport: httpx.BaseTransport | None = None, insecure_http: bool = False) -> None:
        import httpx

        self.url, self.project, self.timeout = url.rstrip("/"), project, timeout
        self.refusal = plain_http_refusal(self.url, token, insecure_http)  # set: no request is sent
        self.deadline: float | None = None  # time.monotonic() after which nothing is asked (:func:`bounded`)
        self.bound_for = "start"  # what set that deadline: "start", "tool" or "command" (the words of a cut-off
        self.bound_seconds = 0.0  # request) and the seconds it gave in all (what a cut-off says it waited)
        self.once = False  # a one-shot command (the CLI): a server found down is not asked again (:func:`ask_once`)
        self._late: TeamProjectError | None = None  # the last request that was not answered in time
        self.last_error: TeamProjectError | None = None  # why the last request failed (None: it was answered)
        headers = {"Authorization": f"Bearer {token}"} if token and not self.refusal else {}
        # No kept-alive connections: each request's socket is new, so its _Cutoff can reach it (a reused one
        # reports no connect). A team store gets a request or two per session start and per memory change.
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout, transport=transport,
                                  limits=httpx.Limits(max_keepalive_connections=0))
        self.version: int | None = None
        self.limit: int | None = None  # the server's character limit of the store, as its last read said

    @property
    def name(self) -> str:
        return f"team project store {self.project!r} on {redact_url(self.url)}"

    def _call(self, method: str, **kw: Any) -> dict[str, Any]:
        """One request, its answer's JSON body (with ``_status``); raises :class:`TeamProjectError` (also kept in
        :attr:`last_error`, for a person's words: :func:`~.team_problems.for_person_problem`)."""
        try:
            body = self._ask(method, **kw)
        except TeamProjectError as exc:
            self.last_error = exc
            if exc.kind in _NO_SERVER:
                with _down_lock:
                    _down[self.url] = (time.monotonic(), exc)
            raise
        self.last_error = None
        return body

    def _ask(self, method: str, **kw: Any) -> dict[str, Any]:
        import httpx

        if self.refusal:
            raise TeamProjectError(self.refusal, kind="plain_http")
        wait = self.timeout if self.deadline is None else min(self.timeout, self.deadline - time.monotonic())
        if wait <= 0.01:  # the earlier request's timeout says it best
            raise self._late or TeamProjectError(not_asked(self.name, self.bound_for), waited=0.0, kind="not_asked")
        starting = self.deadline is not None and self.bound_for == "start"
        if (starting or self.once) and (down := recently_down(self.url)):
            raise TeamProjectError(not_asked_again(self.name, down.waited if down.kind == "timeout" else None,
                                                   DOWN_WINDOW_S, "start" if starting else "command"),
                                   kind="not_asked")
        cutoff = _Cutoff(wait)
        try:
            status, data = self._send(method, wait, cutoff, **kw)
        except TeamProjectError:
            raise
        except Exception as exc:
            if cutoff.fired or isinstance(exc, httpx.TimeoutException):  # whatever a cut socket raised
                bound = self.bound_for if wait < self.timeout else None  # a start's or a tool call's time (bounded)
                waited = round(self.bound_seconds if bound else wait, 2)  # a bound's whole wait, not what was left
                self._late = TeamProjectError(no_answer(self.name, waited, method, bound), waited=waited,
                                              kind="timeout", connected=cutoff.connected, bound=bound)
                raise self._late from exc
            if not isinstance(exc, httpx.HTTPError):
                raise
            why = server_words(str(exc)) or "no detail"  # a protocol error can quote the server's bytes
            raise TeamProjectError(f"the {self.name} cannot be reached ({type(exc).__name__}: {why}); nothing was "
                                   "changed. Check that the server runs and teamProjectStore.url.",
                                   kind=_network_kind(exc)) from exc
        finally:
            cutoff.cancel()
        with _down_lock:  # it answered: a start asks it again
            _down.pop(self.url, None)
        text = data.decode("utf-8", errors="replace")
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if status in (200, 409, 422) and not isinstance(body, dict):  # a login page, a proxy's, another program
            said = server_words(text)
            begins = f' (it begins: "{said}")' if said else ""
            raise TeamProjectError(f"the {self.name} answered HTTP {status} with something that is not a pi-memory "
                                   f"team server's answer{begins}; nothing was "
                                   "read or changed. The address may reach another program, a proxy or a login "
                                   "page: tell the user to check teamProjectStore.url.", kind="not_ours")
        if status in (200, 409, 422):
            version = body.get("version")
            if isinstance(version, int) and not isinstance(version, bool):
                self.version = version
            return {**body, "_status": status}
        said = server_words(body.get("error") if isinstance(body, dict) else None) or server_words(text)
        said = f': "{said}"' if said else ""
        hint = " Check the token in $PI_MEMORY_SERVER_TOKEN (teamProjectStore.tokenEnv)." if status == 401 else ""
        raise TeamProjectError(f"the {self.name} answered HTTP {status}{said}.{hint}", kind="http", status=status)

    def _send(self, method: str, wait: float, cutoff: _Cutoff, **kw: Any) -> tuple[int, bytes]:
        """The request on a thread of its own: ``(status, body)`` or what it raised, within ``wait`` seconds. The
        cutoff shuts its sockets at the deadline; a request with no socket yet (its host name still resolving) is
        given up here (a :class:`_Cutoff` that fired: the caller reads it as no answer) and left to end alone."""
        done, box = threading.Event(), {}

        def run() -> None:
            try:
                with self._http.stream(method, f"/projects/{self.project}/entries", timeout=wait,
                                       extensions={"trace": cutoff.trace}, **kw) as r:
                    data = bytearray()  # the whole body, within the time (the cutoff ends a server that dribbles)
                    for chunk in r.iter_bytes():
                        data += chunk
                        if len(data) > MAX_ANSWER_BYTES:  # no store's answer is this long: broken or hostile
                            raise TeamProjectError(too_long(self.name, MAX_ANSWER_BYTES, method))
                box["answer"] = (r.status_code, bytes(data))
            except BaseException as exc:  # handed to the caller
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=run, name="pi-memory-team-request", daemon=True).start()
        if not done.wait(wait):
            cutoff.fire()
            done.wait(_SHUT_GRACE_S)  # a shut socket ends its read at once; a host name being resolved does not
        if "answer" in box:
            return box["answer"]
        if "error" in box:
            raise box["error"]
        raise TimeoutError(f"no answer within {wait:g} s")  # cutoff.fired: read as no answer

    def entries(self) -> list[str]:
        """The store's entries now (raises :class:`TeamProjectError`)."""
        body = self._call("GET")
        entries = entry_list(body.get("entries"))  # missing: not a team server's answer either
        limit = body.get("limit")
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            self.limit = limit
        if entries is None:
            self.last_error = TeamProjectError(f"the {self.name} sent entries pi-memory cannot read (not a list of "
                                               "texts); nothing was changed. Tell the user: the server may be a "
                                               "different program.", kind="not_ours")
            raise self.last_error
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
    never more than ``seconds``, and resolving the host name by :meth:`TeamProjectClient._send`."""

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self.connected = False  # a TCP (or unix) connection was made
        self._socks: list[Any] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0.0), self.fire)
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
            self.connected = True
            late = self.fired
        if late:  # connected just as the time ran out
            _shut(sock)

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            socks = list(self._socks)
        for sock in socks:
            _shut(sock)

    def cancel(self) -> None:
        self._timer.cancel()


_SHUT_GRACE_S = 0.2  # how long a request whose sockets were shut is given to report it


def recently_down(url: str) -> TeamProjectError | None:
    """Why the team server at ``url`` was found down (no answer in time, or not reachable) in the last
    :data:`DOWN_WINDOW_S` seconds by this process, or ``None``."""
    with _down_lock:
        found = _down.get(url)
        if found is not None and time.monotonic() - found[0] >= DOWN_WINDOW_S:
            del _down[url]
            found = None
    return None if found is None else found[1]


def ask_once(store: Any) -> None:
    """``store``'s team project store (none: nothing to do) serves one short command (a CLI run): once a request
    found the server down, the command's later requests are not sent (``pi-memory add project ...`` read the
    store, then sent the write: a hung server cost it two waits of timeoutSeconds). A slow server that answers
    still gets every request its full time."""
    team = getattr(store, "team_project", None)
    if team is not None:
        team.once = True


def forget_down() -> None:
    """Forget every server found down (a test's fresh start)."""
    with _down_lock:
        _down.clear()


def _network_kind(exc: BaseException) -> str:
    """``refused``, ``unresolved`` or ``unreachable``: the OS error under httpx's connect error ``exc``."""
    seen: BaseException | None = exc
    for _ in range(8):  # httpx's error, from httpcore's, from the socket's
        if seen is None:
            break
        if isinstance(seen, socket.gaierror):
            return "unresolved"
        if isinstance(seen, ConnectionRefusedError):
            return "refused"
        seen = seen.__cause__ or seen.__context__
    return "unreachable"


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
    before = team.deadline, team._late, team.bound_for, team.bound_seconds
    team.deadline, team._late, team.bound_for = min(ends), None, bound_for
    team.bound_seconds = min(ends) - time.monotonic()
    try:
        yield
    finally:
        team.deadline, team._late, team.bound_for, team.bound_seconds = before


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


def server_limit(store: Any) -> int:
    """The team server's whole character limit as far as it is known here: the one its last read gave
    (``limit``), else the largest a server can have (:data:`pi_memory.config.MAX_CHAR_LIMIT`). A text longer
    than that is refused by :func:`.edits.prepare` before it is scanned or sent (the server would refuse it the
    same way)."""
    from pi_memory.config import MAX_CHAR_LIMIT

    return store.team_project.limit or MAX_CHAR_LIMIT


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


__all__ = ["DOWN_WINDOW_S", "START_WAIT_S", "TOOL_WAIT_S", "TeamProjectClient", "TeamProjectError", "apply", "ask_once",
           "bounded",
           "forget_down", "from_settings", "load", "recently_down", "server_limit"]
