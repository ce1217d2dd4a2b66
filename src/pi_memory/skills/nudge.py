"""The question asked once per session after a complex agent run: is this procedure worth saving as a skill?

A run is complex when it made at least :data:`MIN_TOOL_CALLS` (8) tool calls with at least
:data:`MIN_DISTINCT_TOOLS` (2) different tools (the peer's rule, seed 001 "Skill Auto-Extraction"). The host
counts the calls of the run and asks once per session, on the model's channel, never shown to the person.
"""

from __future__ import annotations

MIN_TOOL_CALLS = 8
MIN_DISTINCT_TOOLS = 2

NUDGE_TEXT = (
    "That was a complex task ({calls} tool calls with {tools} different tools). If it produced a procedure "
    "that would save time next time (how to debug, build, deploy or fix something here), save it now with "
    "skill_manage (action 'create', scope 'global' or 'project', structured fields), or improve an existing "
    "skill with 'patch'. If nothing is reusable, reply briefly that there is nothing to save."
)


def is_complex_run(tool_names: list[str]) -> bool:
    return len(tool_names) >= MIN_TOOL_CALLS and len(set(tool_names)) >= MIN_DISTINCT_TOOLS


def complex_run_nudge(tool_names: list[str]) -> str | None:
    """The text to send the model after a run that called ``tool_names`` (in order), or ``None``."""
    if not is_complex_run(tool_names):
        return None
    return NUDGE_TEXT.format(calls=len(tool_names), tools=len(set(tool_names)))
