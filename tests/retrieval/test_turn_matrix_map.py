"""The turn matrix's message map (semantic/turn_matrix.py) and the record of turn vector rows that went
(migration semantic_007): recall's window cosines find a turn's vector through the map only while that vector
row is still the turn's, whatever happened to the message id since the matrix read it (a rewritten transcript
giving the id out again, a re-embedded turn, a dropped vector, another model or dimension), and the map steps
aside (the table is asked, as before) where it cannot be trusted."""

from __future__ import annotations

import numpy as np
import pytest

from pi_memory.index import open_index, transaction
from pi_memory.index.db import migrate
from pi_memory.index.indexer import insert_messages
from pi_memory.index.semantic_schema import GONE_KEEP, GONE_TABLE, SEMANTIC_MIGRATIONS
from pi_memory.retrieval import turns_in_context as tic
from pi_memory.semantic import sources
from pi_memory.semantic.turn_matrix import TurnMatrix

MODEL, DIM, PROJECT = "test-model", 8, "p"


@pytest.fixture
def conn(tmp_path):
    sources.forget()
    c = open_index(tmp_path / "data")
    migrate(c, SEMANTIC_MIGRATIONS)
    yield c
    c.close()
    sources.forget()


def add_turns(conn, n: int, key: str = "s") -> list[int]:
    with transaction(conn):
        sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) "
                           "VALUES ('pi', ?, '/w', ?, 'demo') RETURNING id", (key, PROJECT)).fetchone()[0]
        fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES (?, ?, 0, 0) "
                           "RETURNING id", (f"/{key}.jsonl", sid)).fetchone()[0]
        insert_messages(conn, [(sid, fid, f"e{i}", None, i + 1, "2026-11-01T10:00:00.000Z", "user", "message",
                                None, "active", f"turn {i} about the deploy checklist") for i in range(n)])
    return [r[0] for r in conn.execute("SELECT id FROM messages WHERE session_id = ? ORDER BY id", (sid,))]


def store(conn, vectors: dict[int, np.ndarray], model: str = MODEL, project: str = PROJECT,
          replace: bool = False) -> None:
    verb = "INSERT OR REPLACE" if replace else "INSERT"
    with transaction(conn):
        for mid, v in vectors.items():
            conn.execute(f"{verb} INTO semantic_turn_vectors(message_id, model, project_id, dim, vector, created_at) "
                         "VALUES (?, ?, ?, ?, ?, '2026-11-01T10:00:00.000Z')",
                         (mid, model, project, len(v), v.astype("<f4").tobytes()))


def vid(conn, mid: int, model: str = MODEL) -> int:
    return conn.execute("SELECT id FROM semantic_turn_vectors WHERE message_id = ? AND model = ?",
                        (mid, model)).fetchone()[0]


def gone(conn) -> list[tuple[int, int, int]]:
    return conn.execute(f"SELECT seq, id, message_id FROM {GONE_TABLE} ORDER BY seq").fetchall()


def vectors_of(conn, ids, model: str = MODEL, dim: int = DIM) -> dict[int, np.ndarray]:
    row_of, matrix = tic._vectors(conn, model, dim, ids, PROJECT)
    return {m: matrix[r] for m, r in row_of.items()}


def asked_by_message(conn, ids) -> list[str]:
    """The statements :func:`tic._vectors` runs that look vector rows up by message id."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        tic._vectors(conn, MODEL, DIM, ids, PROJECT)
    finally:
        conn.set_trace_callback(None)
    return [s for s in seen if "WHERE message_id IN" in s]


def basis(i: int, dim: int = DIM) -> np.ndarray:
    return np.eye(dim, dtype=np.float32)[i % dim]


def test_the_triggers_record_each_row_deleted_updated_or_replaced_and_nothing_else(conn):
    ids = add_turns(conn, 4)
    store(conn, {m: basis(i) for i, m in enumerate(ids)})
    v = {m: vid(conn, m) for m in ids}
    store(conn, {ids[0]: basis(0)}, model="other-model")  # another model's first row for the turn: nothing went
    assert gone(conn) == []
    store(conn, {ids[1]: basis(5)}, replace=True)  # re-embedded: the old row is replaced
    with transaction(conn):
        conn.execute("DELETE FROM messages WHERE id = ?", (ids[2],))  # the cascade drops its vector
        conn.execute("UPDATE semantic_turn_vectors SET created_at = 'x' WHERE id = ?", (v[ids[3]],))
    other = vid(conn, ids[0], "other-model")
    with transaction(conn):
        conn.execute("DELETE FROM semantic_turn_vectors WHERE model != ?", (MODEL,))  # a model prune
    assert gone(conn) == [(1, v[ids[1]], ids[1]), (2, v[ids[2]], ids[2]), (3, v[ids[3]], ids[3]),
                          (4, other, ids[0])]


def test_the_map_names_every_turn_the_matrix_holds_and_no_vector_row_is_asked_for(conn):
    ids = add_turns(conn, 6)
    store(conn, {m: basis(i) for i, m in enumerate(ids[:5])})  # the last turn has no vector
    mat = sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
    assert isinstance(mat, TurnMatrix)
    assert mat.current_rows(conn, ids) == {m: vid(conn, m) for m in ids[:5]}
    assert asked_by_message(conn, ids[:5]) == []
    assert len(asked_by_message(conn, ids)) == 1  # the turn without a vector is asked of the table
    got = vectors_of(conn, ids)
    assert sorted(got) == ids[:5] and all(np.array_equal(got[m], basis(i)) for i, m in enumerate(ids[:5]))


def test_the_rows_come_in_message_order_as_the_table_lookup_gives_them(conn):
    rng = np.random.default_rng(3)
    ids = add_turns(conn, 40)
    order = list(rng.permutation(ids))  # embedded in another order than the messages': row ids differ
    store(conn, {int(m): rng.standard_normal(DIM).astype(np.float32) for m in order[:35]})
    asked = [int(m) for m in rng.permutation(ids)]
    sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
    conn.execute("BEGIN")  # inside a transaction the map steps aside: the vector rows are asked of the table
    by_table = tic._vectors(conn, MODEL, DIM, asked, PROJECT)
    conn.execute("ROLLBACK")
    by_map = tic._vectors(conn, MODEL, DIM, asked, PROJECT)
    assert asked_by_message(conn, [m for m in asked if m in by_map[0]]) == []
    assert list(by_map[0].items()) == list(by_table[0].items()) == [(m, i) for i, m in enumerate(sorted(
        set(ids) & set(order[:35])))]
    assert np.array_equal(by_map[1], by_table[1])


def test_a_rewritten_transcript_reusing_message_ids_never_gets_the_old_vectors(conn):
    ids = add_turns(conn, 4)
    store(conn, {m: basis(i) for i, m in enumerate(ids)})
    sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)  # the old vectors are in the matrix and its map
    with transaction(conn):  # the transcript is rewritten: its newest rows go, new rows get the same ids
        conn.execute("DELETE FROM messages WHERE id IN (?, ?)", (ids[2], ids[3]))
        sid, fid = conn.execute("SELECT session_id, file_id FROM messages WHERE id = ?", (ids[0],)).fetchone()
        insert_messages(conn, [(sid, fid, f"n{i}", None, 10 + i, "2026-11-02T10:00:00.000Z", "user", "message",
                                None, "active", f"another turn {i} on the billing export") for i in range(2)])
    assert [r[0] for r in conn.execute("SELECT id FROM messages WHERE entry_id LIKE 'n%' ORDER BY id")] == ids[2:]
    # no search has read the matrix up to date since: the records of the rows that went are enough
    got = vectors_of(conn, ids)
    assert sorted(got) == ids[:2] and np.array_equal(got[ids[0]], basis(0))
    store(conn, {ids[2]: basis(6), ids[3]: basis(7)})  # the new turns are embedded
    got = vectors_of(conn, ids)  # still before the matrix reads the new rows: they come from the table
    assert [int(np.argmax(got[m])) for m in ids] == [0, 1, 6, 7]
    mat = sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
    assert mat.current_rows(conn, ids) == {m: vid(conn, m) for m in ids}
    got = vectors_of(conn, ids)
    assert [int(np.argmax(got[m])) for m in ids] == [0, 1, 6, 7]


def test_a_turn_embedded_again_or_whose_vector_is_dropped_leaves_the_map(conn):
    ids = add_turns(conn, 4)
    store(conn, {m: basis(i) for i, m in enumerate(ids)})
    mat = sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
    store(conn, {ids[0]: basis(4)}, replace=True)  # same project: the new row id is larger
    store(conn, {ids[1]: basis(5)}, project="q", replace=True)  # its session moved: another project's matrix
    with transaction(conn):  # redaction drops the vector of a turn whose text it changed
        conn.execute("DELETE FROM semantic_turn_vectors WHERE message_id = ?", (ids[2],))
    assert mat.current_rows(conn, ids) == {ids[3]: vid(conn, ids[3])}
    got = vectors_of(conn, ids)
    assert sorted(got) == [ids[0], ids[1], ids[3]]
    assert [int(np.argmax(got[m])) for m in (ids[0], ids[1], ids[3])] == [4, 5, 3]
    sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)  # reads the re-embedded row of this project
    assert mat.current_rows(conn, ids) == {ids[0]: vid(conn, ids[0]), ids[3]: vid(conn, ids[3])}


def test_another_models_or_dimensions_vectors_are_never_taken_for_the_models_own(conn):
    ids = add_turns(conn, 3)
    store(conn, {m: basis(i) for i, m in enumerate(ids)})
    store(conn, {m: basis(i + 3) for i, m in enumerate(ids)}, model="other-model")
    store(conn, {ids[0]: np.ones(DIM + 4, dtype=np.float32)}, model="wide-model")
    sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
    other = sources.matrix(conn, "sessions", "other-model", DIM, PROJECT)
    assert other.current_rows(conn, ids) == {m: vid(conn, m, "other-model") for m in ids}
    assert [int(np.argmax(v)) for v in vectors_of(conn, ids).values()] == [0, 1, 2]
    assert [int(np.argmax(v)) for v in vectors_of(conn, ids, "other-model").values()] == [3, 4, 5]
    assert sources.cached(conn, "sessions", MODEL, DIM + 4, PROJECT) is None  # the query's dimension differs
    assert vectors_of(conn, ids, MODEL, DIM + 4) == {}  # the model's rows are 8-d: none compared with 12
    wide = vectors_of(conn, ids, "wide-model", DIM + 4)
    assert list(wide) == [ids[0]] and np.array_equal(wide[ids[0]], np.ones(DIM + 4, dtype=np.float32))


def test_without_a_loaded_matrix_every_row_is_read_from_the_table(conn):
    ids = add_turns(conn, 3)
    store(conn, {m: basis(i) for i, m in enumerate(ids)})
    assert sources.cached(conn, "sessions", MODEL, DIM, PROJECT) is None
    assert len(asked_by_message(conn, ids)) == 1
    assert [int(np.argmax(v)) for v in vectors_of(conn, ids).values()] == [0, 1, 2]
    assert sources.cached(conn, "sessions", MODEL, DIM, PROJECT) is None  # and none is loaded for it


def test_inside_a_transaction_the_map_is_not_used_and_a_rolled_back_row_never_enters_it(conn):
    ids = add_turns(conn, 3)
    store(conn, {m: basis(i) for i, m in enumerate(ids[:2])})
    mat = sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
    conn.execute("BEGIN")
    conn.execute("DELETE FROM messages WHERE id = ?", (ids[0],))
    conn.execute("INSERT INTO semantic_turn_vectors(message_id, model, project_id, dim, vector, created_at) "
                 "VALUES (?, ?, ?, ?, ?, 'x')", (ids[2], MODEL, PROJECT, DIM, basis(7).tobytes()))
    assert mat.current_rows(conn, ids) == {}
    sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)  # reads the uncommitted row into the matrix
    got = vectors_of(conn, ids)  # this connection's own view, from the table
    assert sorted(got) == [ids[1], ids[2]] and int(np.argmax(got[ids[2]])) == 7
    conn.execute("ROLLBACK")
    assert mat.current_rows(conn, ids) == {ids[0]: vid(conn, ids[0]), ids[1]: vid(conn, ids[1])}
    assert sorted(vectors_of(conn, ids)) == ids[:2]


def test_an_index_without_the_record_table_is_read_from_the_table_until_its_matrix_is_loaded_again(tmp_path):
    sources.forget()
    conn = open_index(tmp_path / "data")
    migrate(conn, SEMANTIC_MIGRATIONS[:6])  # an index file of the version before migration 007
    try:
        ids = add_turns(conn, 3)
        store(conn, {m: basis(i) for i, m in enumerate(ids)})
        mat = sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
        assert mat.current_rows(conn, ids) == {} and mat.gone_seen is None
        assert [int(np.argmax(v)) for v in vectors_of(conn, ids).values()] == [0, 1, 2]
        assert migrate(conn, SEMANTIC_MIGRATIONS) == ["semantic_007_turn_vectors_gone", "semantic_008_usable_vectors"]
        with transaction(conn):  # deleted once the records exist; the map stays off for this matrix
            conn.execute("DELETE FROM messages WHERE id = ?", (ids[0],))
        assert mat.current_rows(conn, ids) == {}
        assert sorted(vectors_of(conn, ids)) == ids[1:]
        sources.forget(conn)
        mat = sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
        assert mat.current_rows(conn, ids) == {m: vid(conn, m) for m in ids[1:]}
    finally:
        conn.close()
        sources.forget()


def test_records_dropped_before_the_matrix_read_them_turn_the_map_off(conn):
    ids = add_turns(conn, 3)
    store(conn, {m: basis(i) for i, m in enumerate(ids)})
    mat = sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
    with transaction(conn):
        conn.execute("DELETE FROM messages WHERE id = ?", (ids[0],))
    assert mat.current_rows(conn, ids) == {m: vid(conn, m) for m in ids[1:]} and mat.gone_seen[0] == 1
    with transaction(conn):
        conn.execute("DELETE FROM messages WHERE id = ?", (ids[1],))
        conn.execute(f"DELETE FROM {GONE_TABLE}")  # as the pruning does to records older than GONE_KEEP
        conn.execute("DELETE FROM messages WHERE id = ?", (ids[2],))
    assert mat.current_rows(conn, ids) == {} and mat.gone_seen is None
    assert vectors_of(conn, ids) == {}


def test_a_record_table_that_is_not_the_one_seen_before_turns_the_map_off(conn):
    ids = add_turns(conn, 3)
    store(conn, {m: basis(i) for i, m in enumerate(ids)})
    with transaction(conn):
        conn.execute("DELETE FROM messages WHERE id = ?", (ids[0],))
    mat = sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
    assert mat.gone_seen == (1, 1)
    with transaction(conn):  # another file at the same path would hold other records under the same numbers
        conn.execute(f"UPDATE {GONE_TABLE} SET id = 99 WHERE seq = 1")
    assert mat.current_rows(conn, ids) == {} and mat.gone_seen is None


def test_the_record_table_keeps_its_newest_records(conn):
    with transaction(conn):
        conn.executemany(f"INSERT INTO {GONE_TABLE}(id, message_id) VALUES (?, ?)",
                         [(i, i) for i in range(GONE_KEEP + 1500)])
    assert conn.execute(f"SELECT min(seq), max(seq), count(*) FROM {GONE_TABLE}").fetchone() == (
        1001, GONE_KEEP + 1500, GONE_KEEP + 500)


def test_a_missing_record_between_those_read_turns_the_map_off(conn):
    ids = add_turns(conn, 4)
    store(conn, {m: basis(i) for i, m in enumerate(ids)})
    mat = sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
    with transaction(conn):
        for m in ids[:3]:
            conn.execute("DELETE FROM messages WHERE id = ?", (m,))
        conn.execute(f"DELETE FROM {GONE_TABLE} WHERE seq = 2")
    assert mat.current_rows(conn, ids) == {} and mat.gone_seen is None
    assert sorted(vectors_of(conn, ids)) == [ids[3]]


def test_only_live_rows_are_named_and_the_newest_row_of_a_message_wins():
    mat = TurnMatrix(DIM)
    rows = [(7, DIM, basis(1).tobytes(), 100), (5, DIM, basis(2).tobytes(), 100), (6, DIM, basis(3).tobytes(), 101),
            (8, DIM, b"\x00" * 4, 102)]  # a short (damaged) row: not in the matrix, not in the map
    assert mat.apply_rows(rows, True) == (3, 1)
    assert mat._vid_of == {100: 7, 101: 6}
    mat.drop(6)  # a search found the row gone
    mat.gone_seen, mat._started = (0, 0), True

    class Quiet:  # a connection whose record table is empty
        in_transaction = False

        def execute(self, *_a):
            return self

        def fetchall(self):
            return []

    assert mat.current_rows(Quiet(), [100, 101, 102]) == {100: 7}
    mat.apply_rows([(9, DIM, basis(4).tobytes(), 103)], False)  # a step that may not map: in the matrix only
    assert 9 in mat and mat.current_rows(Quiet(), [103]) == {}


def test_rows_found_through_the_map_and_through_the_table_come_back_in_message_order(conn):
    rng = np.random.default_rng(4)
    ids = add_turns(conn, 10)
    store(conn, {m: rng.standard_normal(DIM).astype(np.float32) for m in ids[::2]})
    mat = sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
    conn.execute("BEGIN")  # rows the matrix reads inside a transaction are not mapped, even once committed
    for m in ids[1::2]:
        conn.execute("INSERT INTO semantic_turn_vectors(message_id, model, project_id, dim, vector, created_at) "
                     "VALUES (?, ?, ?, ?, ?, 'x')", (m, MODEL, PROJECT, DIM,
                                                     rng.standard_normal(DIM).astype("<f4").tobytes()))
    sources.matrix(conn, "sessions", MODEL, DIM, PROJECT)
    conn.execute("COMMIT")
    assert sorted(mat.current_rows(conn, ids)) == ids[::2] and all(vid(conn, m) in mat for m in ids)
    by_both = tic._vectors(conn, MODEL, DIM, ids[::-1], PROJECT)
    conn.execute("BEGIN")
    by_table = tic._vectors(conn, MODEL, DIM, ids[::-1], PROJECT)
    conn.execute("ROLLBACK")
    assert list(by_both[0].items()) == list(by_table[0].items()) == [(m, i) for i, m in enumerate(ids)]
    assert np.array_equal(by_both[1], by_table[1])
