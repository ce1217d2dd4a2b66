"""The embedder interface every provider implements, its error type, and small shared helpers.

A vector space is identified by ``(model_name, dim)``: callers store both with every vector and never compare
vectors across different pairs (switching models means re-embedding, not mixing).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "EmbeddingError", "LazyModelEmbedder", "carries_meaning", "check_texts", "import_extra",
           "l2_normalise", "missing_extra"]


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


def carries_meaning(embedder: Any, text: str) -> bool:
    """Whether ``embedder``'s vector of ``text`` says something about it: ``False`` when every word piece of it
    is unknown to the model (an embedder with ``unknown_share``, the bundled one: "🚀🔥🐍", "猫" and "ไทย" all
    embed to the unknown piece's vector, so any two of them have a cosine of 1.0). One known piece is enough
    ("staging 🚀"; a Chinese sentence holds a few known characters). Providers without that method always
    carry meaning. Without meaning, recall embeds no query vector and searches by keyword alone (a stored
    text keeps its vector: the unknown piece's vector lies far from any query with a known piece)."""
    share = getattr(embedder, "unknown_share", None)
    if share is None:
        return True
    try:
        return float(share(text)) < 1.0
    except Exception:  # noqa: BLE001 - a tokenizer failure: let the embedding itself report it
        return True


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


def import_extra(module: str, package: str, extra: str, provider: str) -> Any:
    """``module`` imported, or :func:`missing_extra`'s error when it (or one of its imports) is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing_extra(package, extra, provider) from exc


class LazyModelEmbedder:
    """What the optional in-process providers (fastembed, sentence-transformers) share: the model loads on the
    first call that needs it, once, under a lock; ``dim`` comes from the settings or, when they leave it out,
    from the loaded model; argument checks and the empty batch are handled here.

    A subclass sets ``model_name`` and implements ``_open()`` (load and return the engine; set ``self._dim``
    when it was ``None``; raise :class:`EmbeddingError` saying what to fix), ``_embed_many(items)`` (float32
    ``(n, dim)`` for a non-empty ``list[str]``, L2-normalised) and ``_embed_one(text)`` (float32 ``(dim,)``
    for a query, L2-normalised).
    """

    model_name: str

    def __init__(self, dim: int | None = None) -> None:
        self._dim = dim
        self._lock = threading.Lock()
        self._engine: Any = None

    @property
    def dim(self) -> int:
        """Vector length: the configured ``dim``, else the model's (loading it if needed)."""
        if self._dim is None:
            self.load()
        assert self._dim is not None
        return self._dim

    def load(self) -> None:
        """Load the model now (otherwise the first embed does). Raises :class:`EmbeddingError`."""
        if self._engine is not None:
            return
        with self._lock:
            if self._engine is None:
                self._engine = self._open()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 ``(len(texts), dim)``, rows L2-normalised; ``(0, dim)`` for no texts."""
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        return self._embed_many(items)

    def embed_query(self, text: str) -> np.ndarray:
        """float32 ``(dim,)``, L2-normalised, through the model's query path where it has one."""
        if not isinstance(text, str):
            raise TypeError(f"embed_query() takes a str, not {type(text).__name__}")
        self.load()
        return self._embed_one(text)

    def _open(self) -> Any:
        raise NotImplementedError

    def _embed_many(self, items: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _embed_one(self, text: str) -> np.ndarray:
        raise NotImplementedError
