"""``pi-memory serve``: the self-hosted semantic-memory server (Mem0 OSS REST shape, bearer-token auth)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pi_memory.cli.app import (
    DirOpt,
    JsonOpt,
    app,
    emit_json_line,
    err,
    fail,
    require_writable,
    settings,
    state,
)

HostOpt = Annotated[str, typer.Option("--host", help="Address to listen on. Anything but loopback needs --token.")]
PortOpt = Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port.")]
TokenOpt = Annotated[
    str | None,
    typer.Option("--token", help="Bearer token clients must send (default: $PI_MEMORY_SERVER_TOKEN, else a new "
                                 "random one printed at start).", show_default=False),
]


@app.command()
def serve(
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8765,
    token: TokenOpt = None,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Serve semantic memory over HTTP (Mem0 OSS REST shape) for other machines, tools or Mem0 clients.

    Clients use the "self-hosted" semantic backend with this URL and token. Memories live in the data root's index, the same ones the embedded backend uses. With a chat model configured, infer=true adds run the capture pipeline; without one they are refused, and infer=false adds store text verbatim.

    Trust: the token is ONE shared team token, not a per-user login. Anyone who holds it can read, add, change and delete the memories of any user_id, agent_id and run_id simply by naming them. The scope checks keep one scope's ids from being found or changed through another scope (no id probing across scopes); they are not per-user authorisation. Give the token only to people and machines that may see every memory on this server; run one server (and token) per group that must not see each other's memories.

    With --json, standard output gets one JSON line once the server listens ({"event": "listening", "url", "host", "port", "backend", "dataDir", "auth", "token": "given" | "generated", "infer"}; never the token itself: a generated one goes to standard error) and one when it stops ({"event": "stopped", "url", "signal"})."""
    from pi_memory.llm import resolve_chat_model
    from pi_memory.semantic.backends.rest_server import ServeError, model_capture
    from pi_memory.semantic.backends.rest_server import serve as run_server
    from pi_memory.semantic.config import SemanticSettingsError, load_semantic_settings

    resolved = settings(dir)
    require_writable(resolved.data_dir)
    try:
        semantic = load_semantic_settings()
    except SemanticSettingsError as exc:
        raise fail(str(exc), 2) from exc
    model, status = resolve_chat_model()
    capture = (model_capture(model, semantic.custom_instructions, semantic.capture_max_input_tokens)
               if model is not None else None)
    err.print(f"infer=true adds: {status}", markup=False)
    try:
        run_server(host=host, port=port, token=token, data_dir=Path(resolved.data_dir), capture=capture,
                   embedder=semantic.embedder, announce=lambda line: err.print(line, markup=False),
                   report=emit_json_line if json_ or state.json else None)
    except ServeError as exc:
        raise fail(str(exc), 2) from exc
