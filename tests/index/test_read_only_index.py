"""The index of a data folder that cannot be written, opened for reading only (:mod:`pi_memory.index.read_only`):
real SQLite files on a folder that really denies writes (a tmpfs remounted read-only as root; see
tests/read_only_folder.py), in every state a WAL database can be found in, older or damaged."""

from __future__ import annotations

import logging
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from pi_memory.index import open_index, transaction  # noqa: E402
from pi_memory.index.db import IndexUnavailableError, migrate  # noqa: E402
from pi_memory.index.read_only import ReadOnlyConnection, read_only  # noqa: E402
from pi_memory.retrieval import memory_search, session_search  # noqa: E402
from pi_memory.storage import ReadOnlyDataError, storage_problem, write_blocker  # noqa: E402
from read_only_folder import seed  # noqa: E402


def texts(conn: sqlite3.Connection, query: str) -> list[str]:
    return [hit.snippet.replace("**", "") for hit in session_search(conn, query).results]


def test_a_wal_index_without_its_wal_and_shm_files_is_read(ro, tmp_path):
    seed(ro.folder, tmp_path / "sessions")
    assert (ro.folder / "index.sqlite3").read_bytes()[18] == 2  # a WAL database (header byte 18)
    assert not (ro.folder / "index.sqlite3-wal").exists() and not (ro.folder / "index.sqlite3-shm").exists()
    ro.freeze()
    before = ro.state()
    conn = open_index(ro.folder)
    try:
        assert isinstance(conn, ReadOnlyConnection) and read_only(conn).kind == ro.kind
        assert texts(conn, "staging port")[0] == "Run make deploy; the staging server listens on port 8443."
        assert texts(conn, "invoice rounding")[0] == "and the invoice rounding bug?"
        assert texts(conn, "kubernetes") == []
        assert [h.content for h in memory_search(conn, "build").results] == [
            "the build uses make and the deploy port is 8443"]
    finally:
        conn.close()
    assert ro.state() == before  # no -wal, -shm, lock or probe file; the usage counters untouched


def _wal_copy(tmp_path: Path, target: Path, sides: tuple[str, ...]) -> None:
    """Copy into ``target`` an index whose newest rows are only in its write-ahead log (a writer still has it
    open, no checkpoint), with the side files named in ``sides``."""
    from pi_memory.index import index_paths

    live = tmp_path / "live"
    seed(live, tmp_path / "sessions")
    conn = open_index(live)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    from read_only_folder import pi_session

    pi_session(tmp_path / "more" / "--work-shop--" / "s2.jsonl", "/work/shop",
               [("user", "which queue runs the nightly exports?"), ("assistant", "The exports queue, at 02:00.")])
    index_paths(conn, [tmp_path / "more"])
    assert (live / "index.sqlite3-wal").stat().st_size > 0
    for suffix in ("", *sides):
        shutil.copyfile(live / f"index.sqlite3{suffix}", target / f"index.sqlite3{suffix}")
    conn.close()


def test_a_wal_index_with_its_wal_and_shm_files_is_read_with_the_log(ro, tmp_path):
    _wal_copy(tmp_path, ro.folder, ("-wal", "-shm"))
    ro.freeze()
    before = ro.state()
    conn = open_index(ro.folder)
    try:
        assert read_only(conn) is not None
        assert texts(conn, "nightly exports") == ["which queue runs the nightly exports?",
                                                  "The exports queue, at 02:00."]  # rows only the log holds
    finally:
        conn.close()
    assert ro.state() == before


def test_a_wal_file_without_its_shm_file_is_said_to_be_unreadable(ro, tmp_path, caplog):
    _wal_copy(tmp_path, ro.folder, ("-wal",))
    ro.freeze()
    with caplog.at_level(logging.WARNING, logger="pi_memory.index.read_only"):
        conn = open_index(ro.folder)
    try:
        assert texts(conn, "staging port")[0] == "Run make deploy; the staging server listens on port 8443."
        assert texts(conn, "nightly exports") == []  # in the log, which cannot be read without its -shm
    finally:
        conn.close()
    wal = ro.folder / "index.sqlite3-wal"
    assert (f"the search index's write-ahead log {wal} cannot be read without its -shm file in a folder that "
            "cannot be written: changes made since its last checkpoint are not seen. To see them, copy the folder "
            "somewhere writable and point --dir or $PI_MEMORY_DIR at the copy.") in caplog.messages


def test_every_write_is_refused_with_the_folder_and_what_to_do(ro, tmp_path):
    seed(ro.folder, tmp_path / "sessions")
    ro.freeze()
    before = ro.state()
    conn = open_index(ro.folder)
    try:
        with pytest.raises(ReadOnlyDataError) as caught, transaction(conn):
            conn.execute("DELETE FROM memories")
        assert str(caught.value) == ro.refusal()
        problem = storage_problem(caught.value, ro.folder)
        assert problem.kind == ro.kind and problem.message == ro.refusal()
        with pytest.raises(sqlite3.OperationalError, match="readonly"):  # a write around transaction(): query_only
            conn.execute("DELETE FROM memories")
        from pi_memory.index import index_paths

        with pytest.raises(ReadOnlyDataError):  # refused before any transcript is read
            index_paths(conn, [tmp_path / "sessions"])
    finally:
        conn.close()
    assert ro.state() == before


@pytest.mark.parametrize("missing", [["009_utc_timestamps"], ["008_redact_secrets", "009_utc_timestamps"]])
def test_an_index_needing_a_migration_is_refused_by_name(ro, tmp_path, missing):
    seed(ro.folder, tmp_path / "sessions")
    conn = sqlite3.connect(ro.folder / "index.sqlite3")  # as an older pi-memory left it
    conn.executemany("DELETE FROM schema_migrations WHERE name = ?", [(m,) for m in missing])
    conn.commit()
    conn.close()
    why, todo, error = refused_open(ro, ReadOnlyDataError)
    assert error == (
        f"The search index in {ro.folder} lacks schema steps this version of pi-memory needs ({', '.join(missing)}): "
        f"it was written by an older version. They cannot be added now: {why} Nothing was read or changed. {todo}; "
        "once the folder is writable, any pi-memory command adds them. To look at it as it is, copy the folder "
        "somewhere writable and point --dir or $PI_MEMORY_DIR at the copy.")


def refused_open(ro, error: type[Exception]) -> tuple[str, str, str]:
    """Freeze ``ro`` and open its index, which must raise ``error`` and change nothing: (what is wrong, what to
    do, as the refusal says them, and the error's text)."""
    ro.freeze()
    before = ro.state()
    with pytest.raises(error) as caught:
        open_index(ro.folder)
    assert ro.state() == before
    why, todo = ro.parts()
    return why[0].lower() + why[1:], todo[:-1], str(caught.value)


def test_a_feature_never_used_in_the_index_reads_as_empty(ro, tmp_path):
    from pi_memory.index.semantic_schema import SEMANTIC_MIGRATIONS
    from pi_memory.learning.log import LEARNING_MIGRATIONS, tokens_per_day

    open_index(ro.folder).close()  # the core schema only: no semantic memory, no learning log yet
    ro.freeze()
    conn = open_index(ro.folder)
    try:
        migrate(conn, LEARNING_MIGRATIONS)
        migrate(conn, LEARNING_MIGRATIONS)  # a second reader: attached once
        migrate(conn, SEMANTIC_MIGRATIONS)
        assert conn.execute("SELECT count(*) FROM learning_jobs").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM semantic_memories").fetchone() == (0,)
        assert sum(day["jobs"] for day in tokens_per_day(conn)) == 0
        with pytest.raises(ReadOnlyDataError), transaction(conn):
            pass
    finally:
        conn.close()


DEPLOY, PORT = "how do we deploy to staging?", "Run make deploy; the staging server listens on port 8443."
BUG, FIX = "and the invoice rounding bug?", "Fixed with banker's rounding in totals.py."
EXPECTED = {  # read in context, as recall reads turns: the other turns of the session come as "context"
    "staging port": [(PORT, "all"), (DEPLOY, "any"), (BUG, "context"), (FIX, "context")],
    "invoice rounding": [(BUG, "all"), (FIX, "any"), (PORT, "context"), (DEPLOY, "context")],
    "how do we deploy": [(DEPLOY, "all"), (PORT, "all"), (BUG, "context"), (FIX, "context")],
}


def test_session_search_with_an_embedder_reads_an_index_semantic_memory_never_used(ro, tmp_path):
    """The hosts' session_search fuses turn vectors (its embedder is semantic memory's). In a read-only folder
    whose index never held the semantic tables it crashed with `no such table: semantic_turn_vectors` (found
    when the CLI began to search with the hosts' own tools); the tables now read as empty there, so the search
    answers by its keyword list."""
    from pi_memory.embed import get_embedder

    seed(ro.folder, tmp_path / "sessions")
    ro.freeze()
    conn = open_index(ro.folder)
    try:
        assert read_only(conn) is not None
        for query in ("staging port", "invoice rounding", "how do we deploy"):
            found = session_search(conn, query, embedder=get_embedder())
            assert [(hit.snippet.replace("**", ""), hit.match) for hit in found.results] == EXPECTED[query], query
    finally:
        conn.close()


def test_a_read_only_folder_without_an_index_answers_from_its_markdown(ro):
    (ro.folder / "MEMORY.md").write_text("the build uses make\n")
    ro.freeze()
    conn = open_index(ro.folder)
    try:
        assert [h.content for h in memory_search(conn, "build").results] == ["the build uses make"]
        assert texts(conn, "build") == []
    finally:
        conn.close()
    assert ro.state() == {"MEMORY.md": ro.state()["MEMORY.md"]}  # no index file made


def test_a_damaged_index_in_a_read_only_folder_is_not_repaired(ro):
    (ro.folder / "index.sqlite3").write_bytes(b"SQLite format 3\x00" + b"this is not a database" * 100)
    why, todo, error = refused_open(ro, IndexUnavailableError)  # not set aside, no rebuild
    assert error == (f"The search index {ro.folder / 'index.sqlite3'} is damaged (file is not a database), and it "
                     f"cannot be repaired here: {why} Nothing was changed. {todo}, then run the command again to "
                     "repair it.")


def test_write_blocker_finds_what_stops_a_write_without_writing(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    assert write_blocker(folder) is None
    index = folder / "index.sqlite3"
    index.write_bytes(b"")
    index.chmod(0o444)
    kind, detail = write_blocker(folder, [index])
    assert kind == "permission" and detail.startswith(f"the mode of {index} is 0444")
    assert write_blocker(folder, [folder / "gone"]) is None
    folder.chmod(0o555)
    try:
        assert write_blocker(folder)[0] == "permission"
        assert write_blocker(folder / "not" / "made")[0] == "permission"  # judged by where it would be created
    finally:
        folder.chmod(0o755)
    assert list(folder.iterdir()) == [index]


def reopen_frozen(conn, ro):
    """Close ``conn``, make the folder read-only, and open its index again: ``(connection, the folder's state)``."""
    conn.close()
    ro.freeze()
    before = ro.state()
    return open_index(ro.folder), before


def test_a_step_readers_do_not_need_is_not_asked_of_a_read_only_index(ro, tmp_path):
    # an index written before semantic_007 (the turn matrix's record of gone vector rows) in a read-only folder:
    # it is read as it is, and the turn matrix looks its vector rows up in the table (its map stays off)
    import numpy as np

    from pi_memory.index.semantic_schema import GONE_TABLE, SEMANTIC_MIGRATIONS
    from pi_memory.retrieval.turns_in_context import _vectors
    from pi_memory.semantic import sources

    seed(ro.folder, tmp_path / "sessions")
    conn = open_index(ro.folder)
    migrate(conn, SEMANTIC_MIGRATIONS)
    mids = [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY id LIMIT 2")]
    vec = np.array([1.0, 0.0, 0.0, 0.0], dtype="<f4")
    with transaction(conn):
        conn.executemany("INSERT INTO semantic_turn_vectors(message_id, model, project_id, dim, vector, created_at) "
                         "VALUES (?, 'm', '', 4, ?, '2026-11-01T00:00:00.000Z')", [(m, vec.tobytes()) for m in mids])
    conn.executescript(f"DROP TABLE {GONE_TABLE}; DROP TRIGGER IF EXISTS semantic_turn_vectors_gone_ad; "
                       "DROP TRIGGER IF EXISTS semantic_turn_vectors_gone_au; "
                       "DROP TRIGGER IF EXISTS semantic_turn_vectors_gone_bi; "
                       "DELETE FROM schema_migrations WHERE name = 'semantic_007_turn_vectors_gone';")
    conn, before = reopen_frozen(conn, ro)
    try:
        migrate(conn, SEMANTIC_MIGRATIONS)  # nothing applied, nothing refused
        assert isinstance(conn, ReadOnlyConnection)
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (GONE_TABLE,)).fetchone()
        sources.matrix(conn, "sessions", "m", 4, None)
        row_of, matrix = _vectors(conn, "m", 4, mids)
        assert sorted(row_of) == sorted(mids) and matrix.shape == (2, 4)
    finally:
        conn.close()
    assert ro.state() == before


def test_an_index_from_before_the_refill_guard_is_searched_in_a_read_only_folder(ro, tmp_path):
    """Migration 010 only changes two triggers: an index written before it (every existing one) is read as it is
    in a folder that cannot be written, as the previous version read it."""
    from pi_memory.retrieval import session_search

    seed(ro.folder, tmp_path / "sessions")
    conn = open_index(ro.folder)
    conn.execute("DELETE FROM schema_migrations WHERE name = '010_word_index_refill_guard'")
    conn, before = reopen_frozen(conn, ro)
    try:
        assert isinstance(conn, ReadOnlyConnection)
        hits = session_search(conn, "staging deploy", limit=3).results
        assert [h.snippet.replace("**", "") for h in hits][:1] == ["how do we deploy to staging?"]
    finally:
        conn.close()
    assert ro.state() == before


def test_an_index_from_before_the_turns_index_is_recalled_from_in_a_read_only_folder(ro, tmp_path):
    """Migration 011 only adds an index for speed: an index written before it is read in a folder that cannot be
    written, its context windows seeking through ``messages_session`` as before."""
    from pi_memory.retrieval import context as turn_context

    seed(ro.folder, tmp_path / "sessions")
    conn = open_index(ro.folder)
    conn.execute("DROP INDEX messages_turns")
    conn.execute("DELETE FROM schema_migrations WHERE name = '011_turns_index'")
    ids = [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY id")]
    writable = turn_context.neighbours(conn, ids, 2)
    conn, before = reopen_frozen(conn, ro)
    try:
        assert isinstance(conn, ReadOnlyConnection)
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'messages_turns'").fetchone() == (0,)
        assert turn_context.neighbours(conn, ids, 2) == writable
        assert any(writable.values())
    finally:
        conn.close()
    assert ro.state() == before
