"""Embeddings from an OpenAI-compatible HTTP endpoint: ``POST {base_url}/embeddings``.

Covers OpenAI (``https://api.openai.com/v1``), Ollama's OpenAI-compatible API (``http://127.0.0.1:11434/v1``),
vLLM, LM Studio, llama.cpp's server and others that speak the same shape:

    request:  {"model": "...", "input": ["text", ...], "dimensions": 256?}
    response: {"data": [{"index": 0, "embedding": [float, ...]}, ...], "model": "..."}

Vectors are re-normalised here (not every server returns unit vectors). The dimension comes from the
configuration or, if not given, from the first response. Transient failures (connection refused, timeouts,
HTTP 408/409/429/5xx) are retried a bounded number of times with exponential backoff; other HTTP errors fail at
once with the server's own message.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import EmbeddingError, check_texts, l2_normalise

__all__ = ["OpenAICompatibleEmbedder"]

PROVIDER = "openai-compatible"
RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
#: Texts per request. OpenAI accepts up to 2,048 inputs; small local servers are happier with fewer.
DEFAULT_BATCH_SIZE = 64


class OpenAICompatibleEmbedder:
    """Client for ``POST {base_url}/embeddings``.

    ``base_url``: up to and including the API version, e.g. ``http://127.0.0.1:11434/v1``.
    ``model``: the server's model name; also the ``model_name`` recorded with each vector (unless overridden).
    ``dim``: expected vector length; sent as ``dimensions`` only if ``send_dimensions`` (OpenAI's v3 models
    accept it, most servers reject it). Unknown → learnt from the first response.

    With ``send_dimensions`` the recorded ``model_name`` is ``<model>@<dim>d`` (e.g.
    ``text-embedding-3-small@256d``): one model asked for another ``dimensions`` makes vectors of another space,
    so changing ``dim`` alone must make the stored vectors stale (and re-embedded) rather than silently unusable.
    Switching back to an earlier ``dim`` finds its vectors again. An explicit ``model_name`` is used as given.
    ``timeout``: seconds per request (connect and read). ``max_retries``: extra attempts for transient errors,
    waiting ``backoff * 2**attempt`` seconds between them.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dim: int | None = None,
        send_dimensions: bool = False,
        model_name: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        backoff: float = 0.5,
        batch_size: int = DEFAULT_BATCH_SIZE,
        headers: dict[str, str] | None = None,
    ) -> None:
        if not base_url:
            raise EmbeddingError("no baseUrl is configured for the openai-compatible embedding provider.",
                                 'set "baseUrl", e.g. "http://127.0.0.1:11434/v1" for Ollama.', provider=PROVIDER)
        if not model:
            raise EmbeddingError("no model is configured for the openai-compatible embedding provider.",
                                 'set "model" to the server\'s embedding model, e.g. "nomic-embed-text".',
                                 provider=PROVIDER)
        if batch_size < 1 or max_retries < 0 or timeout <= 0:
            raise ValueError("batch_size ≥ 1, max_retries ≥ 0 and timeout > 0 are required")
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/embeddings"
        from pi_memory.safety.urls import redact_url  # here: the scanners' import is not every caller's

        self.shown_url = redact_url(self.url)  # in messages: never the credentials of the address
        self.model = model
        self._dim = dim
        self.send_dimensions = send_dimensions and dim is not None
        self.model_name: str = model_name or (f"{model}@{dim}d" if self.send_dimensions else model)
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.batch_size = batch_size
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._client: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAICompatibleEmbedder({self.model_name!r}, dim={self._dim}, url={self.shown_url!r})"

    @property
    def dim(self) -> int:
        """Vector length. If neither configured nor seen yet, embeds a one-word probe to learn it."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 ``(len(texts), dim)``, rows L2-normalised; one request per ``batch_size`` texts."""
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(items[i:i + self.batch_size]) for i in range(0, len(items), self.batch_size)]
        return l2_normalise(np.concatenate(parts, axis=0))

    def embed_query(self, text: str) -> np.ndarray:
        """float32 ``(dim,)``, L2-normalised."""
        if not isinstance(text, str):
            raise TypeError(f"embed_query() takes a str, not {type(text).__name__}")
        return self.embed([text])[0]

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # -- HTTP -----------------------------------------------------------------------------------------------

    def _http(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    import httpx
                except ImportError as exc:  # a core dependency; only a broken install lands here
                    raise EmbeddingError("the Python package 'httpx' is missing.",
                                         "reinstall pi-memory: `pip install --force-reinstall pi-memory`.",
                                         provider=PROVIDER) from exc
                self._client = httpx.Client(timeout=httpx.Timeout(self.timeout), headers=self._headers)
            return self._client

    def _request(self, batch: list[str]) -> np.ndarray:
        import httpx

        body: dict[str, Any] = {"model": self.model, "input": batch}
        if self.send_dimensions:
            body["dimensions"] = self._dim
        client = self._http()
        last: EmbeddingError | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                response = client.post(self.url, json=body)
            except httpx.TimeoutException as exc:
                last = EmbeddingError(
                    f"the embedding server at {self.shown_url} did not answer within {self.timeout:g} s "
                    f"({type(exc).__name__}).",
                    "check the server is running and not overloaded, or raise \"timeout\" in the embedding "
                    "settings.", provider=PROVIDER, retryable=True)
                continue
            except httpx.TransportError as exc:
                last = EmbeddingError(
                    f"cannot reach the embedding server at {self.shown_url} ({type(exc).__name__}: {exc}).",
                    "start the server (for Ollama: `ollama serve`) or fix \"baseUrl\" in the embedding settings; "
                    "to work without a server, set the embedding provider to \"local\".",
                    provider=PROVIDER, retryable=True)
                continue
            if response.status_code in RETRY_STATUS:
                last = self._http_error(response, retryable=True)
                continue
            if response.status_code >= 400:
                raise self._http_error(response, retryable=False)
            return self._parse(response, len(batch))
        assert last is not None
        if self.max_retries:
            raise EmbeddingError(f"{last.what} Gave up after {self.max_retries + 1} attempts.", last.fix,
                                 provider=PROVIDER, retryable=True)
        raise last

    def _http_error(self, response: Any, *, retryable: bool) -> EmbeddingError:
        detail = _server_message(response)
        code = response.status_code
        if code in (401, 403):
            fix = 'check "apiKey" in the embedding settings.'
        elif code == 404:
            fix = ('check "baseUrl" (it usually ends in /v1) and that the server has the model '
                   f"{self.model!r} (for Ollama: `ollama pull {self.model}`).")
        elif code == 429:
            fix = "the server is rate-limiting; wait and retry, or lower the batch size."
        elif code >= 500:
            fix = "the server failed; check its logs, then retry."
        else:
            fix = f"check the model name {self.model!r} and the server's embedding API."
        return EmbeddingError(f"the embedding server at {self.shown_url} answered HTTP {code}: {detail}", fix,
                              provider=PROVIDER, retryable=retryable)

    def _parse(self, response: Any, expected: int) -> np.ndarray:
        try:
            payload = response.json()
            data = sorted(payload["data"], key=lambda item: item.get("index", 0))
            matrix = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        except Exception as exc:
            raise EmbeddingError(
                f"the reply from {self.shown_url} is not an embeddings response ({type(exc).__name__}: {exc}).",
                "check that \"baseUrl\" points at an OpenAI-compatible API (usually ending in /v1).",
                provider=PROVIDER) from exc
        if matrix.ndim != 2 or matrix.shape[0] != expected or matrix.shape[1] == 0:
            raise EmbeddingError(
                f"the server at {self.shown_url} returned {matrix.shape[0]} vectors of shape {matrix.shape[1:]} "
                f"for {expected} texts.", "check the model is an embedding model.", provider=PROVIDER)
        if not np.isfinite(matrix).all():
            raise EmbeddingError(f"the server at {self.shown_url} returned NaN or infinite values.",
                                 "check the model and the server.", provider=PROVIDER)
        got = int(matrix.shape[1])
        if self._dim is None:
            self._dim = got
        elif got != self._dim:
            raise EmbeddingError(
                f"the server's model {self.model!r} returned {got}-dimensional vectors, but {self._dim} were "
                "expected.", 'fix "dim" in the embedding settings (or leave it out to take the server\'s).',
                provider=PROVIDER)
        return matrix


def _server_message(response: Any) -> str:
    """The error text a server put in its body (OpenAI: {"error": {"message": ...}}), shortened."""
    try:
        payload = response.json()
        error = payload.get("error", payload) if isinstance(payload, dict) else payload
        text = error.get("message", error) if isinstance(error, dict) else error
        text = str(text)
    except Exception:
        text = response.text
    text = " ".join(text.split()) or response.reason_phrase or "no details"
    return text[:300]
