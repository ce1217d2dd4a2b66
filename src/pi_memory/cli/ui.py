"""``pi-memory ui``: the memory inspector in the browser (:mod:`pi_memory.integrations.inspector`).

Listens on 127.0.0.1 only (a non-loopback ``--host`` is refused, exit 2), on ``--port`` or a free port, and
prints the URL with its random token, as Jupyter does; opens it with :mod:`webbrowser` unless ``--no-browser``.
Runs until Ctrl-C. ``--demo`` first makes a sample data root in a new temporary folder
(:mod:`pi_memory.devtools.sample_data`, with the scripted model on 127.0.0.1 for its learning job) and shows
that instead of yours; the folder is removed when the inspector stops (Ctrl-C, ``kill``, or a failure). ``--server URL`` shows that team server's semantic memories (the token from
``--token-file`` or ``--token-env``, default ``$PI_MEMORY_SERVER_TOKEN``; never a command-line value); without
it, a team server named by the semantic settings is used (:mod:`pi_memory.integrations.inspector.team`). With
``--json`` it prints one ``{"event": "listening", "url", ...}`` line when it
listens and ``{"event": "stopped"}`` when it stops.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path
from typing import Annotated

import typer

from pi_memory.cli.app import DirOpt, JsonOpt, app, emit_json_line, fail, open_mem, out, state


@app.command("ui")
def ui(
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on (0: a free one).")] = 0,
    host: Annotated[str, typer.Option("--host", help="Loopback address to listen on (only 127.0.0.1, ::1 or "
                                      "localhost are accepted).")] = "127.0.0.1",
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Print the URL without opening a browser.")]
    = False,
    demo: Annotated[bool, typer.Option("--demo", help="Show a sample data root made in a temporary folder "
                                       "instead of yours.")] = False,
    server: Annotated[str | None, typer.Option("--server", help="Show the semantic memories of this team "
                                               "server (pi-memory serve) instead of the settings' backend.")]
    = None,
    token_file: Annotated[Path | None, typer.Option("--token-file", help="File holding your token for --server "
                                                    "(from `pi-memory serve token create`).")] = None,
    token_env: Annotated[str | None, typer.Option("--token-env", help="Environment variable holding your token "
                                                  "for --server (default $PI_MEMORY_SERVER_TOKEN).")] = None,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Open the memory inspector: see, search, correct and audit everything pi-memory keeps."""
    from pi_memory.integrations.inspector import InspectorError, check_loopback

    try:
        check_loopback(host)
    except InspectorError as exc:
        raise fail(str(exc), 2) from exc
    if demo and (dir or state.dir):
        raise fail("--demo makes its own sample data root; leave --dir out (or drop --demo to inspect that "
                   "folder).", 2)
    if demo and server:
        raise fail("--demo shows a sample data root with its own local memories; leave --server out (or drop "
                   "--demo to see the team server's memories).", 2)
    with contextlib.ExitStack() as stack:
        choice = _server_choice(server, token_file, token_env)
        if choice is not None:
            stack.callback(choice.backend.close)
        if demo:
            memory = stack.enter_context(_demo_memory())
        else:
            memory = open_mem(dir)
            stack.callback(memory.close)
        _serve(memory, host, port, no_browser, json_ or state.json, choice)


def _server_choice(server: str | None, token_file: Path | None, token_env: str | None):
    """``--server`` with its token (read here, at the composition root) as a ready backend, or ``None``.

    The token is taken only from a file or an environment variable, never from the command line, where every
    user of the computer can read it in the process list."""
    from pi_memory.integrations.inspector import ServerChoice
    from pi_memory.semantic.backends.rest_client import TOKEN_ENV, RestBackend

    if server is None:
        if token_file is not None or token_env is not None:
            raise fail("--token-file and --token-env give the token for --server; add --server URL (or leave them "
                       "out to use the server of the semantic settings).", 2)
        return None
    if token_file is not None and token_env is not None:
        raise fail("give the token one way: --token-file PATH or --token-env NAME, not both.", 2)
    if token_file is not None:
        origin = f"the file {token_file}"
        try:
            token = token_file.expanduser().read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise fail(f"cannot read the token file {token_file} ({exc}). Give the file that holds your token "
                       "(from `pi-memory serve token create --user NAME`).", 2) from exc
    else:
        name = token_env or TOKEN_ENV
        origin, token = f"${name}", os.environ.get(name, "").strip()
    if not token:
        raise fail(f"no token for --server in {origin}: put your token there (from `pi-memory serve token create "
                   "--user NAME`), or name where it is with --token-file PATH or --token-env NAME.", 2)
    try:
        backend = RestBackend(server, token)
    except ValueError as exc:
        raise fail(f"--server {server}: {exc}", 2) from exc
    return ServerChoice(backend, url_origin="--server", token_origin=origin)


@contextlib.contextmanager
def _demo_memory():
    from pi_memory.devtools.sample_data import build_sample, sample_reply
    from pi_memory.devtools.scripted_llm import ScriptedLLM
    from pi_memory.runtime import open_memory

    # `kill` while the sample is built ends the process through the finally below (its default would leave the
    # folder behind); once the inspector listens, _serve's handlers stop it the same way as Ctrl-C
    signal.signal(signal.SIGTERM, _exit_on_signal)
    root = Path(tempfile.mkdtemp(prefix="pi-memory-ui-demo-"))
    try:
        agent, data, project = root / "agent", root / "data", root / "repo"
        os.environ["PI_CODING_AGENT_DIR"], os.environ["PI_MEMORY_DIR"] = str(agent), str(data)  # this process only
        with ScriptedLLM(responder=sample_reply) as llm:
            build_sample(agent, data, project, llm.base_url)
            memory = open_memory(project)
            state.data_dir = memory.settings.data_dir
            try:
                yield memory
            finally:
                memory.close()
    finally:  # the sample is this run's alone: nothing of it is left in the temporary folder
        shutil.rmtree(root, ignore_errors=True)


def _exit_on_signal(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _serve(memory, host: str, port: int, no_browser: bool, as_json: bool, choice=None) -> None:
    from pi_memory.integrations.inspector import InspectorError, run_inspector
    from pi_memory.semantic.backends.rest_runner import ServeError

    stop = threading.Event()
    try:
        with run_inspector(memory, host=host, port=port, server=choice) as running:
            # Ctrl-C and `kill` stop it even when started with SIGINT ignored (a background job of a
            # non-interactive shell, where Python never raises KeyboardInterrupt); set before the URL is told
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: stop.set())
            if as_json:
                emit_json_line({"event": "listening", "url": running.url, "base": running.base,
                                "dataDir": str(memory.settings.data_dir)})
            else:
                out.print(f"pi-memory inspector for {memory.settings.data_dir}", markup=False)
                out.print(f"Open {running.url}", markup=False)
                out.print("Press Ctrl-C to stop.", markup=False)
            if not no_browser:
                import webbrowser

                webbrowser.open(running.url)
            with contextlib.suppress(KeyboardInterrupt):
                while not stop.wait(0.5):
                    pass
    except InspectorError as exc:
        raise fail(str(exc), 1) from exc
    except (OSError, ServeError) as exc:
        raise fail(f"cannot listen on {host}:{port} ({exc}). Pick another --port (or leave it out for a free one).",
                   1) from exc
    if as_json:
        emit_json_line({"event": "stopped"})
    else:
        out.print("Inspector stopped.", markup=False)
