"""``pi-memory`` command line: thin commands over the library.

Exit codes: 0 success; 1 the store refused (limit, threat, secret, drift, no match, lock); 2 usage error
(bad arguments, unreadable settings). With ``--json`` (on the command or before it) every outcome, usage errors
included, is one JSON object on standard output; an error is ``{"success": false, "error": ..., "exitCode": ...}``.
A data folder that cannot be used (read-only, no permission, disk full, missing and not creatable, not a
folder) or an index locked by another process is a refusal (exit 1) from whichever command met it: :func:`main`
turns the error into one sentence naming the folder and what to do (:mod:`pi_memory.storage`), never a
traceback, so every command, present or future, reports it the same way. Under ``--json`` any other unexpected
error is a JSON object too (``"errorType"``), with its traceback on standard error for a bug report.
Two commands differ: ``mcp`` speaks MCP on standard output, so its JSON (start and stop events, errors) goes to
standard error, one object per line; ``serve`` prints one object when it listens and one when it stops.
"""

from __future__ import annotations

import json
import logging
import os
import sys

import typer

from pi_memory import safety
from pi_memory.cli.app import app, build_command, command_word, fail, state
from pi_memory.cli.notices import KEEPS_RUNNING, HeldNotices, delay_for

try:  # typer 0.2x ships its own copy of click; its usage errors derive from TyperException
    from typer import TyperException as _ClickError
except ImportError:  # older typer raises click's own
    from click import ClickException as _ClickError


def main(argv: list[str] | None = None) -> None:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``) and exit with its code.

    Click reports bad arguments as text itself; here they become JSON when ``--json`` is among the arguments."""
    args = sys.argv[1:] if argv is None else list(argv)
    _log_to_stderr(args)
    args = [a if os.path.lexists(a) else safety.replace_unencodable(a) for a in args]  # argv bytes not UTF-8
    word = command_word(args)[0]
    state.one_shot = word not in KEEPS_RUNNING  # ui / serve / mcp: a team server asked as a host
    shares = state.one_shot and word != "hook"  # the hooks keep their own team-servers.json
    if shares:  # whose a team server's token is, asked once for many commands (GET /whoami)
        from pi_memory.cli import team_users

        team_users.share()
    try:
        code = build_command(args)(args=args, prog_name="pi-memory", standalone_mode=False)
    except typer.Abort:
        print("Aborted.", file=sys.stderr)
        sys.exit(1)
    except _ClickError as exc:
        if isinstance(getattr(exc, "message", None), str):  # typer passes pydantic's "Value error, " prefix on
            exc.message = exc.message.replace("Value error, ", "")
        if "--json" in args and hasattr(exc, "format_message"):
            ctx = getattr(exc, "ctx", None)
            where = getattr(ctx, "command_path", None) or "pi-memory"
            print(json.dumps({"success": False, "error": f"{exc.format_message()} (see `{where} --help`)",
                              "exitCode": getattr(exc, "exit_code", 2)}, ensure_ascii=False),
                  file=sys.stderr if where.split()[1:2] == ["mcp"] else sys.stdout)  # mcp: stdout is MCP's
        else:
            exc.show()
        sys.exit(getattr(exc, "exit_code", 2))
    except Exception as exc:
        sys.exit(_refuse(exc, "--json" in args))
    finally:
        if shares:
            from pi_memory.cli import team_users

            team_users.keep()
        if state.notices is not None:
            state.notices.release()  # after a refusal (dropped) this prints nothing
    sys.exit(code if isinstance(code, int) else 0)


class _OneLine(logging.Formatter):
    """``warning: message (ErrorType: detail)``: what a person needs, without the traceback (a logged failure
    in a side job, such as the index mirror after a saved write, is not the command failing)."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None:
            text += f" ({type(exc).__name__}: {exc})"
        return f"{record.levelname.lower()}: {text}"


def _log_to_stderr(args: list[str]) -> None:
    """Warnings and errors of the library as one line each on standard error; ``$PI_MEMORY_DEBUG`` set: every
    record from debug level up, tracebacks included. Left alone when the process already configured logging."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    if os.environ.get("PI_MEMORY_DEBUG"):
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.setLevel(logging.DEBUG)
    else:
        handler.setFormatter(_OneLine())
        state.notices = HeldNotices(handler, delay_for(args))
        handler.addFilter(state.notices)  # before _once: a held record is seen once, when it is printed
        handler.addFilter(_once())
        root.setLevel(logging.WARNING)
    root.addHandler(handler)


def _once():
    """A filter passing each distinct message once (a settings warning is met by every layer that reads the
    settings; a person needs it once)."""
    seen: set[str] = set()

    def first(record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if text in seen:
            return False
        seen.add(text)
        return True

    return first


def _data_dir():
    """The data root of this invocation: as the command resolved it, else as the settings give it."""
    if state.data_dir is not None:
        return state.data_dir
    from pi_memory.config import load_settings

    try:
        return load_settings(override_dir=state.dir).data_dir
    except Exception:  # the settings are what failed: fall back to what the command was given
        return state.dir


def _refuse(exc: Exception, json_arg: bool) -> int:
    """Report an exception a command let through and return the exit code (1); re-raise a bug outside JSON."""
    import traceback

    from pi_memory.index import IndexUnavailableError
    from pi_memory.storage import storage_problem

    problem = storage_problem(exc, _data_dir())
    if problem is not None:
        fail(problem.message, 1, problem=problem.kind, dataDir=str(problem.folder))
        return 1
    if isinstance(exc, IndexUnavailableError):  # damaged beyond a repair; its message says what to do
        fail(str(exc), 1, problem="index_unavailable", dataDir=str(_data_dir()))
        return 1
    if not (state.json or json_arg):
        raise exc
    traceback.print_exception(exc, file=sys.stderr)
    state.json = True
    fail(f"unexpected error ({type(exc).__name__}): {exc}. Run the command again without --json to see the "
         "traceback, and report it if it persists.", 1, errorType=type(exc).__name__)
    return 1


__all__ = ["app", "main"]
