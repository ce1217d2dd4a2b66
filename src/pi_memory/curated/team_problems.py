"""What a person is told when a team project store could not be read (``pi-memory status``, pi's ``/memory
status``): what happened, in their words, and what to do next.

The client's errors (:mod:`.team_client`, :mod:`.team_answers`) are written for a model, which should tell the
user; a person at a terminal is the one who can act, so these name the setting or the server to check instead.
The kind of failure comes from :class:`~.team_client.TeamProjectError` (``kind``, ``waited``, ``status``,
``connected``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pi_memory.curated.messages import for_person
from pi_memory.safety.urls import redact_url

_AGAIN = "then run `pi-memory status` again"
_BOUNDS = {"start": "a session's start waits at most that long for it", "tool": "a tool call in pi waits at most that "
           "long, so that pi does not give up on pi-memory", "command": "a pi command waits at most that long, so that "
           "pi does not give up on pi-memory"}  # less than teamProjectStore.timeoutSeconds (team_client.bounded)
_HTTP = {
    401: ("it did not accept the token. Check the token in $PI_MEMORY_SERVER_TOKEN (or the variable "
          "teamProjectStore.tokenEnv names)"),
    403: ("the token may not read this project. Ask whoever runs the server for access, or check "
          "teamProjectStore.project"),
    404: ("there is no such address on it. Check teamProjectStore.url (the server's address, without "
          "/projects/...) and that it is a pi-memory team server"),
}


def for_person_problem(error: Any, url: str, fallback: str | None = None) -> str:
    """The sentence for a person about ``error`` (a :class:`~.team_client.TeamProjectError`, ``None``: unknown)
    from the team server at ``url``; ``fallback``: the model's words to reword when ``error`` says nothing more
    (:func:`~.messages.for_person`)."""
    shown = redact_url(url)
    kind = getattr(error, "kind", None)
    if kind == "timeout":
        waited = f"{error.waited:g}" if error.waited is not None else "?"
        if not getattr(error, "connected", True):
            return (f"The team server at {shown} could not be connected to within {waited} s: its host name did "
                    "not resolve in time, or nothing accepted the connection. Check the host name in "
                    f"teamProjectStore.url and this machine's network, {_AGAIN}.")
        if (why := _BOUNDS.get(getattr(error, "bound", None) or "")) is not None:
            return (f"The team server at {shown} did not answer within {waited} s ({why}). It may be down or "
                    f"overloaded: check that it runs and that this machine can reach it, {_AGAIN}.")
        return (f"The team server at {shown} did not answer within {waited} s (teamProjectStore.timeoutSeconds). "
                "It may be down or overloaded: check that it runs and that this machine can reach it, "
                f"{_AGAIN}. If it is only slow, raise teamProjectStore.timeoutSeconds.")
    if kind == "refused":
        return (f"The team server at {shown} refused the connection: nothing listens at that address and port. "
                "Start it (`pi-memory serve` on its machine, or ask whoever runs it) or correct teamProjectStore.url, "
                f"{_AGAIN}.")
    if kind == "unresolved":
        host = urlsplit(url).hostname or url
        return (f"The team server's host name {host!r} does not resolve (no DNS answer for it). Check the host "
                f"name in teamProjectStore.url and this machine's network, {_AGAIN}.")
    if kind == "unreachable":
        return (f"The team server at {shown} could not be reached (a network error). Check that it runs, "
                f"teamProjectStore.url and this machine's network, {_AGAIN}.")
    if kind == "http":
        status = error.status
        what = _HTTP.get(status) or (
            "a problem on the server: tell whoever runs it (the server's log says more)" if status >= 500 else
            "an answer pi-memory did not expect: check teamProjectStore.url, and tell whoever runs the server")
        return f"The team server at {shown} answered HTTP {status}: {what}; {_AGAIN}."
    if kind == "not_ours":
        return (f"The team server at {shown} answered, but not as a pi-memory team server does: the address may "
                "reach another program, a proxy or a login page. Check that teamProjectStore.url is the address of "
                f"`pi-memory serve`, {_AGAIN}.")
    text = for_person(str(error) if error is not None else fallback) or "The team project store could not be read."
    return text[:1].upper() + text[1:]


__all__ = ["for_person_problem"]
