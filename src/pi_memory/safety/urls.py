"""URLs as they may be shown: a server address from the settings (a model server's ``baseUrl``, the team
server, a PostgreSQL URL) can carry credentials in its user part (``http://user:secret@host/v1``,
``https://<token>@host``), in its query string (``?password=…``), or, for PostgreSQL, be written in libpq's
``key=value`` form (``host=db password=secret dbname=mem``). Every message, status line and log that names
such an address shows it through :func:`redact_url` (and an error text that may quote it through
:func:`hide_url_secrets`); the request itself still uses the address as written."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import unquote, urlsplit, urlunsplit

HIDDEN = "***"


_SECRET_PARAM = re.compile(r"(?i)key|token|secret|pass|pwd|auth|sig|credential|session")


def _query(query: str) -> str:
    """``query`` with the value of each parameter whose name says it holds a secret (``api_key``, ``token``,
    ``sig``...) replaced by ``***``."""
    parts = []
    for pair in query.split("&"):
        name, eq, value = pair.partition("=")
        parts.append(f"{name}={HIDDEN}" if eq and value and _SECRET_PARAM.search(name) else pair)
    return "&".join(parts)


def _user_part(userinfo: str) -> str:
    user, colon, _password = userinfo.partition(":")
    return f"{user}:{HIDDEN}" if colon else HIDDEN


# libpq's key=value connection string: ``keyword = value``, the value bare (backslash escapes) or in single
# quotes (``'a b'``, with ``\'`` and ``\\`` inside)
_CONNINFO_START = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*=")
_CONNINFO_PAIR = re.compile(r"(\s*)([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*)('(?:[^'\\]|\\.)*'|(?:[^\s'\\]|\\.)*)")


def _conninfo(text: str) -> str:
    """A libpq ``key=value`` string with the value of every keyword named like a secret (``password``,
    ``sslpassword``...) replaced by ``***``. From the first stretch that cannot be read as ``key=value`` on, the
    rest is hidden too: a mistyped ``password SuperSecret`` would otherwise be shown."""
    out, pos = [], 0
    while pos < len(text):
        m = _CONNINFO_PAIR.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip():
                out.append(("" if not out else " ") + HIDDEN)
            break
        space, name, eq, value = m.groups()
        shown = HIDDEN if value and _SECRET_PARAM.search(name) else redact_url(value) if "@" in value else value
        out.append(f"{space}{name}{eq}{shown}")
        pos = m.end()
    return "".join(out)


def redact_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (``user:***@host``), or, when it has a user part but no
    password, that user part (it may be a token: ``https://ghp_…@github.com``): ``***@host``; the values of
    query parameters named like a secret (``?api_key=***``, ``?password=***``) too. An address written without
    its scheme (``bob:pw@host/v1``) is read the same way, and a libpq ``key=value`` string (``host=db
    password=*** dbname=mem``) hides the values of its secret keywords. Anything else is returned as it is."""
    if _CONNINFO_START.match(url):
        return _conninfo(url)
    if "://" not in url:
        head, at, tail = url.partition("@")
        return f"{_user_part(head)}@{tail}" if at and "/" not in head else url
    try:
        parts = urlsplit(url)
        password, user = parts.password, parts.username
    except ValueError:  # an invalid port or bracket: no user part can be told apart, mask up to the last "@"
        head, at, tail = url.rpartition("@")
        scheme, sep, _ = head.partition("://")
        return f"{scheme}{sep}{HIDDEN}@{tail}" if at and sep else url
    if password is not None or user:
        host = parts.netloc.rpartition("@")[2]
        shown = f"{user}:{HIDDEN}" if password is not None else HIDDEN
        parts = parts._replace(netloc=f"{shown}@{host}")
    if parts.query:
        parts = parts._replace(query=_query(parts.query))
    return urlunsplit(parts)


_FRAGMENT = re.compile(r"[^\s='\"@:/?&]{3,}")


def hide_url_secrets(text: str, url: str) -> str:
    """``text`` (an error message of a driver, say) without any piece of ``url`` that :func:`redact_url` hides:
    a message may quote the address, or a part of it, as it was written."""
    hidden = {f for f in _FRAGMENT.findall(url) if f not in set(_FRAGMENT.findall(redact_url(url)))}
    hidden |= {unquote(f) for f in hidden}
    for fragment in sorted(hidden, key=len, reverse=True):
        text = text.replace(fragment, HIDDEN)
    return text


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``, written with or without brackets)."""
    host = host.strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def plain_http_beyond_loopback(url: str) -> bool:
    """True when ``url`` is plain ``http://`` to a host that is not this machine: what is sent there (a bearer
    token) can be read by anyone on the network between."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
    except ValueError:
        return False
    return parts.scheme.lower() == "http" and not is_loopback_host(host)
