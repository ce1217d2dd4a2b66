"""``pi-memory install claude-code`` / ``uninstall claude-code``: the MCP server and the hooks in Claude Code's
settings.

* ``--scope user`` (default): hooks in ``~/.claude/settings.json`` and the server in ``~/.claude.json``
  (``mcpServers``, where ``claude mcp add --scope user`` puts it); with ``$CLAUDE_CONFIG_DIR`` both live there.
* ``--scope project``: hooks in ``<project>/.claude/settings.json`` and the server in ``<project>/.mcp.json``
  (both meant to be committed; Claude Code asks each user to approve a project's MCP servers once).

Hooks: SessionStart (snapshot), UserPromptSubmit (recall), PreCompact, Stop and SessionEnd (indexing and
capture in the background). Each command is ``<absolute pi-memory> hook claude-code <event>``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pi_memory.integrations.hooks import install as common
from pi_memory.integrations.hooks import state
from pi_memory.integrations.hooks.protocol import EVENTS, HOST_EVENTS

HOST = "claude-code"
TIMEOUTS = {"session-start": 10, "prompt": 10, "pre-compact": 10, "stop": 10, "session-end": 10}


def config_dir() -> Path:
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".claude"


def files(scope: str, project: Path | None = None) -> tuple[Path, Path]:
    """``(settings file with the hooks, file with the MCP server)`` for ``scope``."""
    if scope == "project":
        root = (project or Path.cwd()).resolve()
        return root / ".claude" / "settings.json", root / ".mcp.json"
    if scope != "user":
        raise common.InstallError(f"unknown scope {scope!r}: use user or project")
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return config_dir() / "settings.json", (Path(env).expanduser() / ".claude.json" if env
                                            else Path.home() / ".claude.json")


def server_entry(script: str) -> dict:
    return {"type": "stdio", "command": script, "args": ["mcp"], "env": {}}


def install(scope: str = "user", project: Path | None = None, script: str | None = None) -> list[common.Change]:
    script = script or common.console_script()
    settings_path, mcp_path = files(scope, project)
    settings, servers_doc = common.read_json_file(settings_path), common.read_json_file(mcp_path)
    common.require_objects(settings, settings_path, "hooks")
    common.require_objects(servers_doc, mcp_path, "mcpServers", f"mcpServers.{common.MCP_NAME}")
    hooks = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
    settings_pristine = common.without_our_hooks(hooks, HOST)[1] == 0
    events = {e: (EVENTS[e], TIMEOUTS[e]) for e in HOST_EVENTS[HOST]}
    settings["hooks"] = common.with_our_hooks(hooks, HOST, script, events)
    servers = servers_doc.get("mcpServers") if isinstance(servers_doc.get("mcpServers"), dict) else {}
    servers_pristine = common.MCP_NAME not in servers
    servers_doc["mcpServers"] = {**servers, common.MCP_NAME: server_entry(script)}
    changes = [
        common.write_json(settings_path, settings,
                          [f"hooks {', '.join(EVENTS[e] for e in HOST_EVENTS[HOST])} run {script} hook {HOST} …"]),
        common.write_json(mcp_path, servers_doc, [f"MCP server {common.MCP_NAME}: {script} mcp"]),
    ]
    manifest_path = common.manifest_path(f"{HOST}-{scope}")
    manifest = state.read_json(manifest_path)
    common.remember_original(manifest, changes[0], settings_pristine)
    common.remember_original(manifest, changes[1], servers_pristine)
    state.write_json(manifest_path, common.note_created(manifest, changes))
    return changes


def uninstall(scope: str = "user", project: Path | None = None) -> list[common.Change]:
    settings_path, mcp_path = files(scope, project)
    manifest_path = common.manifest_path(f"{HOST}-{scope}")
    manifest = state.read_json(manifest_path)
    changes = [c for c in [common.uninstall_hooks_file(settings_path, HOST, manifest)] if c]
    if mcp_path.exists():
        doc = common.read_json_file(mcp_path)
        servers = doc.get("mcpServers")
        if isinstance(servers, dict) and _is_our_server(servers.get(common.MCP_NAME)):
            del servers[common.MCP_NAME]
            original = common.original_of(mcp_path, manifest, json.loads)
            if not servers and not (original and isinstance(original[1], dict) and "mcpServers" in original[1]):
                del doc["mcpServers"]  # install added the key: it goes with our server
            changes.append(common.finish_uninstall(mcp_path, doc, common.dump_like(doc, common.current_text(mcp_path)),
                                                   manifest, [f"removed MCP server {common.MCP_NAME}"], original))
    manifest_path.unlink(missing_ok=True)  # nothing of this install is left to remember
    return changes


def _is_our_server(entry: object) -> bool:
    return (isinstance(entry, dict) and Path(str(entry.get("command", ""))).name == "pi-memory"
            and entry.get("args") == ["mcp"])
