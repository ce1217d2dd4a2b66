"""URLs as they may be shown: a server address from the settings (a model server's ``baseUrl``, the team
server, a PostgreSQL URL) can carry credentials in its user part (``http://user:secret@host/v1``,
``https://<token>@host``). Every message, status line and log that names such an address shows it through
:func:`redact_url`; the request itself still uses the address as written."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

HIDDEN = "***"


def redact_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (``user:***@host``), or, when it has a user part but no
    password, that user part (it may be a token: ``https://ghp_…@github.com``): ``***@host``. Anything that
    does not parse as a URL with a user part is returned as it is."""
    try:
        parts = urlsplit(url)
        password, user = parts.password, parts.username
    except ValueError:  # an invalid port or bracket: no user part can be told apart, mask up to the last "@"
        head, at, tail = url.rpartition("@")
        scheme, sep, _ = head.partition("://")
        return f"{scheme}{sep}{HIDDEN}@{tail}" if at and sep else url
    if password is None and not user:
        return url
    host = parts.netloc.rpartition("@")[2]
    shown = f"{user}:{HIDDEN}" if password is not None else HIDDEN
    return urlunsplit(parts._replace(netloc=f"{shown}@{host}"))
