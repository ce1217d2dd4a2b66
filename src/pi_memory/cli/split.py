"""``pi-memory split TARGET``: a hand-written Markdown store (no ``§`` separators) split into entries for review,
written with ``--apply`` (a ``.bak`` copy of the file is kept)."""

from __future__ import annotations

from typing import Annotated

import typer

from pi_memory.cli.app import (
    DirOpt,
    JsonOpt,
    Target,
    app,
    emit_json,
    fail,
    finish,
    n_entries,
    open_store,
    out,
    state,
)
from pi_memory.curated.entries import DELIMITER, printable, split_plain_markdown


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
    if apply and (refused := store.write_refused(target.value)) is not None:
        finish(refused, json_)  # before anything is read or proposed: nothing could be written
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
