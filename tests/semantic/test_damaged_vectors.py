"""A damaged stored vector (truncated blob, wrong dimension, NaN) is skipped with a warning and counted as stale,
never breaks vector search of its scope, and is repaired by re-embedding (the CLI side: test_cli.py)."""

from __future__ import annotations

import logging
import sqlite3

import numpy as np
import pytest
from semantic_helpers import ALICE

from pi_memory.index import open_index
from pi_memory.semantic.embedded import EmbeddedBackend
from pi_memory.semantic.vectors import VectorMatrix


def _damage(data_dir, memory_id: str, sql: str, *args) -> None:
    with sqlite3.connect(data_dir / "index.sqlite3") as c:
        c.execute(f"UPDATE semantic_vectors SET {sql} WHERE memory_id = ?", (*args, memory_id))


@pytest.fixture
def damaged(tmp_path, embedder):
    """A backend whose "PostgreSQL" memory has a 3-byte vector blob, reopened as another process would."""
    b = EmbeddedBackend(open_index(tmp_path / "d"), embedder)
    good = b.add("The CI runs on GitHub Actions", scope=ALICE)
    bad = b.add("The database is PostgreSQL", scope=ALICE)
    _damage(tmp_path / "d", bad.id, "vector = x'000102'")
    return EmbeddedBackend(open_index(tmp_path / "d"), embedder), good, bad


def test_a_truncated_vector_is_skipped_and_the_rest_of_the_scope_is_searched(damaged, caplog):
    backend, good, bad = damaged
    with caplog.at_level(logging.WARNING, logger="pi_memory.semantic.embedded"):
        for _ in range(2):  # the second search must not have lost the healthy rows either
            hits = backend.search("continuous integration pipeline", scope=ALICE, top_k=5)
            assert hits[0].memory.id == good.id and hits[0].details.vector_rank == 1
    assert backend.bad_vectors == 1
    assert [r.getMessage() for r in caplog.records if "skipped 1 stored vector" in r.getMessage()]
    found = backend.search("PostgreSQL", scope=ALICE, top_k=5)  # still found by keyword
    assert [h.memory.id for h in found if h.memory.id == bad.id] == [bad.id]
    assert found[0].details.vector_rank is None or found[0].memory.id != bad.id


def test_damaged_and_wrong_dimension_vectors_are_stale_and_reembed_repairs_them(tmp_path, embedder):
    b = EmbeddedBackend(open_index(tmp_path / "d"), embedder)
    truncated = b.add("The database is PostgreSQL", scope=ALICE)
    wide = b.add("Deploys run on Fly.io", scope=ALICE)
    b.add("The CI runs on GitHub Actions", scope=ALICE)
    _damage(tmp_path / "d", truncated.id, "vector = x'000102'")
    _damage(tmp_path / "d", wide.id, "dim = 768, vector = ?", np.ones(768, "<f4").tobytes())
    reopened = EmbeddedBackend(open_index(tmp_path / "d"), embedder)
    assert reopened.stale_count() == 2
    report = reopened.reembed()
    assert (report.embedded, report.remaining) == (2, 0)
    assert reopened.stale_count() == 0
    hits = reopened.search("which database do we use", scope=ALICE, top_k=3)
    assert hits[0].memory.id == truncated.id and hits[0].details.vector_rank == 1


def test_vector_matrix_skips_bad_rows_and_counts_them():
    m = VectorMatrix(4)
    ok = np.array([1, 0, 0, 0], "<f4").tobytes()
    nan = np.array([np.nan, 0, 0, 0], "<f4").tobytes()
    m.upsert("c", np.array([0, 1, 0, 0], np.float32))
    assert m.upsert_rows([("a", 4, ok), ("b", 4, b"\x00\x01\x02"), ("c", 4, nan), ("d", 8, ok * 2)]) == (1, 3)
    assert len(m) == 1 and "a" in m and "c" not in m  # "c"'s stored vector changed: the old one is dropped
    assert m.search(np.array([1, 0, 0, 0], np.float32), 5) == [("a", 1.0)]


class _SameNameEmbedder:
    """One model name, any dimension: a provider whose vector size changed under the same name."""

    model_name = "same-name"

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, sum(map(ord, word)) % self.dim] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def embed_query(self, text):
        return self.embed([text])[0]


def test_a_new_dimension_under_the_same_model_name_makes_old_vectors_stale(tmp_path):
    first = EmbeddedBackend(open_index(tmp_path / "d"), _SameNameEmbedder(16))
    mem = first.add("deploys run on fly every friday", scope=ALICE)
    second = EmbeddedBackend(open_index(tmp_path / "d"), _SameNameEmbedder(8))
    assert second.stale_count() == 1
    assert second.vector_candidates("friday deploys", scope=ALICE) == []  # the 16-d vector is never compared
    assert (second.reembed().embedded, second.stale_count()) == (1, 0)
    assert [i for i, _ in second.vector_candidates("friday deploys", scope=ALICE)] == [mem.id]
