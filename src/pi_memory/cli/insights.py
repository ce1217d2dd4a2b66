"""``pi-memory insights``, ``pi-memory projects``, ``pi-memory interview``: the CLI twins of pi's
``/memory-insights``, ``/memory-switch-project`` and ``/memory-interview`` (same data, :mod:`pi_memory.insights`,
same lines, :mod:`pi_memory.reports`)."""

from __future__ import annotations

import click
import typer

from pi_memory.cli.app import DirOpt, JsonOpt, app, emit_json, open_mem, out, state
from pi_memory.insights import collect, projects
from pi_memory.reports import insights_lines, projects_lines


@app.command()
def insights(dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Everything stored: each store's entries, memory blocks, standing rules, index counts, top recalls."""
    memory = open_mem(dir, reads=True)
    data = collect(memory)
    if json_ or state.json:
        emit_json(data)
        return
    for line in insights_lines(data):
        out.print(line, markup=False)


@app.command("projects")
def projects_cmd(dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Every project memory store with its entry count (the current project marked)."""
    found = projects(open_mem(dir, reads=True))
    if json_ or state.json:
        emit_json({"projects": found})
        return
    for line in projects_lines(found):
        out.print(line, markup=False)


@app.command()
def interview(dir: DirOpt = None) -> None:
    """Answer a few questions to pre-fill USER.md (an empty answer skips the question).

    When the input ends early (a pipe, Ctrl-D), the answers given so far are saved and the rest skipped;
    Ctrl-C saves nothing."""
    from pi_memory.integrations.pi.commands import INTERVIEW, save_interview

    memory = open_mem(dir)
    answers: dict[str, str] = {}
    for number, (key, question, _) in enumerate(INTERVIEW, 1):
        try:
            answers[key] = typer.prompt(question, default="", show_default=False)
        except (click.Abort, typer.Abort) as stop:  # an end of input and Ctrl-C alike
            given = sum(bool(a.strip()) for a in answers.values())
            if not isinstance(stop.__context__, EOFError):
                out.print(f"\nInterrupted at question {number} of {len(INTERVIEW)}: nothing was saved.", markup=False)
                raise typer.Exit(130) from None
            if not given:
                out.print(f"\nInput ended at question {number} of {len(INTERVIEW)} before any answer: nothing was "
                          "saved.", markup=False)
                raise typer.Exit(1) from None
            out.print(f"\nInput ended at question {number} of {len(INTERVIEW)}: the answers given are saved, the "
                      "rest skipped.", markup=False)
            break
    lines = save_interview(memory, answers)
    for line in lines:
        out.print(line, markup=False)
    raise typer.Exit(1 if any(line.startswith("not saved") for line in lines) else 0)
