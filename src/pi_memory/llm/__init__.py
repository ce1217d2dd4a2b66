"""Chat-model providers for capture and extraction: OpenAI-compatible endpoints and Anthropic.

Typical use::

    from pi_memory.llm import resolve_chat_model

    model, status = resolve_chat_model()          # status: "capture on: ..." / "capture off: ..."
    if model is not None:
        facts, completion = model.complete_json(turn_text, Facts, system=PROMPT, max_tokens=800)
        print(completion.usage.input_tokens, completion.usage.cost_usd, model.usage_totals)

Dependencies: ``openai`` and ``anthropic`` are normal dependencies of pi-memory, not an extra. They are pure
Python (plus the small ``jiter`` wheel), share ``httpx2`` / ``pydantic`` / ``anyio`` with ``mcp``, and capture
is a headline feature that should work as soon as a model is configured, without a second install step.
Nothing here imports either SDK until a model is built (importing ``anthropic`` takes about a second), so the
CLI and the pi bridge start as fast as before. If an SDK is missing anyway, building that model raises
:class:`LLMUnavailableError` and :func:`resolve_chat_model` reports ``capture off: ...`` with the pip command. See ``base.py`` (shapes, retries, JSON mode), ``config.py`` (settings and pi's models.json) and
``errors.py`` (what can go wrong).
"""

from pi_memory.llm.base import (
    ChatModel,
    Completion,
    Messages,
    Price,
    PriceTier,
    RawReply,
    Usage,
    UsageTotals,
    parse_json_reply,
)
from pi_memory.llm.config import (
    LLMSettings,
    LLMSpec,
    build_chat_model,
    load_llm_spec,
    resolve_chat_model,
    resolve_value,
)
from pi_memory.llm.errors import (
    LLMAuthError,
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMRequestError,
    LLMServerError,
    LLMTimeoutError,
    LLMUnavailableError,
    MalformedReplyError,
)


def __getattr__(name: str):
    # The provider classes import their SDK only when instantiated, but keep their modules lazy too.
    if name == "OpenAICompatibleChatModel":
        from pi_memory.llm.openai_compatible import OpenAICompatibleChatModel

        return OpenAICompatibleChatModel
    if name == "AnthropicChatModel":
        from pi_memory.llm.anthropic_provider import AnthropicChatModel

        return AnthropicChatModel
    raise AttributeError(f"module 'pi_memory.llm' has no attribute {name!r}")


__all__ = [
    "AnthropicChatModel",
    "ChatModel",
    "Completion",
    "LLMAuthError",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMError",
    "LLMRateLimitError",
    "LLMRequestError",
    "LLMServerError",
    "LLMSettings",
    "LLMSpec",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "MalformedReplyError",
    "Messages",
    "OpenAICompatibleChatModel",
    "Price",
    "PriceTier",
    "RawReply",
    "Usage",
    "UsageTotals",
    "build_chat_model",
    "load_llm_spec",
    "parse_json_reply",
    "resolve_chat_model",
    "resolve_value",
]
