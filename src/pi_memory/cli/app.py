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
from pi_memory.curated.entries import split_plain_markdown
from pi_memory.curated.store import FAILURE_CATEGORIES

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


state = _State()

DirOpt = Annotated[Path | None, typer.Option("--dir", help="Data root holding MEMORY.md and USER.md.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the structured result as JSON.")]


@app.callback()
def _root(dir: DirOpt = None, json_: Annotated[bool, typer.Option("--json")] = False) -> None:
    state.dir = dir
    state.json = json_


def settings(dir_: Path | None = None) -> Settings:
    try:
        return load_settings(override_dir=dir_ or state.dir)
    except SettingsError as exc:
        err.print("[red]error:[/red] ", end="")
        err.print(str(exc), markup=False)
        raise typer.Exit(2) from exc


def open_store(dir_: Path | None = None) -> MemoryStore:
    s = settings(dir_)
    for warning in s.warnings:
        err.print(f"[yellow]warning:[/yellow] {warning}")
    store = MemoryStore.from_settings(s, cwd=Path.cwd())
    store.load_from_disk()
    return store


def finish(result: MemoryResult, as_json: bool) -> None:
    """Print ``result`` and exit 0 (success) or 1 (refused)."""
    data = result.to_dict()
    if as_json or state.json:
        out.print_json(json.dumps(data, ensure_ascii=False))
    elif result.success:
        if result.entries is not None:
            _print_entries(result)
        else:
            out.print(result.message or "ok", markup=False)
            out.print(f"{result.target}: {result.entry_count} entries, {result.usage}", markup=False)
    else:
        err.print(f"[red]refused ({result.code}):[/red] ", end="")
        err.print(result.error or "", markup=False)
        for title, items in (("matches", result.matches), ("current entries", result.current_entries)):
            if items:
                err.print(f"{title}:")
                for item in items:
                    err.print(f"  - {item}", markup=False)
    raise typer.Exit(0 if result.success else 1)


def _print_entries(result: MemoryResult) -> None:
    out.print(f"[bold]{result.target}[/bold] — {result.entry_count} entries, {result.usage}")
    for i, entry in enumerate(result.entries or [], 1):
        out.print(f"[dim]{i}.[/dim] ", end="")
        out.print(entry, markup=False)
    if result.notice:
        err.print(f"[yellow]note:[/yellow] {result.notice}", markup=False)


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
    """Add an entry."""
    store = open_store(dir)
    if target is Target.failure:
        finish(store.add_failure(text, category, reason), json_)
    finish(store.add(target.value, text), json_)


@app.command()
def replace(target: Target, old: str, new: str, dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Replace the entry containing OLD with NEW."""
    finish(open_store(dir).replace(target.value, old, new), json_)


@app.command()
def remove(target: Target, old: str, dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Remove the entry containing OLD."""
    finish(open_store(dir).remove(target.value, old), json_)


@app.command()
def snapshot(dir: DirOpt = None) -> None:
    """Print the system-prompt snapshot a new session would get."""
    text = build_snapshot(open_store(dir))
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
        out.print_json(json.dumps(data, ensure_ascii=False))
        return
    out.print(f"data dir: {s.data_dir}", markup=False)
    out.print(f"settings: {', '.join(s.sources) or 'defaults'}", markup=False)
    for target, info in stores.items():
        health = "[red]drift: " + info["drift"] + "[/red]" if info["drift"] else "[green]ok[/green]"
        out.print(f"{store.name(target)}: {info['entryCount']} entries, {info['usage']} — {health}")
        if info["notice"]:
            out.print(f"  {info['notice']}", markup=False)


@app.command()
def split(
    target: Target,
    apply: Annotated[bool, typer.Option("--apply", help="Write the proposed entries (a .bak copy is kept).")] = False,
    dir: DirOpt = None,
) -> None:
    """Split a hand-written Markdown store (no § separators) into entries for review."""
    from pi_memory import safety

    store = open_store(dir)
    path = store.path(target.value)
    if not path.exists():
        err.print(f"{path} does not exist; nothing to split.")
        raise typer.Exit(1)
    text = path.read_bytes().decode("utf-8", errors="replace")
    proposed = split_plain_markdown(text)
    flagged = {i for i, e in enumerate(proposed) if safety.check_write(e) is not None}
    for i, entry in enumerate(proposed, 1):
        mark = " [red](refused by the scanner, will be dropped)[/red]" if i - 1 in flagged else ""
        out.print(f"[dim]{i}.[/dim]{mark} ", end="")
        out.print(entry, markup=False)
    kept = [e for i, e in enumerate(proposed) if i not in flagged]
    if not apply:
        out.print(f"\n{len(kept)} entries proposed. Run again with --apply to write them.")
        return
    bak = store.rewrite(target.value, kept)
    out.print(f"\nWrote {len(kept)} entries to {path}; the original is in {bak}.", markup=False)


def _register_subcommands() -> None:
    from pi_memory.cli import integrations  # noqa: F401  (registers commands on import)


_register_subcommands()
