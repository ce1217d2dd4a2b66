"""The typer application and the curated-memory commands."""

from __future__ import annotations

import enum
import json
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from pi_memory.config import Settings, SettingsError, load_settings
from pi_memory.curated import MemoryResult, MemoryStore, build_snapshot
from pi_memory.curated.entries import printable
from pi_memory.curated.messages import for_person
from pi_memory.curated.store import FAILURE_CATEGORIES
from pi_memory.runtime import Memory, open_memory

app = typer.Typer(
    name="pi-memory",
    help="Durable, safe, searchable memory for coding agents. Data root: --dir, $PI_MEMORY_DIR, settings, "
    "or <agentDir>/memories.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # subcommands inherit it from the root context
)
log = logging.getLogger("pi_memory.cli")
out = Console(highlight=False, soft_wrap=True, emoji=False)  # stored text is shown as written: `:x:` stays `:x:`
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


class Target(enum.StrEnum):
    memory = "memory"
    user = "user"
    project = "project"
    failure = "failure"


Category = enum.StrEnum("Category", {c.replace("-", "_"): c for c in FAILURE_CATEGORIES})


class _State:
    dir: Path | None = None
    json: bool = False
    data_dir: Path | None = None  # the resolved data root, once a command has resolved its settings
    stdout_is_protocol: bool = False  # `pi-memory mcp`: standard output carries MCP, so JSON goes to stderr
    notices: object = None  # the held read-only notice (pi_memory.cli.notices.HeldNotices), set by main()
    one_shot: bool = True  # the command ends when its work is done (not ui / serve / mcp), set by main()


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


ProjectFilterOpt = Annotated[Path | None, typer.Option(
    "--project", help="Only this project: a folder inside it, or 'current' for the current folder's project.")]


def _show_version(value: bool) -> None:
    if value:
        from pi_memory import __version__

        out.print(f"pi-memory {__version__}", markup=False)
        raise typer.Exit(0)


@app.callback()
def _root(
    dir: DirOpt = None,
    json_: Annotated[bool, typer.Option("--json", help="Print every result and error as JSON on standard output "
                                                      "(the same as --json after the command).")] = False,
    version: Annotated[bool, typer.Option("--version", help="Show the version and exit.", is_eager=True,
                                          callback=_show_version)] = False,
) -> None:
    state.dir = dir
    state.json = json_
    state.data_dir = None
    state.stdout_is_protocol = False
    from pi_memory.cli.search import redaction_bar
    from pi_memory.index.redaction import set_progress

    set_progress(redaction_bar())  # an index opened by this command that needs migration 008 shows a bar


def build_command(args: list[str] | None = None):
    """The click command of the whole app (what ``app()`` runs), with the help tidied for a person: no type
    label on flags (``--json`` takes no value, ``<bool>`` suggested one) and each paragraph of a docstring
    joined into one line (source line breaks showed up as breaks in mid-sentence), lists kept as lists.
    Every command is tidied, including those other modules register later.

    ``args`` (the command line about to run): only the command it names is built, its group's other commands
    left out (building all of them cost every run 60-90 ms, ten times what `status` itself does); a command line
    that names none (``--help``, a typo) gets the whole app, so help and suggestions list every command."""
    import typer.main

    command = typer.main.get_command(_named(app, list(args or []), root=True))
    _tidy(command)
    return command


ROOT_VALUE_OPTIONS = frozenset({"--dir"})  # options of the root callback that take a value (the others are flags)


def command_word(args: list[str]) -> tuple[str | None, list[str]]:
    """``(the command a root command line names, the words after it)``: its first word that is neither an option
    nor the value of one of :data:`ROOT_VALUE_OPTIONS`; ``(None, [])`` when ``--help`` / ``-h`` comes first or no
    word does."""
    words = iter(args)
    for arg in words:
        if not arg.startswith("-"):
            return arg, list(words)
        if arg in ("--help", "-h"):
            break
        if arg in ROOT_VALUE_OPTIONS:
            next(words, None)  # --dir PATH (--dir=PATH is one word)
    return None, []


def _named(typer_app: typer.Typer, args: list[str], root: bool = False) -> typer.Typer:
    """A copy of ``typer_app`` holding only the command or group the first word of ``args`` names (a group:
    only its own named command, the same way), or ``typer_app`` itself when ``args`` names none of them."""
    import copy

    import typer.main

    if root:
        word, rest = command_word(args)
    else:  # a group's own option first (its --help): the whole group
        word, rest = (args[0], args[1:]) if args and not args[0].startswith("-") else (None, [])
    if word is None:
        return typer_app
    for info in typer_app.registered_commands:
        if (info.name or typer.main.get_command_name(info.callback.__name__)) == word:
            only = copy.copy(typer_app)
            only.registered_commands, only.registered_groups = [info], []
            return only
    for group in typer_app.registered_groups:
        if typer.main.solve_typer_info_defaults(group).name == word:
            sub = copy.copy(group)
            sub.typer_instance = _named(group.typer_instance, rest)
            only = copy.copy(typer_app)
            only.registered_commands, only.registered_groups = [], [sub]
            return only
    return typer_app


def _reflow(text: str) -> str:
    import inspect

    paragraphs = []
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        lines = paragraph.split("\n")
        listed = len(lines) > 1 and all(line.lstrip().startswith(("-", "*", "•")) or line.startswith(" ")
                                        for line in lines[1:])
        paragraphs.append(paragraph if paragraph.startswith("\b") or listed else " ".join(x.strip() for x in lines))
    return "\n\n".join(paragraphs)


def _tidy(command) -> None:
    if command.help:
        command.help = _reflow(command.help)
        command.short_help = command.short_help or command.help.split("\n\n")[0]
    for sub in getattr(command, "commands", {}).values():
        _tidy(sub)


def _flag_label(display):
    """``display_type_rich`` without a type label for flags (typer labels them ``<bool>``)."""

    def display_type_rich(self, ctx):
        return None if getattr(self, "is_flag", False) and self.metavar is None else display(self, ctx)

    return display_type_rich


def _patch_flag_labels() -> None:
    from typer.core import TyperOption

    if not getattr(TyperOption.display_type_rich, "_pi_memory", False):
        TyperOption.display_type_rich = _flag_label(TyperOption.display_type_rich)
        TyperOption.display_type_rich._pi_memory = True


_patch_flag_labels()


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
    otherwise ``refused: message`` / ``error: message`` on standard error, control characters escaped (a path or a
    name given on the command line may hold an escape sequence: it is shown, never run by the terminal)."""
    if code == 1 and state.notices is not None:
        state.notices.drop()  # the refusal says why; the notice of a read-only open would repeat it
    if state.json:
        emit_json({"success": False, "error": message, "exitCode": code, **fields})
    else:
        err.print("[red]error:[/red] " if code == 2 else "[red]refused:[/red] ", end="")
        err.print(printable(message), markup=False)
    return typer.Exit(code)


def require_dir(dir_: Path | None) -> None:
    """Refuse (exit 2, the folder and what to do) a ``--dir`` folder that does not exist, before anything is
    opened: for commands that only read, whose open would create it (and an empty index) for a mistyped path and
    answer as if nothing were stored. Commands that write create it, as a new data root."""
    given = dir_ or state.dir
    if given is not None and not Path(given).expanduser().exists():
        raise fail(f"The data folder {given} (--dir) does not exist, so there is nothing to read; nothing was "
                   "created. Check the path, or leave --dir out to use the default data folder.", 2)


def settings(dir_: Path | None = None, reads: bool = False) -> Settings:
    """The settings for ``dir_`` (``reads``: a command that only reads, :func:`require_dir`)."""
    if reads:
        require_dir(dir_)
    try:
        resolved = load_settings(override_dir=dir_ or state.dir)
    except SettingsError as exc:
        raise fail(str(exc), 2) from exc
    state.data_dir = resolved.data_dir
    _warn(resolved)
    return resolved


def _warn(resolved: Settings) -> None:
    """Settings warnings, through logging: the CLI's handler prints each distinct one once per run (the
    runtime logs the same ones when it opens the stores)."""
    for warning in resolved.warnings:
        log.warning("%s", warning)


def open_mem(dir_: Path | None = None, load: bool = True, reads: bool = False) -> Memory:
    """The assembled system for this command (curated stores mirrored into the index on write); ``load=False``:
    no store read yet (``mcp`` reads them as its server starts). ``reads``: a command that only reads refuses a
    ``--dir`` that does not exist (:func:`require_dir`)."""
    if reads:
        require_dir(dir_)
    try:
        memory = open_memory(override_dir=dir_ or state.dir, load=load, one_shot=state.one_shot)
    except SettingsError as exc:
        raise fail(str(exc), 2) from exc
    state.data_dir = memory.settings.data_dir
    _warn(memory.settings)
    return memory


def require_writable(folder: Path) -> None:
    """Refuse (exit 1, the folder and what to do) unless a file can be written in ``folder``: for commands that
    serve for a long time (``mcp``, ``serve``), which should refuse at start rather than fail every write."""
    from pi_memory.storage import folder_problem

    problem = folder_problem(folder)
    if problem is not None:
        raise fail(problem.message, 1, problem=problem.kind, dataDir=str(problem.folder))


def require_readable(folder: Path):
    """For ``mcp``: refuse (as :func:`require_writable`) a data folder that cannot be used at all, but return the
    problem of one that can only be read (read-only, no write permission, full disk), which it then serves for
    reading only (:func:`pi_memory.storage.read_only_problem`: its ``notice`` is what to say at start); ``None``
    for a writable folder."""
    from pi_memory.storage import folder_problem, probe_folder, read_only_problem

    found = probe_folder(folder)
    if found is None:
        return None
    if found[0] not in ("read_only", "permission", "disk_full"):
        problem = folder_problem(folder)
        raise fail(problem.message, 1, problem=problem.kind, dataDir=str(problem.folder))
    return read_only_problem(found[0], folder, found[1])


def open_store(dir_: Path | None = None) -> MemoryStore:
    return open_mem(dir_).store


def finish(result: MemoryResult, as_json: bool) -> None:
    """Print ``result`` and exit 0 (success) or 1 (refused)."""
    if as_json or state.json:
        emit_json(result.to_dict())  # for programs: the same result a tool call gets
        raise typer.Exit(0 if result.success else 1)
    result = result.for_person()
    if result.success:
        if result.entries is not None:
            _print_entries(result)
        else:
            out.print(result.message or "ok", markup=False)
            out.print(f"{result.target}: {n_entries(result.entry_count or 0)}, {result.usage}", markup=False)
    else:
        if state.notices is not None:
            state.notices.drop()
        err.print(f"[red]refused ({result.code}):[/red] ", end="")
        err.print(result.error or "", markup=False)
        for title, items in (("matching entries", result.matches), ("current entries", result.current_entries)):
            if items:
                err.print(f"{title}:")
                for item in items:  # escape codes shown, never executed; a multi-line entry stays one item
                    if item.startswith("[BLOCKED: "):  # our marker speaks to a model: its person's words here
                        ref = item[item.rfind(" Ref ") + 5:-2] if " Ref " in item else "<its Ref>"
                        item = (for_person(item) or item).replace("<target>", result.target or "<target>").replace(
                            "<its Ref>", ref)
                    err.print("  - " + printable(item).replace("\n", "\n    "), markup=False)
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
    finish(open_mem(dir, load=False, reads=True).store.read(target.value), json_)  # read once (a team store: one request)


@app.command()
def add(
    target: Target,
    text: str,
    category: Annotated[Category | None, typer.Option(
        help="failure target only: the kind of lesson (default: failure).", show_default=False)] = None,
    reason: Annotated[str | None, typer.Option(help="failure target only: what went wrong.")] = None,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Add an entry. TEXT "-" reads it from standard input."""
    if target is not Target.failure and (category is not None or reason is not None):
        given = " and ".join(o for o, v in (("--category", category), ("--reason", reason)) if v is not None)
        verb = "apply" if " and " in given else "applies"
        raise fail(f"{given} {verb} to the failure target only; nothing was saved. Use `pi-memory add failure "
                   f"TEXT {given.split()[0]} ...`, or leave {given} out to add to {target.value}.", 2)
    text = text_arg(text)
    store = open_store(dir)
    if target is Target.failure:
        finish(store.add_failure(text, (category or Category.failure).value, reason), json_)
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
    """Print the system-prompt snapshot a new session would get.

    A team project store (teamProjectStore) gets a session start's wait (START_WAIT_S); one that cannot be read
    in that time is left out, and standard error says why."""
    from pi_memory.curated.team_client import START_WAIT_S, bounded

    store = open_mem(dir, load=False).store
    with bounded(store, START_WAIT_S):  # what a new session would get: its start's wait, asked once
        text = build_snapshot(store)
    drift = store.drift("project") if store.team_project is not None else None
    if drift is not None and drift.drift == "unreadable":
        err.print("The project part is left out of this snapshot (the local stores are shown): "
                  f"{for_person(drift.detail)}", markup=False)
    if json_ or state.json:
        emit_json({"snapshot": text})
        return
    sys.stdout.write(text + ("\n" if text else ""))


@app.command()
def status(
    check: Annotated[bool, typer.Option("--check", help="Also check the search index page by page (SQLite's "
                                        "quick_check: it reads the whole file, so it takes longer the larger the "
                                        "index is). Reports only; nothing is repaired.")] = False,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Data root, settings sources, and each store's usage and health.

    The index is not read page by page unless --check asks for it."""
    from pi_memory.insights import status_data
    from pi_memory.reports import status_lines

    memory = open_mem(dir, load=False, reads=True)
    data = status_data(memory, check=check)  # each store read once, there
    if (over := _claude_snapshot_over(memory)) is not None:
        from pi_memory.integrations.hooks import snapshot_over_cap

        data["claudeCodeSnapshot"] = over
        data["warnings"] = [*data.get("warnings", []), snapshot_over_cap(over["chars"]).removeprefix("pi-memory: ")]
    if json_ or state.json:
        emit_json(data)
        return
    for line in status_lines(data):
        out.print(line, markup=False)


def _claude_snapshot_over(memory) -> dict | None:
    """With the Claude Code hooks installed, the memory snapshot's size when it is over what Claude Code keeps
    whole in a session's start (:data:`pi_memory.integrations.hooks.protocol.CLAUDE_CONTEXT_CAP`): those sessions
    get it cut (:func:`pi_memory.curated.snapshot_fit.fit_snapshot`). ``None`` otherwise."""
    from pi_memory.integrations.hooks import state as hook_state
    from pi_memory.integrations.hooks.protocol import CLAUDE_CONTEXT_CAP, claude_length

    installed = hook_state.state_dir() / "installs" / "claude-code.json"  # what `install claude-code` recorded
    if memory.settings.prompt_mode != "snapshot" or not installed.is_file():
        return None
    from pi_memory.prompt import memory_part

    try:
        memory.store.load_from_disk()
        chars = claude_length(memory_part(memory).text)
    except Exception:  # noqa: BLE001 - status shows what it can; the stores' own problems are listed already
        return None
    return {"chars": chars, "cap": CLAUDE_CONTEXT_CAP} if chars > CLAUDE_CONTEXT_CAP else None


def _register_subcommands() -> None:
    from pi_memory.cli import (  # noqa: F401  (register commands on import)
        blocks,
        context,
        hosts,
        imports,
        insights,
        integrations,
        learning,
        search,
        semantic,
        serve,
        skills,
        split,
        standing,
        ui,
    )


_register_subcommands()
