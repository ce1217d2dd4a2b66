"""The variables a ``pi-memory`` MCP server entry's ``env`` sets that the hooks must get too.

A user's own entry (``uvx pi-memory mcp`` with ``"env": {"PI_MEMORY_DIR": "/home/me/notes"}``) is kept by install
(:mod:`.install`), and the host starts the MCP server with that env. The hooks are other commands, started by the
host with its own environment: without the same variables they read and write another data root than the
server, so the memory injected at a session start and on each prompt is not the one the agent's tools change.
Install therefore writes the hook commands as ``env NAME=VALUE … <pi-memory> hook <host> <event>``
(:func:`prefix`), with the variables taken from the entry as it is at each install (a re-install after the entry
changed writes the hooks anew; uninstall recognises them by their command all the same).

Which variables, and why only those:

* ``PI_MEMORY_DIR`` (the data root) and ``PI_CODING_AGENT_DIR`` (pi's agent folder: the settings, and the data
  root when nothing else names one) are pinned as the entry has them.
* ``HOME`` is not pinned as such: it also moves what the hooks must keep reading from the real home folder (the
  host's own skill folders that prompt recall offers, the hook state folder and its log, model caches). What it
  chooses for pi-memory is its agent folder, ``$HOME/.pi/agent``, so an entry setting ``HOME`` without
  ``PI_CODING_AGENT_DIR`` gets that folder pinned as ``PI_CODING_AGENT_DIR``, and what ``${HOME}`` and ``~``
  mean in pi-memory's settings (a ``dataDir`` of ``${HOME}/notes``, a ``PI_MEMORY_DIR`` of ``~/notes``), pinned
  as ``PI_MEMORY_HOME`` (:data:`pi_memory.settings_files.SETTINGS_HOME`): the hooks read those as the server
  does, and nothing else of theirs moves. (Before, such a ``dataDir`` named the hooks' own home: another data
  root than the server's.)
* ``PI_MEMORY_STATE_DIR`` and anything else (API keys, timeouts) are not: they choose no data root, and a key in
  a hook command line would be in a settings file in plain text a second time.

A value goes on the command line single-quoted (:func:`shlex.quote`), which ``sh``, ``bash``, ``zsh`` and ``fish``
all read the same way (Claude Code runs a hook's command through a shell, Codex through the user's ``$SHELL -lc``),
so spaces, ``$``, quotes, ``;`` and ``*`` in it are kept as they are. Refused with a sentence, before anything is
written (:class:`.install.InstallRefusal`, ``problem`` ``entry_env``): a value that is not a string; one holding a
line break, another control character or a backslash (``fish`` reads a backslash inside single quotes as an
escape); a relative path (the server resolves it from whichever folder the host starts it in, the hooks from
theirs); and, for Claude Code, one holding ``${`` (Claude Code fills those in when it starts the server, so the
value the server gets is not the one written). A value starting with ``~`` is kept as written: pi-memory expands
it in the server and in the hooks alike (same user, same home). An empty value is kept too (it unsets the
variable for pi-memory in both).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from pi_memory.settings_files import SETTINGS_HOME

MCP_NAME = "pi-memory"
PINNED = ("PI_MEMORY_DIR", "PI_CODING_AGENT_DIR")
AGENT_BELOW_HOME = (".pi", "agent")


def plain(value: object) -> object:
    """A tomlkit item's plain value (a JSON value is returned as it is)."""
    return value.unwrap() if hasattr(value, "unwrap") else value


def pinned(entry: object, path: Path, host: str) -> dict[str, str]:
    """The variables the hooks get from the ``pi-memory`` server entry ``entry`` (in ``path``), in a stable order
    (``{}``: no entry, no ``env``, or none of the variables). Raises :class:`.install.InstallRefusal`
    (``entry_env``)."""
    env = plain(entry.get("env")) if hasattr(entry, "get") else None
    if not isinstance(env, dict):
        return {}
    out: dict[str, str] = {}
    for name in PINNED:
        if name in env:
            out[name] = _checked(name, env[name], path, host)
    if "HOME" in env:
        home = _checked("HOME", env["HOME"], path, host)
        if home.startswith("~") or not home:
            raise _refuse(path, "HOME", home, "home")
        if "PI_CODING_AGENT_DIR" not in env:
            out["PI_CODING_AGENT_DIR"] = str(Path(home).joinpath(*AGENT_BELOW_HOME))
        out[SETTINGS_HOME] = home
    return out


_WHY = {
    "type": "is not a string",
    "control": "holds a line break or another control character, which a hook's command line cannot carry",
    "backslash": "holds a backslash, which the shells that run hooks do not all read the same way",
    "dollar": "uses ${...}, which Claude Code fills in when it starts the server, so the hooks cannot be given the "
              "same value",
    "relative": "is a relative path, which the server reads from whichever folder the host starts it in",
    "home": "is not an absolute path",
}


def _checked(name: str, value: object, path: Path, host: str) -> str:
    if not isinstance(value, str):
        raise _refuse(path, name, value, "type")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise _refuse(path, name, value, "control")
    if "\\" in value:
        raise _refuse(path, name, value, "backslash")
    if host == "claude-code" and "${" in value:
        raise _refuse(path, name, value, "dollar")
    if value and not value.startswith("~") and not Path(value).is_absolute():
        raise _refuse(path, name, value, "relative")
    return value


def _refuse(path: Path, name: str, value: object, why: str) -> Exception:
    import json

    from pi_memory.integrations.hooks.install import InstallRefusal

    shown = json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)
    return InstallRefusal(
        f"{path}: the env of your MCP server entry {MCP_NAME} sets {name} to {shown}, which {_WHY[why]}. The hooks "
        "install writes must use the same memory as that server, so set it to the absolute path it stands for (for "
        "example /home/you/notes), then run this command again (nothing was changed).", "entry_env", path)


def prefix(env: dict[str, str]) -> str:
    """``env NAME=VALUE … `` (each pair quoted for a shell) to put before the hook command; ``""`` without ``env``."""
    if not env:
        return ""
    return "env " + " ".join(shlex.quote(f"{name}={value}") for name, value in env.items()) + " "


def described(env: dict[str, str]) -> str:
    """What a person reads about the variables the hooks got (``""`` without any)."""
    if not env:
        return ""
    pairs = ", ".join(f"{name}={value}" for name, value in env.items())
    return f" with {pairs} from your MCP server entry, so they use the same memory (data root) as its server"
