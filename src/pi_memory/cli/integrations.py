"""Commands that connect pi-memory to hosts: ``mcp``, ``install pi``, ``demo``, ``trust``/``untrust``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from pi_memory.cli.app import DirOpt, JsonOpt, app, emit_json, fail, open_mem, out, require_readable, state
from pi_memory.config import SettingsError, agent_dir, set_trust, trusted_projects
from pi_memory.curated.entries import printable
from pi_memory.session import INDEX_EVERY_S

install_app = typer.Typer(help="Install pi-memory into an agent.", no_args_is_help=True)
app.add_typer(install_app, name="install")


MAX_INDEX_INTERVAL_S = 86_400  # a larger one overflowed the timer (1e300: a traceback)
IntervalOpt = Annotated[float, typer.Option(
    "--index-interval", envvar="PI_MEMORY_INDEX_INTERVAL", min=0, max=MAX_INDEX_INTERVAL_S, show_default=True,
    help="Seconds between background index passes over pi / Claude Code / Codex transcripts (each followed by "
         "embedding the new turns when semantic recall includes sessions), at most a day (86400). 0 turns "
         "background indexing off.")]


@app.command()
def mcp(dir: DirOpt = None, index_interval: IntervalOpt = INDEX_EVERY_S, json_: JsonOpt = False,
        http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP at /mcp instead of stdio "
                                           "(bearer token; see --token).")] = False,
        host: Annotated[str, typer.Option("--host", help="With --http: the address to listen on.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", min=0, max=65535, help="With --http: the port (0: any free "
                                          "one).")] = 8766,
        token: Annotated[str | None, typer.Option(
            "--token", help="With --http: the bearer token clients send (required beyond loopback; generated and "
            "printed when no token is given). Other users of this machine can read a command line (ps), so prefer "
            "--token-file or $PI_MEMORY_MCP_TOKEN.")] = None,
        token_file: Annotated[Path | None, typer.Option(
            "--token-file", help="With --http: read the bearer token from this file, which holds only the token "
            "(keep it readable by you only).")] = None,
        tls_cert: Annotated[Path | None, typer.Option("--tls-cert", help="With --http: certificate file (PEM) for "
                                                      "HTTPS.")] = None,
        tls_key: Annotated[Path | None, typer.Option("--tls-key", help="With --http: private key file (PEM) for "
                                                     "HTTPS.")] = None,
        insecure_http: Annotated[bool, typer.Option("--insecure-http", help="With --http: allow plain HTTP "
                                                    "beyond loopback (only behind a proxy that adds TLS).")] = False,
        ) -> None:
    """Serve the memory tools over MCP on stdio (for Claude Code, Codex, Cursor, any MCP client).

    In the background the server indexes new pi / Claude Code / Codex transcripts at start and every --index-interval seconds, and embeds their turns when semantic recall includes sessions; tool calls never wait for it, and resource memory://status shows its progress and errors.

    Standard output carries the MCP protocol only, so with --json the start and stop lines go to standard error, one JSON object each ({"event": "started", ...} and {"event": "stopped", ...}), and so do errors before the start (bad settings or options)."""
    if http:
        from pi_memory.cli.hosts import serve_mcp_http

        serve_mcp_http(dir, host, port, token, index_interval, json_ or state.json, token_file=token_file,
                       tls=(tls_cert, tls_key), insecure_http=insecure_http)
        return
    from pi_memory.integrations.mcp_server import serve_stdio, stderr_reporter

    state.stdout_is_protocol = True  # from here on, even an error's JSON goes to standard error
    memory = open_mem(dir, load=False)  # the server's start reads the stores (a team server gets a start's wait)
    read_only = require_readable(memory.settings.data_dir)
    report = stderr_reporter(json_ or state.json)
    if read_only is not None:  # served for reading only: the start line says so, and what to do
        plain = report

        def report(event: dict) -> None:
            plain(event | {"readOnly": read_only.notice}
                  if event["event"] == "started" else event)
    serve_stdio(memory, index_interval, report=report)


@install_app.command("pi")
def install_pi(
    agent: Annotated[Path | None, typer.Option("--agent-dir", help="pi's agent folder (default: ~/.pi/agent).")] = None,
    json_: JsonOpt = False,
) -> None:
    """Copy the pi extension into pi's extensions folder, wired to this Python."""
    from pi_memory.integrations.pi.install import NotOurInstall, install_pi_extension

    try:
        change = install_pi_extension(agent or agent_dir(), sys.executable)
    except NotOurInstall as exc:
        raise fail(f"Not installed, nothing was changed: {exc}. Move that folder out of extensions/ (or delete it "
                   "if it is an old pi-memory extension you no longer need), then run `pi-memory install pi` again.",
                   1) from exc
    except OSError as exc:  # a folder it must write: a refusal (1), worded as for the other hosts
        from pi_memory.cli.hosts import WRITE_KINDS, write_refusal

        raise fail(write_refusal("pi", "install", exc) + " (Or name another agent folder with --agent-dir.)", 1,
                   problem=WRITE_KINDS.get(exc.errno or 0, "unusable"), path=exc.filename) from exc
    kept = str(change.kept) if change.kept else None
    if json_ or state.json:
        emit_json({"success": True, "installed": str(change.folder), "kept": kept})
        return
    out.print(f"Installed the pi extension at {change.folder}. Start pi as usual; memory tools load with it.",
              markup=False)
    if kept:
        out.print(f"The earlier copy there held files pi-memory did not write; it was moved whole to {kept} "
                  "(nothing deleted). Copy back what you need.", markup=False)


@app.command()
def demo(json_: JsonOpt = False) -> None:
    """Run the real pi CLI against a scripted local model and show memory working end to end.

    Exits 1 when any check failed. With --json the walk-through goes to standard error and standard output
    gets one object: {"success": bool, "failed": int, "checks": [{"name", "ok", "detail"}]}."""
    from dataclasses import asdict

    from rich.console import Console

    from pi_memory.integrations.pi.demo import demo_checks

    as_json = json_ or state.json
    checks = demo_checks(Console(stderr=as_json, emoji=False))
    failed = sum(1 for check in checks if not check.ok)
    if as_json:
        emit_json({"success": failed == 0, "failed": failed, "checks": [asdict(check) for check in checks]})
    raise typer.Exit(1 if failed else 0)


@app.command()
def trust(path: Annotated[Path, typer.Argument(help="Project folder.")] = Path("."), json_: JsonOpt = False) -> None:
    """Trust a project: its .pi/settings.json "pi-memory" block and its .pi/memory-blocks/ will be read."""
    _set_trust(path, True, json_)


@app.command()
def untrust(path: Annotated[Path, typer.Argument(help="Project folder.")] = Path("."), json_: JsonOpt = False) -> None:
    """Stop reading a project's .pi/settings.json and .pi/memory-blocks/."""
    _set_trust(path, False, json_)


def _trust_json(project: Path, trusted: bool, through: Path | None, changed: bool, count: int) -> None:
    emit_json({"success": True, "project": str(project), "trusted": trusted or through is not None,
               "changed": changed, "trustedCount": count,
               **({"trustedThrough": str(through)} if through is not None and not trusted else {})})


def _set_trust(path: Path, trusted: bool, json_: bool) -> None:
    project = path.resolve()

    def say(text: str) -> None:  # a folder's name may hold an escape sequence: shown, never run by the terminal
        out.print(printable(text), markup=False)

    listed = trusted_projects()
    through = next((t for t in listed if t in project.parents), None)  # a trusted folder above it
    if trusted == (project in listed):  # already as asked: nothing is written, exit 0 as every no-op command
        if json_ or state.json:
            _trust_json(project, trusted, through, False, len(listed))
        elif trusted:
            say(f"{project} was already trusted; nothing changed.")
        elif through is not None:
            say(f"{project} was not trusted on its own, so nothing changed: it is trusted through {through}. "
                f"To stop that, run `pi-memory untrust {through}` (it covers every folder below it).")
        else:
            say(f"{project} was not trusted; nothing changed.")
        return
    try:
        projects = set_trust(path, trusted)
    except SettingsError as exc:
        raise fail(str(exc), 2) from exc
    if json_ or state.json:
        _trust_json(project, trusted, through, True, len(projects))
    elif trusted:
        say(f"Trusted {project} ({len(projects)} trusted project(s)).")
    elif through is not None:
        say(f"{project} is no longer trusted on its own, but it still is through {through}; run `pi-memory "
            f"untrust {through}` to stop that.")
    else:
        say(f"{project} is no longer trusted.")
