"""``pi-memory preview-context``: exactly what the next session gets from pi-memory, part by part.

Parts (see :mod:`pi_memory.prompt`): ``memory`` (snapshot or policy), ``blocks``, ``standing`` in the system
prompt, and with ``--prompt TEXT`` the ``recall`` message on the user channel. Each with its token estimate.
Nothing is written (default blocks a session would create are shown, not created). A block file whose frontmatter
the prompt could not use as written (an invalid ``limit``) is named after the parts, with what was used instead;
so are the blocks the budget ``blocksCharBudget`` left out, and block files not read at all.
"""

from __future__ import annotations

from typing import Annotated

import typer

from pi_memory.blocks.budget import person_warning
from pi_memory.blocks.person import SHOWN_CHARS
from pi_memory.cli.app import DirOpt, JsonOpt, app, emit_json, open_mem, out, state
from pi_memory.prompt import build_context
from pi_memory.reports import context_lines
from pi_memory.shown_text import shown
from pi_memory.terminal_text import printable


@app.command("preview-context")
def preview_context(
    prompt: Annotated[str | None, typer.Option(help="Also preview semantic recall for this prompt.")] = None,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Show what the next session's system prompt and first user-channel message get from pi-memory."""
    memory = open_mem(dir)
    try:
        ctx = build_context(memory, prompt=prompt)
        store = memory.blocks()
        problems = [{"key": b.key, "file": str(b.path), "problem": shown(p, SHOWN_CHARS)}
                    for b in store.default_preview() for p in b.problems]
        fitted = store.in_prompt(store.default_preview())
        skipped = store.skipped()
    finally:
        memory.close()
    left_out = {**fitted.to_dict(), "message": person_warning(fitted)} if fitted.left_out else None
    if json_ or state.json:
        emit_json({**ctx.to_dict(), **({"blockProblems": problems} if problems else {}),
                   **({"blocksLeftOut": left_out} if left_out else {}),
                   **({"skippedBlocks": [s.to_dict() for s in skipped]} if skipped else {})})
        raise typer.Exit(0)
    for line in context_lines(ctx):
        out.print(line, markup=False)
    if problems or left_out or skipped:  # warnings for a person, after the parts
        out.print("", markup=False)
    for p in problems:
        out.print(f"warning: memory block {p['key']} ({p['file']}): {p['problem']}", markup=False)
    for line in [left_out["message"]] if left_out else []:  # blocks past blocksCharBudget reach no prompt
        out.print(f"warning: {printable(line)}", markup=False)
    for s in skipped:  # block files not read (a link out of the folder, a refused frontmatter)
        out.print(f"warning: {printable(s.message)}", markup=False)
