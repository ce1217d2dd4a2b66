"""Developer tools shipped with pi-memory (used by the demo and the end-to-end tests)."""

from pi_memory.devtools.scripted_llm import ScriptedLLM, prompt_of, system_prompt_of, tool_results_of

__all__ = ["ScriptedLLM", "prompt_of", "system_prompt_of", "tool_results_of"]
