"""``pi-memory hook <host> <event>``: Claude Code's and Codex's hooks, answered by a short-lived process.

The host runs the command for each event, writes its hook JSON on standard input and reads the answer on
standard output (:mod:`.protocol`). What each event does is in :mod:`.handlers`; installing the hooks into the
hosts' settings is :mod:`.install`.

Never breaking the host comes first: whatever goes wrong (bad input, a settings error, a crash, a handler that
is still busy after :data:`CEILING_S` seconds), the hook prints the event's empty answer (``{}``), exits 0 and
writes why to the hook log (:mod:`.state`). Start-up is kept short: the console script dispatches ``hook``
before the typer app is imported (:mod:`pi_memory.launch`), and the handlers import what they need only.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time

from pi_memory.integrations.hooks import protocol, state

_SURROGATE = re.compile(r"\\[uU][dD][89a-fA-F]|[\ud800-\udfff]")  # an escaped or a raw (surrogateescape) one
CEILING_S = 2.0  # $PI_MEMORY_HOOK_CEILING_S overrides it (seconds), e.g. for tests on a loaded machine
# Share of the ceiling the prompt hook waits for the query's embedding (1.2 s of 2 s): a cold process loads the
# embedding model, which takes seconds on a busy machine. Past it, recall answers by keyword only (the same
# evidence floor) instead of nothing; the rest of the ceiling is for the keyword lists and the answer.
VECTOR_SHARE = 0.6
# A team project server (``teamProjectStore``) gets this share of the ceiling to answer the session start (0.6 s
# of 2 s, from when it is asked), and never past TEAM_LATEST of the ceiling (1.5 s of 2 s, from the hook's start):
# one that has not answered by then leaves the project part out, and the local stores, blocks and standing
# instructions still arrive in time.
TEAM_SHARE = 0.3
TEAM_LATEST = 0.75
USAGE = ("usage: pi-memory hook HOST EVENT  (reads the host's hook JSON on standard input)\n"
         f"  HOST: {', '.join(protocol.HOSTS)}\n  EVENT: {', '.join(protocol.EVENTS)}\n")


def run_hook(host: str, event: str, raw: str, ceiling: float = CEILING_S) -> str:
    """The answer text for one hook call (never raises; the empty answer on any failure)."""
    result: dict = {}
    started = time.monotonic()
    vector_deadline = started + VECTOR_SHARE * ceiling
    team = {"team_deadline": started + TEAM_LATEST * ceiling, "team_wait": TEAM_SHARE * ceiling}

    def work() -> None:
        try:
            payload = json.loads(raw) if raw.strip() else {}
            if _SURROGATE.search(raw):  # lone surrogates -> U+FFFD (safety is imported only then: it costs ~0.5 s)
                from pi_memory.safety import replace_unencodable

                payload = replace_unencodable(payload)
            if not isinstance(payload, dict):
                raise ValueError(f"the hook input must be a JSON object, not {type(payload).__name__}")
            from pi_memory.integrations.hooks.handlers import handle

            result["answer"] = protocol.answer(event, handle(host, event, payload, vector_deadline=vector_deadline,
                                                             **team))
        except BaseException as exc:  # noqa: BLE001 - the host must get an answer whatever happened
            result["error"] = f"{type(exc).__name__}: {exc}"

    thread = threading.Thread(target=work, name="pi-memory-hook", daemon=True)
    thread.start()
    thread.join(ceiling)
    if thread.is_alive():
        state.log(f"{host} {event}: no answer after {ceiling:g} s; answered empty (the work was abandoned)")
        return protocol.EMPTY
    if "error" in result:
        state.log(f"{host} {event}: answered empty after an error: {result['error']}")
        return protocol.EMPTY
    return result.get("answer", protocol.EMPTY)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``pi-memory hook HOST EVENT``. Exits the process (``os._exit``) once the answer is
    written, so an abandoned handler thread cannot keep the host waiting."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help") or len(args) != 2:
        (sys.stdout if args[:1] in (["-h"], ["--help"]) else sys.stderr).write(USAGE)
        return 0 if args[:1] in (["-h"], ["--help"]) else 2
    try:
        host, event = protocol.normalise_host(args[0]), protocol.normalise_event(args[1])
    except protocol.UnknownEvent as exc:
        sys.stderr.write(f"pi-memory hook: {exc}\n")
        state.log(f"hook {' '.join(args)}: {exc}")
        sys.stdout.write(protocol.EMPTY + "\n")
        return 2
    try:
        raw = sys.stdin.read()
    except (OSError, ValueError) as exc:
        state.log(f"{host} {event}: could not read standard input: {exc}")
        raw = ""
    try:
        ceiling = float(os.environ.get("PI_MEMORY_HOOK_CEILING_S") or CEILING_S)
    except ValueError:
        ceiling = CEILING_S
    sys.stdout.write(run_hook(host, event, raw, ceiling) + "\n")
    sys.stdout.flush()
    return 0


def main_and_exit(argv: list[str] | None = None) -> None:
    code = main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


__all__ = ["CEILING_S", "TEAM_LATEST", "TEAM_SHARE", "VECTOR_SHARE", "main", "main_and_exit", "run_hook"]
