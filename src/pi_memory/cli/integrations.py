"""Commands that connect pi-memory to hosts: ``mcp``, ``install pi``, ``demo``, ``trust``/``untrust``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from pi_memory.cli.app import DirOpt, JsonOpt, app, emit_json, fail, open_mem, out, state
from pi_memory.config import SettingsError, agent_dir, set_trust

install_app = typer.Typer(help="Install pi-memory into an agent.", no_args_is_help=True)
app.add_typer(install_app, name="install")


@app.command()
def mcp(dir: DirOpt = None) -> None:
    """Serve the memory tools over MCP on stdio (for Claude Code, Codex, Cursor, any MCP client)."""
    from pi_memory.integrations.mcp_server import serve_stdio

    serve_stdio(open_mem(dir))


@install_app.command("pi")
def install_pi(
    agent: Annotated[Path | None, typer.Option("--agent-dir", help="pi's agent folder (default: ~/.pi/agent).")] = None,
    json_: JsonOpt = False,
) -> None:
    """Copy the pi extension into pi's extensions folder, wired to this Python."""
    from pi_memory.integrations.pi.install import install_pi_extension

    try:
        target = install_pi_extension(agent or agent_dir(), sys.executable)
    except OSError as exc:
        raise fail(f"Could not install the pi extension: {exc}. Check that pi's agent folder is writable, or "
                   "name another with --agent-dir.", 2) from exc
    if json_ or state.json:
        emit_json({"success": True, "installed": str(target)})
        return
    out.print(f"Installed the pi extension at {target}. Start pi as usual; memory tools load with it.", markup=False)


@app.command()
def demo() -> None:
    """Run the real pi CLI against a scripted local model and show memory working end to end."""
    from rich.console import Console

    from pi_memory.integrations.pi.demo import run_demo

    raise typer.Exit(run_demo(Console()))


@app.command()
def trust(path: Annotated[Path, typer.Argument(help="Project folder.")] = Path("."), json_: JsonOpt = False) -> None:
    """Trust a project: its .pi/settings.json "pi-memory" block will be read."""
    _set_trust(path, True, json_)


@app.command()
def untrust(path: Annotated[Path, typer.Argument(help="Project folder.")] = Path("."), json_: JsonOpt = False) -> None:
    """Stop reading a project's .pi/settings.json."""
    _set_trust(path, False, json_)


def _set_trust(path: Path, trusted: bool, json_: bool) -> None:
    try:
        projects = set_trust(path, trusted)
    except SettingsError as exc:
        raise fail(str(exc), 2) from exc
    if json_ or state.json:
        emit_json({"success": True, "project": str(path.resolve()), "trusted": trusted, "trustedCount": len(projects)})
    elif trusted:
        out.print(f"Trusted {path.resolve()} ({len(projects)} trusted project(s)).", markup=False)
    else:
        out.print(f"{path.resolve()} is no longer trusted.", markup=False)
