"""Which chat model pi-memory uses, resolved from settings or from pi's own model configuration.

First match wins:

1. ``"pi-memory": {"llm": {...}}`` in a trusted project's ``.pi/settings.json`` (the whole block replaces the
   user's), else in ``<agentDir>/settings.json``. Either name the model directly::

       "llm": {"provider": "openai-compatible", "baseUrl": "http://127.0.0.1:11434/v1", "model": "qwen2.5:7b"}
       "llm": {"provider": "anthropic", "model": "claude-haiku-4-5", "apiKey": "ANTHROPIC_API_KEY"}

   or point at a model pi already knows, from ``<agentDir>/models.json``::

       "llm": {"fromPi": "ollama/qwen2.5:7b"}          # provider name, "/", model id (which may hold "/")

   Optional keys, for both forms: ``timeoutSeconds`` (per request, default 60), ``maxRetries`` (transient
   failures, default 2), ``jsonRetries`` (re-asks after a malformed JSON reply, default 2), ``jsonMode``
   (``json_object`` | ``json_schema`` | ``prompt`` for OpenAI-compatible, ``tool`` | ``prompt`` for Anthropic),
   ``maxTokensField`` (``max_tokens`` | ``max_completion_tokens``), ``supportsTemperature``, ``cost``
   (``{"input": USD per million tokens, "output": ...}``), ``enabled: false`` (turns capture off). Direct form
   only: ``headers``, ``authHeader`` (Anthropic: send the key as ``Authorization: Bearer``).
2. ``{"llm": {"fromPi": "default"}}``: pi's ``defaultProvider`` / ``defaultModel`` from
   ``<agentDir>/settings.json``, when that provider is defined in ``<agentDir>/models.json``. Built-in pi
   providers (logged in through ``/login``, keys in ``auth.json``) are not used: pi-memory never reads pi's
   credential store.
3. Without an ``llm`` block there is no model: :func:`resolve_chat_model` returns ``(None, "capture off: ...")``.
   Decision: capture spends the user's tokens on every turn, so it runs only on a model the user named for
   it -- never silently on the model pi happens to use (peers' users complained most about exactly that).

models.json mapping: ``api: "openai-completions"`` → :class:`OpenAICompatibleChatModel`,
``"anthropic-messages"`` → :class:`AnthropicChatModel`; other APIs are refused with a reason. Model-level
``api`` / ``baseUrl`` / ``headers`` / ``compat`` override the provider's. ``cost`` (USD per million tokens,
with optional ``tiers``) prices each call; without it, costs are ``None``.

``apiKey`` and header values follow pi's rules: ``"!command"`` runs the command through the shell and uses
its trimmed stdout; ``$NAME`` / ``${NAME}`` are replaced from the environment (``$$`` → ``$``, ``$!`` → ``!``);
a bare word that names a set environment variable is replaced by its value (pi 0.73's rule); anything else
is the literal key.

Trust: a ``!command`` runs with your privileges, with a 10 s timeout, each time a model is resolved (once
per pi-memory process in normal use). pi-memory only runs commands found in your own files under
``<agentDir>`` -- the same ones pi already runs -- and never from a project's ``.pi/settings.json``, where
``apiKey`` / ``headers`` must be literal (a cloned repository must not be able to run commands or read your
environment variables by shipping a settings file). Keys are never logged or put in error messages.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pi_memory import config as core_config
from pi_memory.llm.base import (
    DEFAULT_JSON_RETRIES,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
    ChatModel,
    Price,
    PriceTier,
)
from pi_memory.llm.errors import LLMConfigError

ProviderKind = Literal["openai-compatible", "anthropic"]
API_TO_PROVIDER: dict[str, ProviderKind] = {"openai-completions": "openai-compatible", "anthropic-messages": "anthropic"}
COMMAND_TIMEOUT_S = 10.0
def no_model_hint(agent_dir: Path) -> str:
    """What to write, and in which file (the real path of the user's settings file), to name a model."""
    return ('set "pi-memory": {"llm": {"provider": "openai-compatible", "baseUrl": ..., "model": ...}} '
            '(or {"llm": {"fromPi": "provider/model"}}, or {"llm": {"fromPi": "default"}} for pi\'s default model) '
            f"in {agent_dir / 'settings.json'}")


class CostSettings(BaseModel):
    model_config = ConfigDict(extra="ignore")
    input: float = Field(ge=0)
    output: float = Field(ge=0)


class LLMSettings(BaseModel):
    """The ``"pi-memory"."llm"`` block (camelCase keys). Unknown keys are errors, so typos are caught."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    enabled: bool = True
    provider: ProviderKind | None = None
    model: str | None = Field(default=None, min_length=1)
    base_url: str | None = Field(default=None, alias="baseUrl")
    api_key: str | None = Field(default=None, alias="apiKey")
    auth_header: bool | None = Field(default=None, alias="authHeader")
    headers: dict[str, str] | None = None
    from_pi: str | None = Field(default=None, alias="fromPi", pattern=r"^([^/]+/.+|default)$")
    timeout_seconds: float | None = Field(default=None, alias="timeoutSeconds", gt=0, le=3600)
    max_retries: int | None = Field(default=None, alias="maxRetries", ge=0, le=10)
    json_retries: int | None = Field(default=None, alias="jsonRetries", ge=0, le=10)
    json_mode: Literal["json_object", "json_schema", "prompt", "tool"] | None = Field(default=None, alias="jsonMode")
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] | None = Field(default=None, alias="maxTokensField")
    supports_temperature: bool | None = Field(default=None, alias="supportsTemperature")
    cost: CostSettings | None = None


@dataclass(frozen=True)
class LLMSpec:
    """Everything needed to build a :class:`ChatModel`. ``api_key`` and ``headers`` are already resolved."""

    provider: ProviderKind
    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    auth_bearer: bool = False
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    json_mode: str | None = None
    max_tokens_field: str | None = None
    send_temperature: bool | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_retries: int = DEFAULT_MAX_RETRIES
    json_retries: int = DEFAULT_JSON_RETRIES
    price: Price | None = None
    max_output_tokens: int | None = None
    source: str = ""
    reasoning: bool | None = None  # models.json ``reasoning`` of the model (None: not known)
    reasoning_effort: str | None = None  # OpenAI-compatible ``reasoning_effort`` to send
    thinking_budget: int | None = None  # Anthropic extended thinking ``budget_tokens`` to send


# --- value resolution (apiKey, headers) -------------------------------------------------------------------
_DOLLAR = re.compile(r"\$(\$|!|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def resolve_value(raw: str, *, what: str, allow_dynamic: bool = True) -> str:
    """Resolve one ``apiKey`` / header value by pi's rules (module docstring). ``what`` names it in errors.

    ``allow_dynamic=False`` (project files) accepts literals only. Raises :class:`LLMConfigError`.
    """
    if not allow_dynamic:
        if raw.startswith("!") or "$" in raw:
            raise LLMConfigError(
                f"{what} comes from a project settings file, where commands (!...) and environment variables "
                "($NAME) are not allowed. Put the key in <agentDir>/settings.json or pi's models.json instead."
            )
        return raw
    if raw.startswith("!"):
        return _run_key_command(raw[1:].strip(), what)
    if "$" in raw:
        def sub(m: re.Match[str]) -> str:
            if m.group(1) in ("$", "!"):
                return m.group(1)
            name = m.group(2) or m.group(3)
            if name not in os.environ:
                raise LLMConfigError(f"{what} uses ${name}, which is not set in the environment. Set it and retry.")
            return os.environ[name]

        return _DOLLAR.sub(sub, raw)
    if _ENV_NAME.match(raw) and os.environ.get(raw):
        return os.environ[raw]
    return raw


def _run_key_command(command: str, what: str) -> str:
    if not command:
        raise LLMConfigError(f"{what} is '!' with no command after it.")
    try:
        done = subprocess.run(
            command, shell=True, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as exc:
        raise LLMConfigError(f"The command for {what} did not finish within {COMMAND_TIMEOUT_S:g} s.") from exc
    except OSError as exc:
        raise LLMConfigError(f"The command for {what} could not be started: {exc}.") from exc
    if done.returncode != 0:
        tail = " ".join((done.stderr or "").split())[-200:]
        raise LLMConfigError(f"The command for {what} exited with status {done.returncode}: {tail or 'no stderr'}.")
    value = (done.stdout or "").strip()
    if not value:
        raise LLMConfigError(f"The command for {what} printed nothing.")
    return value


# --- file reading ---------------------------------------------------------------------------------------
def _read_json(path: Path) -> dict[str, Any]:
    return core_config.read_json_object(path, LLMConfigError)


def read_llm_settings(cwd: Path | None = None, agent_dir: Path | None = None) -> tuple[LLMSettings | None, Path | None, bool]:
    """``(settings, file, from_project)`` for the ``llm`` block that applies, or ``(None, None, False)``."""
    adir = agent_dir or core_config.agent_dir()
    cwd = (cwd or Path.cwd()).resolve()
    candidates: list[tuple[Path, bool]] = []
    project_file = cwd / ".pi" / "settings.json"
    if project_file.is_file() and core_config.is_trusted(cwd):
        candidates.append((project_file, True))
    candidates.append((adir / "settings.json", False))
    for path, is_project in candidates:
        try:
            block = core_config._read_block(path)
        except core_config.SettingsError as exc:
            raise LLMConfigError(str(exc)) from exc
        raw = block.get("llm")
        if raw is None:
            continue
        if not isinstance(raw, dict):
            raise LLMConfigError(f'In {path}, "{core_config.SETTINGS_KEY}.llm" must be an object.')
        try:
            return LLMSettings.model_validate(raw), path, is_project
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'llm'}: {e['msg']}" for e in exc.errors(include_url=False)
            )
            raise LLMConfigError(f'Invalid "{core_config.SETTINGS_KEY}.llm" settings in {path}: {problems}.') from exc
    return None, None, False


def pi_default_model(agent_dir: Path) -> tuple[str, str] | None:
    """pi's ``(defaultProvider, defaultModel)`` from ``<agentDir>/settings.json``, when both are set."""
    data = _read_json(agent_dir / "settings.json")
    provider, model = data.get("defaultProvider"), data.get("defaultModel")
    if isinstance(provider, str) and provider and isinstance(model, str) and model:
        return provider, model
    return None


def _price(cost: Any) -> Price | None:
    if not isinstance(cost, dict):
        return None
    try:
        tiers = tuple(
            PriceTier(int(t["inputTokensAbove"]), float(t["input"]), float(t["output"]))
            for t in cost.get("tiers") or []
            if isinstance(t, dict)
        )
        return Price(float(cost["input"]), float(cost["output"]), tiers)
    except (KeyError, TypeError, ValueError):
        return None


def spec_from_pi(provider_name: str, model_id: str, agent_dir: Path, *, source: str) -> LLMSpec:
    """Build a spec from ``<agentDir>/models.json``. Raises :class:`LLMConfigError` with the reason."""
    path = agent_dir / "models.json"
    providers = _read_json(path).get("providers")
    prov = providers.get(provider_name) if isinstance(providers, dict) else None
    if not isinstance(prov, dict):
        raise LLMConfigError(
            f"pi provider {provider_name!r} is not defined in {path}; pi-memory can only use providers from "
            f"models.json (not pi's built-in ones). Define it there, or {no_model_hint(agent_dir)}."
        )
    entry: dict[str, Any] = {}
    for m in prov.get("models") or []:
        if isinstance(m, dict) and m.get("id") == model_id:
            entry = m
            break
    api = entry.get("api") or prov.get("api")
    kind = API_TO_PROVIDER.get(str(api))
    if kind is None:
        said = f"uses api {api!r}" if api else "sets no api (a built-in provider with only overrides?)"
        raise LLMConfigError(
            f"pi provider {provider_name!r} in {path} {said}; pi-memory speaks only openai-completions and "
            "anthropic-messages. Point pi-memory.llm at another provider, or name the model directly."
        )
    base_url = entry.get("baseUrl") or prov.get("baseUrl") or None
    compat = {**(prov.get("compat") or {}), **(entry.get("compat") or {})}
    where = f"pi provider {provider_name!r} in {path}"
    api_key = None
    if isinstance(prov.get("apiKey"), str) and prov["apiKey"]:
        api_key = resolve_value(prov["apiKey"], what=f"apiKey of {where}")
    headers: dict[str, str] = {}
    for name, value in {**(prov.get("headers") or {}), **(entry.get("headers") or {})}.items():
        if isinstance(value, str):
            headers[str(name)] = resolve_value(value, what=f"header {name!r} of {where}")
    max_tokens_field = compat.get("maxTokensField")
    if max_tokens_field is None and kind == "openai-compatible":
        max_tokens_field = "max_completion_tokens" if "api.openai.com" in str(base_url or "") else "max_tokens"
    max_out = entry.get("maxTokens")
    return LLMSpec(
        provider=kind,
        model=model_id,
        base_url=base_url,
        api_key=api_key,
        auth_bearer=bool(prov.get("authHeader")) and kind == "anthropic",
        headers=headers,
        max_tokens_field=max_tokens_field,
        send_temperature=compat.get("supportsTemperature") if isinstance(compat.get("supportsTemperature"), bool) else None,
        price=_price(entry.get("cost")),
        max_output_tokens=int(max_out) if isinstance(max_out, int | float) and max_out > 0 else None,
        source=source,
        reasoning=entry.get("reasoning") if isinstance(entry.get("reasoning"), bool) else None,
    )


def load_llm_spec(cwd: Path | None = None, agent_dir: Path | None = None) -> tuple[LLMSpec | None, str]:
    """``(spec, "")`` when a model is configured, ``(None, why)`` when none is. Raises :class:`LLMConfigError`
    when something is configured but unusable (bad JSON, unknown provider, failing key command...)."""
    adir = agent_dir or core_config.agent_dir()
    settings, path, from_project = read_llm_settings(cwd, adir)
    if settings is None:
        return None, f"no model configured — {no_model_hint(adir)}"
    if not settings.enabled:
        return None, f"disabled by pi-memory.llm.enabled=false in {path}"
    if settings.from_pi == "default":
        default = pi_default_model(adir)
        if default is None:
            return None, f"pi-memory.llm.fromPi is \"default\" but pi has no defaultProvider/defaultModel — {no_model_hint(adir)}"
        prov, model = default
        if not (adir / "models.json").is_file() or prov not in (_read_json(adir / "models.json").get("providers") or {}):
            return None, (
                f"pi's default model {prov}/{model} uses a provider that is not in {adir / 'models.json'} "
                f"(pi-memory does not use pi's built-in providers or its stored logins) — {no_model_hint(adir)}"
            )
        return spec_from_pi(prov, model, adir, source=f"pi's default model {prov}/{model} in {adir / 'models.json'}"), ""
    if settings.from_pi:
        clash = [k for k in ("provider", "model", "base_url", "api_key", "headers", "auth_header")
                 if getattr(settings, k) is not None]
        if clash:
            raise LLMConfigError(
                f"In {path}, pi-memory.llm sets fromPi together with {', '.join(clash)}; fromPi takes the "
                "provider, model, address and key from pi's models.json. Remove one or the other."
            )
        prov, model = settings.from_pi.split("/", 1)
        spec = spec_from_pi(prov, model, adir, source=f"pi-memory.llm.fromPi={settings.from_pi} in {path}")
    else:
        if settings.provider is None or settings.model is None:
            raise LLMConfigError(
                f"In {path}, pi-memory.llm needs provider (openai-compatible or anthropic) and model, "
                "or fromPi: \"provider/model\"."
            )
        dynamic = not from_project
        key = None
        if settings.api_key:
            key = resolve_value(settings.api_key, what=f"pi-memory.llm.apiKey in {path}", allow_dynamic=dynamic)
        headers = {
            name: resolve_value(value, what=f"pi-memory.llm.headers.{name} in {path}", allow_dynamic=dynamic)
            for name, value in (settings.headers or {}).items()
        }
        spec = LLMSpec(
            provider=settings.provider,
            model=settings.model,
            base_url=settings.base_url or None,
            api_key=key,
            auth_bearer=bool(settings.auth_header) and settings.provider == "anthropic",
            headers=headers,
            source=f"pi-memory.llm in {path}",
        )
    return _apply_overrides(spec, settings), ""


def _apply_overrides(spec: LLMSpec, s: LLMSettings) -> LLMSpec:
    from dataclasses import replace

    changes: dict[str, Any] = {}
    if s.timeout_seconds is not None:
        changes["timeout_s"] = s.timeout_seconds
    if s.max_retries is not None:
        changes["max_retries"] = s.max_retries
    if s.json_retries is not None:
        changes["json_retries"] = s.json_retries
    if s.json_mode is not None:
        allowed = ("tool", "prompt") if spec.provider == "anthropic" else ("json_object", "json_schema", "prompt")
        if s.json_mode not in allowed:
            raise LLMConfigError(
                f"pi-memory.llm.jsonMode {s.json_mode!r} does not apply to {spec.provider} models; "
                f"use one of {', '.join(allowed)}."
            )
        changes["json_mode"] = s.json_mode
    if s.max_tokens_field is not None:
        changes["max_tokens_field"] = s.max_tokens_field
    if s.supports_temperature is not None:
        changes["send_temperature"] = s.supports_temperature
    if s.cost is not None:
        changes["price"] = Price(s.cost.input, s.cost.output)
    return replace(spec, **changes) if changes else spec


THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
# Anthropic extended thinking: budget_tokens per level (1,024 is the API's minimum).
ANTHROPIC_THINKING_BUDGET = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32768}


def learning_overrides(spec: LLMSpec | None, model_override: str | None, thinking: str | None,
                       agent_dir: Path) -> tuple[LLMSpec | None, list[str]]:
    """The model of the learning jobs with pi-hermes-memory's ``llmModelOverride`` / ``llmThinkingOverride``
    applied, and a note for each value the provider cannot honour as asked (said in the learning status).

    ``llmModelOverride`` (``provider/model``) means ``"llm": {"fromPi": "provider/model"}`` for these jobs
    only: the provider must be defined in ``<agentDir>/models.json`` (pi-memory never uses pi's built-in
    providers or its stored logins), else :class:`LLMConfigError` says so. With a model override and no thinking
    override the level is ``off`` (the seed's rule). Thinking maps to the provider's own parameter:

    * OpenAI-compatible: ``minimal`` / ``low`` / ``medium`` / ``high`` are sent as ``reasoning_effort``;
      ``xhigh`` is sent as ``high`` (the highest value those servers share) and ``off`` sends nothing (there is
      no portable "no reasoning" value, so a reasoning model keeps its default): both are noted.
    * Anthropic: ``off`` sends nothing (no extended thinking); the others enable extended thinking with
      :data:`ANTHROPIC_THINKING_BUDGET` tokens, added to the reply's ``max_tokens``. Thinking cannot be combined
      with a forced tool choice, so the JSON answer is asked for in the prompt (``jsonMode: prompt``), noted.
    * A model that models.json marks ``"reasoning": false`` gets no thinking parameter at all, noted.
    """
    from dataclasses import replace

    notes: list[str] = []
    if model_override:
        if "/" not in model_override.strip("/"):
            raise LLMConfigError(
                f"llmModelOverride {model_override!r} must be provider/model as in pi's models.json "
                "(for example \"openrouter/deepseek/deepseek-v4-flash\")."
            )
        prov, model = model_override.split("/", 1)
        spec = spec_from_pi(prov, model, agent_dir, source=f"llmModelOverride={model_override}")
        thinking = thinking or "off"
    if spec is None or thinking is None:
        return spec, notes
    if thinking not in THINKING_LEVELS:
        raise LLMConfigError(f"llmThinkingOverride {thinking!r} is not one of {', '.join(THINKING_LEVELS)}.")
    if thinking != "off" and spec.reasoning is False:
        notes.append(f"llmThinkingOverride {thinking} ignored: {spec.model} is not a reasoning model "
                     "(models.json reasoning: false)")
        return spec, notes
    if spec.provider == "anthropic":
        if thinking == "off":
            return replace(spec, thinking_budget=None), notes
        if spec.json_mode in (None, "tool"):
            notes.append(f"llmThinkingOverride {thinking}: Anthropic thinking cannot force a tool call, so the "
                         "JSON answer is asked for in the prompt (jsonMode prompt)")
        return replace(spec, thinking_budget=ANTHROPIC_THINKING_BUDGET[thinking], json_mode="prompt"), notes
    if thinking == "off":
        if spec.reasoning:
            notes.append(f"llmThinkingOverride off: OpenAI-compatible servers have no common way to turn "
                         f"reasoning off; {spec.model} keeps its default")
        return replace(spec, reasoning_effort=None), notes
    effort = thinking
    if thinking == "xhigh":
        effort = "high"
        notes.append("llmThinkingOverride xhigh: OpenAI-compatible reasoning_effort stops at high; high is sent")
    return replace(spec, reasoning_effort=effort), notes


def build_chat_model(spec: LLMSpec, **extra: Any) -> ChatModel:
    """Instantiate the provider class for ``spec``. ``extra`` goes to the constructor (tests: ``sleep``...)."""
    common: dict[str, Any] = {
        "base_url": spec.base_url,
        "headers": spec.headers or None,
        "timeout_s": spec.timeout_s,
        "max_retries": spec.max_retries,
        "json_retries": spec.json_retries,
        "price": spec.price,
        **extra,
    }
    if spec.provider == "anthropic":
        from pi_memory.llm.anthropic_provider import AnthropicChatModel

        if spec.auth_bearer:
            common["auth_token"] = spec.api_key
        else:
            common["api_key"] = spec.api_key
        if spec.json_mode:
            common["json_mode"] = spec.json_mode
        if spec.send_temperature is not None:
            common["send_temperature"] = spec.send_temperature
        if spec.thinking_budget:
            common["thinking_budget"] = spec.thinking_budget
        return AnthropicChatModel(spec.model, **common)
    from pi_memory.llm.openai_compatible import OpenAICompatibleChatModel

    common["api_key"] = spec.api_key
    if spec.json_mode:
        common["json_mode"] = spec.json_mode
    if spec.max_tokens_field:
        common["max_tokens_field"] = spec.max_tokens_field
    if spec.send_temperature is not None:
        common["send_temperature"] = spec.send_temperature
    if spec.reasoning_effort:
        common["reasoning_effort"] = spec.reasoning_effort
    return OpenAICompatibleChatModel(spec.model, **common)


def resolve_chat_model(cwd: Path | None = None, agent_dir: Path | None = None, **extra: Any) -> tuple[ChatModel | None, str]:
    """The chat model to use for capture, and a one-line status for people and logs. Never raises.

    ``(model, "capture on: openai-compatible model 'x' at URL (from ...)")`` or
    ``(None, "capture off: <reason> ")`` -- recall keeps working either way.
    """
    try:
        spec, why = load_llm_spec(cwd, agent_dir)
        if spec is None:
            return None, f"capture off: {why}"
        model = build_chat_model(spec, **extra)
    except LLMConfigError as exc:
        return None, f"capture off: {exc.message}"
    except ValueError as exc:
        return None, f"capture off: invalid model settings: {exc}"
    return model, f"capture on: {model.describe()} (from {spec.source})"
