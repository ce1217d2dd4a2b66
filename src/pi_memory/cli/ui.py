"""``pi-memory ui``: the memory inspector in the browser (:mod:`pi_memory.integrations.inspector`).

Listens on 127.0.0.1 only (a non-loopback ``--host`` is refused, exit 2), on ``--port`` or a free port, and
prints the URL with its random token, as Jupyter does; opens it with :mod:`webbrowser` unless ``--no-browser``.
Runs until Ctrl-C. With ``--json`` it prints one ``{"event": "listening", "url", ...}`` line when it listens
and ``{"event": "stopped"}`` when it stops.
"""

from __future__ import annotations

import threading
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
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Open the memory inspector: see, search, correct and audit everything pi-memory keeps."""
    from pi_memory.integrations.inspector import InspectorError, check_loopback, run_inspector
    from pi_memory.semantic.backends.rest_runner import ServeError

    try:
        check_loopback(host)
    except InspectorError as exc:
        raise fail(str(exc), 2) from exc
    memory = open_mem(dir)
    as_json = json_ or state.json
    stop = threading.Event()
    try:
        with run_inspector(memory, host=host, port=port) as running:
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
            try:
                while not stop.wait(0.5):
                    pass
            except KeyboardInterrupt:
                pass
    except (OSError, ServeError) as exc:
        raise fail(f"cannot listen on {host}:{port}: {exc}. Pick another --port (or leave it out for a free one).",
                   1) from exc
    finally:
        memory.close()
    if as_json:
        emit_json_line({"event": "stopped"})
    else:
        out.print("Inspector stopped.", markup=False)
