"""FTS5 segment upkeep (:mod:`pi_memory.index.segments`): few segments after small writes, and no word index
driven into FTS5's level limit by SQLite before 3.42 -- where 1,148 passes of the session indexer, each
ending with a negative merge, left ``messages_fts`` failing every read and write with "database disk image is
malformed"."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import add_session, pi_message, write_lines

from pi_memory.index import segments
from pi_memory.index.db import open_index, transaction
from pi_memory.index.indexer import index_paths
from pi_memory.retrieval import session_search

OLD_SQLITE = not segments.LEVELS_BOUNDED


def fts_table(conn: sqlite3.Connection, name: str = "t") -> None:
    conn.execute(f"CREATE VIRTUAL TABLE {name} USING fts5(text, content='', columnsize=0)")


def sound(conn: sqlite3.Connection, table: str) -> bool:
    try:
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
    except sqlite3.DatabaseError:
        return False
    return True


def distinct_segments(conn: sqlite3.Connection, table: str) -> int:
    return conn.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0]


def words(i: int) -> str:
    return f"note{i} alpha{i % 7} beta{i % 13} gamma{i % 29} shared"


def test_structure_reads_levels_and_segments():
    conn = sqlite3.connect(":memory:", isolation_level=None)
    fts_table(conn)
    assert segments.structure(conn, "t") in (None, (0, 0))  # nothing written yet
    for i in range(1, 4):
        conn.execute("INSERT INTO t(rowid, text) VALUES (?, ?)", (i, words(i)))
    levels, count = segments.structure(conn, "t")
    assert count == 3 == distinct_segments(conn, "t")
    assert levels >= 1
    conn.execute("INSERT INTO t(t) VALUES ('optimize')")
    assert segments.structure(conn, "t")[1] == 1 == distinct_segments(conn, "t")
    assert segments.structure(conn, "no_such_table") is None


def test_settle_keeps_a_small_write_index_sound_and_low():
    """The failing input: one small write after another, each followed by the indexer's merge (1,200 of them)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    fts_table(conn)
    counts = []
    for i in range(1, 1201):
        conn.execute("BEGIN")
        conn.execute("INSERT INTO t(rowid, text) VALUES (?, ?)", (i, words(i)))
        segments.settle(conn, "t")
        conn.execute("COMMIT")
        counts.append(segments.structure(conn, "t")[1])
    assert sound(conn, "t")
    levels, _ = segments.structure(conn, "t")
    assert levels < 30
    assert max(counts[600:]) <= 16  # automerge alone let 24 pile up in the same test
    assert conn.execute("SELECT count(*) FROM t WHERE t MATCH 'shared'").fetchone()[0] == 1200


def test_settle_leaves_a_few_segments_alone():
    conn = sqlite3.connect(":memory:", isolation_level=None)
    fts_table(conn)
    for i in range(1, segments.SEGMENT_CAP + 1):
        conn.execute("INSERT INTO t(rowid, text) VALUES (?, ?)", (i, words(i)))
    before = conn.execute("SELECT block FROM t_data WHERE id = 10").fetchone()[0]
    segments.settle(conn, "t")
    assert conn.execute("SELECT block FROM t_data WHERE id = 10").fetchone()[0] == before


def test_repeated_optimize_never_breaks_the_index():
    """``optimize`` after every write, 1,200 times: on SQLite before 3.42 the raw command breaks the index at
    1,145; ours stops merging once the index is over ``REPAIR_AT`` levels (the next open rebuilds it), so it
    never gets near the limit."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    fts_table(conn, "messages_fts")
    conn.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, text TEXT, fts_text TEXT)")
    conn.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
    for i in range(1, 1201):
        conn.execute("INSERT INTO messages(id, text) VALUES (?, ?)", (i, words(i)))
        conn.execute("INSERT INTO messages_fts(rowid, text) VALUES (?, ?)", (i, words(i)))
        segments.optimize(conn, "messages_fts")
    assert sound(conn, "messages_fts")
    assert segments.structure(conn, "messages_fts")[0] <= segments.REPAIR_AT + 2
    assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'note1200'").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'shared'").fetchone()[0] == 1200


@pytest.mark.skipif(not OLD_SQLITE, reason=f"SQLite {sqlite3.sqlite_version} bounds FTS5 levels itself")
def test_the_defect_is_real_on_this_sqlite():
    """What :mod:`.segments` works around, shown on this SQLite: the raw command breaks the index."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    fts_table(conn)
    with pytest.raises(sqlite3.DatabaseError, match="malformed"):
        for i in range(1, 1300):
            conn.execute("INSERT INTO t(rowid, text) VALUES (?, ?)", (i, words(i)))
            conn.execute("INSERT INTO t(t) VALUES ('optimize')")


def test_many_small_index_passes_keep_messages_fts_sound(tmp_path):
    """The session indexer's own loop: a pi session that grows by one turn per pass, 1,200 passes."""
    conn = open_index(tmp_path / "data")
    path = tmp_path / "sessions" / "s1.jsonl"
    write_lines(path, [{"type": "session", "version": 3, "id": "s1", "timestamp": "2026-11-01T10:00:00.000Z",
                        "cwd": "/work/demo"}])
    parent = None
    for n in range(1, 1201):
        role = "user" if n % 2 else "assistant"
        write_lines(path, [pi_message(f"e{n}", parent, role, words(n), "2026-11-01T10:00:00.000Z")], mode="a")
        parent = f"e{n}"
        stats = index_paths(conn, [path.parent])
        assert stats.messages_added == 1 and not stats.errors
    assert sound(conn, "messages_fts")
    assert segments.structure(conn, "messages_fts")[1] <= 16
    hits = session_search(conn, "note1199", limit=5).results
    assert [h.snippet.replace("**", "") for h in hits][:1] == [words(1199)]


def break_levels(conn: sqlite3.Connection, table: str) -> None:
    """Drive ``table`` to FTS5's level limit the way the previous version's merges did (old SQLite only)."""
    for i in range(1, 1300):
        try:
            conn.execute(f"INSERT INTO {table}(rowid, text) VALUES (?, ?)", (10_000 + i, words(i)))
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        except sqlite3.DatabaseError:
            return


@pytest.mark.skipif(not OLD_SQLITE, reason=f"SQLite {sqlite3.sqlite_version} cannot reach FTS5's level limit")
def test_open_rebuilds_a_word_index_broken_by_the_level_limit(tmp_path):
    """The state the previous version left: ``messages_fts`` past the limit, failing every read. The open rebuilds
    that one table in place: no copy of the file set aside, nothing else of the index touched."""
    data = tmp_path / "data"
    conn = open_index(data)
    add_session(conn, "s1", [{"text": "the staging server listens on port 8443"},
                             {"text": "invoice rounding uses banker's rounding", "role": "assistant"}])
    with transaction(conn):
        conn.execute("INSERT INTO meta(key, value) VALUES ('kept', 'yes')")
    break_levels(conn, "messages_fts")
    assert segments.structure(conn, "messages_fts")[0] > 2000
    with pytest.raises(sqlite3.DatabaseError, match="malformed"):
        conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'staging'").fetchone()
    conn.close()
    conn = open_index(data)
    assert sorted(p.name for p in data.iterdir() if "corrupt" in p.name) == []  # not set aside as damaged
    assert conn.execute("SELECT value FROM meta WHERE key = 'kept'").fetchone() == ("yes",)
    assert sound(conn, "messages_fts")
    assert segments.structure(conn, "messages_fts")[0] < 10
    hits = session_search(conn, "staging port", limit=5).results
    assert [h.snippet.replace("**", "") for h in hits] == ["the staging server listens on port 8443"]
    # the fake rows the breaking loop wrote are gone: the index holds exactly the messages again
    assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'shared'").fetchone()[0] == 0


def test_repair_levels_rebuilds_each_word_index_over_the_limit(tmp_path, monkeypatch):
    """The rebuild itself, on any SQLite: every word index refilled from the rows it indexes, its triggers kept;
    a second look (another process opening just after) finds nothing left to do."""
    conn = open_index(tmp_path / "data")
    add_session(conn, "s1", [{"text": "deploy with make deploy-staging"}])
    with transaction(conn):
        conn.execute("INSERT INTO memories(scope, target, content, source, created) VALUES ('global', 'memory', "
                     "'Postgres runs on port 5433 in dev', 'extended', '2026-11-01')")
    monkeypatch.setattr(segments, "REPAIR_AT", 0)
    rebuilt = segments.repair_levels(conn)
    assert set(rebuilt) >= {"messages_fts", "memories_fts"}
    assert conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'staging'").fetchall() != []
    assert conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH '5433'").fetchone()[0] == 1
    monkeypatch.setattr(segments, "REPAIR_AT", 1)  # the fresh tables have one level (or none)
    assert segments.repair_levels(conn) == []
    assert segments.refill(conn) is None  # the one message came back with the first batch: no refill under way
    with transaction(conn):  # the delete trigger still writes to the recreated table
        conn.execute("DELETE FROM messages")
    assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'staging'").fetchone()[0] == 0
    assert sound(conn, "messages_fts")


def test_a_refill_puts_back_the_newest_first_and_edits_meanwhile_leave_it_sound(tmp_path, monkeypatch, caplog):
    """While ``messages_fts`` is refilled, messages not yet back are deleted and rewritten (a prune, a redaction,
    a rewritten transcript): the index stays sound and ends holding exactly the messages as they are."""
    conn = open_index(tmp_path / "data")
    add_session(conn, "s1", [{"text": f"note{i} about topic{i} shared"} for i in range(1, 11)])
    ids = [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY id")]
    monkeypatch.setattr(segments, "REPAIR_AT", 0)
    monkeypatch.setattr(segments, "REFILL_ROWS", 3)
    levels = segments.structure(conn, "messages_fts")[0]
    assert "messages_fts" in segments.repair_levels(conn)
    assert caplog.messages[-1] == (
        f"The search index of past sessions was close to a limit of SQLite {sqlite3.sqlite_version} ({levels} of "
        "the 2,000 FTS5 levels it allows); an earlier pi-memory had left it there. It was rebuilt: the newest "
        "messages are searchable again at once, and the 7 older ones come back over the next indexing passes "
        "(`pi-memory index-sessions` brings them all back now).")

    def found(word: str) -> list[int]:
        return [r[0] for r in conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid",
                                           (word,))]

    assert found("shared") == ids[-3:]  # the newest three are back at once
    with transaction(conn):
        conn.execute("DELETE FROM messages WHERE id = ?", (ids[0],))  # not back yet
        conn.execute("UPDATE messages SET text = 'note2 rewritten as redacted' WHERE id = ?", (ids[1],))  # not back
        conn.execute("DELETE FROM messages WHERE id = ?", (ids[-1],))  # back already
    assert sound(conn, "messages_fts")
    assert segments.refill(conn, seconds=None) == 6
    assert conn.execute("SELECT 1 FROM meta WHERE key = 'words_refill_below'").fetchone() is None
    assert sound(conn, "messages_fts")
    assert found("shared") == ids[2:-1]
    assert found("redacted") == [ids[1]] and found("topic2") == []
    with transaction(conn):  # the triggers act on every message again
        conn.execute("DELETE FROM messages WHERE id = ?", (ids[4],))
    assert ids[4] not in found("shared") and sound(conn, "messages_fts")


def test_new_messages_below_the_refill_mark_are_left_to_the_refill(tmp_path, monkeypatch):
    """Every message at or above the mark deleted, new ones get ids below it: the writer must not index them (the
    triggers would then skip their later edits, and their old words would stay searchable for good)."""
    conn = open_index(tmp_path / "data")
    add_session(conn, "s1", [{"text": f"note{i} shared"} for i in range(1, 7)])
    ids = [r[0] for r in conn.execute("SELECT id FROM messages ORDER BY id")]
    monkeypatch.setattr(segments, "REPAIR_AT", 0)
    monkeypatch.setattr(segments, "REFILL_ROWS", 2)
    segments.repair_levels(conn)
    with transaction(conn):  # the rewritten tail of a transcript: the newest four go
        conn.execute("DELETE FROM messages WHERE id >= ?", (ids[2],))
    add_session(conn, "s2", [{"text": "fresh one"}, {"text": "fresh two"}])
    new = [r[0] for r in conn.execute("SELECT id FROM messages WHERE text LIKE 'fresh%' ORDER BY id")]
    assert new == ids[2:4]  # below the mark (ids[4])
    with transaction(conn):
        conn.execute("UPDATE messages SET text = 'fresh rewritten' WHERE id = ?", (new[0],))
    assert segments.refill(conn, seconds=None) == 4
    assert sound(conn, "messages_fts")

    def found(word: str) -> list[int]:
        return [r[0] for r in conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid",
                                           (word,))]

    assert found("fresh") == new and found("rewritten") == [new[0]] and found("one") == []
    assert found("shared") == ids[:2]


def test_an_index_pass_goes_on_with_a_refill(tmp_path, monkeypatch):
    conn = open_index(tmp_path / "data")
    add_session(conn, "s1", [{"text": f"note{i} shared"} for i in range(1, 8)])
    monkeypatch.setattr(segments, "REPAIR_AT", 0)
    monkeypatch.setattr(segments, "REFILL_ROWS", 2)
    segments.repair_levels(conn)
    assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'shared'").fetchone()[0] == 2
    index_paths(conn, [tmp_path / "no-sessions-here"])
    assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'shared'").fetchone()[0] == 7
    assert segments.refill(conn) is None


def test_nothing_is_rebuilt_below_the_limit(tmp_path):
    conn = open_index(tmp_path / "data")
    add_session(conn, "s1", [{"text": "deploy with make deploy-staging"}])
    assert segments.repair_levels(conn) == []


def test_structure_record_of_either_format_parses():
    """A record in FTS5's second format (a marker after the cookie) is read past the marker."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("CREATE TABLE x_data(id INTEGER PRIMARY KEY, block BLOB)")
    conn.execute("INSERT INTO x_data VALUES (10, ?)", (b"\x00\x00\x00\x07" + b"\x03\x05",))
    assert segments.structure(conn, "x") == (3, 5)
    conn.execute("UPDATE x_data SET block = ? WHERE id = 10", (b"\x00\x00\x00\x07\xff\x00\x00\x01" + b"\x81\x00\x02",))
    assert segments.structure(conn, "x") == (128, 2)
    conn.execute("UPDATE x_data SET block = ? WHERE id = 10", (b"\x00\x00",))
    assert segments.structure(conn, "x") is None


def test_status_says_how_many_messages_are_not_searchable_yet(tmp_path, monkeypatch):
    from pi_memory.insights import status_data
    from pi_memory.reports import status_lines
    from pi_memory.runtime import open_memory

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    data = tmp_path / "data"
    conn = open_index(data)
    add_session(conn, "s1", [{"text": f"note{i} shared"} for i in range(1, 8)])
    monkeypatch.setattr(segments, "REPAIR_AT", 0)
    monkeypatch.setattr(segments, "REFILL_ROWS", 2)
    segments.repair_levels(conn)
    memory = open_memory(override_dir=data, load=False)
    try:
        status = status_data(memory)
        assert status["messagesNotSearchable"] == 5
        assert ("search index: 5 older messages of past sessions are not searchable yet: they come back over the "
                "next indexing passes (`pi-memory index-sessions` brings them all back now).") in status_lines(status)
        segments.refill(conn, seconds=None)
        assert status_data(memory)["messagesNotSearchable"] is None
    finally:
        memory.close()


def test_a_search_that_finds_nothing_during_a_refill_says_older_messages_may_be_missing(tmp_path, monkeypatch):
    conn = open_index(tmp_path / "data")
    add_session(conn, "s1", [{"text": "the old deploy key rotation"}, *({"text": f"note{i} shared"} for i in range(6))])
    monkeypatch.setattr(segments, "REPAIR_AT", 0)
    monkeypatch.setattr(segments, "REFILL_ROWS", 2)
    segments.repair_levels(conn)
    found = session_search(conn, "rotation", limit=5)
    assert found.count == 0
    assert found.note == ("No matches among the messages searchable now: 5 older messages are still being put back "
                          "into the search index after a repair, so an older match may be missing (`pi-memory "
                          "index-sessions` brings them all back).")
    segments.refill(conn, seconds=None)
    found = session_search(conn, "rotation", limit=5)
    assert [h.snippet.replace("**", "") for h in found.results] == ["the old deploy key rotation"]
    assert session_search(conn, "zzzunknownword", limit=5).note == (
        "No matches. Try fewer or shorter terms, or a different spelling.")
