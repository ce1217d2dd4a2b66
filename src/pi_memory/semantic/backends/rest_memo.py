"""What a process remembers about the memory servers it talks to: whose a token is, and which server was just
found not answering. Shared by every :class:`~.rest_client.RestBackend` of the process (a host opens one per
session, a CLI command one per command, the inspector one per view), so neither is asked again for each open.

* **Whose a token is** (``GET /whoami``): the answer is kept for the process per (server URL, token), the token
  only as a SHA-256 digest (:func:`token_key`), for :data:`USER_TTL_S`. Only an answer is kept: a user's name, or
  "no user" (an admin or the shared token, a server without the route); a failure is asked again next time.
* **A server found down** (not reachable, or no answer in time): remembered per URL until its window ends
  (``DOWN_WINDOW_S``, 30 s, set by the client); meanwhile every client of that URL fails at once with the same
  error, saying how long it is not asked again. Any answer of that server ends it.

Short-lived processes (the Claude Code / Codex hooks: one process per prompt) carry both across processes
through :func:`snapshot` and :func:`restore`, which the caller writes to a file of its own (the hook state
folder, readable by its owner only); one-shot CLI commands carry the users only, through the same file
(:func:`before_first_lookup`). What such a file holds is safe to keep on disk: URLs (with their credentials
removed by :func:`~pi_memory.safety.urls.redact_url`, and only as digests), SHA-256 digests of tokens (what
the team server itself stores, ``api_tokens.token_hash``: nothing that can be sent as a token), user names, and
the error text a person would see. Never a token in clear.
"""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any

USER_TTL_S = 600.0  # a token's user is asked again after this long (a revoked token fails its calls anyway)

_lock = threading.Lock()
_first_lookup: list[Any] = []  # run once before the first lookup of a token's user (before_first_lookup)
_users: dict[str, tuple[float, str | None]] = {}  # token_key -> (time.time() when asked, the user or None)
_down: dict[str, tuple[float, str, str]] = {}  # url_key -> (time.time() until, error kind, its text)


def token_key(base_url: str, token: str | None) -> str:
    """The digest a token's answer is kept under: SHA-256 of the URL and the token (never the token itself)."""
    return hashlib.sha256(f"pi-memory whoami\0{base_url}\0{token or ''}".encode()).hexdigest()


def url_key(base_url: str) -> str:
    return hashlib.sha256(f"pi-memory server\0{base_url}".encode()).hexdigest()


def before_first_lookup(load: Any) -> None:
    """Call ``load()`` once, just before this process first looks a token's user up (:func:`known_user`): a
    one-shot command's composition root gives it what earlier processes kept (:func:`restore`) without reading
    their file in commands that never reach a memory server."""
    with _lock:
        _first_lookup.append(load)


def known_user(key: str) -> tuple[bool, str | None]:
    """``(known, user)`` for :func:`token_key` ``key``: ``known`` when an answer younger than :data:`USER_TTL_S`
    is kept."""
    with _lock:
        pending = list(_first_lookup)
        _first_lookup.clear()
    for load in pending:
        load()
    with _lock:
        found = _users.get(key)
        if found is None or time.time() - found[0] >= USER_TTL_S:
            _users.pop(key, None)
            return False, None
        return True, found[1]


def keep_user(key: str, user: str | None) -> None:
    with _lock:
        _users[key] = (time.time(), user)


def down(base_url: str) -> tuple[float, str, str] | None:
    """``(seconds left, kind, text)`` while ``base_url`` is in a down window, else ``None``."""
    key = url_key(base_url)
    with _lock:
        found = _down.get(key)
        if found is None:
            return None
        left = found[0] - time.time()
        if left <= 0:
            del _down[key]
            return None
        return left, found[1], found[2]


def mark_down(base_url: str, window: float, kind: str, text: str) -> None:
    with _lock:
        _down[url_key(base_url)] = (time.time() + window, kind, text)


def mark_up(base_url: str) -> None:
    with _lock:
        _down.pop(url_key(base_url), None)


def snapshot() -> dict[str, Any]:
    """What is remembered now, as JSON (for a file the next short-lived process :func:`restore` s)."""
    now = time.time()
    with _lock:
        return {"users": {k: {"at": at, "user": user} for k, (at, user) in _users.items() if now - at < USER_TTL_S},
                "down": {k: {"until": until, "kind": kind, "text": text}
                         for k, (until, kind, text) in _down.items() if until > now}}


def restore(data: Any) -> None:
    """Take what a :func:`snapshot` held (read from a file: every field is checked, anything else ignored);
    what this process found itself wins over it."""
    if not isinstance(data, dict):
        return
    now = time.time()
    users, downs = data.get("users"), data.get("down")
    with _lock:
        for key, item in (users.items() if isinstance(users, dict) else ()):
            if (isinstance(item, dict) and isinstance(item.get("at"), (int, float)) and key not in _users
                    and (item.get("user") is None or isinstance(item.get("user"), str))
                    and 0 <= now - item["at"] < USER_TTL_S):
                _users[key] = (float(item["at"]), item.get("user"))
        for key, item in (downs.items() if isinstance(downs, dict) else ()):
            if (isinstance(item, dict) and isinstance(item.get("until"), (int, float)) and key not in _down
                    and item.get("kind") in KINDS and isinstance(item.get("text"), str) and item["until"] > now):
                _down[key] = (float(item["until"]), item["kind"], item["text"][:1000])


KINDS = ("unreachable", "timeout")


def forget() -> None:
    """Forget everything (tests; a user who fixed the server and wants it asked again)."""
    with _lock:
        _users.clear()
        _down.clear()
        _first_lookup.clear()


__all__ = ["KINDS", "USER_TTL_S", "before_first_lookup", "down", "forget", "keep_user", "known_user", "mark_down",
           "mark_up", "restore", "snapshot", "token_key", "url_key"]
