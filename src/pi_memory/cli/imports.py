"""``pi-memory import ...``: move over from another memory extension. A dry run unless ``--apply``.

* ``import pi-hermes-memory [PATH] [--project-map NAME=PATH]...`` (:mod:`pi_memory.importers.hermes`);
* ``import mem0 [PATH] [--history PATH] [--source-user ID | --all-users]`` (:mod:`pi_memory.importers.mem0`).

Both print what they would bring (or brought), what clashes and what they skip, with the reason. With
``--json``: ``{"success", "source", "applied", "counts": {kind: {action: n}}, "items": [...], "notes"}``.
With ``--json``, a refused item has ``"refused": true`` and ``refused`` counts them. Exit codes: 0 done (a clash,
or a skip for another reason, such as a project with no known folder, is reported, not an error); 1 an item was
refused by the scanners or a store's rules (a dry run: would be), as ``import claude-code-memory`` does; 2 a
missing or unreadable source, bad arguments or settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from pi_memory.cli.app import DirOpt, JsonOpt, app, emit_json, fail, open_mem, out, state
from pi_memory.curated.entries import printable

import_app = typer.Typer(help="Move over from another memory extension or agent (a dry run unless --apply).",
                         no_args_is_help=True)
app.add_typer(import_app, name="import")

ApplyOpt = Annotated[bool, typer.Option("--apply", help="Write the import (default: only show what it would do).")]


def _emit(report) -> None:
    """Print ``report``; exit 1 when an item was refused (a dry run: would be), as `import claude-code-memory`
    does, so a script notices what was left behind."""
    if state.json:
        emit_json(report.to_dict())
    else:
        for line in report.lines():  # items are escaped already; a note or a folder's name may not be
            out.print(escape(printable(line)))
    if report.refused:
        raise typer.Exit(1)


def _project_map(values: list[str]) -> dict[str, Path]:
    mapping = {}
    for value in values:
        name, sep, folder = value.partition("=")
        if not sep or not name or not Path(folder).expanduser().is_dir():
            raise fail(f"--project-map wants NAME=PATH with an existing folder, got {value!r}.", 2)
        mapping[name] = Path(folder).expanduser().resolve()
    return mapping


@import_app.command("pi-hermes-memory")
def hermes(path: Annotated[Path | None, typer.Argument(help="The pi-hermes-memory folder, or the pi agent folder "
                                                        "holding it (default: <agentDir>).")] = None,
           apply: ApplyOpt = False,
           project_map: Annotated[list[str] | None, typer.Option(
               "--project-map", help="NAME=PATH: where the peer's project NAME lives (repeatable).")] = None,
           dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Import MEMORY.md, USER.md, failures, project memories, skills, STANDING.md and sessions.db's extended
    store from pi-hermes-memory."""
    from pi_memory.importers import ImportSourceError, import_hermes

    mapping = _project_map(project_map or [])
    memory = open_mem(dir)
    try:
        report = import_hermes(memory, path, apply=apply, project_map=mapping)
    except ImportSourceError as exc:
        raise fail(str(exc), 2) from exc
    finally:
        memory.close()
    _emit(report)


@import_app.command("mem0")
def mem0(path: Annotated[Path | None, typer.Argument(help="mem0-vectors.db, or the folder holding it (default: "
                                                     "<agentDir>/memories).")] = None,
         apply: ApplyOpt = False,
         source_user: Annotated[str | None, typer.Option("--source-user", help="Import only this mem0 user id.")] = None,
         all_users: Annotated[bool, typer.Option("--all-users", help="Import every user id of the file.")] = False,
         history: Annotated[Path | None, typer.Option("--history", help="mem0-history.db when it is not beside "
                                                      "mem0-vectors.db (mem0's oss.historyDbPath).")] = None,
         project: Annotated[Path | None, typer.Option("--project", help="The project whose semantic scope receives "
                                                      "them (default: the current folder).")] = None,
         dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Import pi-memory-mem0's embedded store (mem0-vectors.db and its mem0-history.db), embedded again with
    pi-memory's model, history kept."""
    from pi_memory.cli.semantic import _service
    from pi_memory.config import agent_dir
    from pi_memory.importers import ImportSourceError, import_mem0

    service = _service(dir, project, model=False)
    try:
        report = import_mem0(service, path, agent_dir() / "memories", apply=apply, source_user=source_user,
                             all_users=all_users, history=history)
    except ImportSourceError as exc:
        raise fail(str(exc), 2) from exc
    finally:
        service.close()
    _emit(report)
