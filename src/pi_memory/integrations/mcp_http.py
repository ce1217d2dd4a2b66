"""``pi-memory mcp --http``: the same MCP server over streamable HTTP (mcp SDK), behind a bearer token.

One process is one :class:`pi_memory.session.AgentSession` (the same background worker as on stdio) serving
every client that connects to ``http://HOST:PORT/mcp``, e.g. Codex with ``url = "http://127.0.0.1:8766/mcp"``
and ``bearer_token_env_var``, or Claude Code with ``{"type": "http", "url": ..., "headers": {"Authorization":
"Bearer ..."}}``.

Auth: every HTTP request needs ``Authorization: Bearer <token>`` (compared in constant time); otherwise 401.
The token is ``--token`` (which other users of the machine can read in ``ps``), else what ``--token-file``
holds, else ``$PI_MEMORY_MCP_TOKEN``, else generated for this run and written to standard error. A
static check in front of the SDK's app keeps it to one shared secret (as ``pi-memory serve`` does); the SDK's
OAuth resource-server mode is for per-user tokens, which a local memory does not have. A bind beyond loopback
needs a token you chose, at least 16 characters, and HTTPS (``--tls-cert`` and ``--tls-key``) unless
``--insecure-http`` says a proxy in front adds it, as for ``pi-memory serve``; on loopback the SDK's
DNS-rebinding protection (Host and Origin checks) is on as well.

A request body holding a lone surrogate escape (``"\\ud83d"``, what ``JSON.stringify`` writes for a string cut
inside an emoji) is read with U+FFFD in its place, as on stdio (:func:`pi_memory.integrations.mcp_stdio.clean_line`;
:class:`CleanBodies`): the SDK's JSON parser would refuse the whole request.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_memory.runtime import Memory
from pi_memory.semantic.backends.rest_runner import (
    MIN_NETWORK_TOKEN_CHARS,
    ServeError,
    bind_socket,
    is_loopback,
)
from pi_memory.session import INDEX_EVERY_S, AgentSession

TOKEN_ENV = "PI_MEMORY_MCP_TOKEN"
DEFAULT_PORT = 8766
PATH = "/mcp"


def resolve_token(token: str | None, host: str) -> tuple[str, bool]:
    """``(token, generated)``; raises :class:`ServeError` for an empty or unsafe token or an unsafe bind."""
    chosen = token if token is not None else os.environ.get(TOKEN_ENV)
    if chosen is not None:
        chosen = chosen.strip()
        if not chosen or any(ord(c) < 33 or ord(c) > 126 for c in chosen):
            raise ServeError("the MCP token must be printable ASCII on one line, without spaces; check the one "
                             f"given with --token, --token-file or ${TOKEN_ENV}")
    if is_loopback(host):
        return (chosen, False) if chosen else (secrets.token_urlsafe(32), True)
    if not chosen:
        raise ServeError(f"refusing to serve MCP on {host!r} (reachable from other machines) without a token: pass "
                         f"--token or set ${TOKEN_ENV}, and give the same token to the clients. Or keep --host 127.0.0.1.")
    if len(chosen) < MIN_NETWORK_TOKEN_CHARS:
        raise ServeError(f"refusing to serve MCP on {host!r} with a token of {len(chosen)} characters; use at least "
                         f"{MIN_NETWORK_TOKEN_CHARS} (e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)")
    return chosen, False


def token_from_file(path: Path | str, what: str = "MCP token", env: str = TOKEN_ENV) -> str:
    """The token ``path`` holds (``--token-file`` of ``mcp --http`` and ``serve``: the whole file, blanks around
    it dropped, as ``pi-memory ui --token-file`` reads it); raises :class:`ServeError` when the file cannot be
    read or holds nothing. ``what`` and ``env``: the token's name and variable, for the refusal."""
    try:
        token = Path(path).expanduser().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise ServeError(f"cannot read the {what} from {path} ({reason}); give a file that holds only the "
                         f"token, or set ${env} instead") from exc
    if not token:
        raise ServeError(f"the token file {path} is empty; write the token in it, or set ${env} instead")
    return token


def check_tls(host: str, tls: tuple[str, str] | None, insecure_http: bool) -> None:
    """Refuse to serve plain HTTP beyond loopback, as ``pi-memory serve`` does (raises :class:`ServeError`)."""
    if not is_loopback(host) and tls is None and not insecure_http:
        raise ServeError(f"refusing to serve MCP over plain HTTP on {host!r}: the token and every memory would "
                         "cross the network readable. Pass --tls-cert and --tls-key (HTTPS), or --insecure-http "
                         "when a proxy in front adds TLS. Or keep --host 127.0.0.1.")


class _Stopped(Exception):
    pass


class CleanBodies:
    """ASGI middleware: a request body with a lone surrogate escape is passed on with U+FFFD in its place
    (see the module docstring); every other request passes untouched."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        from pi_memory.integrations.mcp_stdio import clean_line

        chunks, message = [], {"more_body": True}
        while message.get("more_body"):
            message = await receive()
            if message["type"] != "http.request":  # the client went away: the app sees it as it was
                break
            chunks.append(message.get("body", b""))
        body = b"".join(chunks)
        if b"\\u" in body or b"\\U" in body:
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:  # the SDK answers that itself
                text = None
            cleaned = clean_line(text) if text is not None else None
            if cleaned is not None and cleaned is not text:
                body = cleaned.encode("utf-8")
                headers = [(k, v) for k, v in scope.get("headers") or [] if k.lower() != b"content-length"]
                scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class BearerAuth:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401; lifespan passes."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self._token = app, token.encode()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            header = dict(scope.get("headers") or []).get(b"authorization", b"")
            scheme, _, given = header.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self._token):
                body = b'{"error": "missing or wrong bearer token: send Authorization: Bearer <token>"}'
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="pi-memory"'),
                    (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def serve_http(memory: Memory, host: str = "127.0.0.1", port: int = DEFAULT_PORT, token: str | None = None,
               index_every: float = INDEX_EVERY_S, report: Callable[[dict[str, Any]], None] | None = None,
               say: Callable[[str], None] | None = None, tls: tuple[str, str] | None = None,
               insecure_http: bool = False) -> bool:
    """Serve ``memory`` at ``http://host:port/mcp`` (``https://`` with ``tls``: ``(certfile, keyfile)``) until
    SIGINT / SIGTERM. ``report`` gets ``{"event": "started", "transport": "streamable-http", "url", "dataDir",
    "tools", "token": "given" | "generated", "indexIntervalSeconds", "semantic"}`` once the socket accepts
    connections and ``{"event": "stopped", ...}`` as on stdio; ``say`` gets the generated token (never
    ``report``). A bind beyond loopback needs ``tls`` or ``insecure_http`` (:func:`check_tls`). Returns whether
    the worker finished."""
    import uvicorn

    from pi_memory.integrations.mcp_server import SHUTDOWN_WAIT_S, build_server

    token, generated = resolve_token(token, host)
    check_tls(host, tls, insecure_http)
    session = AgentSession(memory.cwd, memory=memory)
    server = build_server(memory, session)
    app = BearerAuth(CleanBodies(server.streamable_http_app(streamable_http_path=PATH, host=host.strip("[]"))), token)
    sock = bind_socket(host, port)
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    url = f"{'https' if tls else 'http'}://{shown}:{sock.getsockname()[1]}{PATH}"
    background = index_every > 0

    class Server(uvicorn.Server):
        async def startup(self, sockets=None) -> None:
            await super().startup(sockets=sockets)
            if report:
                report({"event": "started", "transport": "streamable-http", "url": url,
                        "dataDir": str(memory.settings.data_dir), "tools": [t.name for t in memory.tools()],
                        "token": "generated" if generated else "given",
                        "indexIntervalSeconds": index_every if background else None,
                        "semantic": memory.semantic_status})
            if generated and say:
                say(f"token (generated for this run; pass --token or set ${TOKEN_ENV} to keep one): {token}")

    def stop(signum: int, frame: object) -> None:  # uvicorn re-raises the signal it caught once it has shut down
        raise _Stopped

    logging.getLogger("mcp").setLevel(logging.WARNING)
    main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)} if main else {}
    try:
        # Indexing off still starts the session (default blocks, integrity check), with no background job.
        session.start(catch_up=background, every=index_every if background else None, dream=background)
        tls_options = {"ssl_certfile": tls[0], "ssl_keyfile": tls[1]} if tls else {}
        Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", **tls_options)).run(
            sockets=[sock])
    except _Stopped:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
        finished = session.shutdown(SHUTDOWN_WAIT_S)
        if report:
            report({"event": "stopped", "workerFinished": finished, "worker": session.status()})
    return finished
