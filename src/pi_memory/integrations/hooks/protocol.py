"""The hosts' hook vocabulary: which host events exist, what pi-memory does on each, and the answer shapes.

Claude Code and Codex share one hook envelope (Codex copied Claude Code's): the hook reads one JSON object on
standard input (``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, plus ``prompt`` on a prompt
submit, ``source`` on a session start, ``last_assistant_message`` on a stop) and, on exit code 0, prints one
JSON object. Context for the model goes in ``hookSpecificOutput.additionalContext`` (Claude Code puts it in a
system message of the next request, Codex in a developer message). ``{}`` is the empty answer of every event.
"""

from __future__ import annotations

import json

HOSTS = ("claude-code", "codex")

# our event name -> the host's hook event name (the one written into the host's settings)
EVENTS = {
    "session-start": "SessionStart",
    "prompt": "UserPromptSubmit",
    "pre-compact": "PreCompact",
    "stop": "Stop",
    "session-end": "SessionEnd",
}
HOST_EVENTS = {  # what each host fires (Codex has no SessionEnd: its Stop ends every turn)
    "claude-code": ("session-start", "prompt", "pre-compact", "stop", "session-end"),
    "codex": ("session-start", "prompt", "pre-compact", "stop"),
}
_BY_HOST_NAME = {v.lower(): k for k, v in EVENTS.items()}
_ALIASES = {"user-prompt-submit": "prompt", "precompact": "pre-compact", "sessionstart": "session-start"}
EMPTY = "{}"
# Claude Code keeps at most this many characters of one hook's additionalContext in the model's context: a longer
# value is saved to a file and the model gets a short preview and the file's path instead (since v2.1.89;
# anthropics/claude-code issues 51537, 64626). Codex spills past its handler's `additionalContextLimit` the same
# way (2,500 tokens when absent); our Codex handlers set it to 0, so Codex's answers are not fitted to a cap.
CLAUDE_CONTEXT_CAP = 10_000
# The longest piece of the run parts (memory blocks, standing instructions) one Claude Code prompt answer carries when
# they do not fit in the session start (:mod:`pi_memory.prompt.pieces`): the rest of the cap (2,500 characters, about
# 600 tokens) is left for the prompt's own recall.
RUN_PIECE_CHARS = 7_500


def claude_length(text: str) -> int:
    """``text``'s length as Claude Code counts it against the cap (a JavaScript string: UTF-16 code units, so a
    character outside the Basic Multilingual Plane, an emoji, counts twice)."""
    return len(text.encode("utf-16-le")) // 2


class UnknownEvent(ValueError):
    pass


def normalise_host(host: str) -> str:
    name = host.strip().lower().replace("_", "-")
    name = {"claude": "claude-code", "claudecode": "claude-code"}.get(name, name)
    if name not in HOSTS:
        raise UnknownEvent(f"unknown host {host!r}: pi-memory has hooks for {', '.join(HOSTS)}")
    return name


def normalise_event(event: str) -> str:
    """``session-start`` / ``SessionStart`` / ``session_start`` -> ``session-start``."""
    name = event.strip()
    if name.lower() in _BY_HOST_NAME:
        return _BY_HOST_NAME[name.lower()]
    name = name.lower().replace("_", "-")
    name = _ALIASES.get(name, name)
    if name not in EVENTS:
        raise UnknownEvent(f"unknown hook event {event!r}: use one of {', '.join(EVENTS)}")
    return name


def answer(event: str, context: str | None, message: str | None = None) -> str:
    """The JSON text to print: the context for the model on a session start or prompt, else ``{}``; ``message``
    (a session start or prompt only) is ``systemMessage``, which both hosts show the user, not the model."""
    if event not in ("session-start", "prompt"):
        return EMPTY
    out: dict = {}
    if context:
        out["hookSpecificOutput"] = {"hookEventName": EVENTS[event], "additionalContext": context}
    if message:
        out["systemMessage"] = message
    return json.dumps(out, ensure_ascii=False) if out else EMPTY
