"""OpenAI-compatible provider against scripted servers on 127.0.0.1 (never the internet)."""

from __future__ import annotations

import json
import time

import pytest
from pydantic import BaseModel

from pi_memory.devtools.scripted_llm import Reply, ScriptedLLM
from pi_memory.llm import (
    LLMAuthError,
    LLMConnectionError,
    LLMError,
    LLMRequestError,
    LLMTimeoutError,
    MalformedReplyError,
    OpenAICompatibleChatModel,
    Price,
    UsageTotals,
    parse_json_reply,
)


class Fact(BaseModel):
    subject: str
    confidence: float


GOOD = json.dumps({"subject": "builds with make", "confidence": 0.9})


def make(server, **kw) -> OpenAICompatibleChatModel:
    kw.setdefault("sleep", lambda s: None)
    return OpenAICompatibleChatModel("test-model", base_url=server.base_url, **kw)


def test_plain_completion_counts_usage_and_cost(server) -> None:
    server.script({"text": "hello there", "input_tokens": 1000, "output_tokens": 500})
    model = make(server, price=Price(input_per_mtok=2.0, output_per_mtok=10.0), api_key="sk-local")
    c = model.complete("hi", system="be brief", max_tokens=512)
    assert c.text == "hello there" and c.model == "test-model" and c.stop_reason == "stop"
    assert (c.usage.input_tokens, c.usage.output_tokens) == (1000, 500)
    assert c.usage.cost_usd == pytest.approx((1000 * 2 + 500 * 10) / 1e6)
    assert c.latency_ms > 0 and c.attempts == 1
    req = server.requests[0]
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-local"
    assert req.body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert req.body["max_tokens"] == 512 and req.body["temperature"] == 0
    assert "response_format" not in req.body
    model.complete([{"role": "user", "content": "again"}], max_tokens=16)
    t = model.usage_totals
    assert (t.calls, t.input_tokens, t.output_tokens, t.failed_calls) == (2, 1011, 507, 0)
    assert t.cost_usd == pytest.approx(0.007 + (11 * 2 + 7 * 10) / 1e6)


def test_cost_is_none_without_price(server) -> None:
    model = make(server)
    assert model.complete("hi", max_tokens=5).usage.cost_usd is None
    assert model.usage_totals.cost_usd is None


def test_works_with_the_shared_scripted_llm() -> None:
    with ScriptedLLM(responder=lambda messages, tools: Reply(text=GOOD)) as llm:
        model = OpenAICompatibleChatModel("fake-model", base_url=llm.base_url)
        assert model.complete("hello", max_tokens=20).text == GOOD
        fact, c = model.complete_json("extract", Fact, max_tokens=100)
        assert fact.subject == "builds with make" and c.usage.output_tokens == 12
        assert llm.chat_requests[-1]["response_format"] == {"type": "json_object"}


def test_json_mode_valid(server) -> None:
    server.script({"text": GOOD})
    model = make(server)
    fact, c = model.complete_json("The project builds with make.", Fact, system="Extract one fact.", max_tokens=200)
    assert fact == Fact(subject="builds with make", confidence=0.9)
    assert c.attempts == 1 and c.text == GOOD
    body = server.requests[0].body
    assert body["response_format"] == {"type": "json_object"}
    system = body["messages"][0]["content"]
    assert system.startswith("Extract one fact.") and "JSON Schema" in system and '"confidence"' in system


def test_json_schema_and_prompt_modes(server) -> None:
    server.script({"text": GOOD}, {"text": GOOD})
    make(server, json_mode="json_schema").complete_json("x", Fact, max_tokens=100)
    rf = server.requests[0].body["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["name"] == "Fact"
    assert rf["json_schema"]["schema"]["required"] == ["subject", "confidence"]
    make(server, json_mode="prompt").complete_json("x", Fact, max_tokens=100)
    assert "response_format" not in server.requests[1].body


def test_malformed_json_then_valid_on_retry(server) -> None:
    server.script({"text": "Sure! The fact is that it builds with make."}, {"text": f"```json\n{GOOD}\n```"})
    model = make(server)
    fact, c = model.complete_json("extract", Fact, max_tokens=100)
    assert fact.subject == "builds with make"
    assert c.attempts == 2 and c.usage.input_tokens == 22 and c.usage.output_tokens == 14
    retry = server.requests[1].body["messages"]
    assert retry[-2] == {"role": "assistant", "content": "Sure! The fact is that it builds with make."}
    assert retry[-1]["role"] == "user" and "no JSON object" in retry[-1]["content"]
    t = model.usage_totals
    assert (t.calls, t.malformed_replies, t.failed_calls) == (2, 1, 0)


def test_schema_violation_is_fed_back(server) -> None:
    server.script({"text": '{"subject": "x", "confidence": "very"}'}, {"text": GOOD})
    make(server).complete_json("extract", Fact, max_tokens=100)
    feedback = server.requests[1].body["messages"][-1]["content"]
    assert "does not match the schema" in feedback and "confidence" in feedback


def test_malformed_every_time_raises_with_count(server) -> None:
    server.script(*[{"text": "{not json"}] * 5)
    model = make(server, json_retries=2)
    with pytest.raises(MalformedReplyError) as info:
        model.complete_json("extract", Fact, max_tokens=100)
    err = info.value
    assert err.attempts == 3 and len(server.requests) == 3
    assert "3 attempt" in str(err) and "Fact" in str(err) and "not valid JSON" in err.last_error
    assert err.last_text == "{not json"
    assert model.usage_totals.malformed_replies == 3
    # a per-call override of the retry budget
    server.requests.clear()
    with pytest.raises(MalformedReplyError) as info:
        model.complete_json("extract", Fact, max_tokens=100, retries=0)
    assert info.value.attempts == 1 and len(server.requests) == 1


def test_truncated_reply_says_raise_max_tokens(server) -> None:
    server.script({"text": '{"subject": "bui', "finish": "length"})
    with pytest.raises(MalformedReplyError, match="max_tokens=8"):
        make(server).complete_json("x", Fact, max_tokens=8, retries=0)


def test_server_error_then_success_is_retried(server, no_sleep) -> None:
    server.script({"status": 500, "error": "model crashed"}, {"status": 503}, {"text": "fine"})
    model = make(server, sleep=no_sleep.append)
    c = model.complete("hi", max_tokens=16)
    assert c.text == "fine" and len(server.requests) == 3
    assert len(no_sleep) == 2 and 0.3 <= no_sleep[0] <= 0.7 and no_sleep[1] > no_sleep[0]
    assert model.usage_totals == UsageTotals(calls=1, input_tokens=11, output_tokens=7)


def test_retries_are_bounded(server, no_sleep) -> None:
    server.script(*[{"status": 500, "error": "still broken"}] * 5)
    model = make(server, max_retries=1, sleep=no_sleep.append)
    with pytest.raises(LLMError) as info:
        model.complete("hi", max_tokens=5)
    assert info.value.transient and info.value.status_code == 500
    assert "HTTP 500" in str(info.value) and "still broken" in str(info.value) and "2 attempts" in str(info.value)
    assert len(server.requests) == 2 and model.usage_totals.failed_calls == 1


def test_rate_limit_honours_retry_after(server, no_sleep) -> None:
    server.script({"status": 429, "headers": {"Retry-After": "3"}}, {"text": "ok"})
    make(server, sleep=no_sleep.append).complete("hi", max_tokens=5)
    assert no_sleep == [3.0]


def test_auth_error_is_not_retried(server, no_sleep) -> None:
    server.script({"status": 401, "error": "invalid api key"})
    with pytest.raises(LLMAuthError, match="apiKey") as info:
        make(server, sleep=no_sleep.append, api_key="sk-wrong").complete("hi", max_tokens=5)
    assert len(server.requests) == 1 and no_sleep == []
    assert "sk-wrong" not in str(info.value)


def test_unknown_model_is_a_request_error(server) -> None:
    server.script({"status": 404, "error": "model 'test-model' not found"})
    with pytest.raises(LLMRequestError, match="not found") as info:
        make(server).complete("hi", max_tokens=5)
    assert not info.value.transient


def test_dead_server_fails_quickly_with_a_clear_message(closed_port_url) -> None:
    model = OpenAICompatibleChatModel("m", base_url=closed_port_url, max_retries=1, backoff_base_s=0.05)
    start = time.monotonic()
    with pytest.raises(LLMConnectionError) as info:
        model.complete("hi", max_tokens=5)
    assert time.monotonic() - start < 5
    msg = str(info.value)
    assert closed_port_url in msg and "refused the connection" in msg and "llm" in msg


def test_dead_server_with_default_retries_is_still_quick(closed_port_url) -> None:
    start = time.monotonic()
    with pytest.raises(LLMConnectionError):
        OpenAICompatibleChatModel("m", base_url=closed_port_url).complete("hi", max_tokens=5)
    assert time.monotonic() - start < 5  # two backoffs of about 0.5 s and 1 s


def test_timeout_is_honoured(server) -> None:
    server.script({"delay_s": 3.0}, {"delay_s": 3.0})
    model = make(server, timeout_s=0.4, max_retries=0)
    start = time.monotonic()
    with pytest.raises(LLMTimeoutError) as info:
        model.complete("hi", max_tokens=5)
    assert time.monotonic() - start < 2.0
    assert "0.4 s" in str(info.value) and info.value.transient


def test_timeout_is_retried_once_per_retry(server, no_sleep) -> None:
    server.script({"delay_s": 2.0}, {"text": "second try"})
    c = make(server, timeout_s=0.4, max_retries=1, sleep=no_sleep.append).complete("hi", max_tokens=5)
    assert c.text == "second try" and len(server.requests) == 2


def test_max_completion_tokens_and_headers(server) -> None:
    model = make(server, max_tokens_field="max_completion_tokens", headers={"X-Team": "memory"})
    model.complete("hi", max_tokens=42, temperature=None)
    req = server.requests[0]
    assert req.body["max_completion_tokens"] == 42 and "max_tokens" not in req.body
    assert "temperature" not in req.body and req.headers["x-team"] == "memory"


def test_messages_are_checked() -> None:
    with pytest.raises(ValueError, match="system="):
        OpenAICompatibleChatModel("m", base_url="http://127.0.0.1:9/v1").complete(
            [{"role": "system", "content": "x"}], max_tokens=5
        )


def test_parse_json_reply_tolerates_think_blocks_and_prose() -> None:
    text = "<think>the user wants {json}</think>\nHere you go: " + GOOD + " Hope that helps."
    assert parse_json_reply(text, Fact).confidence == 0.9
    with pytest.raises(ValueError, match="empty"):
        parse_json_reply("<think>hmm</think>", Fact)


@pytest.mark.parametrize(("body", "held"), [
    ({"hello": "this is not a chat completion"}, "its fields: hello"),
    ({}, "an empty object"),  # it said "(got ChatCompletion)": the name of the SDK's class, not what came
    ({"model": "m", "error": "busy"}, "its fields: error, model"),
])
def test_a_server_that_is_not_a_chat_api_is_an_error_saying_what_came(server, body, held) -> None:
    server.script({"raw": body})
    with pytest.raises(LLMRequestError) as caught:
        make(server).complete("hi", max_tokens=5)
    assert str(caught.value) == (f"The server at {server.base_url} answered, but not with a chat completion: its "
                                 f"reply has no \"choices\" ({held}). Check that baseUrl points at an "
                                 "OpenAI-compatible API (…/v1).")
