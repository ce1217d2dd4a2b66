"""``pi-memory blocks ...``: memory blocks (``.pi/memory-blocks/`` of the project, ``<data root>/blocks/``).

``blocks list`` (usage bars), ``blocks show KEY``, ``blocks create KEY [--description] [--limit] [--scope global|project]``,
``blocks limit KEY CHARS`` (a block's character limit: :func:`pi_memory.blocks.change_limit`); all take ``--json``. Exit codes: 0 done, 1 refused or not found, 2 usage error.
"""

from __future__ import annotations

import enum
from typing import Annotated

import typer

from pi_memory import safety
from pi_memory.blocks import DEFAULT_LIMIT, change_limit
from pi_memory.blocks.budget import person_warning
from pi_memory.blocks.person import for_person
from pi_memory.cli.app import DirOpt, JsonOpt, app, emit_json, fail, open_mem, out, state
from pi_memory.curated.entries import printable
from pi_memory.reports import block_lines

blocks_app = typer.Typer(help="Memory blocks: self-edited notes with a character limit (Letta-style).",
                         no_args_is_help=True)
app.add_typer(blocks_app, name="blocks")


@blocks_app.command("list")
def blocks_list(dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Every block with its usage and a preview (project blocks first; an untrusted project's are named, not
    read; a block file that is a link leading out of its folder, or whose frontmatter is refused, is named with a
    warning, not read; blocks past the prompt's budget, blocksCharBudget, are marked and warned about). With no
    block file yet, the default blocks a session start creates (user, agent), marked as such:
    the blocks `preview-context` shows."""
    store = open_mem(dir).blocks()
    blocks, withheld, skipped = store.listed(), store.withheld(), store.skipped()
    fitted = store.in_prompt(store.default_preview())
    if json_ or state.json:
        extra = {"untrustedProjectBlocks": [str(p) for p in withheld]} if withheld else {}
        if skipped:
            extra["skippedBlocks"] = [s.to_dict() for s in skipped]
        if fitted.left_out:
            extra["blocksLeftOut"] = {**fitted.to_dict(), "message": person_warning(fitted)}
        emit_json({"blocks": [b.to_dict() for b in blocks], **extra})
        return
    for line in block_lines(blocks, withheld=withheld, skipped=skipped, fitted=fitted):
        out.print(line, markup=False)


@blocks_app.command("show")
def blocks_show(key: str, dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """One block's description, usage and text (credentials redacted; a block far past its limit, edited by
    hand, up to the larger of its limit and 20,000 characters, with a note)."""
    store = open_mem(dir).blocks()
    block = next((b for b in store.default_preview() if b.key == key), None)
    if block is None and (away := next((s for s in store.skipped() if s.key == key), None)) is not None:
        raise fail(printable(away.message), 1, refusal=away.code)
    if block is None:
        known = ", ".join(b.key for b in store.default_preview()) or "none"
        raise fail(f"There is no memory block {safety.redact(key)!r} (blocks: {known}). See `pi-memory blocks list`.", 1)
    shown = for_person(block)  # redacted, escaped, a block past its limit cut with a note
    if json_ or state.json:
        emit_json(shown)
        return
    pending = " (default: no file yet; the next session start creates it)" if block.default else ""
    out.print(f"{block.key} ({block.scope}, {block.path}) {block.usage}{pending}", markup=False)
    for problem in shown.get("problems", []):  # a hand edit's invalid limit: what was used instead
        out.print(f"warning: {problem}", markup=False)
    if shown["description"]:
        out.print(shown["description"], markup=False)
    out.print("", markup=False)
    out.print(shown["value"] or "(empty)", markup=False)
    for note in shown.get("cut", []):
        out.print(note, markup=False)


class BlockScope(enum.StrEnum):
    global_ = "global"
    project = "project"


@blocks_app.command("create")
def blocks_create(
    key: str,
    description: Annotated[str, typer.Option(help="What the block is for (the model reads it).")] = "",
    limit: Annotated[int, typer.Option(help="Character limit of the block's text.")] = DEFAULT_LIMIT,
    scope: Annotated[BlockScope, typer.Option(
        "--scope", help="global: the data root's blocks folder; project: the current project's "
        ".pi/memory-blocks/.")] = BlockScope.global_,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Create a block (the agent can only change existing ones)."""
    result = open_mem(dir).blocks().create(key, description, limit, scope=scope.value)
    if not result.success:
        raise fail(result.error or "refused", 1, refusal=result.code)
    if json_ or state.json:
        emit_json({**result.to_dict(), "file": str(result.block.path) if result.block else None})
        return
    out.print(result.message or "ok", markup=False)


@blocks_app.command("limit")
def blocks_limit(
    key: Annotated[str, typer.Argument(help="The block's key (`pi-memory blocks list` shows them).")],
    chars: Annotated[int, typer.Argument(help="The new limit: characters of the block's text.")],
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Change a block's character limit. Refused below the text the block holds now (shorten it first), and for a
    raise that brings the blocks' limits together past blocksCharBudget; the message says how to undo it."""
    result = change_limit(open_mem(dir).blocks(), key, chars)
    if not result.success:
        raise fail(result.error or "refused", 1, refusal=result.code)
    if json_ or state.json:
        emit_json({**result.to_dict(), "file": str(result.block.path) if result.block else None})
        return
    out.print(result.message or "ok", markup=False)
