"""One-shot CLI commands share whose a team server's token is, as the prompt hooks do.

A self-hosted backend whose settings name no ``"userId"`` asks the server ``GET /whoami`` (up to 1 s) and keeps
the answer for its process (:mod:`pi_memory.semantic.backends.rest_memo`). Each ``pi-memory semantic ...`` is a
process of its own, so every command asked again. :func:`share` (called by :func:`pi_memory.cli.main` for a
one-shot command, not ``ui`` / ``serve`` / ``mcp`` / ``hook``) reads the users earlier hooks and commands kept
in the hooks' file (:mod:`pi_memory.integrations.hooks.team_servers`: digests of the URL and token, the user,
never a token), just before this process first looks one up, so a command that reaches no memory server reads
no file; :func:`keep` writes what the command learnt at its end. The expiry is the hooks':
:data:`~pi_memory.semantic.backends.rest_memo.USER_TTL_S` after the server was asked.

Servers found down are not carried here (the hooks carry them): a person who has just started a server and runs
the command again expects it asked.
"""

from __future__ import annotations

_held: list[dict] = []  # what the file held, once this process looked a token's user up


def share() -> None:
    """Read the kept users before this process's first lookup of one (see the module docstring)."""
    from pi_memory.semantic.backends import rest_memo

    rest_memo.before_first_lookup(_load)


def _load() -> None:
    from pi_memory.integrations.hooks.team_servers import restore

    _held.append(restore(users_only=True))


def keep() -> None:
    """At the command's end: write the token users it learnt (nothing when it looked none up)."""
    if _held:
        from pi_memory.integrations.hooks.team_servers import keep as write

        held = _held[-1]
        _held.clear()  # main() run again in one process (tests) starts afresh
        write(held, users_only=True)


__all__ = ["keep", "share"]
