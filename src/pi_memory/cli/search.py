"""Search and index commands: ``session-search``, ``memory-search``, ``index-sessions``, ``reindex``,
``sync-markdown``. Thin over :mod:`pi_memory.index` through the tools layer (same output as the agent gets)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from pi_memory.cli.app import DirOpt, JsonOpt, ProjectFilterOpt, app, err, fail, open_mem, out, state
from pi_memory.curated.entries import printable
from pi_memory.reports import index_pass_text


def _choices(name: str, arguments: dict) -> None:
    """Refuse (exit 2, in a person's words) an option value the tool does not take, before anything is opened:
    the tool's own refusal is written for a model ("Invalid arguments for session_search: role: Input should
    be ... call the tool again"). The allowed values are the tool's (its arguments' ``Literal`` types)."""
    from typing import Literal, get_args, get_origin

    from pi_memory.tools.search import MemorySearchArgs, SessionSearchArgs

    model = SessionSearchArgs if name == "session_search" else MemorySearchArgs
    for option, value in arguments.items():
        field = model.model_fields.get(option)
        if value is None or field is None:
            continue
        allowed = [v for a in get_args(field.annotation) if get_origin(a) is Literal for v in get_args(a)]
        if allowed and value not in allowed:
            listed = ", ".join(allowed[:-1]) + f" or {allowed[-1]}"
            raise fail(f"--{option} {value} is not one of the values it takes: {listed}. Nothing was searched.", 2)


def _tool(name: str, dir_: Path | None, arguments: dict, as_json: bool) -> None:
    _choices(name, arguments)
    memory = open_mem(dir_, reads=True)
    as_json = as_json or state.json  # a program reads it as a tool result: the model's copy (blocked markers)
    # the host's own search tools (same sources: index, turn vectors, memory blocks), the index variant of
    # session_search whatever the settings say: its hits are what this command prints
    spec = next(t for t in memory.search_tools(for_model=as_json, session_variant="legacy") if t.name == name)
    outcome = spec.call({k: v for k, v in arguments.items() if v is not None})
    if as_json:
        out.print_json(json.dumps(outcome.result, ensure_ascii=False))
    elif outcome.is_error:
        from pi_memory.curated.messages import for_person  # the tool's words are a model's: a person's here

        err.print(for_person(outcome.result.get("error", "failed")), markup=False)
    else:
        _print_hits(outcome.result)
    raise typer.Exit(1 if outcome.is_error else 0)


def highlighted(snippet: str) -> Text:
    """A snippet for a person: the search's highlights in bold (:func:`pi_memory.index.results.highlight_parts`)."""
    from pi_memory.index.results import highlight_parts

    text = Text()
    for part, bold in highlight_parts(snippet):
        text.append(part, style="bold" if bold else None)
    return text


# How a session hit was found, in a person's words beside it (its ``match``): a turn nearest by meaning holds none
# of the query's words, and a person must tell it from one that does.
FOUND_BY = {"all": "(by keyword)", "text": "(by keyword)", "any": "(by some of the words)",
            "context": "(by the turns around it)", "meaning": "(by meaning only)"}


def _print_hits(result: dict) -> None:
    hits = result.get("results", [])
    if not hits:
        out.print(result.get("note") or "No results.", markup=False)
        return
    for hit in hits:
        if result.get("kind") == "session":
            where = f"{hit.get('timestamp', '?')}  {hit['role']}  {hit.get('project') or hit.get('cwd') or ''}"
            found = FOUND_BY.get(hit.get("match") or "", "")
            out.print(f"[bold]{hit['rank']}.[/bold] [dim]{escape(printable(where))}[/dim]"
                      + (f"  {escape(found)}" if found else ""))
            out.print(f"   {hit['file']}:{hit['line']}", markup=False, style="dim")
        elif hit.get("target") == "block":
            where = escape(printable(f"block {hit.get('block')} ({hit.get('scope')}, {hit.get('file')})"))
            out.print(f"[bold]{hit['rank']}.[/bold] [dim]{where}[/dim]")
        else:
            out.print(f"[bold]{hit['rank']}.[/bold] [dim]{hit.get('target')} {hit.get('category') or ''}[/dim]")
        # a transcript's tool output keeps its colours and titles: shown as \xNN, never run by the terminal
        out.print(highlighted("   " + printable(hit.get("snippet") or hit.get("content") or "")))
    if result.get("note"):
        err.print(result["note"], markup=False)


@app.command("session-search")
def session_search(
    query: str,
    limit: Annotated[int | None, typer.Option(min=1, max=50, help="1-50, default 10.")] = None,
    project: ProjectFilterOpt = None,
    role: Annotated[str | None, typer.Option(help="user, assistant, tool or summary.")] = None,
    since: Annotated[str | None, typer.Option(help="ISO date/time.")] = None,
    until: Annotated[str | None, typer.Option(help="ISO date/time.")] = None,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Search past sessions (pi, Claude Code, Codex) by relevance."""
    args = {"query": query, "limit": limit, "project": project and str(project), "role": role, "since": since,
            "until": until}
    _tool("session_search", dir, args, json_)


@app.command("memory-search")
def memory_search(
    query: str,
    limit: Annotated[int | None, typer.Option(min=1, max=50, help="1-50, default 10.")] = None,
    target: Annotated[str | None, typer.Option(help="memory, user, project, failure or block (the memory "
                                                "blocks only).")] = None,
    category: Annotated[str | None, typer.Option(help="failure category.")] = None,
    project: ProjectFilterOpt = None,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Search saved memories and memory blocks by relevance (the sources the agent's memory_search tool has)."""
    args = {"query": query, "limit": limit, "target": target, "category": category,
            "project": project and str(project)}
    _tool("memory_search", dir, args, json_)


def redaction_bar():
    """The progress callback of migration 008 for this CLI run (:func:`pi_memory.index.redaction_progress`): a
    bar on standard error, drawn from the first batch on and closed when the last is done; nothing under
    ``--json`` or ``mcp`` (the bar is only for a person watching)."""
    bar: dict = {}

    def update(done: int, total: int) -> None:
        if state.json or state.stdout_is_protocol or (bar.get("closed") and done >= total):
            return
        if "p" not in bar:
            bar["p"] = Progress(TextColumn("redacting credentials in the index"), BarColumn(), MofNCompleteColumn(),
                                TimeRemainingColumn(), console=err)
            bar["p"].start()
            bar["t"] = bar["p"].add_task("redact", total=total or None)
        bar["p"].update(bar["t"], completed=done, total=total or None)
        if done >= total:
            bar.pop("p").stop()
            bar["closed"] = True

    return update


def _progress_bar():
    # --json: standard error stays quiet too; not a terminal (a log, 2>&1 into a file): no bar, whose one
    # final frame landed in the middle of the summary line there
    bar = Progress(TextColumn("indexing"), BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=err,
                   disable=state.json or not err.is_terminal)
    task = bar.add_task("index", total=None)

    def update(files_done: int, files_total: int, bytes_done: int, bytes_total: int) -> None:
        bar.update(task, completed=bytes_done, total=bytes_total or None)

    return bar, update


def _report(stats, as_json: bool) -> None:
    data = stats.to_dict()
    if as_json or state.json:
        out.print_json(json.dumps(data))
        return
    out.print(index_pass_text(data), markup=False)
    for line in data["errors"]:
        err.print(f"  {line}", markup=False)


def _check_paths(paths: list[Path] | None) -> None:
    """Refuse paths that do not exist (exit 1), before anything is opened: indexing nothing is not success."""
    missing = [p for p in paths or [] if not p.expanduser().exists()]
    if missing:
        names = ", ".join(str(p) for p in missing)
        raise fail(f"{names} {'does' if len(missing) == 1 else 'do'} not exist; nothing was indexed. Give transcript "
                   "files or folders that hold them, or no path for the default folders (pi, Claude Code, Codex).", 1)


@app.command("index-sessions")
def index_sessions(
    paths: Annotated[list[Path] | None, typer.Argument(help="Files or folders (default: pi, Claude Code, Codex).")] = None,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Index session transcripts incrementally (unchanged files are skipped, appended ones read from where
    the last pass stopped). Applies sessionRetentionDays when set."""
    from pi_memory.index import index_paths, prune

    _check_paths(paths)
    memory = open_mem(dir)
    bar, update = _progress_bar()
    with bar:
        stats = index_paths(memory.index(), paths or None, progress=update)
    from pi_memory.index import segments

    segments.refill(memory.index(), seconds=None)  # a word index being refilled after a repair: all of it now
    if memory.settings.session_retention_days:
        pruned = prune(memory.index(), memory.settings.session_retention_days)
        err.print(f"retention: removed {pruned} index rows older than {memory.settings.session_retention_days} days")
    _report(stats, json_)


@app.command()
def reindex(
    paths: Annotated[list[Path] | None, typer.Argument(help="Files or folders (default: pi, Claude Code, Codex).")] = None,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Rebuild the index from scratch: Markdown stores and session files (the sources of truth).

    Without PATHs it re-reads the default session folders AND every file the index held before, so sessions
    indexed from other folders are not dropped; files that no longer exist are reported, and their text is lost.
    """
    from pi_memory.index import reindex as run_reindex
    from pi_memory.index import sync_markdown
    from pi_memory.index.readers import default_roots

    _check_paths(paths)
    memory = open_mem(dir)
    conn = memory.repair_index()  # a full integrity check first: damage is set aside and salvaged, not re-read
    sync_markdown(conn, memory.settings.data_dir)
    targets: list[Path] | None = list(paths) if paths else None
    if targets is None:
        known = [Path(row[0]) for row in conn.execute("SELECT path FROM session_files")]
        gone = [p for p in known if not p.exists()]
        if gone:
            err.print(f"{len(gone)} indexed file(s) no longer exist and cannot be read again, e.g. {gone[0]}",
                      markup=False)
        targets = [*default_roots().values(), *(p for p in known if p.exists())]
    bar, update = _progress_bar()
    with bar:
        stats = run_reindex(conn, targets, progress=update)
    _report(stats, json_)


@app.command("sync-markdown")
def sync_markdown_cmd(dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Mirror every Markdown store into the search index (backfill after hand edits)."""
    from pi_memory.index import SyncStats, sync_markdown

    memory = open_mem(dir)
    stats = sync_markdown(memory.index(), memory.settings.data_dir)
    for path, first in memory.mirrored.items():  # hand edits the open already mirrored are this sync's too
        if path in stats and (first.added or first.removed or first.updated):
            s = stats[path]
            stats[path] = SyncStats(added=s.added + first.added, removed=s.removed + first.removed,
                                    kept=s.kept - first.added - first.updated, updated=s.updated + first.updated)
    data = {path: {k: v for k, v in vars(s).items() if k not in ("unreadable", "too_large") or v}
            for path, s in stats.items()}
    if json_ or state.json:
        out.print_json(json.dumps(data, default=str))
        return
    lines = [_sync_sentence(path, s) for path, s in data.items()]
    for line in [line for line in lines if line] or [f"Nothing to sync: no Markdown store in {memory.settings.data_dir}"
                                                     " yet."]:
        out.print(line, markup=False)


def _sync_sentence(path: str, s: dict) -> str:
    """One store's sync for a person: ``/d/MEMORY.md: 2 entries in the index (1 added, 1 removed).``; ``""`` for
    a store file that does not exist and had nothing in the index (``--json`` still lists it)."""
    from pi_memory.index.mirror import not_mirrored_text

    if s.get("too_large"):
        return not_mirrored_text(path, s["too_large"])
    if s.get("unreadable"):
        return (f"{path}: cannot be read ({s['unreadable']}); its entries in the index are left as they were. Fix the "
                "file's permissions or type, then run sync-markdown again.")
    if not Path(path).exists():
        n = s.get("removed", 0)
        return f"{path}: the file is gone; its {n} entr{'y' if n == 1 else 'ies'} left the index." if n else ""
    total = s.get("kept", 0) + s.get("added", 0) + s.get("updated", 0)
    changed = [f"{s[k]} {k}" for k in ("added", "updated", "removed") if s.get(k)]
    return (f"{path}: {total} entr{'y' if total == 1 else 'ies'} in the index"
            + (f" ({', '.join(changed)})." if changed else ", already up to date."))
