"""What one hook process learnt about the team memory server, for the next one (a hook is a process per event).

The self-hosted client remembers, for its process, whose its token is and a server found not answering for 30 s
(:mod:`pi_memory.semantic.backends.rest_memo`). A prompt hook is a new process each time, so without this file
every prompt asked ``GET /whoami`` again (up to 1 s of the hook's 2 s) and, with a server that hangs, waited for
it again. The file is ``hooks/team-servers.json`` in the state folder (0600, like every state file); what it holds
is safe on disk: digests of the server URL and of the token (never a token), the token's user, and for a server
found down until when and the error a person reads. The prompt hook reads it before it opens semantic memory
(:func:`restore`) and writes what it learnt after its recall (:func:`keep`).
"""

from __future__ import annotations

from pathlib import Path

from pi_memory.integrations.hooks import state


def path() -> Path:
    return state.state_dir() / "hooks" / "team-servers.json"


def restore(users_only: bool = False) -> dict:
    """Give this process what earlier hook processes learnt; returns what the file held. ``users_only``: whose
    the tokens are, not the servers found down (a one-shot CLI command: :mod:`pi_memory.cli.team_users`)."""
    from pi_memory.semantic.backends import rest_memo

    held = state.read_json(path())
    rest_memo.restore({"users": held.get("users")} if users_only else held)
    return held


def keep(held: dict, users_only: bool = False) -> None:
    """Write what this process knows now when it differs from what the file ``held`` (at most one write).
    ``users_only``: only the users are this process's to write; the servers found down stay as the file held
    them (they end by themselves within their window)."""
    from pi_memory.semantic.backends import rest_memo

    now = rest_memo.snapshot()
    if users_only:
        if now["users"] == held.get("users", {}) or not now["users"]:
            return
        now = {"users": now["users"], "down": held.get("down", {})}
    if now != held and (now["users"] or now["down"] or held):
        try:
            state.write_json(path(), now)
        except OSError as exc:  # an optimisation only: the next hook asks the server again
            state.note_unwritable(path(), exc)


__all__ = ["keep", "path", "restore"]
