"""Anthropic provider against a local server speaking the Messages API shape (``POST /v1/messages``)."""

from __future__ import annotations

import time

import pytest
from pydantic import BaseModel

from pi_memory.llm import (
    AnthropicChatModel,
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    MalformedReplyError,
    Price,
)


class Decision(BaseModel):
    action: str
    memory_id: int | None = None


def make(server, **kw) -> AnthropicChatModel:
    kw.setdefault("sleep", lambda s: None)
    kw.setdefault("api_key", "sk-ant-local")
    return AnthropicChatModel("claude-test", base_url=server.root_url, **kw)


def test_plain_completion(server) -> None:
    server.script({"text": "Hello from Claude", "input_tokens": 1_000, "output_tokens": 60})
    model = make(server, price=Price(1.0, 5.0))
    c = model.complete("hi", system="be brief", max_tokens=64)
    assert c.text == "Hello from Claude" and c.model == "claude-test" and c.stop_reason == "end_turn"
    assert (c.usage.input_tokens, c.usage.output_tokens) == (1_000, 60)
    assert c.usage.cost_usd == pytest.approx(0.001 + 0.0003)
    req = server.requests[0]
    assert req.path == "/v1/messages"
    assert req.headers["authorization"] == "Bearer sk-ant-local" and "anthropic-version" in req.headers
    assert req.body["system"] == "be brief" and req.body["max_tokens"] == 64
    assert req.body["messages"] == [{"role": "user", "content": "hi"}]
    assert "temperature" not in req.body and "tools" not in req.body
    assert model.usage_totals.calls == 1 and model.usage_totals.cost_usd == pytest.approx(0.0013)


def test_temperature_only_when_supported(server) -> None:
    make(server, send_temperature=True).complete("hi", max_tokens=5, temperature=0.2)
    assert server.requests[0].body["temperature"] == 0.2


def test_bearer_auth_token(server) -> None:
    AnthropicChatModel("claude-test", base_url=server.root_url, auth_token="tok-123").complete("hi", max_tokens=5)
    assert server.requests[0].headers["authorization"] == "Bearer tok-123"


def test_json_through_forced_tool_use(server) -> None:
    server.script({"tool_input": {"action": "UPDATE", "memory_id": 3}})
    decision, c = make(server).complete_json("decide", Decision, system="You curate memories.", max_tokens=200)
    assert decision == Decision(action="UPDATE", memory_id=3) and c.stop_reason == "tool_use"
    body = server.requests[0].body
    assert body["tool_choice"] == {"type": "tool", "name": "Decision"}
    assert body["tools"][0]["name"] == "Decision"
    assert body["tools"][0]["input_schema"]["required"] == ["action"]
    assert body["system"].startswith("You curate memories.") and "Decision" in body["system"]


def test_tool_input_invalid_then_valid(server) -> None:
    server.script({"tool_input": {"memory_id": "seven"}}, {"tool_input": {"action": "NOOP"}})
    model = make(server)
    decision, c = model.complete_json("decide", Decision, max_tokens=200)
    assert decision.action == "NOOP" and c.attempts == 2
    retry = server.requests[1].body["messages"]
    assert retry[-2]["role"] == "assistant" and '"seven"' in retry[-2]["content"]
    assert "action" in retry[-1]["content"] and "does not match the schema" in retry[-1]["content"]
    assert model.usage_totals.malformed_replies == 1


def test_text_reply_in_prompt_mode(server) -> None:
    server.script({"text": 'Here: {"action": "ADD"}'})
    decision, _ = make(server, json_mode="prompt").complete_json("decide", Decision, max_tokens=100)
    assert decision.action == "ADD"
    body = server.requests[0].body
    assert "tools" not in body and "JSON Schema" in body["system"]


def test_malformed_every_time(server) -> None:
    server.script(*[{"text": "I cannot decide."}] * 3)
    with pytest.raises(MalformedReplyError) as info:
        make(server, json_mode="prompt", json_retries=1).complete_json("decide", Decision, max_tokens=100)
    assert info.value.attempts == 2 and len(server.requests) == 2


def test_overloaded_then_ok_is_retried(server, no_sleep) -> None:
    server.script({"status": 529, "error": "Overloaded"}, {"status": 500}, {"text": "done"})
    model = make(server, sleep=no_sleep.append)
    assert model.complete("hi", max_tokens=5).text == "done"
    assert len(server.requests) == 3 and len(no_sleep) == 2


def test_bad_request_is_not_retried(server) -> None:
    server.script({"status": 400, "error": "max_tokens: too large"})
    with pytest.raises(LLMError, match="too large") as info:
        make(server).complete("hi", max_tokens=10**9)
    assert not info.value.transient and len(server.requests) == 1


def test_dead_server_and_timeout(server, closed_port_url) -> None:
    root = closed_port_url.removesuffix("/v1")
    with pytest.raises(LLMConnectionError, match="refused the connection"):
        AnthropicChatModel("c", base_url=root, api_key="k", max_retries=0).complete("hi", max_tokens=5)
    server.script({"delay_s": 3.0})
    start = time.monotonic()
    with pytest.raises(LLMTimeoutError):
        make(server, timeout_s=0.4, max_retries=0).complete("hi", max_tokens=5)
    assert time.monotonic() - start < 2.0


def test_a_server_that_is_not_the_messages_api_is_an_error(server) -> None:
    server.script({"raw": {"hello": "nope"}}, {"status": 404, "error": "no such route"})
    with pytest.raises(LLMError, match="not with a Messages API reply"):
        make(server).complete("hi", max_tokens=5)
    with pytest.raises(LLMError, match="has no /v1"):
        make(server).complete("hi", max_tokens=5)
