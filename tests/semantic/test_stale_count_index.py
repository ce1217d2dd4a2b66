"""``staleMemories`` (``semantic status``, and every host's status line when semantic memory opens) counted the
active memories without a usable vector of the current model by reading every vector row (1.5 KB each) for its
dimension and blob length: 160 ms of CPU at 100,000 memories. Migration 008's partial index of usable vectors
answers it from index entries, with the same count; an index without it (a file of an older version read only)
is counted the old way."""

from __future__ import annotations

import numpy as np
import pytest

from pi_memory.index import open_index, transaction
from pi_memory.index.read_only import read_only
from pi_memory.index.semantic_schema import USABLE_INDEX
from pi_memory.semantic.embedded import EmbeddedBackend
from read_only_folder import read_only_folder

MODEL = "all-MiniLM-L6-v2-int8"


class Known:  # the dimension known without loading a model (the bundled model, an OpenAI-compatible one set)
    model_name, dim = MODEL, 384


class Unknown:  # learnt at the first embedding: the blob must be as long as its own row's dim says
    model_name = MODEL


def _vector(dim: int) -> bytes:
    return np.ones(dim, "<f4").tobytes()


# (memory id, status, vectors as (model, dim, blob))
ROWS = [
    ("good", "active", [(MODEL, 384, _vector(384))]),
    ("good-and-old-model", "active", [(MODEL, 384, _vector(384)), ("old-model", 768, _vector(768))]),
    ("none", "active", []),
    ("truncated", "active", [(MODEL, 384, b"\x00\x01\x02")]),
    ("other-dimension", "active", [(MODEL, 768, _vector(768))]),  # usable only when the dimension is not known
    ("old-model-only", "active", [("old-model", 384, _vector(384))]),
    ("superseded-without", "superseded", []),
    ("deleted-truncated", "deleted", [(MODEL, 384, b"\x00")]),
]


def _seed(folder):
    conn = open_index(folder)
    EmbeddedBackend(conn, Known())  # the semantic tables
    with transaction(conn):
        for seq, (mid, status, vectors) in enumerate(ROWS, 1):
            conn.execute("INSERT INTO semantic_memories(id, user_id, project_id, agent_id, text, hash, status, "
                         "created_at, updated_at, seq) VALUES (?, 'u', 'p', '', ?, ?, ?, '2026-11-01T10:00:00Z', "
                         "'2026-11-01T10:00:00Z', ?)", (mid, f"memory {mid}", f"h-{mid}", status, seq))
            for model, dim, blob in vectors:
                conn.execute("INSERT INTO semantic_vectors(model, user_id, project_id, agent_id, memory_id, dim, "
                             "vector, created_at) VALUES (?, 'u', 'p', '', ?, ?, ?, '2026-11-01T10:00:00Z')",
                             (model, mid, dim, blob))
    return conn


@pytest.fixture
def data(tmp_path):
    _seed(tmp_path / "data").close()
    return tmp_path / "data"


def _plan(backend: EmbeddedBackend) -> list[str]:
    usable, args = backend._usable_vector_sql()
    return [row[3] for row in backend.conn.execute(
        f"EXPLAIN QUERY PLAN SELECT count(*) FROM semantic_memories m WHERE m.status = 'active' AND NOT EXISTS "
        f"{usable}", args)]


@pytest.mark.parametrize(("embedder", "stale", "key"), [
    (Known(), 4, "memory_id=? AND model=? AND dim=?"),  # none, truncated, other-dimension, old-model-only
    (Unknown(), 3, "memory_id=? AND model=?"),  # other-dimension's blob is as long as its row says
])
def test_the_count_is_answered_from_the_index_of_usable_vectors(data, embedder, stale, key):
    backend = EmbeddedBackend(open_index(data), embedder)
    assert backend.stale_count() == stale
    assert _plan(backend) == ["SCAN m USING COVERING INDEX semantic_memories_scope_seq", "CORRELATED SCALAR SUBQUERY 1",
                              f"SEARCH v USING INDEX {USABLE_INDEX} ({key})"]
    backend.conn.close()


@pytest.mark.parametrize(("embedder", "stale"), [(Known(), 4), (Unknown(), 3)])
def test_a_read_only_index_of_the_version_before_gives_the_same_count_the_old_way(tmp_path, embedder, stale):
    with read_only_folder(tmp_path / "ro", mount=False) as made:
        conn = _seed(made.folder)
        with transaction(conn):  # as the version before left it: migration 008 never ran
            conn.execute(f"DROP INDEX {USABLE_INDEX}")
            conn.execute("DELETE FROM schema_migrations WHERE name = 'semantic_008_usable_vectors'")
        conn.close()
        made.freeze()
        backend = EmbeddedBackend(open_index(made.folder), embedder)  # read only: nothing is migrated
        assert read_only(backend.conn) is not None
        assert backend.stale_count() == stale
        assert _plan(backend)[-1] == ("SEARCH v USING INDEX sqlite_autoindex_semantic_vectors_1 (memory_id=? AND "
                                      "model=?)")
        backend.conn.close()


def test_reembedding_fills_exactly_what_was_counted(data):
    class Embeds(Known):
        def embed(self, texts):
            return np.ones((len(texts), 384), np.float32) / np.sqrt(384)

    backend = EmbeddedBackend(open_index(data), Embeds())
    report = backend.reembed()
    assert (report.embedded, report.remaining, backend.stale_count()) == (4, 0, 0)
    backend.conn.close()
