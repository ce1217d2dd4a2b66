"""Chat models behind Anthropic's Messages API (``POST {base_url}/v1/messages``), through the ``anthropic`` SDK.

``base_url`` is the host root without ``/v1`` (``https://api.anthropic.com``, pi's convention too); it also
serves Anthropic-compatible gateways.

JSON mode (``json_mode``):

* ``"tool"`` (default): the schema becomes the ``input_schema`` of a single tool and ``tool_choice`` forces
  the model to call it, so the reply is the tool's ``input`` object. This is the most reliable way to get
  structured output from Claude models and from gateways that speak the Messages API, and it needs no
  assistant prefill (which newer Claude models refuse). A reply with no tool call falls back to its text.
* ``"prompt"``: only the system-prompt instruction, for gateways that do not support tools.

Temperature: the current Messages API and SDK no longer take ``temperature``. It is sent (as an extra body
field) only when ``send_temperature=True`` -- pi's ``compat.supportsTemperature: true`` -- for gateways and
older models that honour it; otherwise the server's default sampling applies.

Authentication: ``api_key`` or ``auth_token`` (pi's ``authHeader: true`` maps to the latter); the 2.x SDK
sends either one as ``Authorization: Bearer``. With neither and no ``base_url``, ``$ANTHROPIC_API_KEY`` is
read; the SDK's own credential-file discovery is never triggered.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel

from pi_memory.llm.base import RawReply, reported_tokens, schema_name
from pi_memory.llm.errors import LLMConfigError, LLMRequestError
from pi_memory.llm.sdk import SdkChatModel, check_base_url, import_sdk, resolve_api_key

AnthropicJsonMode = Literal["tool", "prompt"]
ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com"


class AnthropicChatModel(SdkChatModel):
    """See the module docstring."""

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        auth_token: str | None = None,
        headers: dict[str, str] | None = None,
        json_mode: AnthropicJsonMode = "tool",
        send_temperature: bool = False,
        thinking_budget: int | None = None,
        **kwargs: Any,
    ) -> None:
        anthropic = import_sdk("anthropic", "anthropic>=2.10", "Anthropic models")
        if json_mode not in ("tool", "prompt"):
            raise LLMConfigError(f"jsonMode {json_mode!r} is not one of tool, prompt (for Anthropic models).")
        base_url = base_url.rstrip("/") if base_url else None
        check_base_url(base_url)
        super().__init__(model, where=base_url or ANTHROPIC_DEFAULT_BASE_URL, **kwargs)
        if not auth_token:
            api_key = resolve_api_key(api_key, base_url, "ANTHROPIC_API_KEY",
                                      "No API key for Anthropic: set $ANTHROPIC_API_KEY, or apiKey in the pi-memory "
                                      "llm settings, or the apiKey of the pi models.json provider.")
        self.json_mode = json_mode
        self.send_temperature = send_temperature
        if thinking_budget and json_mode == "tool":
            raise LLMConfigError("Anthropic extended thinking cannot force a tool call; use jsonMode prompt.")
        self.thinking_budget = thinking_budget  # extended thinking (llmThinkingOverride)
        self._sdk = anthropic
        # Exactly one of api_key / auth_token is set here, so the SDK never walks its own credential chain.
        self._client = anthropic.Anthropic(
            api_key=api_key or None,
            auth_token=None if api_key else auth_token,
            base_url=base_url or ANTHROPIC_DEFAULT_BASE_URL,
            timeout=self.timeout_s,
            max_retries=0,  # ChatModel owns retries (see base.py)
            default_headers=headers or None,
        )

    def _json_system(self, system: str | None, schema: type[BaseModel]) -> str:
        if self.json_mode != "tool":
            return super()._json_system(system, schema)
        instruction = (
            f"Answer by calling the tool {schema_name(schema)} exactly once; its input is your whole answer "
            "and must follow the tool's input schema."
        )
        return f"{system}\n\n{instruction}" if system else instruction

    def _output_cap(self, max_tokens: int) -> int:
        return max_tokens + (self.thinking_budget or 0)  # _send asks for the thinking budget on top

    def _send(
        self,
        messages: list[dict[str, str]],
        *,
        system: str | None,
        max_tokens: int,
        temperature: float | None,
        json_schema: type[BaseModel] | None,
    ) -> RawReply:
        kwargs: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "messages": messages}
        if system:
            kwargs["system"] = system
        if temperature is not None and self.send_temperature and not self.thinking_budget:
            kwargs["extra_body"] = {"temperature": temperature}  # thinking takes no temperature
        if self.thinking_budget:
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
            kwargs["max_tokens"] = max_tokens + self.thinking_budget  # budget_tokens must stay below max_tokens
        tool = schema_name(json_schema) if json_schema is not None else None
        if json_schema is not None and self.json_mode == "tool":
            kwargs["tools"] = [{
                "name": tool,
                "description": f"Record the answer as one {json_schema.__name__} object.",
                "input_schema": json_schema.model_json_schema(),
            }]
            kwargs["tool_choice"] = {"type": "tool", "name": tool}
        resp = self._client.messages.create(**kwargs)
        content = getattr(resp, "content", None)
        if not isinstance(content, list):
            raise LLMRequestError(
                f"The server at {self.where} answered, but not with a Messages API reply "
                f"(got {type(resp).__name__} without content). Check that baseUrl is the API root "
                "(e.g. https://api.anthropic.com, without /v1)."
            )
        texts: list[str] = []
        tool_input: Any = None
        for block in content:
            kind = getattr(block, "type", None)
            if kind == "tool_use" and tool is not None and getattr(block, "name", None) == tool:
                tool_input = getattr(block, "input", None)
            elif kind == "text":
                texts.append(getattr(block, "text", "") or "")
        text = json.dumps(tool_input, ensure_ascii=False) if tool_input is not None else "".join(texts)
        usage = getattr(resp, "usage", None)
        return RawReply(
            text=text,
            input_tokens=reported_tokens(getattr(usage, "input_tokens", None)),
            output_tokens=reported_tokens(getattr(usage, "output_tokens", None)),
            model=str(getattr(resp, "model", None) or self.model),
            stop_reason=getattr(resp, "stop_reason", None),
        )
