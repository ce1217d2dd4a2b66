"""Running the REST server: the bind and token rules (:func:`check_bind`), the default backend factory, the
capture function for ``infer=true`` adds, :func:`serve` for ``pi-memory serve``, and :class:`ServerThread`
for tests and demos."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp

from pi_memory.safety.urls import is_loopback_host as is_loopback
from pi_memory.semantic.backend import SemanticBackend
from pi_memory.semantic.backends.rest_app import create_app
from pi_memory.semantic.backends.rest_client import TOKEN_ENV
from pi_memory.semantic.backends.rest_handlers import BackendFactory, CaptureFn
from pi_memory.semantic.models import Scope

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MIN_NETWORK_TOKEN_CHARS = 16  # about 96 bits from token_urlsafe's alphabet: not guessable over a network


class ServeError(RuntimeError):
    """The server cannot start as asked (unsafe bind, bad token); the message says what to change."""


def resolve_token(token: str | None) -> tuple[str, bool]:
    """``(token, generated)``: ``token`` if given, else ``$PI_MEMORY_SERVER_TOKEN``, else a new random one."""
    for candidate in (token, os.environ.get(TOKEN_ENV)):
        if candidate is not None:
            candidate = candidate.strip()
            if not candidate:
                raise ServeError(f"the server token is empty; pass --token or set ${TOKEN_ENV} to a secret value")
            if any(ord(c) < 33 or ord(c) > 126 for c in candidate):
                raise ServeError("the server token must be printable ASCII without spaces")
            return candidate, False
    return secrets.token_urlsafe(32), True


def check_bind(host: str, token: str, generated: bool) -> None:
    """Refuse to listen beyond this machine without a deliberately chosen, long enough token."""
    if is_loopback(host):
        return
    if generated:
        raise ServeError(f"refusing to listen on {host!r} (reachable from other machines) without a token you chose: "
                         f"pass --token or set ${TOKEN_ENV}, and give the same token to the clients. "
                         f"Or keep the default host {DEFAULT_HOST}.")
    if len(token) < MIN_NETWORK_TOKEN_CHARS:
        raise ServeError(f"refusing to listen on {host!r} with a token of {len(token)} characters; use at least "
                         f"{MIN_NETWORK_TOKEN_CHARS} (e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)")


def check_tls(certfile: str, keyfile: str) -> None:
    """Refuse, before anything starts, a certificate and key that HTTPS could not use (uvicorn would end in a
    traceback): a missing or unreadable file, a file that is no PEM certificate or key, a key locked by a
    passphrase (the server could not ask for it), a key that does not belong to the certificate."""
    import ssl

    texts = {}
    for option, path, what, mark in (("--tls-cert", certfile, "certificate", "-----BEGIN CERTIFICATE-----"),
                                     ("--tls-key", keyfile, "private key", "PRIVATE KEY-----")):
        if not Path(path).is_file():
            raise ServeError(f"{option} {path} is not a file; name the PEM file of the server's {what}.")
        try:
            texts[option] = Path(path).read_text(encoding="ascii", errors="replace")
        except OSError as exc:
            raise ServeError(f"cannot read {option} {path}: {exc.strerror or exc}. Check its permissions.") from None
        if mark not in texts[option]:
            raise ServeError(f"{option} {path} holds no PEM {what} (a block starting with "
                             f"{'-----BEGIN CERTIFICATE-----' if what == 'certificate' else '-----BEGIN PRIVATE KEY-----'}); "
                             f"name the {what} file in PEM form. A pair for a test: `openssl req -x509 -newkey "
                             "rsa:2048 -nodes -keyout key.pem -out cert.pem -subj /CN=localhost`.")
    if "ENCRYPTED" in texts["--tls-key"]:
        raise ServeError(f"--tls-key {keyfile} is locked by a passphrase, which the server cannot ask for; give it a "
                         "copy without one (`openssl pkey -in KEY -out key-open.pem`), readable by you only.")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(certfile, keyfile, password=lambda: b"")
    except ssl.SSLError as exc:
        why = ("the key does not belong to the certificate" if "KEY_VALUES_MISMATCH" in str(exc) else
               f"OpenSSL cannot load them: {exc.reason or exc}")
        raise ServeError(f"cannot serve HTTPS with --tls-cert {certfile} and --tls-key {keyfile}: {why}. Give the "
                         "certificate and its own private key, both PEM.") from None


def _given_token(token: str | None) -> str | None:
    """The shared token the caller chose (``token`` or ``$PI_MEMORY_SERVER_TOKEN``), checked; ``None`` if none."""
    if token is None and os.environ.get(TOKEN_ENV) is None:
        return None
    return resolve_token(token)[0]


def embedded_backend_factory(data_dir: Path | str, embedder: dict[str, Any] | None = None, *,
                             on_clean: Callable[[Any], None] | None = None) -> BackendFactory:
    """A factory for the default backend: the index database in ``data_dir``; ``embedder``: the settings'
    ``embedder`` block (default: the bundled model). ``on_clean`` (``serve``): the store's credential-looking
    ids are rewritten first (:func:`pi_memory.semantic.embedded_ids.clean_embedded_ids`) and it gets the report
    when that rewrote anything."""

    def build() -> SemanticBackend:
        from pi_memory.embed import get_embedder
        from pi_memory.index.db import open_index
        from pi_memory.semantic.embedded import EmbeddedBackend

        conn = open_index(Path(data_dir))
        if on_clean is not None:
            from pi_memory.semantic.embedded_ids import clean_embedded_ids

            report = clean_embedded_ids(conn)
            if report.total:
                on_clean(report)
        return EmbeddedBackend(conn, get_embedder(embedder))

    return build


def model_capture(model: Any, custom_instructions: str | None = None,
                  max_input_tokens: int | None = None) -> CaptureFn:
    """A ``CaptureFn`` running :func:`pi_memory.semantic.capture.capture_turn` with ``model``: the user messages
    of the request are the turn's user text, the others its assistant text. A request's ``prompt`` replaces
    ``custom_instructions``; ``max_input_tokens``: the settings' ``captureMaxInputTokens`` (default: the
    pipeline's). (The pipeline stores no caller metadata on the facts it writes.) With the embedded backend the
    outcome is kept in the server's index (:mod:`pi_memory.semantic.outcomes`)."""
    from pi_memory.semantic.capture import capture_turn
    from pi_memory.semantic.capture_windows import DEFAULT_MAX_INPUT_TOKENS

    budget = max_input_tokens or DEFAULT_MAX_INPUT_TOKENS

    def capture(backend: SemanticBackend, *, messages: list[dict[str, str]], scope: Scope, metadata: dict[str, Any],
                source: dict[str, Any] | None, observed_at: str | None, instructions: str | None) -> Any:
        user = "\n\n".join(m["content"] for m in messages if m["role"] == "user")
        assistant = "\n\n".join(m["content"] for m in messages if m["role"] != "user")
        report = capture_turn(backend, model, user_text=user, assistant_text=assistant, scope=scope,
                              observed_at=observed_at, source=source,
                              custom_instructions=instructions or custom_instructions, max_input_tokens=budget)
        conn = getattr(backend, "conn", None)  # the embedded backend: the server's index keeps the outcome too
        if conn is not None:
            from pi_memory.semantic.outcomes import record_capture

            record_capture(conn, report, scope.project_id)
        return report

    return capture


class ServerThread:
    """Run an app with uvicorn in a background thread (tests, demos): ``with ServerThread(app) as s: s.url``.

    ``port=0`` picks a free port; ``url`` is known once the context is entered."""

    def __init__(self, app: ASGIApp, host: str = DEFAULT_HOST, port: int = 0, *, startup_timeout: float = 20.0):
        import uvicorn

        self.host = host
        self.port = port
        self._timeout = startup_timeout
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                                    lifespan="off", access_log=False))
        self._thread = threading.Thread(target=self._run, name="pi-memory-server", daemon=True)

    def _run(self) -> None:
        asyncio.run(self.server.serve())

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + self._timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise ServeError(f"the test server did not start on {self.host}:{self.port}")
            time.sleep(0.01)
        sockets = [s for srv in getattr(self.server, "servers", []) for s in srv.sockets]
        if sockets:
            self.port = sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


ServeReport = Callable[[dict[str, Any]], None]
"""Gets the server's events: ``{"event": "listening", "url", "host", "port", "backend": "embedded", "dataDir",
"auth": True, "token": "given" | "generated", "infer": bool}`` once the socket accepts connections, and
``{"event": "stopped", "url", "signal": "SIGINT" | "SIGTERM" | None}`` after shutdown. Never the token itself."""


class _Stopped(Exception):
    """Raised by our signal handlers once uvicorn has shut down and re-raises the signal it caught."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def bind_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` (0: a free port), not yet listening. Raises :class:`ServeError`
    saying what to change when the address is taken or unusable."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}. Choose another --port (0 picks a "
                         "free one), stop the program using it, or check --host") from exc
    return sock


def say_event(say: Callable[[str], None]) -> ServeReport:
    """A :data:`ServeReport` writing the events as sentences through ``say``."""

    def report(event: dict[str, Any]) -> None:
        if event["event"] == "listening":
            say(f"pi-memory server: {event['url']} (data: {event['dataDir']})")
            if event["token"] == "given":
                say("token: the one given with --token / $" + TOKEN_ENV)
            say("clients: semantic backend \"self-hosted\" with this URL and token; stop with Ctrl+C")
        else:
            say(f"pi-memory server stopped ({event['signal'] or 'shut down'}).")

    return report


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, token: str | None = None,
          data_dir: Path | str | None = None, *, capture: CaptureFn | None = None,
          embedder: dict[str, Any] | None = None, log_level: str = "warning",
          announce: Callable[[str], None] | None = None, report: ServeReport | None = None,
          database_url: str | None = None, tls: tuple[str, str] | None = None, insecure_http: bool = False,
          ef_search: int | None = None, project_char_limit: int | None = None,
          reembed_every: float | None = None) -> None:
    """Serve semantic memory until SIGINT / SIGTERM, then return: the embedded store of ``data_dir`` (default:
    the configured data root), or with ``database_url`` the PostgreSQL team store (:mod:`.team_server`: per-user
    tokens from its ``api_tokens`` table, every write audited). ``report`` gets the :data:`ServeReport` events
    (default: sentences through ``announce``, default standard error). A generated token is always written
    through ``announce`` (never to ``report``). ``tls``: ``(certfile, keyfile)`` for HTTPS; a bind beyond
    loopback needs it or ``insecure_http``. ``ef_search`` (team store): HNSW candidates per vector query;
    ``project_char_limit`` (team store): the character limit of the shared project stores; ``reembed_every``
    (team store): seconds between the passes embedding the queued memories (default
    :data:`~.team_reembed.EVERY_S`).

    Raises :class:`ServeError` before listening when the host/token combination is unsafe, the address cannot be
    bound, or the memory cannot be opened."""
    import uvicorn

    if tls is not None:
        check_tls(*tls)
    team = None
    say = announce or (lambda line: print(line, file=sys.stderr, flush=True))

    def cleaned(report: Any) -> None:  # stored ids that held a credential, rewritten at this start
        for line in report.lines():
            say(line)

    if database_url:
        from pi_memory.semantic.backends.team_server import open_team

        team = open_team(database_url, embedder, shared_token=_given_token(token), ef_search=ef_search,
                         project_char_limit=project_char_limit, on_clean=cleaned)
        token, generated = (None, False) if team.per_user else resolve_token(token)
        if not team.per_user:  # per-user tokens: a token is required on every bind anyway
            check_bind(host, token, generated)
    else:
        token, generated = resolve_token(token)
        check_bind(host, token, generated)
    if not is_loopback(host) and tls is None and not insecure_http:
        raise ServeError(f"refusing to serve plain HTTP on {host!r}: tokens would cross the network readable. Pass "
                         "--tls-cert and --tls-key (HTTPS), or --insecure-http when a proxy in front adds TLS.")
    if team is not None:
        backend, where = team.backend, team.where
    else:
        if data_dir is None:
            from pi_memory.config import load_settings

            data_dir = load_settings().data_dir
        data_dir = Path(data_dir).expanduser().resolve()
        where = str(data_dir)
        try:  # open now, so a broken index or embedder setting stops the start instead of every request
            backend = embedded_backend_factory(data_dir, embedder, on_clean=cleaned)()
        except Exception as exc:
            raise ServeError(f"cannot open the semantic memory in {data_dir}: {exc}") from exc
    app = create_app(lambda: backend, token, capture=capture, tokens=team.tokens if team else None,
                     projects=team.projects if team else None)
    report = report or say_event(say)
    sock = bind_socket(host, port)
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    url = f"{'https' if tls else 'http'}://{shown}:{sock.getsockname()[1]}"

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            report({"event": "listening", "url": url, "host": host, "port": sock.getsockname()[1],
                    "backend": backend.name, "dataDir": where, "auth": True,
                    "token": "per-user" if team is not None and team.per_user else
                             "generated" if generated else "given", "infer": capture is not None})
            if generated:
                say(f"token (generated for this run; pass --token or set ${TOKEN_ENV} to keep one): {token}")

    def stopped(signum: int, frame: object) -> None:
        raise _Stopped(signum)

    tls_options = {"ssl_certfile": tls[0], "ssl_keyfile": tls[1]} if tls else {}
    server = Server(uvicorn.Config(app, log_level=log_level, access_log=False, **tls_options))
    main = threading.current_thread() is threading.main_thread()  # only there can signal handlers be set
    previous = {sig: signal.signal(sig, stopped) for sig in (signal.SIGINT, signal.SIGTERM)} if main else {}
    caught = None
    if team is not None:  # what an import queues while the server runs gets its vectors without a restart
        team.start_reembed(every=reembed_every, report=lambda done, left: say(
            f"embedded {done} queued {'memory' if done == 1 else 'memories'} (imported or redacted without a "
            f"vector of this server's model); {left} still queued"))
    try:
        server.run(sockets=[sock])
    except _Stopped as exc:  # uvicorn shut down gracefully, then re-raised the signal it had caught
        caught = exc.signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
        if team is not None:
            team.close()
    report({"event": "stopped", "url": url, "signal": signal.Signals(caught).name if caught else None})
