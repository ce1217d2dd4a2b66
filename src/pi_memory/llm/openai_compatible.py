"""Chat models behind an OpenAI-compatible ``/chat/completions`` endpoint, through the official ``openai`` SDK.

Covers OpenAI itself, Ollama (``http://127.0.0.1:11434/v1``), vLLM, llama.cpp's server, LM Studio, OpenRouter
and proxies. ``base_url`` includes the version segment (``…/v1``); the SDK appends ``/chat/completions``.

JSON mode (``json_mode``):

* ``"json_object"`` (default): ``response_format={"type": "json_object"}`` -- supported by OpenAI, Ollama,
  vLLM, llama.cpp and most proxies; the schema itself travels in the system prompt.
* ``"json_schema"``: ``response_format={"type": "json_schema", ...}`` with the pydantic schema (``strict``
  off), for servers that constrain decoding to a schema (Ollama >= 0.5, vLLM, OpenAI).
* ``"prompt"``: no ``response_format`` at all, for servers that reject it; only the instruction is sent.

Whatever the mode, the reply is parsed and validated by :meth:`ChatModel.complete_json`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

from pi_memory.llm.base import RawReply, reported_tokens, schema_name
from pi_memory.llm.errors import LLMConfigError, LLMRequestError
from pi_memory.llm.sdk import SdkChatModel, check_base_url, import_sdk, resolve_api_key

OpenAIJsonMode = Literal["json_object", "json_schema", "prompt"]
MaxTokensField = Literal["max_tokens", "max_completion_tokens"]
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAICompatibleChatModel(SdkChatModel):
    """See the module docstring. ``api_key=None`` with no ``base_url`` reads ``$OPENAI_API_KEY``."""

    provider = "openai-compatible"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        headers: dict[str, str] | None = None,
        json_mode: OpenAIJsonMode = "json_object",
        max_tokens_field: MaxTokensField = "max_tokens",
        send_temperature: bool = True,
        reasoning_effort: str | None = None,
        **kwargs: Any,
    ) -> None:
        openai = import_sdk("openai", "openai>=3.50", "OpenAI-compatible models")
        if json_mode not in ("json_object", "json_schema", "prompt"):
            raise LLMConfigError(f"jsonMode {json_mode!r} is not one of json_object, json_schema, prompt.")
        if max_tokens_field not in ("max_tokens", "max_completion_tokens"):
            raise LLMConfigError(f"maxTokensField {max_tokens_field!r} is not max_tokens or max_completion_tokens.")
        base_url = base_url.rstrip("/") if base_url else None
        check_base_url(base_url)
        super().__init__(model, where=base_url or OPENAI_DEFAULT_BASE_URL, **kwargs)
        api_key = resolve_api_key(api_key, base_url, "OPENAI_API_KEY",
                                  "No API key for OpenAI: set $OPENAI_API_KEY, or apiKey in the pi-memory llm "
                                  "settings, or set baseUrl to a local OpenAI-compatible server.")
        self.json_mode = json_mode
        self.max_tokens_field = max_tokens_field
        self.send_temperature = send_temperature
        self.reasoning_effort = reasoning_effort  # sent as ``reasoning_effort`` (llmThinkingOverride)
        self._sdk = openai
        self._client = openai.OpenAI(
            api_key=api_key,
            base_url=base_url or OPENAI_DEFAULT_BASE_URL,
            timeout=self.timeout_s,
            max_retries=0,  # ChatModel owns retries (see base.py)
            default_headers=headers or None,
        )

    def _send(
        self,
        messages: list[dict[str, str]],
        *,
        system: str | None,
        max_tokens: int,
        temperature: float | None,
        json_schema: type[BaseModel] | None,
    ) -> RawReply:
        payload: list[dict[str, str]] = [{"role": "system", "content": system}] if system else []
        payload.extend(messages)
        kwargs: dict[str, Any] = {"model": self.model, "messages": payload, self.max_tokens_field: max_tokens}
        if temperature is not None and self.send_temperature:
            kwargs["temperature"] = temperature
        if self.reasoning_effort:
            kwargs["extra_body"] = {"reasoning_effort": self.reasoning_effort}
        if json_schema is not None and self.json_mode == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        elif json_schema is not None and self.json_mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": schema_name(json_schema),
                    "schema": json_schema.model_json_schema(),
                    "strict": False,
                },
            }
        resp = self._client.chat.completions.create(**kwargs)
        if isinstance(resp, str | bytes):  # the SDK hands back a body that is not JSON as it came
            raise LLMRequestError(
                f"The server at {self.where} answered, but not with a chat completion: {not_json(resp)}. Check "
                "that baseUrl points at an OpenAI-compatible API (…/v1)."
            )
        choices = getattr(resp, "choices", None)
        if choices is None:
            keys = sorted(set(getattr(resp, "model_fields_set", None) or ()) | set(getattr(resp, "model_extra", None)
                                                                                   or {}))
            held = f"its fields: {', '.join(keys)}" if keys else "an empty object"
            raise LLMRequestError(
                f"The server at {self.where} answered, but not with a chat completion: its reply has no \"choices\" "
                f"({held}). Check that baseUrl points at an OpenAI-compatible API (…/v1)."
            )
        text, finish = "", None
        if choices:
            first = choices[0]
            text = getattr(first.message, "content", None) or ""
            finish = getattr(first, "finish_reason", None)
        usage = getattr(resp, "usage", None)
        return RawReply(
            text=text,
            input_tokens=reported_tokens(getattr(usage, "prompt_tokens", None)),
            output_tokens=reported_tokens(getattr(usage, "completion_tokens", None)),
            model=str(getattr(resp, "model", None) or self.model),
            stop_reason=finish,
        )


_PAGE = re.compile(r"\s*(<!doctype\s+html|<html|<head|<body)", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
QUOTED_CHARS = 80


def not_json(body: str | bytes) -> str:
    """A reply body that is not JSON, as a clause: an HTML page or text, quoting its first words (at most
    :data:`QUOTED_CHARS` characters, credentials redacted, control characters as ``\\xNN``)."""
    from pi_memory.safety import redact  # here: the scanners' import is not every caller's

    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    words = " ".join(text.split())
    if not words:
        return "its reply was empty, not JSON"
    shown = redact(words[:QUOTED_CHARS * 5])  # redacted before the cut, so no half key is left
    head = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", shown[:QUOTED_CHARS])
    cut = "…" if len(shown) > QUOTED_CHARS else ""
    kind = "an HTML page" if _PAGE.match(text) else "text"
    return f"its reply is {kind}, not JSON (it begins \"{head}{cut}\")"
