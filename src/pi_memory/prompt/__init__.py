"""Prompt assembly: everything pi-memory adds to a session, part by part, with token counts.

Public API::

    ctx = build_context(memory, prompt=None, create_defaults=False) -> SessionContext
    ctx.parts                      # [Part(name, channel, refresh, text, note)], .tokens each
    ctx.text(refresh=("session",)) # the frozen part;  ctx.text(refresh=("run",)) the per-run parts
    frozen_is_reusable(text, memory)

Hosts call :func:`build_context` (the pi bridge, ``pi-memory preview-context``, the Claude Code / Codex hooks).
"""

from pi_memory.prompt.context import (
    Part,
    SessionContext,
    build_context,
    frozen_is_reusable,
    memory_part,
    recent_failures,
    run_parts,
)
from pi_memory.prompt.render import POLICY_COMPACT, POLICY_FULL, blocks_text, policy_text, standing_text

__all__ = ["POLICY_COMPACT", "POLICY_FULL", "Part", "SessionContext", "blocks_text", "build_context",
           "frozen_is_reusable", "memory_part", "policy_text", "recent_failures", "run_parts", "standing_text"]
