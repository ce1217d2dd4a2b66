"""Commands for Claude Code and Codex: ``install claude-code|codex``, ``uninstall pi|claude-code|codex``, ``hook``.

``pi-memory hook`` is normally answered before this module is imported (:mod:`pi_memory.launch`); the command
here documents it in ``--help`` and serves ``python -m pi_memory.cli``-style callers the same way.
"""

from __future__ import annotations

import enum
import errno
from pathlib import Path
from typing import Annotated

import typer

from pi_memory.cli.app import JsonOpt, app, emit_json, fail, out, state
from pi_memory.cli.integrations import install_app

uninstall_app = typer.Typer(help="Remove what `pi-memory install` added to an agent.", no_args_is_help=True)
app.add_typer(uninstall_app, name="uninstall")


class Scope(enum.StrEnum):
    user = "user"
    project = "project"


ScopeOpt = Annotated[Scope, typer.Option("--scope", help="user: ~/.claude/settings.json and ~/.claude.json; "
                                         "project: .claude/settings.json and .mcp.json of --project.")]
ProjectOpt = Annotated[Path | None, typer.Option("--project", help="Project folder for --scope project "
                                                 "(default: the current folder).")]
CodexBinOpt = Annotated[str | None, typer.Option("--codex-bin", help="The codex binary asked for the hooks' "
                                                 "trust keys (default: codex on PATH).")]


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def hook(ctx: typer.Context,
         host: Annotated[str | None, typer.Argument(help="claude-code or codex.")] = None,
         event: Annotated[str | None, typer.Argument(help="session-start, prompt, pre-compact, stop or session-end.")]
         = None) -> None:
    """Answer one Claude Code / Codex hook: reads the hook JSON on standard input, prints the answer.

    session-start prints the frozen memory snapshot, prompt the recall for the prompt, the others queue
    transcript indexing and capture in the background. Any failure prints {} and is logged in the hook log."""
    from pi_memory.integrations.hooks import main as hook_main

    # The console script answers hooks before this app is even imported (pi_memory.launch, which ends the process
    # with os._exit); this path (`python -m pi_memory.cli hook ...`, or the app called from Python) returns.
    # a missing or extra argument is the hook's to answer ({} and exit 0), not a usage error (exit 2 blocks the host)
    raise typer.Exit(hook_main([a for a in (host, event) if a is not None] + list(ctx.args)))


def _report(host: str, action: str, changes: list, extra: dict | None = None) -> None:
    from pi_memory.integrations.hooks.install import summarise

    extra = extra or {}
    if state.json:
        emit_json({"success": True, "host": host, "action": action, "changes": [c.to_dict() for c in changes],
                   **extra})
        return
    if not changes or all(c.action == "unchanged" for c in changes):
        out.print(f"{host}: nothing to change" + (f" ({len(changes)} file(s) already as wanted)." if changes
                                                   else "; pi-memory was not installed there."), markup=False)
    else:
        out.print(summarise(changes), markup=False)
    for note in extra.get("notes", []):
        out.print(note, markup=False)
    if extra.get("trustError"):
        out.print(f"warning: {extra['trustError']}", markup=False)
    for warning in extra.get("warnings", []):
        out.print(f"warning: {warning}", markup=False)


def _run(host: str, action: str, call, json_: bool):
    from pi_memory.integrations.hooks.install import InstallError, InstallRefusal

    if json_:
        state.json = True
    try:
        return call()
    except InstallRefusal as exc:  # a file or folder it must not edit: a refusal (1), nothing written
        raise fail(str(exc), 1, problem=exc.problem, path=str(exc.path)) from exc
    except InstallError as exc:
        raise fail(f"Could not {action} pi-memory for {host}: {exc}", 2) from exc
    except OSError as exc:  # a file it must write: a refusal (1), as for a data folder that cannot be written
        raise fail(write_refusal(host, action, exc), 1, problem=WRITE_KINDS.get(exc.errno or 0, "unusable"),
                   path=exc.filename) from exc


WRITE_KINDS = {errno.EROFS: "read_only", errno.EACCES: "permission", errno.EPERM: "permission",
               errno.ENOSPC: "disk_full", errno.EDQUOT: "disk_full"}
_WRITE_TODO = {
    "read_only": "it is on a read-only file system. Remount that file system read-write",
    "permission": "you have no permission to write there. Give your user write access (for example `chmod u+w "
                  "{existing}`)",
    "disk_full": "its disk is full. Free some space on it",
}


def write_refusal(host: str, action: str, exc: OSError) -> str:
    """What a person reads when ``install`` / ``uninstall`` could not write one of the host's files (``exc``):
    which path, why, what to do. Files written before it are kept; running the command again finishes the job."""
    path = Path(exc.filename) if exc.filename else None
    kind = WRITE_KINDS.get(exc.errno or 0)
    done = "installed for" if action == "install" else "removed from"
    where = f"{path}" if path is not None else "one of its files"
    if kind is None:
        why = f"{exc.strerror or exc}. Check that path"
    else:
        existing = path
        while existing is not None and not existing.exists() and existing != existing.parent:
            existing = existing.parent
        why = _WRITE_TODO[kind].format(existing=existing)
    return f"pi-memory could not write {where}, so it is not {done} {host}: {why}, then run this command again."


@install_app.command("claude-code")
def install_claude_code(scope: ScopeOpt = Scope.user, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Register the MCP server and the hooks (snapshot, recall, indexing) in Claude Code's settings.

    User scope runs this installation's pi-memory by its absolute path. Project scope writes files a team
    shares, so they run `pi-memory` from PATH: everyone working in the project needs pi-memory on PATH."""
    from pi_memory.integrations.hooks import claude_code

    changes = _run("claude-code", "install", lambda: claude_code.install(scope.value, project), json_)
    notes, warnings = claude_code.project_notes() if scope == Scope.project else ([], [])
    _report("claude-code", "install", changes, {"scope": scope.value, "notes": notes, "warnings": warnings})


@install_app.command("codex")
def install_codex(codex_bin: CodexBinOpt = None, json_: JsonOpt = False) -> None:
    """Add the MCP server to Codex's config.toml, the hooks to hooks.json, and record the hooks' trust."""
    from pi_memory.integrations.hooks import codex

    result = _run("codex", "install", lambda: codex.install(codex_bin=codex_bin), json_)
    _report("codex", "install", result["changes"], {"trusted": result["trusted"], "trustError": result["trustError"],
                                                    "warnings": result["warnings"]})


@uninstall_app.command("pi")
def uninstall_pi(
    agent: Annotated[Path | None, typer.Option("--agent-dir", help="pi's agent folder (default: ~/.pi/agent).")] = None,
    json_: JsonOpt = False,
) -> None:
    """Remove the pi extension that `pi-memory install pi` copied (your memories stay in the data folder)."""
    from pi_memory.config import agent_dir
    from pi_memory.integrations.pi.install import (
        NotOurInstall,
        installed_extension_dir,
        uninstall_pi_extension,
    )

    folder = installed_extension_dir(agent or agent_dir())
    try:
        removed = uninstall_pi_extension(agent or agent_dir())
    except NotOurInstall as exc:
        raise fail(f"Not removed: {exc}. Delete the folder yourself if it is an old pi-memory extension.", 1) \
            from exc
    except OSError as exc:
        raise fail(f"Could not remove the pi extension at {folder}: {exc}. Check that the folder is writable, "
                   "then retry.", 1) from exc
    kept = str(removed.kept) if removed and removed.kept else None
    if json_ or state.json:
        emit_json({"success": True, "host": "pi", "action": "uninstall",
                   "removed": str(removed.folder) if removed else None, "kept": kept})
        return
    if removed is None:
        out.print(f"pi: nothing to change; no pi-memory extension at {folder}.", markup=False)
    elif kept:
        out.print(f"Removed the pi extension from {removed.folder}. It held files pi-memory did not write, so the "
                  f"folder was moved whole to {kept} (nothing deleted). Your memories are kept; "
                  "`pi-memory install pi` puts the extension back.", markup=False)
    else:
        out.print(f"Removed the pi extension at {removed.folder}. Your memories are kept; `pi-memory install pi` "
                  "puts it back.", markup=False)


@uninstall_app.command("claude-code")
def uninstall_claude_code(scope: ScopeOpt = Scope.user, project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Remove pi-memory's hooks and MCP server from Claude Code's settings (nothing else)."""
    from pi_memory.integrations.hooks import claude_code

    changes = _run("claude-code", "uninstall", lambda: claude_code.uninstall(scope.value, project), json_)
    _report("claude-code", "uninstall", changes, {"scope": scope.value})


@uninstall_app.command("codex")
def uninstall_codex(json_: JsonOpt = False) -> None:
    """Remove pi-memory's hooks, their trust entries and the MCP server from Codex's settings."""
    from pi_memory.integrations.hooks import codex

    result = _run("codex", "uninstall", codex.uninstall, json_)
    _report("codex", "uninstall", result["changes"])


def serve_mcp_http(dir_: Path | None, host: str, port: int, token: str | None, index_interval: float,
                   as_json: bool, token_file: Path | None = None,
                   tls: tuple[Path | None, Path | None] = (None, None), insecure_http: bool = False) -> None:
    """``pi-memory mcp --http``: events as JSON lines (``--json``) or sentences on standard error. ``token_file``:
    the token's file (``--token-file``); ``tls``: ``(--tls-cert, --tls-key)``, both or neither."""
    import sys

    from pi_memory.cli.app import emit_json_line, open_mem
    from pi_memory.integrations.mcp_http import check_tls, resolve_token, serve_http, token_from_file
    from pi_memory.semantic.backends.rest_runner import ServeError

    if token is not None and token_file is not None:
        raise fail("Give the MCP token once: --token or --token-file, not both.", 2)
    if (tls[0] is None) != (tls[1] is None):
        raise fail("HTTPS needs both --tls-cert and --tls-key.", 2)
    pair = (str(tls[0]), str(tls[1])) if tls[0] is not None and tls[1] is not None else None
    try:
        if token_file is not None:
            token = token_from_file(token_file)
        resolve_token(token, host)  # refuse an unsafe start before the data folder is opened
        check_tls(host, pair, insecure_http)
    except ServeError as exc:
        raise fail(str(exc), 2) from exc

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    def report(event: dict) -> None:
        if as_json:
            emit_json_line(event)
        elif event["event"] == "started":
            say(f"pi-memory mcp: {len(event['tools'])} tools at {event['url']} (bearer token), data in "
                f"{event['dataDir']}; stop with Ctrl+C")
        else:
            say("pi-memory mcp: stopped")

    memory = open_mem(dir_, load=False)  # the server's start reads the stores (a team server gets a start's wait)
    try:
        serve_http(memory, host, port, token, index_interval, report=report, say=say, tls=pair,
                   insecure_http=insecure_http)
    except ServeError as exc:
        raise fail(str(exc), 2) from exc


from pi_memory.cli.imports import import_app  # noqa: E402  (one `pi-memory import` group for every source)

ApplyOpt = Annotated[bool, typer.Option("--apply", help="Write the entries (without it: show what would be "
                                        "imported and change nothing).")]


ImportProjectOpt = Annotated[Path | None, typer.Option("--project", help="A folder of the project to import "
                                                       "(its git root is used; default: the current folder).")]
InstructionsOpt = Annotated[bool, typer.Option("--instructions/--no-instructions", help="Also the host's "
                                               "instruction files (CLAUDE.md / AGENTS.md), user and project.")]


def _import(source: str, where: str, planned: list, project: Path, apply: bool, json_: bool,
            skipped: list | None = None) -> None:
    """Show (dry run) or write (``--apply``) ``planned``; ``where``: the folders and files read, for people.
    Exit code 1 when an entry was refused (a dry run: would be refused, by the same checks), else 0; 2 for
    settings that cannot be read."""
    from pi_memory.config import SettingsError
    from pi_memory.curated.entries import printable
    from pi_memory.curated.messages import for_person, merged_note
    from pi_memory.integrations.hooks.imports import apply as write_entries
    from pi_memory.integrations.hooks.imports import preview
    from pi_memory.runtime import open_memory
    from pi_memory.standing import StandingStore

    if json_:
        state.json = True
    skipped = skipped or []
    results = rows = None
    if planned:
        try:
            memory = open_memory(project, override_dir=state.dir)
        except SettingsError as exc:
            raise fail(str(exc), 2) from exc
        try:
            standing = StandingStore.in_data_dir(memory.settings.data_dir)
            if apply:
                results = write_entries(memory.store, planned, standing)
            else:
                memory.store.load_from_disk()
                rows = preview(memory.store, planned, standing)
        finally:
            memory.close()
    merged = [(r["target"], r["duplicatesMerged"]) for r in (results or rows or []) if r.get("duplicatesMerged")]
    refused = sum(1 for r in (results or rows or []) if r["status"] in ("refused", "would be refused"))
    if state.json:
        emit_json({"success": True, "source": source, "folder": where, "dryRun": not apply,
                   "entries": [p.to_dict() for p in planned], "preview": rows, "results": results,
                   "skipped": skipped, "duplicatesMerged": sum(n for _, n in merged), "refused": refused})
        raise typer.Exit(1 if refused else 0)
    for note in skipped:  # stored and model-written text, paths too: escapes shown, never run (printable)
        out.print(printable(f"skipped: {note['source']} ({note['reason']})"), markup=False)
    if not planned:
        out.print(printable(f"Nothing to import: no {source} memories in {where}."), markup=False)
        return
    for row in results or rows:
        why = f" ({for_person(row['message'])})" if row.get("status") in ("refused", "would be refused") and row.get(
            "message") else ""
        out.print(printable(f"{row['status']}: {row['target']}: {row['text']}{why}"), markup=False)
    for target, n in merged:  # a hand-made store's exact duplicates, merged by the first add to it
        out.print(merged_note(memory.store.name(target), n, dry_run=not apply), markup=False)
    if results is None:
        counts = {s: sum(1 for r in rows if r["status"] == s) for s in ("would add", "already there",
                                                                        "would be refused")}
        out.print(printable(f"{len(planned)} entr{'y' if len(planned) == 1 else 'ies'} from {where}: "
                            f"{counts['would add']} to add, {counts['already there']} already there, "
                            f"{counts['would be refused']} would be refused; nothing was written. Run again with "
                            "--apply to import them."), markup=False)
    else:
        counts = {s: sum(1 for r in results if r["status"] == s) for s in ("added", "duplicate", "refused")}
        out.print(printable(f"{counts['added']} added, {counts['duplicate']} already there, {counts['refused']} "
                            f"refused. {where}: left as it was."), markup=False)
    if refused:
        raise typer.Exit(1)


def _import_both(source: str, folder: Path, memories: list, instructions, project: Path, apply: bool,
                 json_: bool) -> None:
    """The host's memories (``folder``) and, unless ``--no-instructions``, its instruction files' plan."""
    planned, skipped, read = list(memories), [], [str(folder)]
    if instructions is not None:
        planned, skipped, read = planned + instructions.planned, instructions.skipped, read + instructions.files
    _import(source, ", ".join(read), planned, project, apply, json_, skipped)


IMPORT_TARGETS = ("Instruction files: each bullet and paragraph (outside code) is one entry, prefixed with its "
                  "heading; from your own file a rule (\"Always...\", \"Use...\", \"Never...\") becomes a "
                  "standing instruction (STANDING.md) and anything else goes to USER.md; from the project's files "
                  "everything goes to the project's store. @imports of Markdown files are followed (5 deep; a project's links only inside the project "
                  "or the host's folder). "
                  "Nothing of the host's is changed; a re-run adds nothing twice. The dry run asks each entry every "
                  "check --apply makes. Exit code 1 when an entry is refused (a dry run: would be), else 0.")


@import_app.command("claude-code-memory", help=(
        "Claude Code's auto-memory of a project (~/.claude/projects/<project>/memory/: user memories into "
        "USER.md, the others into the project's store) and its CLAUDE.md files (~/.claude/CLAUDE.md, "
        "~/.claude/rules/, and in the project CLAUDE.md, .claude/CLAUDE.md, .claude/rules/, CLAUDE.local.md, "
        "nested ones too). A dry run unless --apply. " + IMPORT_TARGETS))
def import_claude_code(project: ImportProjectOpt = None, instructions: InstructionsOpt = True, apply: ApplyOpt = False,
                       json_: JsonOpt = False) -> None:
    from pi_memory.integrations.hooks.claude_code import config_dir
    from pi_memory.integrations.hooks.imports import claude_memory_dir, plan_claude_code
    from pi_memory.integrations.hooks.imports_instructions import plan_claude_md

    where = (project or Path.cwd()).resolve()
    folder = claude_memory_dir(where, config_dir())
    _import_both("Claude Code", folder, plan_claude_code(folder),
                 plan_claude_md(where, config_dir()) if instructions else None, where, apply, json_)


@import_app.command("codex-memories", help=(
        "Codex's memories ($CODEX_HOME/memories: memory_summary.md and MEMORY.md) into MEMORY.md, and its "
        "AGENTS.md files ($CODEX_HOME/AGENTS.override.md or AGENTS.md, and in every folder of the project "
        "AGENTS.override.md or AGENTS.md). A dry run unless --apply. " + IMPORT_TARGETS))
def import_codex(project: ImportProjectOpt = None, instructions: InstructionsOpt = True, apply: ApplyOpt = False,
                 json_: JsonOpt = False) -> None:
    from pi_memory.integrations.hooks.codex import codex_home
    from pi_memory.integrations.hooks.imports import plan_codex
    from pi_memory.integrations.hooks.imports_instructions import plan_agents_md

    where = (project or Path.cwd()).resolve()
    folder = codex_home() / "memories"
    _import_both("Codex", folder, plan_codex(folder), plan_agents_md(where, codex_home()) if instructions else None,
                 where, apply, json_)
