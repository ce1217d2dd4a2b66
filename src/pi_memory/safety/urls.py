"""URLs as they may be shown: a server address from the settings (a model server's ``baseUrl``, the team
server, a PostgreSQL URL) can carry credentials in its user part (``http://user:secret@host/v1``,
``https://<token>@host``). Every message, status line and log that names such an address shows it through
:func:`redact_url`; the request itself still uses the address as written."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit, urlunsplit

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


def redact_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (``user:***@host``), or, when it has a user part but no
    password, that user part (it may be a token: ``https://ghp_…@github.com``): ``***@host``; the values of
    query parameters named like a secret (``?api_key=***``) too. An address written without its scheme
    (``bob:pw@host/v1``) is read the same way. Anything else is returned as it is."""
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
