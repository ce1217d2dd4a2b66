"""``pi-memory hook <host> <event>``: Claude Code's and Codex's hooks, answered by a short-lived process.

The host runs the command for each event, writes its hook JSON on standard input and reads the answer on
standard output (:mod:`.protocol`). What each event does is in :mod:`.handlers`; installing the hooks into the
hosts' settings is :mod:`.install`.

Never breaking the host comes first: whatever goes wrong (bad input, an unknown host or event, a wrong number
of arguments, a settings error, a crash, a handler that is still busy after :data:`CEILING_S` seconds), the hook
prints the event's empty answer (``{}``), exits 0 (both hosts read exit 2 as "block this") and writes why to
the hook log (:mod:`.state`). Start-up is kept short: the console script dispatches ``hook``
before the typer app is imported (:mod:`pi_memory.launch`), and the handlers import what they need only.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
import zlib

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
    del state.WRITE_PROBLEMS[:]
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
            result["payload"] = payload
            from pi_memory.integrations.hooks.handlers import handle

            result["context"] = handle(host, event, payload, vector_deadline=vector_deadline, **team)
        except BaseException as exc:  # noqa: BLE001 - the host must get an answer whatever happened
            result["error"] = f"{type(exc).__name__}: {exc}"
            if type(exc).__name__ == "SettingsError":  # pi-memory's settings are invalid: memory is off
                result["settings"] = str(exc)

    thread = threading.Thread(target=work, name="pi-memory-hook", daemon=True)
    thread.start()
    thread.join(ceiling)
    if thread.is_alive():
        state.log(f"{host} {event}: no answer after {ceiling:g} s; answered empty (the work was abandoned)")
        return protocol.EMPTY
    message = _notices(host, event, result)
    if "error" in result:
        state.log(f"{host} {event}: answered empty after an error: {result['error']}")
        return protocol.answer(event, None, message)
    context = result.get("context")
    if host == "claude-code" and context and protocol.claude_length(context) > protocol.CLAUDE_CONTEXT_CAP:
        # the handlers keep the run parts and the recall within the cap; only a frozen snapshot over it on its
        # own (character limits set far above the defaults) still gets here: at a session start, cut to the cap,
        # each store keeping its start and a note the model reads, and the person told
        if event == "session-start":
            context, said = fit_context(context)
            message = f"{message}\n{said}" if message else said
        else:
            said = (f"the context is {protocol.claude_length(context)} characters; Claude Code keeps "
                    f"{protocol.CLAUDE_CONTEXT_CAP} in the model's context and shows it the rest as a file")
        state.log(f"{host} {event}: {said}")
    if host == "codex" and event == "session-start" and context:
        from pi_memory.integrations.hooks.codex_budget import start_over_budget

        said = start_over_budget(context)  # our entry in hooks.json without the 0 install writes, or a limit set by hand
        if said:
            message = f"{message}\n{said}" if message else said
            state.log(f"codex session-start: {said.removeprefix('pi-memory: ')}")
    return protocol.answer(event, context, message)



def fit_context(context: str) -> tuple[str, str]:
    """A Claude Code session start over :data:`.protocol.CLAUDE_CONTEXT_CAP` cut to it: its memory snapshot
    (:func:`pi_memory.curated.snapshot_fit.fit_snapshot`; what follows it is left whole), or the whole text when it
    holds none; and what the person is told about it."""
    from pi_memory.curated.snapshot import CLOSE_TAG, OPEN_TAG
    from pi_memory.curated.snapshot_fit import fit_snapshot

    cap, length = protocol.CLAUDE_CONTEXT_CAP, protocol.claude_length
    end = context.find(CLOSE_TAG) + len(CLOSE_TAG) if context.startswith(OPEN_TAG) else 0
    snapshot, rest = (context[:end], context[end:]) if end > len(CLOSE_TAG) else (context, "")
    fitted, left = fit_snapshot(snapshot, cap - length(rest), length, cap)
    return fitted + rest, snapshot_over_cap(length(snapshot), left)


def snapshot_over_cap(total: int, left: int | None = None) -> str:
    """The warning a person reads about a memory snapshot of ``total`` characters (Claude Code's count) at a
    Claude Code session start (``left``: characters left out; ``None``: as ``pi-memory status`` foresees it)."""
    cap = protocol.CLAUDE_CONTEXT_CAP
    cut = (f"{left:,} characters were left out" if left is not None else "part of each long store is left out")
    return (f"pi-memory: the memory snapshot is {total:,} characters, more than the {cap:,} Claude Code keeps whole "
            f"in a session's start, so the agent gets the start of each store: {cut}, with a note telling it to read "
            "the rest with the memory_read tool. To fit, shorten the stores (`pi-memory consolidate memory`, "
            "`pi-memory remove`) or lower their character limits.")


def _notices(host: str, event: str, result: dict) -> str | None:
    """What the user must be told (``systemMessage``): invalid pi-memory settings (memory is off), once per host
    session; a state folder that cannot be written, at each session start. The second also goes to standard
    error whatever the event (the hook log may be what cannot be written)."""
    lines = []
    if "settings" in result:
        payload = result.get("payload") or {}
        sid = payload.get("session_id") if isinstance(payload.get("session_id"), str) else ""
        digest = f"{zlib.crc32(result['settings'].encode('utf-8')):08x}"
        saved = state.read_json(state.session_file(host, sid)) if sid and event == "prompt" else {}
        if saved.get("settingsNotice") != digest:
            lines.append(f"pi-memory is off in this session: {result['settings']} Fix that, then start a new "
                         "session.")
            if sid:
                state.update_session(host, sid, settingsNotice=digest)
    if state.WRITE_PROBLEMS:
        folder = state.state_dir()
        note = (f"pi-memory cannot write its state folder {folder} ({state.WRITE_PROBLEMS[0]}), so a resumed session "
                "may not get the same snapshot and the hook log is not kept; memory itself works. Give your user "
                f"write access to it (e.g. `sudo chown -R $USER {folder}`) or set $PI_MEMORY_STATE_DIR.")
        sys.stderr.write(note + "\n")
        if event == "session-start":
            lines.append(note)
    return "\n".join(lines) or None


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``pi-memory hook HOST EVENT``. Exits the process (``os._exit``) once the answer is
    written, so an abandoned handler thread cannot keep the host waiting."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] in (["-h"], ["--help"]):
        sys.stdout.write(USAGE)
        return 0
    try:
        if len(args) != 2:
            raise protocol.UnknownEvent(f"expected HOST EVENT, got {len(args)} argument(s)")
        host, event = protocol.normalise_host(args[0]), protocol.normalise_event(args[1])
    except protocol.UnknownEvent as exc:
        # Exit 0 all the same: Claude Code and Codex take exit 2 as "block" (a prompt dropped), any other
        # code as an error shown to the user; a hook entry we do not know must not cost the host anything.
        sys.stderr.write(f"pi-memory hook: {exc}; answered {protocol.EMPTY}\n{USAGE}")
        state.log(f"hook {' '.join(args)}: {exc}; answered {protocol.EMPTY}")
        _drain_stdin()
        sys.stdout.write(protocol.EMPTY + "\n")
        return 0
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


def _drain_stdin() -> None:
    """Read what the host wrote on standard input (so its write never fails on a closed pipe); not a terminal's."""
    try:
        if not sys.stdin.isatty():
            sys.stdin.read()
    except (OSError, ValueError, AttributeError):
        pass


def main_and_exit(argv: list[str] | None = None) -> None:
    code = main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


__all__ = ["CEILING_S", "TEAM_LATEST", "TEAM_SHARE", "VECTOR_SHARE", "main", "main_and_exit", "run_hook"]
