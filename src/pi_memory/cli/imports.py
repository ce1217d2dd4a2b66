"""``pi-memory import ...``: bring memories over from the seed extensions (filled in by the importers)."""

from __future__ import annotations

import typer

from pi_memory.cli.app import app

import_app = typer.Typer(help="Move over from another memory extension (a dry run unless --apply).",
                         no_args_is_help=True)
app.add_typer(import_app, name="import")
