"""``pi-memory semantic ...``: thin commands over :mod:`pi_memory.semantic`.

Commands: ``status``, ``search QUERY``, ``recall PROMPT`` (preview of the injected block), ``list``,
``add TEXT``, ``delete ID``, ``history ID``, ``dedup [--apply]``, ``reembed [--prune]``,
``embed-sessions [--all] [--limit N] [--prune]``. Every command takes
``--dir`` (data root), ``--project PATH`` (whose scope: default the current folder) and ``--json``.

Exit codes, as the rest of the CLI: 0 success; 1 refused or not found (threat pattern, unknown id, a dedup
or re-embed that could not finish); 2 usage error (bad arguments, unreadable or invalid settings).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from pi_memory.cli.app import DirOpt, JsonOpt, app, err, out, settings, state

semantic_app = typer.Typer(help="Semantic memory: facts captured from conversations, recalled by meaning.",
                           no_args_is_help=True)
app.add_typer(semantic_app, name="semantic")

ProjectOpt = Annotated[Path | None, typer.Option("--project", help="A folder of the project whose memories to use "
                                                 "(default: the current folder).")]


def _fail(message: str, code: int) -> typer.Exit:
    err.print("[red]error:[/red] " if code == 2 else "[red]refused:[/red] ", end="")
    err.print(message, markup=False)
    return typer.Exit(code)


def _service(dir_: Path | None, project: Path | None, *, model: bool = False) -> Any:
    from pi_memory.embed import EmbeddingError
    from pi_memory.semantic.backend import BackendError
    from pi_memory.semantic.config import SemanticSettingsError, load_semantic_settings
    from pi_memory.semantic.service import open_semantic

    cwd = (project or Path.cwd()).resolve()
    resolved = settings(dir_)
    try:
        sem = load_semantic_settings(cwd)
        kwargs: dict[str, Any] = {} if model else {"model": None}
        return open_semantic(sem, cwd, data_dir=resolved.data_dir, background_reembed=False, warm=False,
                             **kwargs)
    except (SemanticSettingsError, EmbeddingError, BackendError, ValueError) as exc:
        raise _fail(str(exc), 2) from exc


def _json(data: Any, json_: bool) -> bool:
    if json_ or state.json:
        out.print_json(json.dumps(data, ensure_ascii=False))
        return True
    return False


def _line(mem: Any, score: float | None = None) -> None:
    extra = f" [dim]score {score:.4f}[/dim]" if score is not None else ""
    status = "" if mem.status == "active" else f" [yellow]({mem.status}"
    if mem.superseded_by:
        status += f" by {mem.superseded_by}"
    status += ")[/yellow]" if status else ""
    out.print(f"[dim]{mem.id}[/dim] {mem.date}{status}{extra}")
    out.print(f"  {mem.text}", markup=False)


@semantic_app.command()
def status(dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Backend, scope, mode, memory counts, embedder and capture state."""
    service = _service(dir, project, model=True)
    if not _json(service.status_info(), json_):
        out.print(service.status(), markup=False)


@semantic_app.command()
def search(query: str, top_k: Annotated[int, typer.Option("--top-k", min=1, max=100)] = 5,
           dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Hybrid (keyword + meaning) search of this scope's active memories."""
    hits = _service(dir, project).search(query, top_k=top_k)
    if _json({"query": query, "count": len(hits), "results": [h.to_public() for h in hits]}, json_):
        return
    if not hits:
        out.print("No matching memories.")
    for hit in hits:
        _line(hit.memory, hit.score)


@semantic_app.command()
def recall(prompt: str,
           source: Annotated[list[str] | None, typer.Option("--source", help="semantic, curated, sessions "
                                                            "(repeatable; default: the settings)")] = None,
           dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Show the block automatic recall would inject before the agent answers PROMPT."""
    from pi_memory.semantic.recall import format_recall
    from pi_memory.semantic.recall import recall as run_recall

    service = _service(dir, project)
    s = service.settings
    try:
        hits = run_recall(service.backend, prompt, scope=service.scope, top_k=s.top_k,
                          include=source or s.recall_sources, conn=service.conn)
    except ValueError as exc:
        raise _fail(str(exc), 2) from exc
    text = format_recall(hits, s.recall_token_budget)
    if _json({"prompt": prompt, "hits": [h.to_public() for h in hits], "text": text}, json_):
        return
    sys.stdout.write((text or "(nothing would be injected)") + "\n")


@semantic_app.command("list")
def list_(limit: Annotated[int, typer.Option("--limit", min=1)] = 100,
          all_: Annotated[bool, typer.Option("--all", help="Include superseded and deleted memories.")] = False,
          dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """This scope's memories, newest first."""
    mems = _service(dir, project).list(limit=limit, include_superseded=all_)
    if _json({"count": len(mems), "results": [m.to_public() for m in mems]}, json_):
        return
    if not mems:
        out.print("No memories stored in this scope yet.")
    for mem in mems:
        _line(mem)


@semantic_app.command()
def add(text: str, dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Store TEXT verbatim as one memory ("-" reads standard input). Duplicates are not stored twice."""
    from pi_memory.semantic.service import RefusedError

    if text == "-":
        text = sys.stdin.read()
    service = _service(dir, project)
    try:
        mem, created = service.add(text, source={"kind": "cli"})
    except RefusedError as exc:
        raise _fail(str(exc), 1) from exc
    except ValueError as exc:
        raise _fail(str(exc), 2) from exc
    if not _json({"event": "ADD" if created else "NOOP", "memory": mem.to_public()}, json_):
        out.print(("Stored " if created else "Already stored as ") + mem.id, markup=False)


@semantic_app.command()
def delete(memory_id: str, reason: Annotated[str | None, typer.Option("--reason")] = None,
           dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Mark memory ID deleted (its history is kept)."""
    ok = _service(dir, project).delete(memory_id, reason=reason or "deleted from the CLI")
    if not _json({"success": ok, "id": memory_id}, json_) and ok:
        out.print(f"Deleted {memory_id} (history kept).", markup=False)
    if not ok:
        raise _fail(f"no active memory {memory_id!r} in this scope (see `pi-memory semantic list --all`)", 1)


@semantic_app.command()
def history(memory_id: str, dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """The changes of memory ID and of the memories it replaced or was replaced by, oldest first."""
    events = _service(dir, project).history(memory_id)
    if not _json({"id": memory_id, "events": [e.to_public() for e in events]}, json_):
        for e in events:
            out.print(f"{e.at} [bold]{e.event}[/bold] [dim]{e.memory_id}[/dim]" + (f" ({e.reason})" if e.reason else ""))
            if e.old_text is not None:
                out.print(f"  before: {e.old_text}", markup=False)
            if e.new_text is not None:
                out.print(f"  after:  {e.new_text}", markup=False)
    if not events:
        raise _fail(f"no memory {memory_id!r} in this scope", 1)


@semantic_app.command()
def dedup(apply: Annotated[bool, typer.Option("--apply", help="Delete the duplicates (default: preview).")] = False,
          dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Find exact duplicates (NFC, case-insensitive, collapsed whitespace); --apply keeps the newest of each."""
    report = _service(dir, project).dedup(apply=apply)
    if not _json(report.to_public(), json_):
        for g in report.groups:
            verdict = f"[yellow]left alone: {g.problem}[/yellow]" if g.problem else f"keep {g.keep}"
            out.print(f"{len(g.ids)}× ", end="")
            out.print(g.text, markup=False, end="")
            out.print(f" — {verdict}")
        done = f", {report.removed} removed" if report.applied else " (preview: run with --apply to remove them)"
        out.print(f"{report.total} memories, {report.duplicates_found} duplicate(s){done}; "
                  f"{report.ambiguous} ambiguous group(s).", markup=False)
    if report.refused:
        raise _fail(report.refused, 1)
    if report.failures:
        raise _fail(f"{len(report.failures)} deletion(s) failed: {'; '.join(report.failures[:3])}", 1)


@semantic_app.command()
def reembed(prune: Annotated[bool, typer.Option("--prune", help="Afterwards delete vectors of other models.")] = False,
            dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Embed every memory that has no vector of the current embedding model (after a model switch)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    service = _service(dir, project)
    if not hasattr(service.backend, "reembed"):
        raise _fail(f"the {service.backend.name} backend embeds on its server; nothing to re-embed here", 1)
    quiet = json_ or state.json
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=err, disable=quiet) as bar:
        task = bar.add_task(f"re-embedding with {service.backend.model}", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        report = service.reembed(progress, prune=prune)
    data = {"model": report.model, "embedded": report.embedded, "remaining": report.remaining,
            "pruned": report.pruned, "error": report.error}
    if not _json(data, json_):
        out.print(f"{report.embedded} memories embedded with {report.model}; {report.remaining} remaining"
                  + (f"; {report.pruned} old vectors removed" if report.pruned else ""), markup=False)
    if report.error or report.remaining:
        raise _fail(report.error or f"{report.remaining} memories still have no vector", 1)


@semantic_app.command("embed-sessions")
def embed_sessions(
    all_: Annotated[bool, typer.Option("--all", help="Every project's turns and curated entries (default: the "
                                       "project of --project or the current folder).")] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Embed at most this many turns "
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
        raise _fail(f"the {service.backend.name} backend has no local embedder; session turns are embedded only "
                    "with the embedded backend (pi-memory.semantic.backend.type \"embedded\")", 1)
    if prune and not all_:
        raise _fail("--prune removes other models' vectors of every project, so it needs --all", 2)
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
    if not _json(data, json_):
        for r in reports:
            out.print(f"{r.source}: {r.embedded} embedded with {r.model}; {r.remaining} remaining", markup=False)
        if pruned:
            out.print(f"{pruned} vectors of other models removed", markup=False)
    failed = next((r for r in reports if r.error), None)
    if failed is not None:
        raise _fail(f"embedding stopped: {failed.error}. What was embedded is kept; fix the embedder settings "
                    "(`pi-memory semantic status`) and run the command again to go on.", 1)
