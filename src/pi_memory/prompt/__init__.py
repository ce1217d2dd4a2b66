"""Prompt assembly: everything pi-memory adds to a session, part by part, with token counts.

Public API::

    ctx = build_context(memory, prompt=None, create_defaults=False) -> SessionContext
    ctx.parts                      # [Part(name, channel, refresh, text, note)], .tokens each
    ctx.text(refresh=("session",)) # the frozen part;  ctx.text(refresh=("run",)) the per-run parts
    frozen_is_reusable(text, memory)

Hosts call :func:`build_context` (the pi bridge, ``pi-memory preview-context``, the Claude Code / Codex hooks).
"""

from pi_memory.prompt.render import POLICY_COMPACT, POLICY_FULL, blocks_text, policy_text, standing_text

_CONTEXT = ("Part", "SessionContext", "build_context", "frozen_is_reusable", "memory_part", "recent_failures",
            "run_parts", "run_texts")


def __getattr__(name: str):
    """The assembly names load on first use: a host that only renders (the hooks) skips the runtime imports."""
    if name in _CONTEXT:
        from pi_memory.prompt import context

        return getattr(context, name)
    raise AttributeError(f"module 'pi_memory.prompt' has no attribute {name!r}")

__all__ = ["POLICY_COMPACT", "POLICY_FULL", "Part", "SessionContext", "blocks_text", "build_context",
           "frozen_is_reusable", "memory_part", "policy_text", "recent_failures", "run_parts", "run_texts",
           "standing_text"]
