"""Our handlers in a host's hook table (``{"Event": [{"matcher"?, "hooks": [handler]}]}``, the shape Claude Code
and Codex share): the command line of one, how one is recognised, and the table without or with ours.

A handler of ours is ``{"type": "command", "command": …, "timeout": …}`` plus what the host needs of it
(``settings``: Codex's ``additionalContextLimit`` on the events whose context reaches the model). A value the
person set on our handler for one of those keys (``KEPT``) stays when an install writes the handler again, so
a chosen limit is not undone by an upgrade; one the host could not read (not a whole number of at least 0)
is replaced by ours, since Codex rejects the whole file for it.
"""

from __future__ import annotations

import shlex
from pathlib import Path

# handler keys the person may set on one of our handlers and an install keeps: Codex's spill threshold (tokens)
KEPT = ("additionalContextLimit",)


def hook_command(script: str, host: str, event: str, env: dict[str, str] | None = None) -> str:
    """The command line of one hook: ``[env NAME=VALUE …] <script> hook <host> <event>`` (``env``: the variables
    of the user's MCP server entry the hooks need too, :mod:`.hook_env`)."""
    from pi_memory.integrations.hooks.hook_env import prefix

    return f"{prefix(env or {})}{shlex.quote(script)} hook {host} {event}"


def is_ours(command: object, host: str) -> bool:
    """Whether ``command`` is one of our hook commands for ``host``: read as the shell reads it, so words inside a
    quoted value (a data root named ``…/pi-memory hook codex notes``) are not the command."""
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:  # unbalanced quotes: not a command we wrote
        return False
    return any(Path(w).name == "pi-memory" and words[i + 1:i + 3] == ["hook", host] for i, w in enumerate(words))


def without_our_hooks(hooks: dict, host: str, keep: set[str] = frozenset()) -> tuple[dict, int]:
    """``hooks`` (an ``{"Event": [{"matcher"?, "hooks": [handler]}]}`` table) without our handlers; groups
    left empty are dropped, and events left empty too, except those named in ``keep`` (the user had them).
    Returns the new table and how many were removed."""
    out: dict = {}
    removed = 0
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            out[event] = groups
            continue
        kept_groups = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                kept_groups.append(group)
                continue
            kept = [h for h in handlers if not (isinstance(h, dict) and is_ours(h.get("command"), host))]
            removed += len(handlers) - len(kept)
            if kept:
                kept_groups.append({**group, "hooks": kept})
            elif not handlers:
                kept_groups.append(group)
        if kept_groups or not groups or event in keep:
            out[event] = kept_groups
    return out, removed


def ours_now(hooks: dict, host: str, host_event: str) -> dict:
    """Our handler under ``host_event`` as the file has it now (the first, when a hand edit left more), or ``{}``."""
    groups = hooks.get(host_event)
    for group in groups if isinstance(groups, list) else []:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for handler in handlers if isinstance(handlers, list) else []:
            if isinstance(handler, dict) and is_ours(handler.get("command"), host):
                return handler
    return {}


def _readable_limit(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def with_our_hooks(hooks: dict, host: str, script: str, events: dict[str, tuple[str, int]],
                   env: dict[str, str] | None = None, settings: dict[str, dict] | None = None) -> dict:
    """``hooks`` with our handler for each ``{our event: (host event name, timeout s)}``, after the user's
    (``env``: see :func:`hook_command`; ``settings``: ``{our event: {key: value}}`` added to that handler, a
    value of the person's on our handler kept for the keys in :data:`KEPT`)."""
    out, _ = without_our_hooks(hooks, host)
    for event, (host_event, timeout) in events.items():
        handler = {"type": "command", "command": hook_command(script, host, event, env), "timeout": timeout}
        before = ours_now(hooks, host, host_event)
        for key, value in ((settings or {}).get(event) or {}).items():
            handler[key] = before[key] if key in KEPT and _readable_limit(before.get(key)) else value
        groups = out.get(host_event)
        groups = list(groups) if isinstance(groups, list) else []
        groups.append({"hooks": [handler]})
        out[host_event] = groups
    return out
