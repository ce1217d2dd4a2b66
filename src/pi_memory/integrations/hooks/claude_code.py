"""``pi-memory install claude-code`` / ``uninstall claude-code``: the MCP server and the hooks in Claude Code's
settings.

* ``--scope user`` (default): hooks in ``~/.claude/settings.json`` and the server in ``~/.claude.json``
  (``mcpServers``, where ``claude mcp add --scope user`` puts it); with ``$CLAUDE_CONFIG_DIR`` both live there.
* ``--scope project``: hooks in ``<project>/.claude/settings.json`` and the server in ``<project>/.mcp.json``
  (both meant to be committed; Claude Code asks each user to approve a project's MCP servers once).

Hooks: SessionStart (snapshot), UserPromptSubmit (recall), PreCompact, Stop and SessionEnd (indexing and
capture in the background). Each command is ``<pi-memory> hook claude-code <event>``: at user scope the
absolute path of this installation's console script (the files are this machine's); at project scope the bare
``pi-memory`` (:data:`PATH_SCRIPT`), found on ``PATH`` when Claude Code runs it, because the files are shared
with a team and an absolute path (``/home/you/.venv/bin/pi-memory``) is one machine's: each teammate needs
pi-memory on their ``PATH`` (:func:`project_notes` says so after the install).

Uninstall removes only our entries, files the install created that hold nothing else, and the folders it
created that are empty then (``<project>/.claude/`` made for the settings file); the install's notes on a
project's files are kept apart from other projects' (:func:`pi_memory.integrations.hooks.install.forget`).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from pi_memory.integrations.hooks import hook_env, state
from pi_memory.integrations.hooks import install as common
from pi_memory.integrations.hooks.protocol import EVENTS, HOST_EVENTS

HOST = "claude-code"
TIMEOUTS = {"session-start": 10, "prompt": 10, "pre-compact": 10, "stop": 10, "session-end": 10}
PATH_SCRIPT = "pi-memory"  # project scope: what each teammate's PATH finds


def config_dir() -> Path:
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".claude"


def files(scope: str, project: Path | None = None) -> tuple[Path, Path]:
    """``(settings file with the hooks, file with the MCP server)`` for ``scope``."""
    if scope == "project":
        root = (project or Path.cwd()).resolve()
        if not root.is_dir():  # a typo in --project: no folder tree made for it
            raise common.InstallRefusal(
                f"the project folder {root} {'is not a folder' if root.exists() else 'does not exist'}; give --project "
                "an existing project folder (or run the command inside it), then run this command again (nothing "
                "was changed).", "no_project_folder", root)
        return root / ".claude" / "settings.json", root / ".mcp.json"
    if scope != "user":
        raise common.InstallError(f"unknown scope {scope!r}: use user or project")
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return config_dir() / "settings.json", (Path(env).expanduser() / ".claude.json" if env
                                            else Path.home() / ".claude.json")


def server_entry(script: str) -> dict:
    return {"type": "stdio", "command": script, "args": ["mcp"], "env": {}}


SET_KEYS = ("type", "command", "args", "env")  # what install sets in a ``pi-memory`` entry of the user's


def _merged_entry(existing: object, script: str) -> dict:
    """Our server entry, keeping what an existing ``pi-memory`` entry holds beyond what runs: its ``env`` (a
    ``PI_MEMORY_DIR`` of the user's) and any other key, in their order."""
    if not isinstance(existing, dict):
        return server_entry(script)
    env = existing.get("env")
    return {**existing, "type": "stdio", "command": script, "args": ["mcp"], "env": env if isinstance(env, dict)
            else {}}


def install(scope: str = "user", project: Path | None = None, script: str | None = None) -> list[common.Change]:
    """Add our hooks and MCP server to ``scope``'s files (``script``: the command they run; default the
    absolute console script at user scope, ``pi-memory`` from ``PATH`` at project scope)."""
    if script is None:
        script = PATH_SCRIPT if scope == "project" else common.console_script()
    settings_path, mcp_path = files(scope, project)
    settings = common.read_json_file(settings_path, ("hooks",))
    servers_doc = common.read_json_file(mcp_path, ("mcpServers",))
    common.require_objects(settings, settings_path, "hooks")
    common.require_objects(servers_doc, mcp_path, "mcpServers", f"mcpServers.{common.MCP_NAME}")
    servers = servers_doc.get("mcpServers") if isinstance(servers_doc.get("mcpServers"), dict) else {}
    existing = servers.get(common.MCP_NAME)
    manifest_path = common.manifest_path(f"{HOST}-{scope}")
    manifest = state.read_json(manifest_path)
    users = common.is_users_server(manifest, mcp_path, existing, _is_exactly_ours(existing))
    if users:
        common.refuse_remote_server(mcp_path, existing)  # before anything is written
    env = hook_env.pinned(existing, mcp_path, HOST)  # the entry's data root: the hooks get it too (refused first)
    hooks = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
    settings_pristine = common.without_our_hooks(hooks, HOST)[1] == 0
    events = {e: (EVENTS[e], TIMEOUTS[e]) for e in HOST_EVENTS[HOST]}
    settings["hooks"] = common.with_our_hooks(hooks, HOST, script, events, env)
    server_detail = f"MCP server {common.MCP_NAME}: {script} mcp"
    if users:
        common.remember_user_server(manifest, mcp_path, existing, SET_KEYS)
        server_detail += _kept_note(existing)
    servers_pristine = common.MCP_NAME not in servers or users
    servers_doc["mcpServers"] = {**servers, common.MCP_NAME: _merged_entry(existing, script)}
    changes = [
        common.write_json(settings_path, settings,
                          [f"hooks {', '.join(EVENTS[e] for e in HOST_EVENTS[HOST])} run {script} hook {HOST} …"
                           + hook_env.described(env)]),
        common.write_json(mcp_path, servers_doc, [server_detail]),
    ]
    common.remember_original(manifest, changes[0], settings_pristine)
    common.remember_original(manifest, changes[1], servers_pristine)
    state.write_json(manifest_path, common.note_created(manifest, changes))
    return changes


def project_notes(script: str = PATH_SCRIPT) -> tuple[list[str], list[str]]:
    """``(notes, warnings)`` a person reads after a project-scope install: the shared files run ``script``
    from ``PATH``, so every teammate needs it there; a warning when this machine's ``PATH`` does not have it."""
    notes = [f"The project's files run `{script}` from PATH (they are shared, so they name no path of this "
             "machine): everyone who works in this project with Claude Code needs pi-memory installed and on "
             "PATH."]
    if shutil.which(script) is not None:
        return notes, []
    try:
        folder = f" ({Path(common.console_script()).parent})"
    except common.InstallError:
        folder = ""
    return notes, [f"`{script}` is not on this machine's PATH, so Claude Code cannot run pi-memory's hooks or "
                   f"MCP server in this project here either. Put the folder holding it{folder} on PATH, then "
                   "start Claude Code again."]


def uninstall(scope: str = "user", project: Path | None = None) -> list[common.Change]:
    settings_path, mcp_path = files(scope, project)
    manifest_path = common.manifest_path(f"{HOST}-{scope}")
    manifest = state.read_json(manifest_path)
    common.read_json_file(settings_path, ("hooks",))  # both refused (a duplicate key) before either is written
    doc = common.read_json_file(mcp_path, ("mcpServers",))
    changes = [c for c in [common.uninstall_hooks_file(settings_path, HOST, manifest)] if c]
    if mcp_path.exists():
        servers = doc.get("mcpServers")
        if isinstance(servers, dict) and _is_our_server(servers.get(common.MCP_NAME)):
            original = common.original_of(mcp_path, manifest, json.loads)
            saved = (manifest.get("userServers") or {}).get(str(mcp_path))
            if common.restore_user_server(servers[common.MCP_NAME], saved):
                done = (f"your own MCP server {common.MCP_NAME} runs what it ran before the install (its env as it "
                        "is now)")
            else:
                del servers[common.MCP_NAME]
                done = f"removed MCP server {common.MCP_NAME}"
                if not servers and not (original and isinstance(original[1], dict) and "mcpServers" in original[1]):
                    del doc["mcpServers"]  # install added the key: it goes with our server
            changes.append(common.finish_uninstall(mcp_path, doc, common.dump_like(doc, common.current_text(mcp_path)),
                                                   manifest, [done], original))
    changes += common.remove_created_folders(manifest, [settings_path, mcp_path])
    common.forget(manifest_path, manifest, [settings_path, mcp_path])
    return changes


def _is_exactly_ours(entry: object) -> bool:
    """The entry exactly as an install writes it (for some path of the console script)."""
    return (isinstance(entry, dict) and set(entry) == set(SET_KEYS) and entry.get("type") == "stdio"
            and entry.get("env") == {} and _is_our_server(entry))


def _kept_note(entry: object) -> str:
    """What the detail line says about a user's own entry the install took over."""
    env = entry.get("env") if isinstance(entry, dict) else None
    names = ", ".join(env) if isinstance(env, dict) and env else ""
    kept = f"; your entry's env ({names}) is kept" if names else "; the rest of your entry is kept"
    return f"{kept}, and uninstall puts your entry back"


def _is_our_server(entry: object) -> bool:
    return (isinstance(entry, dict) and Path(str(entry.get("command", ""))).name == "pi-memory"
            and entry.get("args") == ["mcp"])
