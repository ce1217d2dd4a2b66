"""The memory inspector: ``pi-memory ui``, a local web page to see, search, correct and audit what pi-memory keeps.

Public API::

    app = create_app(memory, tokens=None)      # a Starlette app over runtime.open_memory(...)
    with run_inspector(memory, port=0) as running:   # uvicorn on 127.0.0.1 in a thread
        running.url                            # http://127.0.0.1:PORT/?token=...

A host like the CLI: every view is a thin page over a library call (``insights.store_usage``, ``MemoryStore``,
the standing and block stores, the semantic service's ``list``/``history``/``recall_preview`` (on a team server: :mod:`.team`), the
``session_search`` tool, ``prompt.build_context``, ``learning.list_jobs``/``undo_job``/``tokens_per_day``,
``SkillStore``, the index's repair and outcome records). Security: :mod:`.server`.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from pi_memory.integrations.inspector.server import (
    COOKIE,
    CSRF_HEADER,
    InspectorError,
    Tokens,
    check_loopback,
    create_app,
)
from pi_memory.integrations.inspector.team import ServerChoice, TeamStatus

DEFAULT_HOST = "127.0.0.1"


@dataclass
class Running:
    """A started inspector: ``url`` (with the token), ``base`` (without), ``tokens``, ``server`` (stop it)."""

    base: str
    tokens: Tokens
    server: object

    @property
    def url(self) -> str:
        return self.tokens.url(self.base)


def _check_port(host: str, port: int) -> None:
    """Refuse a port another program holds, in words (uvicorn would only log it from its thread)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise InspectorError(f"port {port} on {host} cannot be used ({exc.strerror or exc}); another program "
                                 "may hold it. Pick another --port, or leave it out for a free one.") from exc


@contextmanager
def run_inspector(memory, host: str = DEFAULT_HOST, port: int = 0, tokens: Tokens | None = None,
                  server: ServerChoice | None = None):
    """Serve the inspector over ``memory`` on ``host`` (loopback only, :func:`check_loopback`) and ``port``
    (0: a free one) in a background thread while the ``with`` block runs. ``server``: a team server for the
    semantic views (``pi-memory ui --server``; :mod:`.team`)."""
    from pi_memory.semantic.backends.rest_runner import ServerThread

    check_loopback(host)
    if port:
        _check_port(host, port)
    tokens = tokens or Tokens()
    app = create_app(memory, tokens, server)
    thread = ServerThread(app, host=host, port=port)
    try:
        with thread:
            shown = f"[{host}]" if ":" in host else host
            yield Running(f"http://{shown}:{thread.port}", tokens, thread)
    finally:
        app.state.team.close()


__all__ = ["COOKIE", "CSRF_HEADER", "DEFAULT_HOST", "InspectorError", "Running", "ServerChoice", "TeamStatus",
           "Tokens", "check_loopback", "create_app", "run_inspector"]
