"""``pi-memory pin ...``: the user's standing instructions (``STANDING.md`` in the data root).

``pin add TEXT`` (``-`` reads standard input), ``pin list``, ``pin remove N [N ...]`` (several at once, numbered as
``pin list`` numbers them), ``pin clear``; all take ``--json``.
Exit codes: 0 done, 1 refused (duplicate, over a cap, scanner, out of range, locked), 2 usage error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pi_memory.cli.app import DirOpt, JsonOpt, app, emit_json, err, out, settings, state, text_arg
from pi_memory.reports import pin_lines
from pi_memory.standing import PinResult, StandingStore

pin_app = typer.Typer(help="Standing instructions: rules you pin for every session (STANDING.md).",
                      no_args_is_help=True)
app.add_typer(pin_app, name="pin")


def _store(dir_: Path | None) -> tuple[StandingStore, bool]:
    s = settings(dir_)
    return StandingStore.in_data_dir(s.data_dir, s.lock_timeout), s.standing_enabled


def _finish(result: PinResult, enabled: bool, as_json: bool) -> None:
    if as_json or state.json:
        emit_json({**result.to_dict(), "enabled": enabled, **({"exitCode": 1} if not result.success else {})})
    else:
        for line in pin_lines(result, enabled):
            (out if result.success or not line.startswith("refused") else err).print(line, markup=False)
    raise typer.Exit(0 if result.success else 1)


@pin_app.command("add")
def pin_add(text: str, dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Pin a rule for every session. TEXT "-" reads it from standard input."""
    store, enabled = _store(dir)
    _finish(store.add(text_arg(text)), enabled, json_)


@pin_app.command("list")
def pin_list(dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Show the pinned rules, numbered, with the budget used."""
    store, enabled = _store(dir)
    _finish(store.list(), enabled, json_)


@pin_app.command("remove")
def pin_remove(numbers: Annotated[list[int], typer.Argument(help="The rules' numbers in `pin list` (several at "
                                                             "once: pin remove 5 2).")],
               dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Remove rule N, or several rules at once (all or none; the numbers are those `pin list` shows)."""
    store, enabled = _store(dir)
    _finish(store.remove(*numbers), enabled, json_)


@pin_app.command("clear")
def pin_clear(dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Remove every rule (comment lines in STANDING.md are kept)."""
    store, enabled = _store(dir)
    _finish(store.clear(), enabled, json_)
