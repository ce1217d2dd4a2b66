"""Optional provider: any Hugging Face model through ``sentence-transformers`` (``pip install 'pi-memory[sentence-transformers]'``).

It needs PyTorch. With pip, install ``torch`` (a CPU build if there is no GPU) before the extra, or pip may pull
a multi-GB CUDA build. ``model`` is a Hub name or a local folder; set ``localFilesOnly`` (or HF_HUB_OFFLINE=1) on a
machine without network, after the model is in the Hugging Face cache or a folder.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import EmbeddingError, LazyModelEmbedder, import_extra, l2_normalise

__all__ = ["SentenceTransformerEmbedder"]

PROVIDER = "sentence-transformers"
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class SentenceTransformerEmbedder(LazyModelEmbedder):
    """``SentenceTransformer(model).encode(..., normalize_embeddings=True)``; loads on first use.

    ``device``: ``"cpu"`` by default (predictable memory, no GPU probing). ``dim``: checked against the
    model's when given. ``query_prompt``: a prefix for queries (e.g. ``"query: "`` for e5 models); by default
    the model's own query prompt is used when it defines one (``encode_query``).
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        device: str = "cpu",
        dim: int | None = None,
        batch_size: int = 64,
        local_files_only: bool = False,
        trust_remote_code: bool = False,
        query_prompt: str | None = None,
        model_name: str | None = None,
    ) -> None:
        super().__init__(dim)
        self.model = model
        self.device = device
        self.batch_size = batch_size
        self.local_files_only = local_files_only
        self.trust_remote_code = trust_remote_code
        self.query_prompt = query_prompt
        self.model_name: str = model_name or model

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.model_name!r}, dim={self._dim}, device={self.device!r})"

    def _open(self) -> Any:
        st_module = import_extra("sentence_transformers", "sentence-transformers", "sentence-transformers", PROVIDER)
        try:
            st = st_module.SentenceTransformer(self.model, device=self.device, local_files_only=self.local_files_only,
                                     trust_remote_code=self.trust_remote_code)
        except Exception as exc:
            raise EmbeddingError(
                f"sentence-transformers could not load {self.model!r}: {type(exc).__name__}: {exc}.",
                "check the model name or folder; without network, put the model in a local folder and set "
                '"model" to its path (and "localFilesOnly": true).', provider=PROVIDER,
            ) from exc
        getter = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
        found = getter()
        if found is None:
            found = int(st.encode(["dimension probe"], convert_to_numpy=True).shape[1])
        if self._dim is not None and self._dim != found:
            raise EmbeddingError(f"the model {self.model!r} makes {found}-dimensional vectors, not {self._dim}.",
                                 'fix or remove "dim" in the embedding settings.', provider=PROVIDER)
        self._dim = int(found)
        return st

    def _encode(self, items: list[str], *, query: bool) -> np.ndarray:
        options = {"batch_size": self.batch_size, "normalize_embeddings": True, "convert_to_numpy": True,
                   "show_progress_bar": False}
        try:
            if query and self.query_prompt is not None:
                out = self._engine.encode(items, prompt=self.query_prompt, **options)
            elif query and hasattr(self._engine, "encode_query"):
                out = self._engine.encode_query(items, **options)
            else:
                out = self._engine.encode(items, **options)
        except Exception as exc:
            raise EmbeddingError(f"sentence-transformers failed while embedding: {type(exc).__name__}: {exc}.",
                                 "check the model; report it if it persists.", provider=PROVIDER) from exc
        return l2_normalise(np.asarray(out))

    def _embed_many(self, items: list[str]) -> np.ndarray:
        return self._encode(items, query=False)

    def _embed_one(self, text: str) -> np.ndarray:
        """With the configured ``query_prompt``, else the model's own query prompt when it defines one."""
        return self._encode([text], query=True)[0]
