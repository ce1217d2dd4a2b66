"""The scripted Anthropic Messages and OpenAI Responses servers: the script read from the typed prompt only,
and the SSE streams the real clients parse (checked here with httpx; the e2e tests drive the real CLIs)."""

from __future__ import annotations

import json

import httpx

from pi_memory.devtools.scripted_hosts import (
    ScriptedAnthropic,
    ScriptedResponses,
    anthropic_decide,
    responses_decide,
)

ADD = '[tool:mcp__pi-memory__memory_add] {"target": "memory", "content": "x"}'


def test_anthropic_script_follows_the_typed_prompt_not_injected_context():
    tools = [{"name": "mcp__pi-memory__memory_add"}]
    body = {"tools": tools, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "<system-reminder>\n" + ADD + "</system-reminder>"},
                                     {"type": "text", "text": "hello"}]},
        {"role": "system", "content": "SessionStart hook additional context: " + ADD}]}
    assert anthropic_decide(body) == {"text": "Fake answer to: hello"}
    body["messages"][0]["content"][1]["text"] = ADD
    assert anthropic_decide(body) == {"tool": ("mcp__pi-memory__memory_add", {"target": "memory", "content": "x"})}
    body["messages"] += [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "mcp__pi-memory__memory_add"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Saved."}]},
        {"role": "system", "content": "# MCP Server Instructions"}]
    assert anthropic_decide(body) == {"text": "The tool finished. Its output was:\nSaved.\nDone."}


def test_responses_script_names_the_namespace_of_mcp_tools():
    body = {"tools": [{"type": "namespace", "name": "mcp__pi_memory", "tools": [{"name": "memory_add"}]}],
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                        "text": "<environment_context>x"}]},
                      {"type": "message", "role": "user", "content": [
                          {"type": "input_text", "text": '[tool:memory_add] {"target": "user", "content": "y"}'}]},
                      {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "ctx"}]}]}
    assert responses_decide(body) == {"tool": ("memory_add", {"target": "user", "content": "y"})}
    with ScriptedResponses() as server:
        stream = httpx.post(server.base_url + "/responses", json=body, timeout=10).text
    events = [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: ")]
    assert [e["type"] for e in events] == ["response.created", "response.output_item.added",
                                           "response.output_item.done", "response.completed"]
    item = events[-1]["response"]["output"][0]
    assert (item["type"], item["namespace"], item["name"]) == ("function_call", "mcp__pi_memory", "memory_add")


def test_anthropic_stream_and_count_tokens():
    body = {"stream": True, "tools": [{"name": "mcp__pi-memory__memory_add"}],
            "messages": [{"role": "user", "content": ADD}]}
    with ScriptedAnthropic() as server:
        stream = httpx.post(server.root_url + "/v1/messages?beta=true", json=body, timeout=10).text
        count = httpx.post(server.root_url + "/v1/messages/count_tokens", json=body, timeout=10).json()
        assert len(server.message_requests) == 1  # count_tokens is not a model request
    names = [line[7:] for line in stream.splitlines() if line.startswith("event: ")]
    assert names == ["message_start", "content_block_start", "content_block_delta", "content_block_stop",
                     "message_delta", "message_stop"]
    assert '"partial_json": "{\\"target\\": \\"memory\\", \\"content\\": \\"x\\"}"' in stream
    assert count["input_tokens"] > 0
