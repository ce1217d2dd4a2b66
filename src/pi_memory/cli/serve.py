"""``pi-memory serve``: the self-hosted semantic-memory server (Mem0 OSS REST shape, bearer-token auth)."""

from __future__ import annotations

import os
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
DATABASE_URL_ENV = "PI_MEMORY_DATABASE_URL"
DatabaseOpt = Annotated[
    str | None,
    typer.Option("--database-url", help="PostgreSQL URL of the team store (default: $PI_MEMORY_DATABASE_URL; "
                                        "without it, the embedded store of the data root).", show_default=False),
]
EF_SEARCH_ENV = "PI_MEMORY_HNSW_EF_SEARCH"
EfSearchOpt = Annotated[
    int | None,
    typer.Option("--hnsw-ef-search", min=1, max=1000, help="Team store: candidates the HNSW index keeps per vector "
                 "query (default: $PI_MEMORY_HNSW_EF_SEARCH, else 100); higher finds more of the true nearest "
                 "memories, slower.", show_default=False),
]
REEMBED_EVERY_ENV = "PI_MEMORY_REEMBED_EVERY"
ReembedEveryOpt = Annotated[
    float | None,
    typer.Option("--reembed-every", min=0.1, max=86400, help="Team store: seconds between the passes that embed "
                 "memories queued without a vector of the server's model (by `serve import`, or redacted at a "
                 "start; default: $PI_MEMORY_REEMBED_EVERY, else 30).", show_default=False),
]
TokenOpt = Annotated[
    str | None,
    typer.Option("--token", help="Bearer token clients must send (default: $PI_MEMORY_SERVER_TOKEN, else a new "
                                 "random one printed at start). Other users of this machine can read a command "
                                 "line (ps), so prefer --token-file or $PI_MEMORY_SERVER_TOKEN.", show_default=False),
]
TokenFileOpt = Annotated[
    Path | None,
    typer.Option("--token-file", help="Read the bearer token from this file, which holds only the token (keep it "
                                      "readable by you only).", show_default=False),
]


def require_team_packages() -> None:
    """Stop with what to install (exit 2) when the team store's packages (the ``team`` extra) are missing: every
    command that opens the PostgreSQL store calls this before importing anything of it."""
    from pi_memory.semantic.backends.team_extra import TeamExtraMissing, require

    try:
        require("the team store (PostgreSQL)")
    except TeamExtraMissing as exc:
        raise fail(str(exc), 2) from None


serve_app = typer.Typer(invoke_without_command=True, no_args_is_help=False)
app.add_typer(serve_app, name="serve")


@serve_app.callback()
def serve(
    ctx: typer.Context,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8765,
    token: TokenOpt = None,
    token_file: TokenFileOpt = None,
    database_url: DatabaseOpt = None,
    ef_search: EfSearchOpt = None,
    reembed_every: ReembedEveryOpt = None,
    tls_cert: Annotated[Path | None, typer.Option("--tls-cert", help="Certificate file (PEM) for HTTPS.")] = None,
    tls_key: Annotated[Path | None, typer.Option("--tls-key", help="Private key file (PEM) for HTTPS.")] = None,
    insecure_http: Annotated[bool, typer.Option("--insecure-http", help="Allow plain HTTP beyond loopback "
                                                "(only behind a proxy that adds TLS).")] = False,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Serve semantic memory over HTTP (Mem0 OSS REST shape) for other machines, tools or Mem0 clients.

    Clients use the "self-hosted" semantic backend with this URL and token. Without --database-url, memories live in the data root's index, the same ones the embedded backend uses; with it (or $PI_MEMORY_DATABASE_URL), in a PostgreSQL database with pgvector that any number of serve processes on any number of hosts can share. With a chat model configured, infer=true adds run the capture pipeline; without one they are refused, and infer=false adds store text verbatim.

    With PostgreSQL the server also keeps the team's shared project stores (GET/POST /projects/NAME/entries: the curated project store of a project, edited by the whole team under the curated store's rules; clients set "teamProjectStore" in their settings) and every token of the server may edit them.

    Trust: with PostgreSQL and per-user tokens (`pi-memory serve token create --user alice`), a token reaches only its own user's memories and every write is audited (`pi-memory serve audit`). Otherwise the token is ONE shared team token: anyone who holds it can read, add, change and delete the memories of any user_id simply by naming it. Give a shared token only to people and machines that may see every memory on the server.

    With --json, standard output gets one JSON line once the server listens ({"event": "listening", "url", "host", "port", "backend", "dataDir", "auth", "token": "given" | "generated", "infer"}; never the token itself: a generated one goes to standard error) and one when it stops ({"event": "stopped", "url", "signal"})."""
    if ctx.invoked_subcommand is not None:
        return
    from pi_memory.llm import resolve_chat_model
    from pi_memory.semantic.backends.rest_runner import say_event
    from pi_memory.semantic.backends.rest_server import ServeError, model_capture
    from pi_memory.semantic.backends.rest_server import serve as run_server
    from pi_memory.semantic.config import SemanticSettingsError, load_semantic_settings

    resolved = settings(dir)
    database_url = database_url or os.environ.get(DATABASE_URL_ENV) or None
    if database_url:
        require_team_packages()
    else:
        require_writable(resolved.data_dir)
    if ef_search is None and os.environ.get(EF_SEARCH_ENV):
        try:
            ef_search = int(os.environ[EF_SEARCH_ENV])
        except ValueError:
            raise fail(f"${EF_SEARCH_ENV} must be a whole number from 1 to 1000, not "
                       f"{os.environ[EF_SEARCH_ENV]!r}.", 2) from None
    if reembed_every is None and os.environ.get(REEMBED_EVERY_ENV):
        reembed_every = _seconds(os.environ[REEMBED_EVERY_ENV])
    if (tls_cert is None) != (tls_key is None):
        raise fail("HTTPS needs both --tls-cert and --tls-key.", 2)
    if token is not None and token_file is not None:
        raise fail("Give the server token once: --token or --token-file, not both.", 2)
    if token_file is not None:
        from pi_memory.integrations.mcp_http import token_from_file
        from pi_memory.semantic.backends.rest_client import TOKEN_ENV

        try:
            token = token_from_file(token_file, "server token", TOKEN_ENV)
        except ServeError as exc:
            raise fail(str(exc), 2) from exc
    try:
        semantic = load_semantic_settings()
    except SemanticSettingsError as exc:
        raise fail(str(exc), 2) from exc
    model, status = resolve_chat_model()
    capture = (model_capture(model, semantic.custom_instructions, semantic.capture_max_input_tokens)
               if model is not None else None)
    say = lambda line: err.print(line, markup=False)  # noqa: E731
    events = emit_json_line if json_ or state.json else say_event(say)

    def report(event: dict) -> None:  # what infer=true adds do is said once the server is up, not before a failure
        events(event)
        if event.get("event") == "listening":
            say(f"infer=true adds: {status}")

    try:
        run_server(host=host, port=port, token=token, data_dir=Path(resolved.data_dir), capture=capture,
                   embedder=semantic.embedder, announce=say, report=report, database_url=database_url,
                   tls=(str(tls_cert), str(tls_key)) if tls_cert and tls_key else None, insecure_http=insecure_http,
                   ef_search=ef_search, project_char_limit=resolved.project_char_limit, reembed_every=reembed_every)
    except ServeError as exc:
        raise fail(str(exc), 2) from exc


def _seconds(text: str) -> float:
    """``$PI_MEMORY_REEMBED_EVERY`` as seconds (the range of ``--reembed-every``), else exit 2 saying so."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.1 <= value <= 86400:
        raise fail(f"${REEMBED_EVERY_ENV} must be a number of seconds from 0.1 to 86400, not {text!r}.", 2)
    return value


from pi_memory.cli import serve_team  # noqa: E402,F401  (serve migrate | token | audit | import | export)
