"""``pi-memory skills ...``: list, view, delete, move and export the agent's saved procedures.

Commands: ``list [--scope global|project]``, ``view ID``, ``delete ID``, ``move ID --to global|project``,
``export --to claude-code|codex [--scope ...] [--dry-run]`` (scanned copies; ``--copy`` is still accepted).
Each takes ``--dir``, ``--project PATH`` (whose project skills: default the current folder) and ``--json``; a
refusal in JSON carries the store's reason code as ``refusal`` (``not_found``, ``ambiguous``, ``exists``...).
Exit codes: 0 done; 1 refused (unknown or ambiguous id, destination taken); 2 usage error. ``export`` exits 0
and says per skill what was copied, skipped or not exported, each with its reason, then counts them by reason.
``list`` shows what the inspector shows (:func:`pi_memory.shown_text.shown_value`): credentials redacted,
control characters escaped, a description past the 1,024 characters a host reads cut.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from pi_memory.cli.app import DirOpt, JsonOpt, app, emit_json, fail, out, state
from pi_memory.config import SettingsError
from pi_memory.curated.entries import printable
from pi_memory.runtime import open_memory
from pi_memory.skills.person import EMPTY, for_person, result_for_person

skills_app = typer.Typer(help="Skills: reusable procedures the agent saved (SKILL.md folders).",
                         no_args_is_help=True)
app.add_typer(skills_app, name="skills")

ProjectOpt = Annotated[Path | None, typer.Option("--project", help="A folder of the project whose project "
                                                 "skills to use (default: the current folder).")]
ScopeOpt = Annotated[str | None, typer.Option("--scope", help="Only 'global' or only 'project' skills.")]


def _store(dir_: Path | None, project: Path | None):
    if project is not None and not project.is_dir():
        raise fail(f"--project {project} is not an existing folder. Pass a folder of the project.", 2)
    try:
        memory = open_memory(cwd=project, override_dir=dir_ or state.dir, mirror=False)
    except SettingsError as exc:
        raise fail(str(exc), 2) from exc
    return memory.skills()


def _check_scope(scope: str | None) -> None:
    if scope not in (None, "global", "project"):
        raise fail(f"--scope must be 'global' or 'project', not {scope!r}.", 2)


def _finish(result: dict) -> None:
    """Print ``result`` (JSON, or its message for a person) and exit 1 when it was refused."""
    if not state.json:
        result = result_for_person(result)  # the store's words are for the model calling skill_manage
    if not result.get("success"):
        fields = {("refusal" if k == "code" else k): v for k, v in result.items() if k not in ("success", "error")}
        raise fail(result.get("error", "refused"), 1, **fields)
    if state.json:
        emit_json(result)
    else:
        out.print(escape(result["message"]))


@skills_app.command("list")
def list_(scope: ScopeOpt = None, dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """List saved skills: id, version, last update and description."""
    from pi_memory.shown_text import shown_value
    from pi_memory.skills.document import MAX_DESCRIPTION

    _check_scope(scope)
    store = _store(dir, project)
    skills = [shown_value(s.summary(), MAX_DESCRIPTION) for s in store.skills(scope)]
    if state.json:
        emit_json({"success": True, "count": len(skills), "skills": skills,
                   "folders": {k: str(v) for k, v in store.roots.items()}})
        return
    if not skills:
        where = ", ".join(f"{k}: {v}" for k, v in store.roots.items())
        out.print(f"No skills yet ({escape(where)}). {escape(EMPTY)}")
        return
    table = Table(box=None, show_header=True, header_style="bold")
    # a long id folds instead of pushing the description out of an 80-column terminal
    table.add_column("id", overflow="fold", max_width=36)
    table.add_column("version", no_wrap=True)
    table.add_column("updated", no_wrap=True)
    table.add_column("description", overflow="fold", min_width=24)
    for s in skills:
        if "error" in s:
            table.add_row(escape(s["id"]), "-", "-", f"[red]{escape(s['error'])}[/red]")
        else:
            table.add_row(escape(s["id"]), str(s["version"]), escape(s["updated"]), escape(s["description"]))
    out.print(table)


@skills_app.command("view")
def view(skill_id: Annotated[str, typer.Argument(help="global:<slug>, project:<slug>, or a bare slug.")],
         dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Print one skill's SKILL.md as it is on disk."""
    store = _store(dir, project)
    found = store.find(skill_id)
    if isinstance(found, dict):
        raise fail(found["error"] if state.json else for_person(found["error"]), 1, refusal=found["code"])
    text, note = _cut(found, found.path.read_text(encoding="utf-8", errors="replace"))
    if state.json:
        emit_json({"success": True, "skill": found.summary(), "text": text, **({"note": note} if note else {})})
    else:
        out.print(escape(printable(text)), end="")  # a hand-edited file's escape codes are shown, never run
        if note:
            out.print(f"\n{note}", markup=False)


def _cut(skill, text: str) -> tuple[str, str | None]:
    """A ``SKILL.md`` whose body is past the limit of a skill body (a hand-edited file) cut there, and a note
    saying so (what is shown may be read into an agent's context)."""
    from pi_memory.skills.document import MAX_BODY

    body = skill.doc.body if skill.doc is not None else text
    if len(body) <= MAX_BODY:
        return text, None
    start = max(text.find(body[:200]), 0)
    return text[:start + MAX_BODY], (f"[Cut: the body has {len(body):,} characters, past the {MAX_BODY:,}-"
                                     f"character limit of a skill; the whole file is {skill.path}.]")


@skills_app.command("delete")
def delete(skill_id: Annotated[str, typer.Argument(help="The skill to delete.")], dir: DirOpt = None,
           project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Delete a skill (its folder is moved to <data root>/.trash/skills/, from where it can be moved back)."""
    result = _store(dir, project).delete(skill_id)
    if result.get("success") and not state.json:
        result = {**result, "message": f"{result['message']} Kept a copy in {result['trash']}."}
    _finish(result)


@skills_app.command("move")
def move(skill_id: Annotated[str, typer.Argument(help="The skill to move.")],
         to: Annotated[str, typer.Option("--to", help="'global' or 'project'.")],
         dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Move a skill between global and the current project (refused if the destination has that name)."""
    _check_scope(to)
    _finish(_store(dir, project).move(skill_id, to))


@skills_app.command("export")
def export(to: Annotated[str, typer.Option("--to", help="'claude-code' or 'codex'.")],
           copy: Annotated[bool, typer.Option("--copy", hidden=True, help="Accepted for older scripts: every "
                                              "export is a copy now.")] = False,
           scope: ScopeOpt = None,
           dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be done.")] = False,
           dir: DirOpt = None, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Copy the skills where Claude Code (~/.claude/skills, <repo>/.claude/skills) or Codex (~/.agents/skills,
    <repo>/.agents/skills) read them. Each copy is scanned first: a skill holding a credential or text that reads
    like an instruction to the model is not exported (and an earlier export of it is removed). A skill of yours
    already there is never touched. Run it again after editing a SKILL.md by hand."""
    from pi_memory.shown_text import shown
    from pi_memory.skills.export import (
        HOSTS,
        LINK_SKIP,
        REFUSAL_CODES,
        SKIP_CODES,
        TARGETS,
        destinations,
        export_skills,
        folder_problem,
    )

    if to not in TARGETS:
        raise fail(f"--to must be one of {', '.join(TARGETS)}, not {to!r}.", 2)
    _check_scope(scope)
    store = _store(dir, project)
    for where, folder in destinations(to, Path.home(), store.project_root).items():
        if scope in (None, where) and (problem := _not_a_folder(folder, HOSTS[to])) is not None:
            raise fail(problem, 1, refusal="not_a_folder", folder=str(folder))
        if scope in (None, where) and (blocked := folder_problem(folder, HOSTS[to])) is not None:
            raise fail(blocked[1], 1, refusal=blocked[0], folder=str(folder))
    items = export_skills(store, to, Path.home(), scope=scope, dry_run=dry_run)
    failed = [i for i in items if i.action == "failed"]
    skipped = [i for i in items if i.action == "skipped"]
    refused = [i for i in items if i.action in ("refused", "withdrawn")]
    links = sum(len(i.links) for i in items)  # files left out of the skills exported
    if state.json:
        reasons = [i.code for i in [*skipped, *refused]]
        emit_json({"success": not failed, "dryRun": dry_run, "target": to, "items": [i.to_dict() for i in items],
                   "skipped": len(skipped), "refused": len(refused), "failed": len(failed),
                   "byReason": {code: reasons.count(code) for code in dict.fromkeys(reasons)},
                   "skippedFiles": links, "skippedFilesByReason": {"link": links} if links else {}})
        if failed:
            raise typer.Exit(1)
        return
    if not items:
        out.print("No skills to export.")
    for item in items:  # a reason may quote a hand-edited file (an unreadable one's YAML error)
        out.print(escape(shown(_export_line(item, dry_run))))
    for code, why in SKIP_CODES.items():
        if n := sum(i.code == code for i in skipped):
            out.print(escape(f"{n} skipped: {why}; {SKIP_TODO[code]}"))
    for code, why in REFUSAL_CODES.items():
        if n := sum(i.code == code for i in refused):
            out.print(escape(f"{n} not exported: {why}; fix each as said above, then run this command again."))
    if links:
        out.print(escape(f"{links} file(s) skipped: {LINK_SKIP}; {SKIP_TODO['link']}"))
    if failed:
        raise fail(f"{len(failed)} skill(s) not exported: their folder cannot be written (each said above); an "
                   "earlier copy of each is left as it was.", 1)


def _not_a_folder(folder: Path, host: str) -> str | None:
    """Why the skills cannot be exported into ``folder`` (it, or a folder it is in, is a file), or ``None``."""
    for part in (folder, *folder.parents):
        if part.is_dir():
            return None
        if part.is_symlink() and not part.exists():  # a link to nothing: not "a file"
            what = (f"{part} is a symbolic link to {os.readlink(part)}, which does not exist, so the folder {folder}, "
                    f"where {host} reads skills, cannot be made")
            return (f"{what}. Nothing was exported. Make the folder it points to, or remove the link, then run this "
                    "command again.")
        if part.exists():
            what = (f"{folder} is a file, but {host} reads skills from a folder of that name" if part == folder
                    else f"{part} is a file, so the folder {folder}, where {host} reads skills, cannot be made")
            return f"{what}. Nothing was exported. Move or rename that file, then run this command again."
    return None


SKIP_TODO = {  # what a person does about a skipped skill, by its code (skills.export.SKIP_CODES)
    "unreadable": "fix each SKILL.md as said above (or delete the skill), then run this command again.",
    "yours": "rename or remove your own skill there to export ours.",
    "other_data_folder": "export from that data folder, or remove its copy, to export this one.",
    "project_wins": "pi uses the project's too; delete the one you no longer need (`pi-memory skills delete "
                    "ID`) to keep one skill of that name.",
    "link": "to have such a file go with its skill, put the file itself in the skill folder in place of the link, "
            "then run this command again.",
}


def _export_line(item, dry_run: bool) -> str:
    """One export item for a person: ``<id>: <what happened> -> <where> (<why>)``; a refused skill's line is its
    reason, which says where to fix it."""
    if item.action in ("refused", "withdrawn", "failed"):
        return f"{item.skill_id}: {item.reason}"
    verb = f"would be {item.action}" if dry_run and item.action not in ("skipped", "unchanged") else item.action
    left = f"; {len(item.links)} link(s) left out: {', '.join(item.links)}" if item.links else ""
    return f"{item.skill_id}: {verb} -> {item.destination}" + (f" ({item.reason})" if item.reason else "") + left
