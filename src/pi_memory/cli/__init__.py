"""``pi-memory`` command line: thin commands over the library.

Exit codes: 0 success; 1 the store refused (limit, threat, secret, drift, no match, lock); 2 usage error
(bad arguments, unreadable settings). With ``--json`` (on the command or before it) every outcome, usage errors
included, is one JSON object on standard output; an error is ``{"success": false, "error": ..., "exitCode": ...}``.
Two commands differ: ``mcp`` speaks MCP on standard output, so its JSON (start and stop events, errors) goes to
standard error, one object per line; ``serve`` prints one object when it listens and one when it stops.
"""

from __future__ import annotations

import json
import os
import sys

import typer

from pi_memory import safety
from pi_memory.cli.app import app

try:  # typer 0.2x ships its own copy of click; its usage errors derive from TyperException
    from typer import TyperException as _ClickError
except ImportError:  # older typer raises click's own
    from click import ClickException as _ClickError


def main(argv: list[str] | None = None) -> None:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``) and exit with its code.

    Click reports bad arguments as text itself; here they become JSON when ``--json`` is among the arguments."""
    args = sys.argv[1:] if argv is None else list(argv)
    args = [a if os.path.lexists(a) else safety.replace_unencodable(a) for a in args]  # argv bytes not UTF-8
    try:
        code = app(args=args, prog_name="pi-memory", standalone_mode=False)
    except typer.Abort:
        print("Aborted.", file=sys.stderr)
        sys.exit(1)
    except _ClickError as exc:
        if "--json" in args and hasattr(exc, "format_message"):
            ctx = getattr(exc, "ctx", None)
            where = getattr(ctx, "command_path", None) or "pi-memory"
            print(json.dumps({"success": False, "error": f"{exc.format_message()} (see `{where} --help`)",
                              "exitCode": getattr(exc, "exit_code", 2)}, ensure_ascii=False),
                  file=sys.stderr if where.split()[1:2] == ["mcp"] else sys.stdout)  # mcp: stdout is MCP's
        else:
            exc.show()
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)


__all__ = ["app", "main"]
