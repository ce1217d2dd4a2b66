"""The ``pi-memory`` console script: ``pi-memory hook ...`` is answered before the typer app is imported.

A host runs a hook command on every prompt, so its start-up is what the user waits for; the full CLI imports
typer, rich and every command module (about 0.4 s more). ``pi-memory mcp`` on stdio goes through
:mod:`pi_memory.integrations.mcp_quickstart`, which answers the client's ``initialize`` before the SDK is
imported. Everything else goes to :func:`pi_memory.cli.main`.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["hook"]:
        from pi_memory.integrations.hooks import main_and_exit

        main_and_exit(args[1:])
    if (args[:1] == ["mcp"] and not {"--http", "--help", "-h"} & set(args)
            and os.environ.get("PI_MEMORY_MCP_QUICKSTART", "1") != "0"):
        from pi_memory.integrations.mcp_quickstart import run

        run()  # answers initialize at once, runs the CLI's `mcp` on pipes, exits
    from pi_memory.cli import main as cli_main

    cli_main()
