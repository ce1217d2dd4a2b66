"""``LazyModelEmbedder``, the plumbing the fastembed and sentence-transformers providers share, with a small
real subclass (letter counts), and the two providers' behaviour without their packages installed."""

from __future__ import annotations

import importlib.util
import threading

import numpy as np
import pytest

from pi_memory.embed import EmbeddingError
from pi_memory.embed.base import LazyModelEmbedder, l2_normalise
from pi_memory.embed.fastembed_provider import FastEmbedEmbedder
from pi_memory.embed.sentence_transformers_provider import SentenceTransformerEmbedder


class LetterCounts(LazyModelEmbedder):
    """26-d vectors of letter counts; counts how often the "model" was opened."""

    model_name = "letters"

    def __init__(self, dim: int | None = None) -> None:
        super().__init__(dim)
        self.opened = 0

    def _open(self) -> str:
        self.opened += 1
        self._dim = 26
        return "engine"

    def _embed_many(self, items: list[str]) -> np.ndarray:
        rows = [[t.lower().count(chr(97 + i)) for i in range(26)] for t in items]
        return l2_normalise(np.asarray(rows, dtype=np.float32))

    def _embed_one(self, text: str) -> np.ndarray:
        return self._embed_many([text])[0]


def test_loads_once_on_first_use_and_learns_dim():
    model = LetterCounts()
    assert model.opened == 0
    assert model.dim == 26 and model.opened == 1
    vecs = model.embed(["ab", "b"])
    assert vecs.shape == (2, 26) and vecs.dtype == np.float32
    assert vecs[1].tolist() == [0.0, 1.0] + [0.0] * 24
    assert model.embed_query("aa").tolist() == [1.0] + [0.0] * 25
    assert model.opened == 1


def test_empty_batch_with_configured_dim_does_not_load():
    model = LetterCounts(dim=26)
    assert model.embed([]).shape == (0, 26) and model.opened == 0


def test_bad_arguments_are_refused_before_loading():
    model = LetterCounts()
    with pytest.raises(TypeError, match="sequence of strings"):
        model.embed("abc")
    with pytest.raises(TypeError, match="takes a str, not int"):
        model.embed_query(3)  # type: ignore[arg-type]
    assert model.opened == 0


def test_concurrent_first_use_opens_once():
    model = LetterCounts()
    threads = [threading.Thread(target=model.embed_query, args=("x",)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert model.opened == 1


@pytest.mark.parametrize(("embedder", "package", "module"), [
    (FastEmbedEmbedder(dim=384), "fastembed", "fastembed"),
    (SentenceTransformerEmbedder(dim=384), "sentence-transformers", "sentence_transformers"),
])
def test_providers_without_their_package_say_what_to_install(embedder, package, module):
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{package} is installed here")
    assert embedder.embed([]).shape == (0, 384)  # known dim: nothing to load
    with pytest.raises(EmbeddingError, match=f"needs the Python package '{package}'") as info:
        embedder.embed(["x"])
    assert f"pip install 'pi-memory[{package}]'" in str(info.value)
