"""Resolving the chat model from pi-memory settings and pi's models.json / settings.json in a temp agent dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_memory.config import set_trust
from pi_memory.llm import (
    AnthropicChatModel,
    LLMConfigError,
    OpenAICompatibleChatModel,
    load_llm_spec,
    resolve_chat_model,
    resolve_value,
)


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    adir = tmp_path / "agent"
    adir.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(adir))
    return adir


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "project"
    p.mkdir()
    return p


def write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def models_json(agent: Path, **providers: dict) -> None:
    write(agent / "models.json", {"providers": providers})


def pi_settings(agent: Path, **data) -> None:
    write(agent / "settings.json", data)


def resolve(project: Path):
    return resolve_chat_model(cwd=project)


def test_nothing_configured_means_capture_off(agent: Path, project: Path) -> None:
    model, status = resolve(project)
    assert model is None
    assert status.startswith("capture off: no model configured") and "pi-memory" in status and "fromPi" in status


def test_direct_openai_compatible_settings(agent: Path, project: Path, server) -> None:
    pi_settings(agent, **{"pi-memory": {"llm": {
        "provider": "openai-compatible", "baseUrl": server.base_url, "model": "qwen2.5:7b",
        "apiKey": "sk-literal", "timeoutSeconds": 5, "maxRetries": 0, "jsonRetries": 1,
        "jsonMode": "json_schema", "cost": {"input": 1, "output": 2}}}})
    model, status = resolve(project)
    assert isinstance(model, OpenAICompatibleChatModel)
    assert status.startswith("capture on: openai-compatible model 'qwen2.5:7b' at " + server.base_url)
    assert (model.timeout_s, model.max_retries, model.json_retries, model.json_mode) == (5, 0, 1, "json_schema")
    c = model.complete("hi", max_tokens=16)
    assert c.usage.cost_usd == pytest.approx((11 * 1 + 7 * 2) / 1e6)
    assert server.requests[0].headers["authorization"] == "Bearer sk-literal"
    assert "sk-literal" not in status and "sk-literal" not in repr(model)


def test_pi_default_model_from_models_json_with_env_var_key(agent: Path, project: Path, server, monkeypatch) -> None:
    monkeypatch.setenv("MY_LOCAL_KEY", "sk-from-env")
    models_json(agent, local={
        "baseUrl": server.base_url, "api": "openai-completions", "apiKey": "MY_LOCAL_KEY",
        "headers": {"X-Org": "${MY_LOCAL_KEY}-org"},
        "models": [{"id": "small-model", "maxTokens": 2048, "cost": {"input": 3, "output": 15, "cacheRead": 0,
                                                                      "cacheWrite": 0}}]})
    pi_settings(agent, defaultProvider="local", defaultModel="small-model")
    assert load_llm_spec(project, agent)[0] is None  # pi's default model is used only when asked for
    pi_settings(agent, defaultProvider="local", defaultModel="small-model", **{"pi-memory": {"llm": {"fromPi": "default"}}})
    spec, why = load_llm_spec(project, agent)
    assert why == "" and spec is not None
    assert spec.api_key == "sk-from-env" and spec.max_output_tokens == 2048 and spec.max_tokens_field == "max_tokens"
    assert "sk-from-env" not in repr(spec)
    model, status = resolve(project)
    assert "pi's default model local/small-model" in status
    c = model.complete("hi", max_tokens=16)
    assert c.usage.cost_usd == pytest.approx((11 * 3 + 7 * 15) / 1e6)
    headers = server.requests[0].headers
    assert headers["authorization"] == "Bearer sk-from-env" and headers["x-org"] == "sk-from-env-org"


def test_api_key_literal_and_command(agent: Path, project: Path) -> None:
    models_json(agent,
                lit={"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "sk-plain-literal",
                     "models": [{"id": "m"}]},
                cmd={"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "!echo key",
                     "models": [{"id": "m"}]})
    pi_settings(agent, **{"pi-memory": {"llm": {"fromPi": "lit/m"}}})
    assert load_llm_spec(project, agent)[0].api_key == "sk-plain-literal"
    pi_settings(agent, **{"pi-memory": {"llm": {"fromPi": "cmd/m"}}})
    spec, _ = load_llm_spec(project, agent)
    assert spec.api_key == "key" and spec.source.startswith("pi-memory.llm.fromPi=cmd/m")


def test_resolve_value_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIM_TOKEN", "t0k")
    assert resolve_value("PIM_TOKEN", what="k") == "t0k"
    assert resolve_value("$PIM_TOKEN", what="k") == "t0k"
    assert resolve_value("Bearer ${PIM_TOKEN}", what="k") == "Bearer t0k"
    assert resolve_value("price$$5", what="k") == "price$5"
    assert resolve_value("$!not-a-command", what="k") == "!not-a-command"
    assert resolve_value("NOT_SET_ANYWHERE_PIM", what="k") == "NOT_SET_ANYWHERE_PIM"
    assert resolve_value("!printf 'a b'", what="k") == "a b"
    with pytest.raises(LLMConfigError, match=r"\$MISSING_PIM_VAR"):
        resolve_value("$MISSING_PIM_VAR", what="apiKey")
    with pytest.raises(LLMConfigError, match="exited with status 3"):
        resolve_value("!echo secret-out; exit 3", what="apiKey")
    with pytest.raises(LLMConfigError, match="not allowed"):
        resolve_value("!echo x", what="apiKey", allow_dynamic=False)


def test_failing_key_command_turns_capture_off(agent: Path, project: Path) -> None:
    models_json(agent, p={"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
                          "apiKey": "!echo sk-leaked; echo oops >&2; exit 1", "models": [{"id": "m"}]})
    pi_settings(agent, defaultProvider="p", defaultModel="m", **{"pi-memory": {"llm": {"fromPi": "default"}}})
    model, status = resolve(project)
    assert model is None and status.startswith("capture off:") and "oops" in status and "sk-leaked" not in status


def test_anthropic_provider_from_pi(agent: Path, project: Path, server) -> None:
    models_json(agent, proxy={
        "baseUrl": server.root_url, "api": "anthropic-messages", "apiKey": "!echo ant-key", "authHeader": True,
        "compat": {"supportsTemperature": True},
        "models": [{"id": "claude-small", "cost": {"input": 1, "output": 5, "cacheRead": 0, "cacheWrite": 0}}]})
    pi_settings(agent, defaultProvider="proxy", defaultModel="claude-small", **{"pi-memory": {"llm": {"fromPi": "default"}}})
    model, status = resolve(project)
    assert isinstance(model, AnthropicChatModel) and model.send_temperature
    assert status.startswith(f"capture on: anthropic model 'claude-small' at {server.root_url}")
    c = model.complete("hi", max_tokens=16)
    assert c.text == "ok" and c.usage.cost_usd == pytest.approx((11 + 35) / 1e6)
    assert server.requests[0].path == "/v1/messages"
    assert server.requests[0].headers["authorization"] == "Bearer ant-key"


def test_from_pi_setting_beats_pi_default_and_accepts_slashes_in_model(agent: Path, project: Path) -> None:
    models_json(agent,
                a={"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "models": [{"id": "x"}]},
                router={"baseUrl": "http://127.0.0.1:8/v1", "api": "openai-completions",
                        "models": [{"id": "meta/llama-3-8b", "compat": {"maxTokensField": "max_completion_tokens"}}]})
    pi_settings(agent, defaultProvider="a", defaultModel="x",
                **{"pi-memory": {"llm": {"fromPi": "router/meta/llama-3-8b", "timeoutSeconds": 9}}})
    spec, _ = load_llm_spec(project, agent)
    assert (spec.model, spec.base_url, spec.timeout_s) == ("meta/llama-3-8b", "http://127.0.0.1:8/v1", 9)
    assert spec.max_tokens_field == "max_completion_tokens" and spec.api_key is None


def test_builtin_pi_provider_is_not_used(agent: Path, project: Path) -> None:
    pi_settings(agent, defaultProvider="anthropic", defaultModel="claude-opus", **{"pi-memory": {"llm": {"fromPi": "default"}}})
    model, status = resolve(project)
    assert model is None and "anthropic/claude-opus" in status and "built-in" in status


@pytest.mark.parametrize(
    ("llm", "expected"),
    [
        ({"enabled": False, "provider": "anthropic", "model": "m"}, "disabled by pi-memory.llm.enabled=false"),
        ({"provider": "openai-compatible", "modle": "typo"}, "modle"),
        ({"provider": "openai-compatible"}, "needs provider"),
        ({"fromPi": "nope/m"}, "'nope' is not defined"),
        ({"fromPi": "g/m", "model": "x"}, "fromPi together with model"),
        ({"fromPi": "g/m"}, "uses api 'google-generative-ai'"),
        ({"provider": "anthropic", "model": "m", "jsonMode": "json_object"}, "does not apply to anthropic"),
        ({"provider": "openai-compatible", "model": "m", "apiKey": "$PIM_UNSET_VAR"}, "$PIM_UNSET_VAR"),
    ],
)
def test_misconfiguration_turns_capture_off_with_a_reason(agent: Path, project: Path, llm: dict, expected: str) -> None:
    models_json(agent, g={"baseUrl": "http://x", "api": "google-generative-ai", "models": [{"id": "m"}]})
    pi_settings(agent, **{"pi-memory": {"llm": llm}})
    model, status = resolve(project)
    assert model is None and status.startswith("capture off:") and expected in status


def test_invalid_models_json_is_reported(agent: Path, project: Path) -> None:
    (agent / "models.json").write_text("{oops", encoding="utf-8")
    pi_settings(agent, **{"pi-memory": {"llm": {"fromPi": "a/b"}}})
    model, status = resolve(project)
    assert model is None and "models.json is not valid JSON" in status


def test_trusted_project_settings_win_but_stay_literal(agent: Path, project: Path) -> None:
    pi_settings(agent, **{"pi-memory": {"llm": {"provider": "openai-compatible", "model": "user-model",
                                                 "baseUrl": "http://127.0.0.1:9/v1"}}})
    write(project / ".pi" / "settings.json", {"pi-memory": {"llm": {
        "provider": "openai-compatible", "model": "project-model", "baseUrl": "http://127.0.0.1:7/v1",
        "apiKey": "!echo pwned"}}})
    assert load_llm_spec(project, agent)[0].model == "user-model"  # untrusted project: ignored
    set_trust(project, True)
    model, status = resolve(project)
    assert model is None and "not allowed" in status and "project settings file" in status
    write(project / ".pi" / "settings.json", {"pi-memory": {"llm": {
        "provider": "openai-compatible", "model": "project-model", "baseUrl": "http://127.0.0.1:7/v1"}}})
    spec, _ = load_llm_spec(project, agent)
    assert spec.model == "project-model" and str(project / ".pi" / "settings.json") in spec.source


def test_openai_without_key_needs_one(agent: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    pi_settings(agent, **{"pi-memory": {"llm": {"provider": "openai-compatible", "model": "gpt-x"}}})
    model, status = resolve(project)
    assert model is None and "OPENAI_API_KEY" in status


def test_missing_sdk_turns_capture_off(agent: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "anthropic", None)  # makes `import anthropic` fail
    pi_settings(agent, **{"pi-memory": {"llm": {"provider": "anthropic", "model": "m", "baseUrl": "http://127.0.0.1:9"}}})
    model, status = resolve(project)
    assert model is None and status.startswith("capture off:") and "pip install" in status and "anthropic" in status
