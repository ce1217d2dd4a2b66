"""Optional provider: any ONNX text-embedding model through Qdrant's ``fastembed`` (``pip install 'pi-memory[fastembed]'``).

Use it for models bigger or more multilingual than the bundled MiniLM (bge, e5, nomic, jina, …).

**Offline:** fastembed downloads models from the Hugging Face hub unless told otherwise. On a machine without
network, download the model folder elsewhere and set ``modelPath`` (fastembed's ``specific_model_path``): the
folder needs the ``.onnx`` file plus ``tokenizer.json``, ``config.json``, ``special_tokens_map.json`` and
``tokenizer_config.json`` (the bundled ``models/all-MiniLM-L6-v2`` folder has exactly that shape).

A model fastembed does not list (or a different ``.onnx`` file in a listed model's folder) is registered as a
custom model; that needs ``modelPath``, ``dim`` and the pooling (``"mean"`` or ``"cls"``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .base import EmbeddingError, LazyModelEmbedder, l2_normalise, missing_extra

__all__ = ["FastEmbedEmbedder"]

PROVIDER = "fastembed"
DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"


class FastEmbedEmbedder(LazyModelEmbedder):
    """fastembed ``TextEmbedding`` behind the ``Embedder`` interface; loads on first use.

    ``model``: a fastembed model name (``TextEmbedding.list_supported_models()``) or, with ``model_path``, any
    name for a local model. ``model_file``: the ``.onnx`` file inside ``model_path`` (custom models).
    ``dim`` / ``pooling`` / ``normalize``: needed for custom models only. ``threads``: onnxruntime threads.
    ``model_name``: recorded with each vector (default: ``model``, plus the file stem for a custom file).
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        model_path: str | Path | None = None,
        model_file: str | None = None,
        dim: int | None = None,
        pooling: str = "mean",
        normalize: bool = True,
        cache_dir: str | None = None,
        threads: int | None = None,
        batch_size: int = 64,
        local_files_only: bool = False,
        model_name: str | None = None,
    ) -> None:
        super().__init__(dim)
        self.model = model
        self.model_path = Path(model_path) if model_path is not None else None
        self.model_file = model_file
        self.pooling = pooling.upper()
        self.normalize = normalize
        self.cache_dir = cache_dir
        self.threads = threads
        self.batch_size = batch_size
        self.local_files_only = local_files_only
        self.model_name: str = model_name or (f"{model}/{Path(model_file).stem}" if model_file else model)

    def __repr__(self) -> str:
        return f"FastEmbedEmbedder({self.model_name!r}, dim={self._dim}, path={self.model_path})"

    def _open(self) -> Any:
        try:
            from fastembed import TextEmbedding
            from fastembed.common.model_description import ModelSource, PoolingType
        except ImportError as exc:
            raise missing_extra("fastembed", "fastembed", PROVIDER) from exc
        if self.model_path is not None and not self.model_path.is_dir():
            raise EmbeddingError(f"the fastembed model folder {self.model_path} does not exist.",
                                 'fix "modelPath" in the embedding settings.', provider=PROVIDER)
        listed = {d["model"].lower(): d for d in TextEmbedding.list_supported_models()}
        name = self.model
        kwargs: dict[str, Any] = {}
        if self.model_path is not None:
            kwargs["specific_model_path"] = str(self.model_path)
        if self.local_files_only:
            kwargs["local_files_only"] = True
        if self.model_file is not None or name.lower() not in listed:
            if self.model_path is None or self._dim is None:
                raise EmbeddingError(
                    f"fastembed does not know the model {name!r} (or a custom model file was asked for).",
                    'for a local model set "modelPath" (its folder) and "dim"; otherwise pick a model from '
                    "fastembed's TextEmbedding.list_supported_models().", provider=PROVIDER)
            if name.lower() in listed:
                name = f"local/{name}/{self.model_file}"
            if name.lower() not in listed:
                try:
                    pooling = PoolingType[self.pooling]
                except KeyError as exc:
                    raise EmbeddingError(f"unknown pooling {self.pooling!r} for fastembed.",
                                         'set "pooling" to "mean" or "cls".', provider=PROVIDER) from exc
                TextEmbedding.add_custom_model(
                    model=name, pooling=pooling, normalization=self.normalize,
                    sources=ModelSource(hf="local/none"),  # never fetched: specific_model_path wins
                    dim=self._dim, model_file=self.model_file or "model.onnx",
                )
        try:
            engine = TextEmbedding(model_name=name, cache_dir=self.cache_dir, threads=self.threads, **kwargs)
        except Exception as exc:
            where = f"from {self.model_path}" if self.model_path else "(it downloads from the Hugging Face hub)"
            raise EmbeddingError(
                f"fastembed could not load the model {self.model!r} {where}: {type(exc).__name__}: {exc}.",
                'on a machine without network, download the model folder elsewhere and set "modelPath" to it; '
                'or set the embedding provider to "local".', provider=PROVIDER, retryable=self.model_path is None,
            ) from exc
        if self._dim is None:
            self._dim = int(TextEmbedding.get_embedding_size(name))
        return engine

    def _embed_many(self, items: list[str]) -> np.ndarray:
        try:
            rows = list(self._engine.embed(items, batch_size=self.batch_size))
        except Exception as exc:
            raise EmbeddingError(f"fastembed failed while embedding: {type(exc).__name__}: {exc}.",
                                 "check the model files; report it if it persists.", provider=PROVIDER) from exc
        return l2_normalise(np.stack(rows))

    def _embed_one(self, text: str) -> np.ndarray:
        """fastembed's query path: it adds the model's query prefix where the model has one."""
        try:
            row = next(iter(self._engine.query_embed(text)))
        except Exception as exc:
            raise EmbeddingError(f"fastembed failed while embedding a query: {type(exc).__name__}: {exc}.",
                                 "check the model files; report it if it persists.", provider=PROVIDER) from exc
        return l2_normalise(np.asarray(row)[None, :])[0]
