"""The word index of session messages: tokens, prefixes, CJK, migration from the trigram index, writes."""

from __future__ import annotations

import sqlite3

import pytest

from pi_memory.index import db as dbmod
from pi_memory.index import index_paths, open_index
from pi_memory.index import indexer as indexermod
from pi_memory.index.db import migrate, transaction
from pi_memory.index.query import Term, plan_query
from pi_memory.index.schema import MIGRATIONS
from pi_memory.index.words import fts_form, has_word, word_tokens
from pi_memory.index.writer import GroupWriter
from pi_memory.retrieval import bm25 as enginemod
from pi_memory.retrieval import memory_search, session_search


def texts(result) -> list[str]:
    return [h.snippet.replace("**", "") for h in result.results]


def fts_count(conn: sqlite3.Connection, expr: str) -> int:
    return conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (expr,)).fetchone()[0]


def test_fts_form_spaces_cjk_only():
    assert fts_form("plain latin text, café") is None
    assert fts_form("修改youer服务端") == " 修  改 youer 服  务  端 "
    assert word_tokens("Fix the wrong-book error_code 缓存") == ["fix", "the", "wrong", "book", "error", "code", "缓", "存"]
    assert has_word("100%") and has_word("缓") and not has_word("%") and not has_word("--") and not has_word("_")


@pytest.mark.parametrize(
    ("text", "fts", "loose", "short"),
    [
        ("deploy", '"deploy"', '"deploy"*', False),  # whole word; broadened, 4+ characters also start longer words
        ("con", '"con"', '"con"', False),  # under 4 characters: never a prefix (it would merge 50k rows)
        ("go", '"go"', '"go"', False),  # that word only, not "going"
        ("缓存", '"缓 存"', '"缓 存"', False),  # CJK: a phrase of single characters
        ("wrong-book", '"wrong-book"', '"wrong-book"', False),  # the phrase "wrong book": never a prefix
        ("love's", '"love"', '"love"*', False),  # a possessive 's is dropped (the token "s" is everywhere)
        ("100%", '"100%"', '"100%"', False),  # ends in punctuation: no prefix
        ("%%", '"%%"', '"%%"', True),  # no letter or digit: a LIKE filter
    ],
)
def test_word_terms(text, fts, loose, short):
    term = Term(text, words=True)
    assert (term.fts(), term.short) == (fts, short)
    plan = plan_query(text, words=True)
    broadened = plan.loose[0].terms[0] if plan.loose else plan.clauses[0].terms[0]  # no loose plan: same as strict
    assert broadened.fts() == loose


def test_one_punctuation_mark_is_no_word_to_search_for():
    """Fresh-eyes report: ``memory-search "-"`` matched every memory holding a dash (LIKE '%-%')."""
    for mark in ("-", "'", "*", "%"):
        assert plan_query(mark, words=True).empty and plan_query(f"deploy {mark}", words=True).terms == [
            Term("deploy", words=True)]
    assert Term("%", words=True).short  # a Term of it is still a LIKE filter (a quoted "%" searches for it)


def test_phrases_are_exact_and_trigram_terms_unchanged():
    assert Term("linear cli", phrase=True, words=True).fts() == '"linear cli"'
    assert Term("deploy").fts() == '"deploy"' and Term("go").short  # memories keep the trigram rules
    plan = plan_query("paintings", words=True)
    assert [t.fts() for c in plan.loose for t in c.terms] == ['"paintings"*', '"paint"*']


@pytest.fixture
def words(conn, helpers):
    helpers.add_session(conn, "s", [
        {"text": "the deployment failed twice"},
        {"text": "we go now"},
        {"text": "going to the store"},
        {"text": "我们需要修改缓存配置"},
        {"text": "café au lait"},
        {"text": "snake_case_name and kebab-case-name"},
    ])
    return conn


def test_prefix_whole_words_cjk_and_diacritics(words):
    r = session_search(words, "deploy")  # no whole word "deploy": the broadened prefix finds "deployment"
    assert (texts(r), r.strategy) == (["the deployment failed twice"], "any")
    assert texts(session_search(words, "ploy")) == []  # words match from their start, not in the middle
    assert texts(session_search(words, "go")) == ["we go now"]  # a short word is a whole word: not "going"
    assert texts(session_search(words, "缓存")) == ["我们需要修改缓存配置"]
    assert texts(session_search(words, "存配")) == ["我们需要修改缓存配置"]
    assert texts(session_search(words, "cafe")) == ["café au lait"]
    assert texts(session_search(words, "case_name")) == ["snake_case_name and kebab-case-name"]


@pytest.mark.parametrize(("cap", "found"), [(3, ["deployment x", "deploy later", "deploy now"]),
                                            (2, ["deploy later", "deploy now"])])
def test_prefix_only_while_the_whole_word_is_rare(conn, helpers, monkeypatch, cap, found):
    helpers.add_session(conn, "s", [{"text": "deploy now"}, {"text": "deploy later"}, {"text": "deployment x"}])
    monkeypatch.setattr(enginemod, "LOOSE_CAP", cap)  # "deploy" alone fills a cap of 2: no prefix query
    assert sorted(texts(session_search(conn, "deploy zebra"))) == sorted(found)


def test_deleted_and_replaced_rows_leave_the_index(conn, helpers, tmp_path):
    session = tmp_path / "s.jsonl"
    header = '{"type":"session","version":3,"id":"s","timestamp":"2026-11-01T10:00:00.000Z","cwd":"/w"}\n'

    def line(n: int, text: str) -> str:
        return (f'{{"type":"message","id":"e{n}","parentId":null,"timestamp":"2026-11-01T10:00:0{n}.000Z",'
                f'"message":{{"role":"user","content":"{text}"}}}}\n')

    session.write_text(header + line(1, "alpha 缓存 beta"))
    index_paths(conn, [session])
    assert fts_count(conn, '"alpha"') == 1 and fts_count(conn, '"缓 存"') == 1
    session.write_text(header + line(1, "gamma only"))  # rewritten: the old rows are replaced
    index_paths(conn, [session])
    assert (fts_count(conn, '"alpha"'), fts_count(conn, '"缓 存"'), fts_count(conn, '"gamma"')) == (0, 0, 1)
    with transaction(conn):
        conn.execute("DELETE FROM messages")
    assert fts_count(conn, '"gamma"') == 0
    conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 0)")  # raises if corrupt


def test_migration_moves_a_trigram_index_to_words(tmp_path):
    path = tmp_path / "index.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, MIGRATIONS[:4])  # the schema of the first release: a trigram index, an insert trigger
    with transaction(conn):
        conn.execute("INSERT INTO sessions(id, source, session_key) VALUES (1, 'pi', 's')")
        conn.execute("INSERT INTO session_files(id, path, session_id, size, mtime_ns) VALUES (1, '/s', 1, 0, 0)")
        for n, text in enumerate(["the deployment failed", "修改缓存配置", "nothing here"], 1):
            conn.execute("INSERT INTO messages(session_id, file_id, entry_id, line, role, kind, text) "
                         "VALUES (1, 1, ?, ?, 'user', 'message', ?)", (f"e{n}", n, text))
        conn.execute("INSERT INTO memories(scope, target, content, failure_reason, source, created) VALUES "
                     "('global', 'memory', '连接池的大小是20', NULL, 'extended', '2026-11-01'), "
                     "('global', 'failure', 'Use pnpm', 'npm broke the lockfile', 'extended', '2026-11-01')")
    assert fts_count(conn, '"ploy"') == 1  # trigram: any substring
    conn.close()
    conn = open_index(tmp_path)
    assert "005_messages_fts_words" in {r[0] for r in conn.execute("SELECT name FROM schema_migrations")}
    assert conn.execute("SELECT fts_text FROM messages ORDER BY id").fetchall() == [
        (None,), (" 修  改  缓  存  配  置 ",), (None,)]
    assert texts(session_search(conn, "deploy")) == ["the deployment failed"]
    assert texts(session_search(conn, "缓存")) == ["修改缓存配置"]
    with transaction(conn):
        conn.execute("DELETE FROM messages WHERE entry_id = 'e2'")
    assert fts_count(conn, '"缓 存"') == 0 and fts_count(conn, '"nothing"') == 1
    assert [h.content for h in memory_search(conn, "大小").results] == ["连接池的大小是20"]  # migration 007
    assert [h.content for h in memory_search(conn, "lockfile").results] == ["Use pnpm"]  # the failure reason
    with transaction(conn):
        conn.execute("DELETE FROM memories WHERE content = 'Use pnpm'")
        conn.execute("UPDATE memories SET content = '线程池' WHERE content = '连接池的大小是20'")
    assert memory_search(conn, "lockfile").count == 0 and memory_search(conn, "大小").count == 0
    assert [h.content for h in memory_search(conn, "线程").results] == ["线程池"]


def test_group_writer_rolls_back_only_the_failing_file(conn, helpers):
    sid = helpers.add_session(conn, "s", [{"text": "seed"}])
    fid = conn.execute("SELECT id FROM session_files").fetchone()[0]
    group = GroupWriter(conn, group_bytes=1 << 30, group_seconds=3600)

    def rows(word: str) -> list[tuple]:
        return [(sid, fid, word, None, 1, None, "user", "message", None, "active", f"{word} text")]

    group.write(lambda c: indexermod._insert_rows(c, rows("kept")), 10)

    def failing(c):
        indexermod._insert_rows(c, rows("lost"))
        raise sqlite3.IntegrityError("boom")

    with pytest.raises(sqlite3.IntegrityError):
        group.write(failing, 10)
    group.write(lambda c: indexermod._insert_rows(c, rows("later")), 10)
    assert fts_count(conn, '"kept"') == 0  # not indexed before the group commits
    group.commit()
    assert [fts_count(conn, f'"{w}"') for w in ("kept", "lost", "later")] == [1, 0, 1]
    assert conn.execute("SELECT count(*) FROM messages WHERE entry_id = 'lost'").fetchone()[0] == 0


def _session_file(folder, name: str, text: str):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    path.write_text(
        f'{{"type":"session","version":3,"id":"{name}","timestamp":"2026-11-01T10:00:00.000Z","cwd":"/w"}}\n'
        f'{{"type":"message","id":"e1","parentId":null,"timestamp":"2026-11-01T10:00:01.000Z",'
        f'"message":{{"role":"user","content":"{text}"}}}}\n'
    )
    return path


def test_corruption_keeps_sessions_whose_files_are_gone_or_elsewhere(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # empty default folders
    data = tmp_path / "data"
    gone = _session_file(tmp_path / "claude", "old", "the 缓存 bug from last month")
    other = _session_file(tmp_path / "elsewhere", "kept", "notes from another folder")
    conn = open_index(data)
    index_paths(conn, [gone, other])
    conn.close()
    gone.unlink()  # e.g. Claude Code deleted the transcript after 30 days
    real_check, calls = dbmod._check, []

    def check_once(conn, path, check):  # damage that quick_check finds while the session tables still read
        calls.append(path)
        if len(calls) <= 2:  # the first open, and the look again under the repair lock
            raise dbmod._Corrupt("*** in database main *** Page 42: btreeInitPage() returns error code 11")
        return real_check(conn, path, check)

    monkeypatch.setattr(dbmod, "_check", check_once)
    conn = open_index(data)
    assert conn.execute("SELECT value FROM meta WHERE key = 'rebuilds'").fetchone() == ("1",)
    assert texts(session_search(conn, "缓存")) == ["the 缓存 bug from last month"]
    assert texts(session_search(conn, "another folder")) == ["notes from another folder"]
    assert index_paths(conn, [other]).files_unchanged == 1  # its file row was copied too: not read again


def test_sessions_that_cannot_be_copied_are_read_again_from_their_files(tmp_path, monkeypatch):
    from pi_memory.index.salvage import salvage_sessions

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    other = _session_file(tmp_path / "elsewhere", "kept", "notes from another folder")
    old = open_index(tmp_path / "old")
    index_paths(old, [other])
    with transaction(old):
        old.execute("DROP TABLE entries")  # a table that cannot be read: the copy is all or nothing
    old.close()
    fresh = open_index(tmp_path / "fresh")
    report = salvage_sessions(fresh, tmp_path / "old" / "index.sqlite3")
    assert (report.copied_files, report.copied_messages, report.pending_paths) == (0, 0, 1)
    assert session_search(fresh, "folder").count == 0
    stats = index_paths(fresh)  # no paths: default folders plus the pending files
    assert stats.files_new == 1
    assert texts(session_search(fresh, "another folder")) == ["notes from another folder"]
    assert fresh.execute("SELECT count(*) FROM pending_paths").fetchone()[0] == 0


def test_small_passes_keep_the_word_index_at_a_few_segments(conn, tmp_path):
    from pi_memory.index.segments import SEGMENT_CAP

    def segments() -> int:
        return conn.execute("SELECT count(DISTINCT segid) FROM messages_fts_idx").fetchone()[0]

    counts = []
    for n in range(12):
        index_paths(conn, [_session_file(tmp_path / "s", f"s{n}", f"message number {n} about topic{n}")])
        counts.append(segments())
    assert counts[:SEGMENT_CAP] == list(range(1, SEGMENT_CAP + 1))  # each pass adds a segment...
    assert max(counts) <= SEGMENT_CAP + 1  # ...and over the cap a bounded merge folds them together
    assert session_search(conn, "topic7").count == 1
