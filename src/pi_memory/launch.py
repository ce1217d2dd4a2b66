"""The ``pi-memory`` console script: ``pi-memory hook ...`` is answered before the typer app is imported.

A host runs a hook command on every prompt, so its start-up is what the user waits for; the full CLI imports
typer, rich and every command module (about 0.4 s more). Everything else goes to :func:`pi_memory.cli.main`.
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:2] == ["hook"]:
        from pi_memory.integrations.hooks import main_and_exit

        main_and_exit(sys.argv[2:])
    from pi_memory.cli import main as cli_main

    cli_main()
