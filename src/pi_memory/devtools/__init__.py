"""Developer tools shipped with pi-memory (used by the demo and the end-to-end tests).

The names below load on first use, so ``python -m pi_memory.devtools.scripted_llm`` runs the module once
(importing it here at package import made runpy warn that it was already in ``sys.modules``)."""

from __future__ import annotations

__all__ = ["ScriptedLLM", "prompt_of", "system_prompt_of", "tool_results_of"]


def __getattr__(name: str):
    if name in __all__:
        from pi_memory.devtools import scripted_llm

        return getattr(scripted_llm, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
