"""Commands that connect pi-memory to hosts: ``mcp``, ``install pi``, ``demo``, ``trust``/``untrust``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from pi_memory.cli.app import DirOpt, app, err, open_mem, out
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
) -> None:
    """Copy the pi extension into pi's extensions folder, wired to this Python."""
    from pi_memory.integrations.pi.install import install_pi_extension

    target = install_pi_extension(agent or agent_dir(), sys.executable)
    out.print(f"Installed the pi extension at {target}. Start pi as usual; memory tools load with it.", markup=False)


@app.command()
def demo() -> None:
    """Run the real pi CLI against a scripted local model and show memory working end to end."""
    from rich.console import Console

    from pi_memory.integrations.pi.demo import run_demo

    raise typer.Exit(run_demo(Console()))


@app.command()
def trust(path: Annotated[Path, typer.Argument(help="Project folder.")] = Path(".")) -> None:
    """Trust a project: its .pi/settings.json "pi-memory" block will be read."""
    try:
        trusted = set_trust(path, True)
    except SettingsError as exc:
        err.print(str(exc), markup=False)
        raise typer.Exit(2) from exc
    out.print(f"Trusted {path.resolve()} ({len(trusted)} trusted project(s)).", markup=False)


@app.command()
def untrust(path: Annotated[Path, typer.Argument(help="Project folder.")] = Path(".")) -> None:
    """Stop reading a project's .pi/settings.json."""
    set_trust(path, False)
    err.print(f"{path.resolve()} is no longer trusted.", markup=False)


