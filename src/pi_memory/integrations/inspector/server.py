"""The inspector's web server: loopback only, a random token in the URL, an anti-CSRF header on every write.

Access (as Jupyter does): the URL ``pi-memory ui`` prints carries ``?token=...``; a request with it gets an
HttpOnly, SameSite=Strict cookie and a redirect to the same page without the token, so the token leaves the
address bar and the history. Every request needs that cookie or the token (403 otherwise), a ``Host`` of
``127.0.0.1``/``localhost``/``[::1]`` (403 otherwise: a DNS-rebinding page names its own host), and every
request that is not GET/HEAD needs the header ``X-PI-Memory-CSRF`` with the page's CSRF token (a form or a
script of another site cannot send a custom header to this origin without a CORS preflight, which is never
granted). Static files (htmx, the stylesheet) are public: they hold nothing of the user's.
"""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

CSRF_HEADER = "X-PI-Memory-CSRF"
COOKIE = "pi_memory_ui"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
STATIC = Path(__file__).parent / "static"
SAFE_METHODS = ("GET", "HEAD")
# Defence in depth behind autoescaping: only our own files run (htmx), nothing may frame the page (a framed
# button could be clicked by a trick), nothing is cached. Inline style attributes draw the usage bars.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                               "img-src 'self' data:; connect-src 'self'; form-action 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class InspectorError(Exception):
    """The inspector cannot start as asked (a non-loopback host); the message says what to do."""


def check_loopback(host: str) -> str:
    """``host`` when it is a loopback address or ``localhost``; raises :class:`InspectorError` otherwise (the
    inspector shows and changes everything pi-memory keeps, so it never listens on a network)."""
    if host == "localhost":
        return host
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise InspectorError(f"refusing to listen on {host}: the memory inspector shows and changes everything "
                         "pi-memory keeps, so it only listens on this computer (127.0.0.1). Leave --host out, "
                         "or reach it from elsewhere through an SSH tunnel (ssh -L).")


@dataclass
class Tokens:
    """The access token (in the printed URL) and the CSRF token (in every page, sent back as a header)."""

    access: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    def url(self, base: str, path: str = "/") -> str:
        return f"{base}{path}?{urlencode({'token': self.access})}"


def _refuse(text: str) -> Response:
    return PlainTextResponse(text, status_code=403)


def _host_name(request: Request) -> str:
    host = request.headers.get("host", "")
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard(BaseHTTPMiddleware):
    """Host, token and CSRF checks before any route (see the module docstring)."""

    def __init__(self, app, tokens: Tokens):
        super().__init__(app)
        self.tokens = tokens

    async def dispatch(self, request: Request, call_next):
        response = await self._check(request, call_next)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    async def _check(self, request: Request, call_next):
        if _host_name(request) not in LOOPBACK_NAMES:
            return _refuse("This inspector answers only to http://127.0.0.1 or http://localhost addresses. Open "
                           "the URL that `pi-memory ui` printed.")
        if request.url.path.startswith("/static/"):
            return await call_next(request)
        cookie = f"{COOKIE}_{request.url.port or 80}"
        given = request.query_params.get("token")
        good = lambda value: bool(value) and secrets.compare_digest(value, self.tokens.access)  # noqa: E731
        if given is not None and good(given) and request.method in SAFE_METHODS:
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
            response = RedirectResponse(target, status_code=303)
            response.set_cookie(cookie, self.tokens.access, httponly=True, samesite="strict", path="/")
            return response
        if not (good(request.cookies.get(cookie)) or good(given)):
            return _refuse("This page needs the token of this inspector: open the full URL that `pi-memory ui` "
                           "printed (it ends in ?token=...), or start `pi-memory ui` again for a new one.")
        if request.method not in SAFE_METHODS:
            header = request.headers.get(CSRF_HEADER, "")
            if not (header and secrets.compare_digest(header, self.tokens.csrf)):
                return _refuse(f"Refused: a change needs the {CSRF_HEADER} header this inspector's pages send. "
                               "Make changes from the inspector page itself (reload it if it is old).")
        return await call_next(request)


def create_app(memory, tokens: Tokens | None = None, server=None) -> Starlette:
    """The inspector app over ``memory`` (:func:`pi_memory.runtime.open_memory`); ``tokens`` default: new ones.
    ``server``: a :class:`~pi_memory.integrations.inspector.team.ServerChoice` (``pi-memory ui --server``);
    without it a team server comes from the semantic settings, if they name one (:mod:`.team`).

    Handlers are ``async`` and call the library directly: one person's local page, so requests run one at a
    time on the event loop and the memory's connections stay on one thread."""
    from pi_memory.integrations.inspector import views_audit, views_search, views_stores
    from pi_memory.integrations.inspector.render import Renderer
    from pi_memory.integrations.inspector.team import TeamLink

    tokens = tokens or Tokens()
    renderer = Renderer(memory, tokens)
    team = TeamLink(memory, server)
    routes = [Route("/", lambda request: RedirectResponse("/stores", status_code=303))]
    routes += views_stores.routes(memory, renderer)
    for module in (views_search, views_audit):
        routes += module.routes(memory, renderer, team)
    routes.append(Mount("/static", app=StaticFiles(directory=STATIC), name="static"))
    app = Starlette(routes=routes, middleware=[Middleware(Guard, tokens=tokens)])
    app.state.tokens = tokens
    app.state.team = team
    return app
