"""The window cosines of session turns (retrieval/turns_in_context.py) as matrix products: the same values as
one turn at a time (each turn's vector plus half of each neighbour's at distance 1 and a quarter at distance 2,
normalised, against the query), turns without a vector by keyword only, and a damaged vector row left out
instead of failing the recall."""

from __future__ import annotations

import numpy as np
import pytest

from pi_memory.index import open_index, transaction
from pi_memory.index.db import migrate
from pi_memory.index.indexer import insert_messages
from pi_memory.index.semantic_schema import SEMANTIC_MIGRATIONS
from pi_memory.retrieval import turns_in_context as tic
from pi_memory.retrieval.context import neighbours

MODEL, DIM = "test-model", 8


@pytest.fixture
def conn(tmp_path):
    c = open_index(tmp_path / "data")
    migrate(c, SEMANTIC_MIGRATIONS)  # the semantic tables, as the embedded backend creates them
    yield c
    c.close()


def add_turns(conn, texts: list[str]) -> list[int]:
    with transaction(conn):
        sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) "
                           "VALUES ('pi', 's', '/w', 'p', 'demo') RETURNING id").fetchone()[0]
        fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES ('/s.jsonl', ?, 0, 0) "
                           "RETURNING id", (sid,)).fetchone()[0]
        insert_messages(conn, [(sid, fid, f"e{i}", None, i + 1, "2026-11-01T10:00:00.000Z",
                                "user" if i % 2 == 0 else "assistant", "message", None, "active", t)
                               for i, t in enumerate(texts)])
    return [r[0] for r in conn.execute("SELECT id FROM messages WHERE session_id = ? ORDER BY id", (sid,))]


def store(conn, vectors: dict[int, np.ndarray | bytes]) -> None:
    with transaction(conn):
        for mid, v in vectors.items():
            blob = v if isinstance(v, bytes) else v.astype("<f4").tobytes()
            conn.execute("INSERT INTO semantic_turn_vectors(message_id, model, project_id, dim, vector, created_at) "
                         "VALUES (?, ?, 'p', ?, ?, '2026-11-01T10:00:00.000Z')", (mid, MODEL, DIM, blob))


def unit(rng) -> np.ndarray:
    v = rng.standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def one_at_a_time(conn, pool, vecs, qvec) -> dict[int, float]:
    """The reference: the window of each turn summed in a loop, a neighbour d turns away weighted 0.5 / d."""
    position = {m: i for i, m in enumerate(conn_ids(conn))}
    out = {}
    for m in pool:
        if m not in vecs:
            continue
        total = vecs[m].copy()
        for n in neighbours(conn, [m], window=2)[m]:
            if n in vecs:
                total += 0.5 / abs(position[n] - position[m]) * vecs[n]
        out[m] = float(total @ qvec) / float(np.linalg.norm(total))
    return out


def conn_ids(conn) -> list[int]:
    """The turns in session order (every test turn here is long enough to be a turn)."""
    return [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY id")]


def test_window_cosines_equal_the_one_turn_at_a_time_values(conn):
    rng = np.random.default_rng(5)
    ids = add_turns(conn, [f"turn number {i} about the staging database" for i in range(12)])
    vecs = {m: unit(rng) for i, m in enumerate(ids) if i not in (3, 7)}  # turns 3 and 7 not embedded yet
    store(conn, vecs)
    qvec = unit(rng)
    pool = [ids[0], ids[2], ids[3], ids[4], ids[8], ids[11]]
    row_of, matrix = tic._vectors(conn, MODEL, DIM, ids)
    assert tic.WINDOW_TURNS == 2 and tic.WINDOW_WEIGHT == 0.5
    own, window = tic._window_cosines(pool, neighbours(conn, pool, window=2), row_of, matrix, qvec)
    expected = one_at_a_time(conn, pool, vecs, qvec)
    assert sorted(window) == sorted(expected) == sorted(own) and ids[3] not in window
    for m in expected:
        assert window[m] == pytest.approx(expected[m], abs=1e-6)
        assert own[m] == pytest.approx(float(vecs[m] @ qvec), abs=1e-6)


def test_rank_keeps_a_turn_without_a_vector_by_keyword_and_leaves_a_damaged_row_out(conn):
    rng = np.random.default_rng(9)
    ids = add_turns(conn, ["the staging database listens on port 6543", "noted", "and the replica on 6544"])
    qvec = unit(rng)
    store(conn, {ids[0]: qvec, ids[2]: b"\x00" * 12})  # ids[2]: 3 floats where 8 are due
    ranked = tic.rank(conn, "staging port", [(ids[2], 2.0), (ids[0], 1.0)], [], qvec, MODEL)
    cosines = {r.id: r.cosine for r in ranked}
    assert [r.id for r in ranked] == [ids[2], ids[0]]  # the better keyword score still leads without a vector
    assert cosines[ids[0]] == pytest.approx(1.0, abs=1e-6) and cosines[ids[2]] is None


def test_vectors_come_from_the_projects_matrix_and_the_table_alike_and_bad_rows_stay_out(conn):
    from pi_memory.semantic import sources

    rng = np.random.default_rng(11)
    ids = add_turns(conn, [f"turn {i} about the release train" for i in range(6)])
    vecs = {m: unit(rng) for m in ids[:4]}
    store(conn, vecs)
    nan = np.full(DIM, np.nan, dtype=np.float32)
    store(conn, {ids[4]: nan, ids[5]: np.ones(DIM + 2, dtype=np.float32)})  # a NaN row; 10 floats where 8 are due
    with transaction(conn):
        conn.execute("UPDATE semantic_turn_vectors SET dim = ? WHERE message_id = ?", (DIM + 2, ids[5]))
    sources.forget(conn)
    from_table = tic._vectors(conn, MODEL, DIM, ids, "p")  # no matrix loaded: every row read from the table
    sources.matrix(conn, "sessions", MODEL, DIM, "p")
    assert sources.cached(conn, "sessions", MODEL, DIM, "p") is not None
    from_matrix = tic._vectors(conn, MODEL, DIM, ids, "p")
    for row_of, matrix in (from_table, from_matrix):
        assert sorted(row_of) == sorted(ids[:4])  # the NaN row and the other dimension are left out
        for m in ids[:4]:
            assert np.allclose(matrix[row_of[m]], vecs[m])
    sources.forget(conn)


def test_a_neighbour_two_turns_away_counts_half_as_much_as_the_next_one(conn):
    ids = add_turns(conn, ["which board game should we bring", "Catan, everyone loved it last year",
                           "great, I will pack it tonight", "also remember the snacks for the train"])
    e = np.eye(DIM, dtype=np.float32)
    store(conn, {ids[0]: e[0], ids[1]: e[1], ids[2]: e[2], ids[3]: e[3]})
    row_of, matrix = tic._vectors(conn, MODEL, DIM, ids)
    _own, window = tic._window_cosines([ids[1], ids[3]], neighbours(conn, [ids[1], ids[3]], window=2), row_of,
                                       matrix, e[0])
    # ids[1]: e1 + 0.5 e0 + 0.5 e2 + 0.25 e3; ids[3]: e3 + 0.5 e2 + 0.25 e1 (e0 is three turns away)
    assert window[ids[1]] == pytest.approx(0.5 / np.sqrt(1 + 0.25 + 0.25 + 0.0625), abs=1e-6)
    assert window[ids[3]] == 0.0
    _own, window = tic._window_cosines([ids[3]], neighbours(conn, [ids[3]], window=2), row_of, matrix, e[1])
    assert window[ids[3]] == pytest.approx(0.25 / np.sqrt(1 + 0.25 + 0.0625), abs=1e-6)


def test_author_is_a_capitalised_name_and_a_colon_heading_the_turn():
    assert tic.author("Caroline: I went to the support group") == "Caroline"
    assert tic.author("Mary Ann Lee: hi there") == "Mary Ann Lee"
    assert tic.author("José: hola") == "José"
    assert tic.author("note: lowercase is no name") == ""
    assert tic.author("Caroline said: not at the start") == ""
    assert tic.author("http://example.com") == ""
    assert tic.author("") == ""


def test_said_by_needs_a_named_speaker_among_two_or_more_who_head_turns():
    heads = {1: "Caroline: hi", 2: "Melanie: hello", 3: "Caroline: the group", 4: "Melanie: my paintings",
             5: "Thanks, Melanie!", 6: "Error: disk full"}
    assert tic.said_by("What did Melanie paint?", heads) == {2, 4}
    assert tic.said_by("what did melanie paint", heads) == {2, 4}  # any case, as the turn index reads names
    assert tic.said_by("What did Caroline and Melanie discuss?", heads) == set()  # every speaker named
    assert tic.said_by("What was the Error about?", heads) == set()  # heads one turn: a label, no speaker
    assert tic.said_by("What did Melanie paint?", {1: "Melanie: a", 2: "Melanie: b"}) == set()  # one speaker
    assert tic.said_by("What did Jon paint?", heads) == set()


def test_rank_lifts_the_turns_of_the_speaker_the_question_names(conn, monkeypatch):
    ids = add_turns(conn, ["Caroline: I painted a lake sunrise last year", "Melanie: I painted a lake sunrise too",
                           "Caroline: it was about my painting class", "Melanie: my painting class is fun"])
    keyword = [(ids[0], 2.0), (ids[1], 1.8), (ids[2], 1.0), (ids[3], 0.9)]
    order = [r.id for r in tic.rank(conn, "What did Melanie paint?", keyword, [], None, None)]
    assert order == [ids[1], ids[0], ids[2], ids[3]]  # x1.5 on a min-max score: 1.36 above 1.0; 0 stays last
    monkeypatch.setattr(tic, "SPEAKER_BOOST", 0.0)
    assert [r.id for r in tic.rank(conn, "What did Melanie paint?", keyword, [], None, None)] == \
        [ids[0], ids[1], ids[2], ids[3]]


def test_rank_reads_only_the_neighbours_it_was_not_given_and_ranks_as_if_it_read_them_all(conn, monkeypatch):
    from pi_memory.retrieval import context

    ids = add_turns(conn, [f"turn {i} on the nightly backup of the ledger" for i in range(8)])
    e = np.eye(DIM, dtype=np.float32)
    store(conn, {m: e[i] for i, m in enumerate(ids)})
    qvec = e[7]  # the query means what the last turn says
    keyword, vector = [(ids[1], 3.0), (ids[4], 2.0)], [(ids[7], 1.0), (ids[4], 0.0)]
    plain = tic.rank(conn, "nightly backup", keyword, vector, qvec, MODEL)
    known = neighbours(conn, [ids[1], ids[4]], window=2)
    asked: list[list[int]] = []
    real = context.neighbours

    def counting(c, message_ids, *args, **kwargs):
        asked.append(list(message_ids))
        return real(c, message_ids, *args, **kwargs)

    monkeypatch.setattr(context, "neighbours", counting)
    given = tic.rank(conn, "nightly backup", keyword, vector, qvec, MODEL, known=known)
    assert asked == [[ids[7]]]  # the two keyword turns' windows were given
    assert [(r.id, r.score, r.cosine) for r in given] == [(r.id, r.score, r.cosine) for r in plain]
    # what it is given is what it uses: ids[1] said to sit next to ids[7] gets a share of ids[7]'s meaning
    lied = tic.rank(conn, "nightly backup", keyword, vector, qvec, MODEL, known={**known, ids[1]: [ids[7]]})
    before, after = {r.id: r.score for r in plain}, {r.id: r.score for r in lied}
    assert after[ids[1]] > before[ids[1]] and after[ids[4]] == before[ids[4]]


def test_the_keyword_list_in_context_hands_on_the_windows_it_read(conn):
    from pi_memory.index import plan_query
    from pi_memory.retrieval import context
    from pi_memory.retrieval.bm25 import MESSAGES, Engine

    ids = add_turns(conn, ["where do the nightly ledger backups go", "to the cold bucket in eu-west",
                           "and how long are they kept", "ninety days, then they expire"])
    with transaction(conn):  # a tool result between turns: no window of its own
        conn.execute("UPDATE messages SET kind = 'tool_result', role = 'tool' WHERE id = ?", (ids[2],))
    plan = plan_query("nightly ledger backups kept", words=True, question=True)
    hits = context.rank(conn, Engine(conn, MESSAGES, [], []), plan.terms, [(ids[0], 2.0), (ids[2], 1.0)], 10)
    near = {h.id: h.near for h in hits}
    assert near[ids[2]] is None
    turns = [m for m in ids if m != ids[2]]
    expected = neighbours(conn, turns, window=2)
    assert {m: list(n) for m, n in near.items() if n is not None} == {m: expected[m] for m in near if m in expected}


def test_a_message_id_used_again_after_a_rewrite_never_gets_the_old_texts_vector(conn):
    from pi_memory.semantic import sources

    rng = np.random.default_rng(13)
    ids = add_turns(conn, [f"turn {i} about the on-call rota" for i in range(4)])
    old = {m: unit(rng) for m in ids}
    store(conn, old)
    sources.forget(conn)
    sources.matrix(conn, "sessions", MODEL, DIM, "p")  # the old vectors are in the process's matrix
    with transaction(conn):  # the newest transcript is rewritten: its rows (and vectors) go, new rows come
        conn.execute("DELETE FROM messages WHERE id IN (?, ?)", (ids[2], ids[3]))
        sid, fid = conn.execute("SELECT session_id, file_id FROM messages WHERE id = ?", (ids[0],)).fetchone()
        insert_messages(conn, [(sid, fid, f"n{i}", None, 10 + i, "2026-11-02T10:00:00.000Z", "user", "message",
                                None, "active", f"a different turn {i} on the billing export") for i in range(2)])
    again = [r[0] for r in conn.execute("SELECT id FROM messages WHERE entry_id LIKE 'n%' ORDER BY id")]
    assert again == ids[2:]  # SQLite gives the newest ids out again (no AUTOINCREMENT on messages)
    sources.matrix(conn, "sessions", MODEL, DIM, "p")
    row_of, matrix = tic._vectors(conn, MODEL, DIM, ids, "p")
    assert sorted(row_of) == sorted(ids[:2])  # the new turns have no vector yet: none of the old ones
    fresh = {m: unit(rng) for m in again}
    store(conn, fresh)
    sources.matrix(conn, "sessions", MODEL, DIM, "p")
    row_of, matrix = tic._vectors(conn, MODEL, DIM, ids, "p")
    for m in ids:
        assert np.allclose(matrix[row_of[m]], fresh.get(m, old[m]))
    sources.forget(conn)


def test_a_window_reads_two_turns_each_side_and_no_more_whatever_it_is_handed():
    e = np.eye(DIM, dtype=np.float32)
    row_of = {10 + i: i for i in range(7)}  # turns 10..16 in one session, turn 10 + i on axis i
    near = {13: [12, 11, 10, 14, 15, 16]}  # three each side handed on: the third (10, 16) is too far
    _own, window = tic._window_cosines([13], near, row_of, e[:7], e[0] + e[6])
    assert window[13] == 0.0  # axes 0 and 6 are three turns away: not in the window
    _own, window = tic._window_cosines([13], near, row_of, e[:7], e[1])
    assert window[13] == pytest.approx(0.25 / np.sqrt(1 + 2 * 0.25 + 2 * 0.0625), abs=1e-6)
    _own, window = tic._window_cosines([13], {13: [14]}, {13: 0, 14: 1}, e[:2], e[1])  # after side only
    assert window[13] == pytest.approx(0.5 / np.sqrt(1.25), abs=1e-6)
