"""Errors raised by the chat-model layer, and the mapping from SDK exceptions to them.

Every error is an :class:`LLMError`. Its message is written for two readers at once -- the person looking at
a status line or a log, and a model that sees the error in a tool result -- so each one says what happened,
where (the endpoint and model), and what to do next.

``transient`` errors (timeouts, refused or dropped connections, HTTP 408/409/429/5xx) are retried by
:class:`~pi_memory.llm.base.ChatModel` with backoff; the others are raised at once.
"""

from __future__ import annotations

from typing import Any


class LLMError(Exception):
    """Base class. ``transient`` tells the retry loop whether trying again can help."""

    transient: bool = False

    def __init__(self, message: str, *, status_code: int | None = None, retry_after_s: float | None = None):
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.retry_after_s = retry_after_s


class LLMConfigError(LLMError):
    """The model settings are missing, contradictory, or point at something that cannot be used."""


class LLMUnavailableError(LLMConfigError):
    """The provider's SDK (``openai`` / ``anthropic``) is not installed in this environment."""


class LLMConnectionError(LLMError):
    """The model server could not be reached (refused, reset, DNS failure)."""

    transient = True


class LLMTimeoutError(LLMConnectionError):
    """No complete reply arrived within the per-call timeout."""


class LLMRateLimitError(LLMError):
    """HTTP 429: the server asks us to slow down. ``retry_after_s`` holds its hint, when it sent one."""

    transient = True


class LLMServerError(LLMError):
    """HTTP 5xx (or 408/409): the server failed; another try may succeed."""

    transient = True


class LLMAuthError(LLMError):
    """HTTP 401/403: the API key is missing, wrong, or lacks permission."""


class LLMRequestError(LLMError):
    """HTTP 4xx other than the above: the request itself was refused (unknown model, bad parameter...)."""


class MalformedReplyError(LLMError):
    """The model never produced a reply that parses and validates, after ``attempts`` tries.

    ``last_error`` is the parse / validation problem of the final try and ``last_text`` the raw reply text
    (truncated to 2,000 characters), so a caller can log exactly what the model said; ``reply_chars`` is its whole
    length. ``usage`` (a :class:`pi_memory.llm.base.Usage`, ``None`` when not known) and ``doubts`` cover every
    attempt, as a completion's do: the replies were billed though none was used.
    """

    def __init__(self, message: str, *, attempts: int, last_error: str, last_text: str, usage: object = None,
                 doubts: tuple[str, ...] = ()):
        super().__init__(message)
        self.attempts = attempts
        self.last_error = last_error
        self.last_text = last_text[:2000]
        self.reply_chars = len(last_text)
        self.usage = usage
        self.doubts = doubts


SETTINGS_HINT = 'change the "pi-memory" → "llm" settings (or the pi models.json provider they point at)'


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen and len(out) < 12:
        out.append(cur)
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return out


def _server_message(exc: Any) -> str:
    """The error text the server put in its JSON body, else the SDK's message; at most 300 characters."""
    body = getattr(exc, "body", None)
    text = ""
    if isinstance(body, dict):
        err = body.get("error", body)
        text = str(err.get("message") or "") if isinstance(err, dict) else str(err)
    if not text:
        text = str(getattr(exc, "message", "") or exc)
    text = " ".join(text.split())
    return text[:300]


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    raw = headers.get("retry-after-ms")
    if raw:
        try:
            return max(0.0, float(raw) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw:
        try:
            return max(0.0, float(raw))
        except ValueError:
            return None
    return None


def classify_sdk_error(exc: BaseException, sdk: Any, *, where: str, model: str, timeout_s: float) -> LLMError:
    """Turn an exception from the ``openai`` or ``anthropic`` SDK (passed as ``sdk``) into an :class:`LLMError`.

    Both SDKs share exception names (``APITimeoutError``, ``APIConnectionError``, ``APIStatusError``...), so
    one mapping serves both. ``where`` is the endpoint as a person would recognise it (the base URL).
    """
    if isinstance(exc, LLMError):
        return exc
    timeout_cls = getattr(sdk, "APITimeoutError", ())
    conn_cls = getattr(sdk, "APIConnectionError", ())
    status_cls = getattr(sdk, "APIStatusError", ())
    if isinstance(exc, timeout_cls):
        return LLMTimeoutError(
            f"The model server at {where} did not answer within {timeout_s:g} s (model {model!r}). "
            f"It may be overloaded or still loading the model; retry later, raise timeoutSeconds, or {SETTINGS_HINT}."
        )
    if isinstance(exc, conn_cls):
        chain = _chain(exc)
        if any(isinstance(e, ConnectionRefusedError) for e in chain) or any(
            "refused" in str(e).lower() for e in chain
        ):
            return LLMConnectionError(
                f"The model server at {where} refused the connection (nothing is listening there). "
                f"Start the server, or {SETTINGS_HINT}."
            )
        detail = next((str(e) for e in reversed(chain) if str(e)), "connection error")
        return LLMConnectionError(
            f"Could not reach the model server at {where}: {detail}. "
            f"Check the address and your network, or {SETTINGS_HINT}."
        )
    if isinstance(exc, status_cls):
        code = int(getattr(exc, "status_code", 0) or 0)
        said = _server_message(exc)
        if code == 429:
            return LLMRateLimitError(
                f"The model server at {where} is rate-limiting requests (HTTP 429: {said}). "
                "Wait and retry, or use a model with a higher quota.",
                status_code=code,
                retry_after_s=_retry_after(exc),
            )
        if code >= 500 or code in (408, 409):
            return LLMServerError(
                f"The model server at {where} failed with HTTP {code} ({said}) for model {model!r}. "
                "This is usually temporary; retry later, or check the server's logs.",
                status_code=code,
                retry_after_s=_retry_after(exc),
            )
        if code in (401, 403):
            return LLMAuthError(
                f"The model server at {where} rejected the credentials (HTTP {code}: {said}). "
                "Set a valid apiKey for this provider (pi-memory.llm.apiKey or the pi models.json provider).",
                status_code=code,
            )
        if code == 404:
            if "anthropic" in getattr(sdk, "__name__", ""):
                url_hint = "the Messages API root has no /v1, e.g. https://api.anthropic.com"
            else:
                url_hint = "OpenAI-compatible servers usually end in /v1"
            return LLMRequestError(
                f"The model server at {where} answered HTTP 404 ({said}). Check that model {model!r} exists there "
                f"and that baseUrl is right ({url_hint}).",
                status_code=code,
            )
        return LLMRequestError(
            f"The model server at {where} refused the request with HTTP {code} ({said}) for model {model!r}. "
            f"Check the model name and its options, or {SETTINGS_HINT}.",
            status_code=code,
        )
    return LLMError(
        f"Calling model {model!r} at {where} failed unexpectedly: {type(exc).__name__}: {exc}. "
        f"Check the server, or {SETTINGS_HINT}."
    )
