"""The embedder interface every provider implements, its error type, and small shared helpers.

A vector space is identified by ``(model_name, dim)``: callers store both with every vector and never compare
vectors across different pairs (switching models means re-embedding, not mixing).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "EmbeddingError", "check_texts", "l2_normalise", "missing_extra"]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length float32 vectors.

    ``model_name``: identifies the vector space (stored beside each vector by the caller).
    ``dim``: vector length. A provider that learns it from its first response may make a request to answer.
    """

    model_name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: float32 array of shape ``(len(texts), dim)``, each row L2-normalised.

        An empty sequence gives shape ``(0, dim)``. Row ``i`` belongs to ``texts[i]``.
        Raises ``EmbeddingError`` when the model or server cannot be used.
        """
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one search query: float32 array of shape ``(dim,)``, L2-normalised."""
        ...


class EmbeddingError(RuntimeError):
    """An embedding could not be produced. The message says what failed and what to do about it.

    Written to be read as-is by a person in a terminal and by a model in a tool result.

    ``what``: the failure ("the bundled model file is missing: /path").
    ``fix``: the next step ("reinstall pi-memory: pip install --force-reinstall pi-memory").
    ``provider``: which provider raised it (``"local"``, ``"openai-compatible"``, …).
    ``retryable``: True when the same call may succeed later (server down, timeout, rate limit).
    """

    def __init__(self, what: str, fix: str = "", *, provider: str | None = None, retryable: bool = False) -> None:
        self.what = what
        self.fix = fix
        self.provider = provider
        self.retryable = retryable
        prefix = f"[{provider}] " if provider else ""
        text = f"{prefix}Embedding failed: {what}"
        if fix:
            text += f" What to do: {fix}"
        super().__init__(text)


def check_texts(texts: Sequence[str]) -> list[str]:
    """Validate an ``embed`` argument and return it as a list.

    A bare ``str`` is refused: iterating it would embed one character per row, a silent and costly mistake.
    """
    if isinstance(texts, str | bytes):
        raise TypeError("embed() takes a sequence of strings; use embed_query() or embed([text]) for one text")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"embed() item {i} is {type(t).__name__}, not str")
    return out


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm, as float32. All-zero rows stay zero (no division by zero)."""
    m = np.asarray(matrix, dtype=np.float32)
    if m.size == 0:
        return m
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return (m / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def missing_extra(package: str, extra: str, provider: str) -> EmbeddingError:
    """The error for an optional provider whose package is not installed."""
    return EmbeddingError(
        f"the {provider!r} embedding provider needs the Python package {package!r}, which is not installed.",
        f"install it with `pip install 'pi-memory[{extra}]'`, or set the embedding provider to \"local\" "
        "(the bundled default model, which needs nothing extra).",
        provider=provider,
    )
