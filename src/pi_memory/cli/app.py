"""The typer application and the curated-memory commands."""

from __future__ import annotations

import enum
import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from pi_memory.config import Settings, SettingsError, load_settings
from pi_memory.curated import MemoryResult, MemoryStore, build_snapshot
from pi_memory.curated.entries import DELIMITER, printable, split_plain_markdown
from pi_memory.curated.store import FAILURE_CATEGORIES
from pi_memory.runtime import Memory, open_memory

app = typer.Typer(
    name="pi-memory",
    help="Durable, safe, searchable memory for coding agents. Data root: --dir, $PI_MEMORY_DIR, settings, "
    "or <agentDir>/memories.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class Target(enum.StrEnum):
    memory = "memory"
    user = "user"
    project = "project"
    failure = "failure"


class _State:
    dir: Path | None = None
    json: bool = False
    stdout_is_protocol: bool = False  # `pi-memory mcp`: standard output carries MCP, so JSON goes to stderr


state = _State()


def _json_flag(value: bool) -> bool:
    """``--json`` on a command switches the whole invocation to JSON output, before the command body runs (so
    settings errors met while opening the stores are JSON too)."""
    if value:
        state.json = True
    return value


DirOpt = Annotated[Path | None, typer.Option("--dir", help="Data root holding MEMORY.md and USER.md.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the structured result as JSON (errors too).",
                                       callback=_json_flag)]


@app.callback()
def _root(dir: DirOpt = None, json_: Annotated[bool, typer.Option("--json")] = False) -> None:
    state.dir = dir
    state.json = json_
    state.stdout_is_protocol = False


def emit_json(data: object) -> None:
    """Print ``data`` as JSON on standard output (the one thing a ``--json`` invocation prints there); on
    standard error, as one line, when standard output carries a protocol (``state.stdout_is_protocol``)."""
    if state.stdout_is_protocol:
        emit_json_line(data, sys.stderr)
    else:
        out.print_json(json.dumps(data, ensure_ascii=False, default=str))


def emit_json_line(data: object, stream=None) -> None:
    """Write ``data`` as one line of JSON to ``stream`` (default standard output) and flush: for commands that
    report more than one event as they happen (JSON Lines)."""
    stream = stream or sys.stdout
    stream.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    stream.flush()


def fail(message: str, code: int, **fields: object) -> typer.Exit:
    """Report a refusal (``code`` 1) or an error (``code`` 2) and return the ``typer.Exit`` to raise.

    In JSON mode: ``{"success": false, "error": message, "exitCode": code, **fields}`` on standard output;
    otherwise ``refused: message`` / ``error: message`` on standard error."""
    if state.json:
        emit_json({"success": False, "error": message, "exitCode": code, **fields})
    else:
        err.print("[red]error:[/red] " if code == 2 else "[red]refused:[/red] ", end="")
        err.print(message, markup=False)
    return typer.Exit(code)


def settings(dir_: Path | None = None) -> Settings:
    try:
        return load_settings(override_dir=dir_ or state.dir)
    except SettingsError as exc:
        raise fail(str(exc), 2) from exc


def open_mem(dir_: Path | None = None) -> Memory:
    """The assembled system for this command (curated stores mirrored into the index on write)."""
    try:
        memory = open_memory(override_dir=dir_ or state.dir)
    except SettingsError as exc:
        raise fail(str(exc), 2) from exc
    for warning in memory.settings.warnings:
        err.print("[yellow]warning:[/yellow] ", end="")
        err.print(warning, markup=False)
    return memory


def open_store(dir_: Path | None = None) -> MemoryStore:
    return open_mem(dir_).store


def finish(result: MemoryResult, as_json: bool) -> None:
    """Print ``result`` and exit 0 (success) or 1 (refused)."""
    data = result.to_dict()
    if as_json or state.json:
        emit_json(data)
    elif result.success:
        if result.entries is not None:
            _print_entries(result)
        else:
            out.print(result.message or "ok", markup=False)
            out.print(f"{result.target}: {n_entries(result.entry_count or 0)}, {result.usage}", markup=False)
    else:
        err.print(f"[red]refused ({result.code}):[/red] ", end="")
        err.print(result.error or "", markup=False)
        for title, items in (("matches", result.matches), ("current entries", result.current_entries)):
            if items:
                err.print(f"{title}:")
                for item in items:
                    err.print(f"  - {item}", markup=False)
    raise typer.Exit(0 if result.success else 1)


def n_entries(n: int) -> str:
    return "1 entry" if n == 1 else f"{n} entries"


def _print_entries(result: MemoryResult) -> None:
    out.print(f"[bold]{result.target}[/bold] — {n_entries(result.entry_count or 0)}, {result.usage}")
    for i, entry in enumerate(result.entries or [], 1):
        out.print(f"[dim]{i}.[/dim] ", end="")
        out.print(printable(entry), markup=False)  # escape codes are shown, never executed by the terminal
    if result.notice:
        err.print("[yellow]note:[/yellow] ", end="")
        err.print(result.notice, markup=False)


def text_arg(text: str) -> str:
    """``-`` reads the text from standard input (for long or multi-line entries)."""
    from pi_memory.safety import replace_unencodable  # stdin bytes that are not UTF-8 arrive as surrogates

    return replace_unencodable(sys.stdin.read()) if text == "-" else text


@app.command()
def read(target: Target, dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Show the entries of a store (raw, as on disk)."""
    finish(open_store(dir).read(target.value), json_)


@app.command()
def add(
    target: Target,
    text: str,
    category: Annotated[str, typer.Option(help="failure target: " + ", ".join(FAILURE_CATEGORIES))] = "failure",
    reason: Annotated[str | None, typer.Option(help="failure target: what went wrong.")] = None,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Add an entry. TEXT "-" reads it from standard input."""
    text = text_arg(text)
    store = open_store(dir)
    if target is Target.failure:
        finish(store.add_failure(text, category, reason), json_)
    finish(store.add(target.value, text), json_)


@app.command()
def replace(target: Target, old: str, new: str, dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Replace the entry containing OLD with NEW (NEW "-" reads standard input)."""
    finish(open_store(dir).replace(target.value, old, text_arg(new)), json_)


@app.command()
def remove(target: Target, old: str, dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Remove the entry containing OLD."""
    finish(open_store(dir).remove(target.value, old), json_)


@app.command()
def snapshot(dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Print the system-prompt snapshot a new session would get."""
    text = build_snapshot(open_store(dir))
    if json_ or state.json:
        emit_json({"snapshot": text})
        return
    sys.stdout.write(text + ("\n" if text else ""))


@app.command()
def status(dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Data root, settings sources, and each store's usage and health."""
    s = settings(dir)
    store = open_store(dir)
    stores = {}
    for target in store.targets:
        result = store.read(target)
        stores[target] = {
            "file": str(store.path(target)),
            "exists": store.path(target).exists(),
            "entryCount": result.entry_count,
            "usage": result.usage,
            "drift": (store.drift(target).drift if store.drift(target) else None),
            "notice": result.notice,
        }
    data = {"dataDir": str(s.data_dir), "settings": list(s.sources), "warnings": list(s.warnings), "stores": stores}
    if json_ or state.json:
        emit_json(data)
        return
    out.print(f"data dir: {s.data_dir}", markup=False)
    out.print(f"settings: {', '.join(s.sources) or 'defaults'}", markup=False)
    for target, info in stores.items():
        health = "[red]drift: " + info["drift"] + "[/red]" if info["drift"] else "[green]ok[/green]"
        out.print(f"{store.name(target)}: {n_entries(info['entryCount'] or 0)}, {info['usage']} — {health}")
        if info["notice"]:
            out.print(f"  {info['notice']}", markup=False)


@app.command()
def split(
    target: Target,
    apply: Annotated[bool, typer.Option("--apply", help="Write the proposed entries (a .bak copy is kept).")] = False,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Split a hand-written Markdown store (no § separators) into entries for review."""
    from pi_memory import safety

    store = open_store(dir)
    path = store.path(target.value)
    if not path.exists():
        raise fail(f"{path} does not exist; nothing to split. Write the notes there first, or pick another "
                   "target.", 1)
    text = path.read_bytes().decode("utf-8", errors="replace")
    proposed = split_plain_markdown(text)
    limit = store.limit(target.value)
    flagged = {i for i, e in enumerate(proposed) if safety.check_write(e) is not None}
    too_long = {i for i, e in enumerate(proposed) if len(e) > limit}
    kept = [e for i, e in enumerate(proposed) if i not in flagged]
    total = len(DELIMITER.join(kept))
    as_json = json_ or state.json
    data: dict = {"file": str(path), "limit": limit, "chars": total, "applied": False,
                  "entries": [{"text": e, "refused": i in flagged, "tooLong": i in too_long}
                              for i, e in enumerate(proposed)]}
    if not as_json:
        _print_split(proposed, flagged, too_long, limit, total, len(kept))
    if too_long or total > limit:
        raise fail(f"Not applicable as is: {'some entries are' if too_long else 'the entries together are'} over "
                   f"the {limit:,}-char limit. Shorten the notes in {path} (or raise the limit in settings), then "
                   "run split again.", 1, **({"proposal": data} if as_json else {}))
    if apply:
        data["backup"] = str(store.rewrite(target.value, kept))
        data["applied"] = True
    if as_json:
        emit_json({"success": True, **data})
    elif apply:
        out.print(f"Wrote {len(kept)} entries to {path}; the original is in {data['backup']}.", markup=False)
    else:
        out.print("Run again with --apply to write them.")


def _print_split(proposed: list[str], flagged: set[int], too_long: set[int], limit: int, total: int,
                 kept: int) -> None:
    for i, entry in enumerate(proposed):
        mark = " [red](refused by the scanner, will be dropped)[/red]" if i in flagged else ""
        mark += f" [red](longer than the {limit:,}-char limit)[/red]" if i in too_long else ""
        out.print(f"[dim]{i + 1}.[/dim]{mark} ", end="")
        out.print(printable(entry), markup=False)
    summary = f"\n{n_entries(kept)} proposed ({total:,}/{limit:,} chars)"
    if flagged:
        summary += f", {len(flagged)} dropped by the scanner"
    out.print(summary + ".", markup=False)


def _register_subcommands() -> None:
    from pi_memory.cli import integrations, search, semantic, serve  # noqa: F401  (register commands on import)


_register_subcommands()
