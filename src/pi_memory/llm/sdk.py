"""What the SDK-backed chat models (:mod:`.openai_compatible`, :mod:`.anthropic_provider`) share: importing
the SDK with an error that says how to install it, choosing the API key, mapping SDK exceptions, closing the
client. Requests, JSON mode and retries stay with each provider and :class:`~pi_memory.llm.base.ChatModel`."""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Any

from pi_memory.llm.base import PLACEHOLDER_KEY, ChatModel
from pi_memory.llm.errors import LLMConfigError, LLMError, LLMUnavailableError, classify_sdk_error


def import_sdk(package: str, requirement: str, serves: str) -> ModuleType:
    """The SDK module ``package``; :class:`LLMUnavailableError` naming ``requirement`` (what to pip install)
    when it is missing. ``serves``: which models need it, for the message ("OpenAI-compatible models")."""
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise LLMUnavailableError(
            f"The '{package}' Python package is not installed, so {serves} cannot be used. "
            f"Install it with: pip install '{requirement}' (it is a normal dependency of pi-memory)."
        ) from exc


def check_base_url(base_url: str | None) -> None:
    """Raise :class:`LLMConfigError` when ``base_url`` (set) is not an ``http(s)://host[:port]/...`` address the
    SDK can use: a settings mistake, said in words with the password masked, instead of the HTTP library's
    exception from deep inside the SDK (which ended `pi-memory mcp` at start)."""
    from urllib.parse import urlsplit

    from pi_memory.safety.urls import redact_url

    if not base_url:
        return
    problem = None
    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number from 0 to 65535
        if parts.scheme not in ("http", "https"):
            problem = "it does not start with http:// or https://"
        elif not parts.hostname:
            problem = "it names no host"
    except ValueError as exc:
        problem = str(exc)
    if problem:
        raise LLMConfigError(f"baseUrl {redact_url(base_url)!r} in the pi-memory llm settings is not a usable "
                             f"address ({problem}); write it as http://host:port/v1.")


def resolve_api_key(api_key: str | None, base_url: str | None, env_var: str, missing: str) -> str:
    """The key to send: ``api_key``; else, for the provider's own API (no ``base_url``), ``$env_var``;
    else, for another server (local ones ignore keys), :data:`~pi_memory.llm.base.PLACEHOLDER_KEY`.
    Raises :class:`LLMConfigError` with ``missing`` when the provider's own API has no key."""
    if api_key:
        return api_key
    if base_url is not None:
        return PLACEHOLDER_KEY
    found = os.environ.get(env_var)
    if not found:
        raise LLMConfigError(missing)
    return found


class SdkChatModel(ChatModel):
    """A :class:`ChatModel` whose requests go through an SDK client: subclasses set ``_sdk`` (the module, for
    its exception types) and ``_client`` in ``__init__``."""

    _sdk: Any
    _client: Any

    def _classify(self, exc: BaseException) -> LLMError:
        return classify_sdk_error(exc, self._sdk, where=self.where, model=self.model, timeout_s=self.timeout_s)

    def close(self) -> None:
        self._client.close()
