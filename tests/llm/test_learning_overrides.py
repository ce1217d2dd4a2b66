"""``llmModelOverride`` / ``llmThinkingOverride``: pi-hermes-memory's names for the learning jobs' model."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from pi_memory.llm import LLMConfigError
from pi_memory.llm.config import ANTHROPIC_THINKING_BUDGET, LLMSpec, build_chat_model, learning_overrides


@pytest.fixture
def agent(tmp_path, monkeypatch, server):
    adir = tmp_path / "agent"
    adir.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(adir))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (adir / "models.json").write_text(json.dumps({"providers": {
        "local": {"api": "openai-completions", "baseUrl": server.base_url, "apiKey": "sk-local",
                  "models": [{"id": "deepseek/flash", "reasoning": True}, {"id": "plain", "reasoning": False}]},
        "claude": {"api": "anthropic-messages", "baseUrl": server.root_url, "apiKey": "sk-ant",
                   "models": [{"id": "claude-test", "reasoning": True}]},
    }}))
    return adir


class Answer(BaseModel):
    ok: bool


def test_model_override_is_from_pi_for_the_learning_jobs(agent):
    spec, notes = learning_overrides(None, "local/deepseek/flash", None, agent)
    assert (spec.provider, spec.model, spec.source) == ("openai-compatible", "deepseek/flash",
                                                        "llmModelOverride=local/deepseek/flash")
    assert spec.reasoning_effort is None  # omitted thinking with a model override means off
    assert notes == ["llmThinkingOverride off: OpenAI-compatible servers have no common way to turn reasoning "
                     "off; deepseek/flash keeps its default"]


@pytest.mark.parametrize(("level", "sent", "noted"), [
    ("minimal", "minimal", False), ("low", "low", False), ("medium", "medium", False), ("high", "high", False),
    ("xhigh", "high", True),
])
def test_thinking_levels_on_openai_compatible(agent, server, level, sent, noted):
    spec, notes = learning_overrides(None, "local/deepseek/flash", level, agent)
    assert spec.reasoning_effort == sent
    assert bool(notes) is noted
    server.script({"text": '{"ok": true}'})
    build_chat_model(spec, sleep=lambda s: None).complete("hi", max_tokens=20)
    assert server.requests[-1].body["reasoning_effort"] == sent


def test_thinking_off_sends_no_reasoning_parameter(agent, server):
    spec, _ = learning_overrides(None, "local/plain", "off", agent)
    build_chat_model(spec, sleep=lambda s: None).complete("hi", max_tokens=20)
    assert "reasoning_effort" not in server.requests[-1].body


def test_thinking_on_a_model_that_does_not_reason_is_refused_with_a_note(agent):
    spec, notes = learning_overrides(None, "local/plain", "high", agent)
    assert spec.reasoning_effort is None
    assert notes == ["llmThinkingOverride high ignored: plain is not a reasoning model (models.json reasoning: "
                     "false)"]


def test_thinking_on_anthropic_uses_a_budget_and_prompt_json(agent, server):
    spec, notes = learning_overrides(None, "claude/claude-test", "medium", agent)
    assert (spec.thinking_budget, spec.json_mode) == (ANTHROPIC_THINKING_BUDGET["medium"], "prompt")
    assert notes and "cannot force a tool call" in notes[0]
    build_chat_model(spec, sleep=lambda s: None).complete("hi", max_tokens=100, temperature=0.0)
    body = server.requests[-1].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["max_tokens"] == 100 + 8192 and "temperature" not in body and "tool_choice" not in body


def test_thinking_override_applies_to_the_llm_block_model_too(agent):
    base = LLMSpec(provider="openai-compatible", model="m", base_url="http://127.0.0.1:1/v1", api_key="k")
    spec, notes = learning_overrides(base, None, "low", agent)
    assert (spec.model, spec.reasoning_effort, notes) == ("m", "low", [])
    assert learning_overrides(base, None, None, agent) == (base, [])
    assert learning_overrides(None, None, "high", agent) == (None, [])


@pytest.mark.parametrize(("value", "words"), [
    ("deepseek-v4-flash", "must be provider/model"),
    ("openrouter/deepseek/deepseek-v4-flash", "not defined in"),
    ("/plain", "must be provider/model"),
])
def test_a_model_override_that_cannot_be_used_says_why(agent, value, words):
    with pytest.raises(LLMConfigError, match=words):
        learning_overrides(None, value, None, agent)


def write_settings(agent, block):
    (agent / "settings.json").write_text(json.dumps({"pi-memory": block}))


def test_learning_status_names_the_override_and_its_note(agent, tmp_path):
    from pi_memory.runtime import open_memory

    write_settings(agent, {"llmModelOverride": "local/deepseek/flash", "llmThinkingOverride": "xhigh"})
    model, status = open_memory(tmp_path).learning_model("review")
    assert model is not None and model.model == "deepseek/flash"
    assert status == ("learning on: deepseek/flash (from llmModelOverride=local/deepseek/flash); "
                      "llmThinkingOverride xhigh: OpenAI-compatible reasoning_effort stops at high; high is sent")


def test_learning_status_says_a_builtin_provider_cannot_be_used(agent, tmp_path):
    from pi_memory.runtime import open_memory

    write_settings(agent, {"llmModelOverride": "openrouter/deepseek/deepseek-v4-flash"})
    model, status = open_memory(tmp_path).learning_model("review")
    assert model is None
    assert status.startswith("no model for learning jobs: pi provider 'openrouter' is not defined in")


@pytest.mark.parametrize("value", ["max", "OFF", 3])
def test_an_unknown_thinking_level_is_a_settings_error(agent, tmp_path, value):
    from pi_memory.config import SettingsError, load_settings

    write_settings(agent, {"llmThinkingOverride": value})
    with pytest.raises(SettingsError, match="llmThinkingOverride"):
        load_settings(tmp_path)
