"""``pi-memory semantic ...``: thin commands over :mod:`pi_memory.semantic`.

Commands: ``status``, ``search QUERY``, ``recall PROMPT`` (preview of the injected block), ``list``,
``add TEXT``, ``delete ID``, ``history ID``, ``dedup [--apply]``, ``reembed [--prune]``,
``embed-sessions [--all] [--limit N] [--prune]``. Every command takes
``--dir`` (data root), ``--project PATH`` (whose scope: default the current folder) and ``--json``.

Exit codes, as the rest of the CLI: 0 success; 1 refused or not found (threat pattern, unknown id, a dedup
or re-embed that could not finish); 2 usage error (bad arguments, unreadable or invalid settings).

With ``--json`` every outcome is one JSON object on standard output: the result, or for a refusal or an error
``{"success": false, "error": "...", "exitCode": 1|2, ...}`` (see :func:`pi_memory.cli.app.fail`).
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from pi_memory.bounds import MAX_LIST_LIMIT
from pi_memory.cli.app import DirOpt, JsonOpt, app, emit_json, err, fail, out, settings, state, text_arg
from pi_memory.curated.entries import printable
from pi_memory.reports import redacted_line

log = logging.getLogger(__name__)
semantic_app = typer.Typer(help="Semantic memory: facts captured from conversations, recalled by meaning.",
                           no_args_is_help=True)
app.add_typer(semantic_app, name="semantic")

ProjectOpt = Annotated[Path | None, typer.Option("--project", help="A folder of the project whose memories to use "
                                                 "(default: the current folder).")]


def _service(dir_: Path | None, project: Path | None, *, model: bool = False, host: str | None = None,
             index_check: bool | None = None, held_ok: bool = False) -> Any:
    """The semantic service of ``project``'s scope. ``index_check``: as :func:`pi_memory.index.open_index`'s
    ``check`` (``None``: ``PRAGMA quick_check`` of an index up to 32 MiB, which reads every page). ``held_ok``
    (a command that only reads): when another process holds the index while semantic memory's tables must be
    set up, wait at most ``runtime.SEMANTIC_WAIT_S``, say so in one line and read what is there
    (:mod:`pi_memory.cli.semantic_held`), instead of the connection's 10 s and a refusal; and a ``--dir`` that does
    not exist is refused (:func:`pi_memory.cli.app.require_dir`), not created."""
    from pi_memory.embed import EmbeddingError
    from pi_memory.semantic.backend import BackendError
    from pi_memory.semantic.config import SemanticSettingsError, load_semantic_settings
    from pi_memory.semantic.service import open_semantic

    cwd = (project or Path.cwd()).resolve()
    if project is not None and not cwd.is_dir():  # a typo would silently start a new, empty scope
        what = "is not a folder" if cwd.exists() else "does not exist"
        raise fail(f"--project {project} {what}; memories are kept per project folder, so a mistyped path would "
                   "start a new, empty scope. Pass an existing folder of the project (or leave --project out to "
                   "use the current folder).", 2)
    resolved = settings(dir_, reads=held_ok)  # a command that only reads refuses a --dir that does not exist
    try:
        sem = load_semantic_settings(cwd)
        kwargs: dict[str, Any] = {} if model else {"model": None}

        def skills() -> Any:  # imported when a recall ranks skills, not by every command
            from pi_memory.skills import SkillStore
            from pi_memory.skills.export import recalled_for

            return recalled_for(SkillStore.from_settings(resolved, cwd=cwd), host, Path.home())

        if held_ok:
            from pi_memory.cli.semantic_held import open_or_read_held

            return open_or_read_held(open_semantic, resolved.data_dir, sem, cwd, host=host, index_check=index_check,
                                     skills=skills, **kwargs)
        return open_semantic(sem, cwd, data_dir=resolved.data_dir, background_reembed=False, warm=False, host=host,
                             index_check=index_check, skills=skills, **kwargs)
    except (SemanticSettingsError, EmbeddingError, BackendError, ValueError) as exc:
        raise fail(str(exc), 2) from exc


def _backend_errors(command: Callable[..., None]) -> Callable[..., None]:
    """Turn a backend failure met while a command runs (a memory server that does not answer, storage that
    cannot be read) into a refusal (exit 1) that says what happened, in JSON with ``--json``.

    An unexpected error (a bug, a damaged database) is reported the same way with ``--json``, so the output
    stays one JSON object (``"errorType"`` names the exception; the traceback goes to the log at debug level);
    without ``--json`` it propagates with its traceback, which is what a bug report needs."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        import sqlite3

        from pi_memory.semantic.backend import BackendError

        try:
            command(*args, **kwargs)
        except BackendError as exc:
            raise fail(f"{exc} (nothing was changed by this command unless it says so; fix the backend and run "
                       "it again)", 1) from exc
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            from pi_memory.storage import storage_problem

            if not state.json or storage_problem(exc, state.data_dir) is not None:
                raise  # a storage problem is reported by pi_memory.cli.main, as for every command
            log.debug("semantic %s failed", command.__name__, exc_info=exc)
            hint = (" The index database may be damaged: `pi-memory status --check` checks it, and `pi-memory "
                    "semantic reembed` rebuilds vectors." if isinstance(exc, sqlite3.Error) else "")
            raise fail(f"unexpected error ({type(exc).__name__}): {exc}.{hint} Nothing was changed by this "
                       "command unless it says so; run it again without --json to see the traceback and report "
                       "it if it persists.", 1, errorType=type(exc).__name__) from exc

    return run


def _json(data: Any, json_: bool) -> bool:
    if json_ or state.json:
        emit_json(data)
        return True
    return False


def _e(value: Any) -> str:
    """A stored value for a rich markup string: ``[...]`` in data is printed, never read as markup."""
    return escape(str(value))


def _line(mem: Any, score: float | None = None) -> None:
    extra = f" [dim]score {score:.4f}[/dim]" if score is not None else ""
    status = "" if mem.status == "active" else f" [yellow]({_e(mem.status)}"
    if mem.superseded_by:
        status += f" by {_e(mem.superseded_by)}"
    status += ")[/yellow]" if status else ""
    out.print(f"[dim]{_e(mem.id)}[/dim] {_e(mem.date)}{status}{extra}")
    out.print(f"  {printable(mem.text)}", markup=False)  # escape codes shown, not run


@semantic_app.command()
@_backend_errors
def status(dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Backend, scope, mode, memory counts, embedder and capture state, and what capture and recall did in
    every process (kept in the index: turns read and skipped, model calls, refusals, the latest error).

    The index is not read page by page here (that grows with its size): `pi-memory status --check` checks it."""
    service = _service(dir, project, model=True, index_check=False, held_ok=True)
    info = service.status_info()  # read once: its counts read every memory (they were read twice for a person)
    if getattr(service, "index_busy", False):  # read while another process writes: what could be read
        info = {**info, "indexBusy": True}
    if not _json(info, json_):
        out.print(service.status(info), markup=False)


@semantic_app.command()
@_backend_errors
def search(query: str,
           top_k: Annotated[int, typer.Option("--top-k", min=1, max=100,
                                              help="How many memories to show at most (the best first).")] = 5,
           no_floor: Annotated[bool, typer.Option("--no-floor", help="Also show memories without evidence of "
                                                  "their own (below the similarity floor and without the "
                                                  "query's keywords), ranked as found.")] = False,
           dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Hybrid (keyword + meaning) search of this scope's active memories.

    Like recall, only memories related to QUERY are shown: a similarity of at least recallMinSimilarity, or
    at least half of the query's keywords in the text. --no-floor shows the ranked list as it is."""
    if not query.strip():  # not "no memory is related enough": nothing was asked (session-search's words)
        note = "The query is empty; nothing to search for."
        if not _json({"query": query, "count": 0, "results": [], "note": note}, json_):
            out.print(note, markup=False)
        return
    service = _service(dir, project, held_ok=True)
    hits = service.search(query, top_k=top_k, floor=not no_floor)
    floor = None if no_floor else service.settings.recall_min_similarity
    if _json({"query": query, "count": len(hits), "floor": floor, "results": [h.to_public() for h in hits]},
             json_):
        return
    if not hits:
        out.print("No matching memories." if no_floor else
                  f"No memory is related enough (similarity floor {floor}, or at least half of the query's "
                  "keywords); --no-floor shows the closest ones anyway.", markup=False)
    for hit in hits:
        _line(hit.memory, hit.score)


@semantic_app.command()
@_backend_errors
def recall(prompt: str,
           source: Annotated[list[str] | None, typer.Option("--source", help="semantic, curated, sessions, skills "
                                                            "(repeatable; default: the settings)")] = None,
           host: Annotated[str, typer.Option("--host", help="The host whose recall to show: pi, claude-code or "
                                             "codex (their default sources differ: Claude Code and Codex "
                                             "recall skills).")] = "pi",
           as_of: Annotated[str | None, typer.Option("--as-of", help="The moment the prompt is asked at (an ISO "
                                                     "date or time, or an age such as 2d): nothing written later "
                                                     "is shown, and 'last week' means the week before it. "
                                                     "Default: now.")] = None,
           dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Show the block automatic recall would inject before the agent answers PROMPT.

    The same checks as the real recall run first: a trivial prompt (empty, a /command, ok/thanks/yes...) is
    skipped, and only memories that pass the similarity floor (recallMinSimilarity) are shown. PROMPT "-" reads
    it from standard input."""
    if host not in ("pi", "claude-code", "codex"):
        raise fail(f"--host {host} is not a host with recall; use pi, claude-code or codex.", 2)
    if as_of is not None and not as_of.strip():  # an unset variable in a script, most likely: not "now" in silence
        raise fail("--as-of is empty. Give the moment the prompt is asked at (2026-11-20, 2026-11-20T14:00Z, an age "
                   "such as 2d, or now), or leave the option out for now.", 2)
    if prompt == "-":  # standard input, as `semantic add -` reads it (without the line end `echo` adds)
        prompt = text_arg(prompt).rstrip("\r\n")
    service = _service(dir, project, host=None if host == "pi" else host, held_ok=True)
    try:
        preview = service.recall_preview(prompt, source, as_of=as_of)
    except ValueError as exc:
        raise fail(str(exc), 2) from exc
    if preview["skipped"]:
        if not _json({**preview, "hits": []}, json_):
            sys.stdout.write(f"(nothing would be injected: {preview['reason']}; recall skips such prompts)\n")
        return
    text = preview["text"]
    if _json({"prompt": prompt, "skipped": False, "hits": [h.to_public() for h in preview["hits"]], "text": text},
             json_):
        return
    floor = service.settings.recall_min_similarity
    written = f" written by {_moment_shown(as_of)}" if as_of else ""  # a later one is left out, however related
    sys.stdout.write((text or f"(nothing would be injected: no memory{written} is related enough -- similarity "
                              f"floor {floor}, or at least half of the prompt's keywords)") + "\n")


def _moment_shown(as_of: str) -> str:
    """``--as-of`` for a person: a date as given (``2026-12-02``: the end of that day), any other moment as the
    time it means (``2d`` -> ``2026-12-02 18:55 UTC``)."""
    from pi_memory.retrieval.dates import as_of_iso

    moment = as_of_iso(as_of)
    return moment[:10] if moment[:10] == as_of.strip() else f"{moment[:10]} {moment[11:16]} UTC"


@semantic_app.command("list")
@_backend_errors
def list_(limit: Annotated[int, typer.Option("--limit", min=1, max=MAX_LIST_LIMIT,
                                             help="How many memories to show at most.")] = 100,
          all_: Annotated[bool, typer.Option("--all", help="Include superseded and deleted memories.")] = False,
          dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """This scope's memories, newest first."""
    mems = _service(dir, project, held_ok=True).list(limit=limit, include_superseded=all_)
    if _json({"count": len(mems), "results": [m.to_public() for m in mems]}, json_):
        return
    if not mems:
        out.print("No memories stored in this scope yet.")
    for mem in mems:
        _line(mem)


@semantic_app.command()
@_backend_errors
def add(text: str, dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Store TEXT verbatim as one memory ("-" reads standard input; credentials in it are redacted). Duplicates are not stored twice."""
    from pi_memory import safety
    from pi_memory.semantic.service import RefusedError

    if text == "-":
        text = text_arg(text)
    if not text.strip():
        raise fail("Nothing stored: the text is empty. Give the fact itself, e.g. pi-memory semantic add "
                   "\"The team deploys on Fridays\" (or - to read it from standard input).", 2)
    service = _service(dir, project)
    try:
        mem, created = service.add(text, source={"kind": "cli"})
    except RefusedError as exc:
        raise fail(str(exc), 1) from exc
    except ValueError as exc:
        raise fail(str(exc), 2) from exc
    # Credentials are stored redacted (never refused here): say so, so no one believes the value was kept.
    redacted = sorted({span.id for span in safety.secret_spans(text)})
    if not _json({"event": "ADD" if created else "NOOP", "memory": mem.to_public(), "redacted": redacted}, json_):
        out.print(("Stored " if created else "Already stored as ") + mem.id, markup=False)
        if (said := redacted_line(text)) is not None:
            out.print(said, markup=False)


@semantic_app.command()
@_backend_errors
def delete(memory_id: str, reason: Annotated[str | None, typer.Option(
               "--reason", help="Why it is deleted; kept in the memory's history (default: \"deleted from the "
               "CLI\").")] = None,
           dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Mark memory ID deleted (its history is kept)."""
    ok = _service(dir, project).delete(memory_id, reason=reason or "deleted from the CLI")
    if not ok:
        raise fail(f"no active memory {memory_id!r} in this scope (see `pi-memory semantic list --all`)", 1,
                   id=memory_id)
    if not _json({"success": True, "id": memory_id}, json_):
        out.print(f"Deleted {memory_id} (history kept).", markup=False)


@semantic_app.command()
@_backend_errors
def update(memory_id: str, text: str, reason: Annotated[str | None, typer.Option(
               "--reason", help="Why it changed; kept in the memory's history (default: \"updated from the CLI\").")] = None,
           dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Replace memory ID by TEXT, a fact that changed ("-" reads standard input): the old version is kept as
    superseded (see history), and recall marks what still says it."""
    from pi_memory.semantic.backend import MemoryChangedError, MemoryNotFoundError
    from pi_memory.semantic.service import RefusedError

    if text == "-":
        text = text_arg(text)
    if not text.strip():
        raise fail(f"Nothing changed: the new text is empty. To remove the memory, run pi-memory semantic delete "
                   f"{memory_id}.", 2, id=memory_id)
    try:
        mem = _service(dir, project).update(memory_id, text, reason=reason or "updated from the CLI")
    except RefusedError as exc:
        raise fail(str(exc), 1, id=memory_id) from exc
    except MemoryChangedError as exc:
        newer = f"; its newer version is {exc.superseded_by}" if exc.superseded_by else ""
        raise fail(f"Nothing changed: memory {memory_id} is {exc.status} already{newer} (see pi-memory semantic "
                   f"history {memory_id}).", 1, id=memory_id) from exc
    except MemoryNotFoundError as exc:
        raise fail(f"Nothing changed: no active memory {memory_id!r} in this scope (see `pi-memory semantic list`).",
                   1, id=memory_id) from exc
    except ValueError as exc:
        raise fail(str(exc), 2, id=memory_id) from exc
    if not _json({"event": "UPDATE" if mem.id != memory_id else "NOOP", "memory": mem.to_public(),
                  "replaced": memory_id}, json_):
        out.print(f"Replaced {memory_id} by {mem.id} (the old version is kept in its history)." if mem.id != memory_id
                  else f"{memory_id} already says that: nothing changed.", markup=False)
        if (said := redacted_line(text)) is not None:
            out.print(said, markup=False)


@semantic_app.command()
@_backend_errors
def history(memory_id: str, dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """The changes of memory ID and of the memories it replaced or was replaced by, oldest first."""
    events = _service(dir, project, held_ok=True).history(memory_id)
    if not events:
        raise fail(f"no memory {memory_id!r} in this scope (see `pi-memory semantic list --all`)", 1, id=memory_id,
                   events=[])
    if not _json({"id": memory_id, "events": [e.to_public() for e in events]}, json_):
        for e in events:
            out.print(f"{_e(e.at)} [bold]{_e(e.event)}[/bold] [dim]{_e(e.memory_id)}[/dim]"
                      + (f" ({_e(e.reason)})" if e.reason else ""))
            if e.old_text is not None:
                out.print(f"  before: {printable(e.old_text)}", markup=False)
            if e.new_text is not None:
                out.print(f"  after:  {printable(e.new_text)}", markup=False)


@semantic_app.command()
@_backend_errors
def dedup(apply: Annotated[bool, typer.Option("--apply", help="Delete the duplicates (default: preview).")] = False,
          dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Find exact duplicates (NFC, case-insensitive, collapsed whitespace); --apply keeps the newest of each."""
    report = _service(dir, project).dedup(apply=apply)
    problem = report.refused or (f"{len(report.failures)} deletion(s) failed: {'; '.join(report.failures[:3])}"
                                 if report.failures else None)
    if problem and (json_ or state.json):
        raise fail(problem, 1, **report.to_public())
    if not _json(report.to_public(), json_):
        for g in report.groups:
            verdict = f"[yellow]left alone: {_e(g.problem)}[/yellow]" if g.problem else f"keep {_e(g.keep)}"
            out.print(f"{len(g.ids)}× ", end="")
            out.print(printable(g.text), markup=False, end="")
            out.print(f" — {verdict}")
        done = f", {report.removed} removed" if report.applied else " (preview: run with --apply to remove them)"
        out.print(f"{report.total} memories, {report.duplicates_found} duplicate(s){done}; "
                  f"{report.ambiguous} ambiguous group(s).", markup=False)
    if problem:
        raise fail(problem, 1)


@semantic_app.command()
@_backend_errors
def reembed(prune: Annotated[bool, typer.Option("--prune", help="Afterwards delete vectors of other models.")] = False,
            dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Embed every memory that has no vector of the current embedding model (after a model switch)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    service = _service(dir, project)
    if not hasattr(service.backend, "reembed"):
        raise fail(f"the {service.backend.name} backend embeds on its server; nothing to re-embed here", 1)
    quiet = json_ or state.json
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=err, disable=quiet) as bar:
        task = bar.add_task(f"re-embedding with {service.backend.model}", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        report = service.reembed(progress, prune=prune)
    data = {"model": report.model, "embedded": report.embedded, "remaining": report.remaining,
            "pruned": report.pruned}
    problem = (f"{report.error}; run `pi-memory semantic reembed` again once the embedder works" if report.error
               else f"{report.remaining} memories still have no vector; run `pi-memory semantic reembed` again"
               if report.remaining else None)
    if problem and quiet:
        raise fail(problem, 1, **data)
    if not _json({**data, "error": None}, json_):
        out.print(f"{report.embedded} memories embedded with {report.model}; {report.remaining} remaining"
                  + (f"; {report.pruned} old vectors removed" if report.pruned else ""), markup=False)
    if problem:
        raise fail(problem, 1)


def _stopped_writing(exc: Exception, saved: int, data_dir) -> str:
    """What a person reads when embed-sessions could not write any more after saving ``saved`` vectors."""
    from pi_memory.storage import describe, storage_problem

    kept = f"the vectors saved before it are kept ({saved} vector{'' if saved == 1 else 's'})"
    found = storage_problem(exc, data_dir)
    if found is None:
        return (f"embedding stopped: writing the vectors failed ({type(exc).__name__}: {exc}); {kept}. Run the "
                "command again to go on.")
    what, todo = describe(found.kind, found.folder, found.detail, file=found.file)
    return f"{what} Embedding stopped there; {kept}. {todo}"


@semantic_app.command("embed-sessions")
def embed_sessions(
    all_: Annotated[bool, typer.Option("--all", help="Every project's turns and curated entries (default: the "
                                       "project of --project or the current folder).")] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, max=MAX_LIST_LIMIT, help="Embed at most this many turns "
                                              "(newest first); run again to go on.")] = None,
    prune: Annotated[bool, typer.Option("--prune", help="With --all: afterwards delete curated and turn vectors "
                                        "of other embedding models (only when none is left to embed).")] = False,
    dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False,
) -> None:
    """Embed past session turns and curated entries, so recall finds them by meaning (newest turns first)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from pi_memory.semantic import turn_vectors as tv

    service = _service(dir, project)
    embedder = getattr(service.backend, "embedder", None)
    if embedder is None or service.conn is None:
        raise fail(f"the {service.backend.name} backend has no local embedder; session turns are embedded only "
                    "with the embedded backend (pi-memory.semantic.backend.type \"embedded\")", 1)
    if prune and not all_:
        raise fail("--prune removes other models' vectors of every project, so it needs --all", 2)
    where = None if all_ else service.scope.project_id
    quiet = json_ or state.json
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=err, disable=quiet) as bar:
        tasks = {name: bar.add_task(f"{name} with {embedder.model_name}", total=None)
                 for name in ("curated", "sessions")}

        def progress(source: str, done: int, total: int) -> None:
            bar.update(tasks[source], completed=done, total=total)

        reports, pruned = tv.backfill(service.conn, embedder, project=where, limit=limit, prune=prune,
                                      progress=progress)
    data = {"model": str(embedder.model_name), "project": where, "pruned": pruned,
            **{r.source: {"embedded": r.embedded, "remaining": r.remaining, "error": r.error} for r in reports}}
    failed = next((r for r in reports if r.error), None)
    problem = (f"embedding stopped: {failed.error}. What was embedded is kept; fix the embedder settings "
               "(`pi-memory semantic status`) and run the command again to go on.") if failed is not None else None
    halted = next((r for r in reports if r.stopped is not None), None)
    if halted is not None:
        problem = _stopped_writing(halted.stopped, sum(r.embedded for r in reports), state.data_dir)
    if problem and quiet:  # one JSON object: the error with the figures
        raise fail(problem, 1, **data)
    if not _json(data, json_):
        for r in reports:
            out.print(f"{r.source}: {r.embedded} embedded with {r.model}; {r.remaining} remaining", markup=False)
        if pruned:
            out.print(f"{pruned} vectors of other models removed", markup=False)
    if problem:
        raise fail(problem, 1)
