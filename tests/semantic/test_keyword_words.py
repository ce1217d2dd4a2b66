"""The semantic store's word index (``semantic_words``, migration ``semantic_006_words``) and the keyword list read
from it (:mod:`pi_memory.semantic.keyword`, :func:`pi_memory.semantic.terms.word_terms`): an old trigram index
migrates on open, words are found in their inflections, identifiers, CJK, diacritics; the index follows every
write; no query raises; the work stays within the budget."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from semantic_helpers import ALICE, BOB

import pi_memory.index.semantic_schema as semantic_schema
import pi_memory.semantic.keyword as keyword
from pi_memory.index import open_index
from pi_memory.index.db import migrate
from pi_memory.index.semantic_schema import SEMANTIC_MIGRATIONS
from pi_memory.semantic.embedded import EmbeddedBackend
from pi_memory.semantic.terms import WordTerm, word_terms

TEXTS = {
    "pnpm": "Alice prefers pnpm for side projects.",
    "vim": "The preferred editor is vim.",
    "dark": "Her preference is a dark theme.",
    "ticket": "The outage is tracked in ticket OPS-4821.",
    "other_ticket": "The upgrade is tracked in ticket OPS-4822.",
    "svc": "The service svc_ser29 restarts at night.",
    "lock": "Never edit pnpm-lock.yaml by hand.",
    "zh": "我们的机房在上海，服务器都放在那里。",
    "lunch": "今天午饭吃面条",
    "ja": "東京のオフィスは渋谷にあります。",
    "cafe": "Meet at the café on Friday.",
    "ru_servers": "Серверы стоят в Москве.",
    "ru_keys": "Мы храним пять ключей API в vault.",
    "hostile": 'He said "NEAR(a b)" AND col:x OR * ^ -minus',
}
OLD = [m.name for m in SEMANTIC_MIGRATIONS[:5]]


def _found(backend: EmbeddedBackend, ids: dict[str, str], query: str) -> set[str]:
    names = {v: k for k, v in ids.items()}
    return {names[i] for i, _ in backend.keyword_candidates(query, scope=ALICE, limit=50)}


@pytest.fixture
def stored(backend: EmbeddedBackend) -> dict[str, str]:
    return {name: backend.add(text, scope=ALICE).id for name, text in TEXTS.items()}


def test_an_old_trigram_index_migrates_on_open_and_keeps_every_memory_findable(tmp_path: Path, embedder,
                                                                               monkeypatch):
    assert OLD[-1] == "semantic_005_skill_vectors"
    old = open_index(tmp_path)
    migrate(old, SEMANTIC_MIGRATIONS[:5])  # the schema before the word index: semantic_fts, trigram
    for pk, text in enumerate(TEXTS.values(), 1):
        old.execute("INSERT INTO semantic_memories(id, user_id, project_id, text, hash, created_at, updated_at, seq) "
                    "VALUES (?, ?, ?, ?, ?, '2026-01-01', '2026-01-01', ?)",
                    (f"m{pk}", ALICE.user_id, ALICE.project_id, text, f"h{pk}", pk))
    assert old.execute("SELECT count(*) FROM semantic_fts WHERE semantic_fts MATCH '\"机房在\"'").fetchone() == (1,)
    old.close()
    monkeypatch.setattr(semantic_schema, "_FILL_BATCH", 3)  # several batches
    backend = EmbeddedBackend(open_index(tmp_path), embedder)  # what a user's next session does
    conn = backend.conn
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "semantic_fts" not in names and not any(n.startswith("semantic_memories_a") for n in names)
    assert {"semantic_words", "semantic_memories_words_ai", "semantic_memories_words_ad",
            "semantic_memories_words_au"} <= names
    assert [r[0] for r in conn.execute("SELECT name FROM schema_migrations WHERE name LIKE 'semantic_%' "
                                       "ORDER BY rowid DESC LIMIT 3")] == ["semantic_008_usable_vectors",
                                                                           "semantic_007_turn_vectors_gone",
                                                                           "semantic_006_words"]
    ids = {name: f"m{pk}" for pk, name in enumerate(TEXTS, 1)}
    for name, text in TEXTS.items():  # every memory by its own text
        assert name in _found(backend, ids, text), name
    assert _found(backend, ids, "机房") == {"zh"}
    assert _found(backend, ids, "OPS-4821") == {"ticket"}
    new = backend.add("Bob moved the build to Bazel.", scope=ALICE)  # the triggers index new rows
    assert [i for i, _ in backend.keyword_candidates("bazel", scope=ALICE)] == [new.id]


@pytest.mark.parametrize(("query", "expected"), [
    ("prefer", {"pnpm", "vim", "dark"}),  # the trigram substring found all three; the prefix does too
    ("prefers", {"pnpm", "vim", "dark"}),
    ("preferred", {"vim"}),
    ("preference", {"dark"}),
    ("OPS-4821", {"ticket"}),
    ("ops-4821", {"ticket"}),
    ("svc_ser29", {"svc"}),
    ("ser29", {"svc"}),
    ("pnpm-lock", {"lock"}),
    ("pnpm", {"pnpm", "lock"}),
    ("机房", {"zh"}),
    ("机房在哪个城市？", {"zh"}),
    ("东京", set()),  # simplified 东 is another character than 東
    ("東京のオフィス", {"ja"}),
    ("渋谷", {"ja"}),
    ("cafe", {"cafe"}),
    ("café", {"cafe"}),
    ("CAFÉ", {"cafe"}),
    ("сервер", {"ru_servers"}),  # found as the trigram substring found it
    ("ключ", {"ru_keys"}),
    ("今天天气怎么样？", {"lunch"}),  # 今天 is in the lunch memory: a keyword candidate (the floor judges it)
    ("天气预报", set()),
])
def test_words_are_found_in_their_forms(backend, stored, query, expected):
    assert _found(backend, stored, query) == expected


def test_query_terms_read_as_words():
    assert [t.fts() for t in word_terms("What package manager does the user prefer?")] == [
        '"package"*', '"manager"*', '"user"*', '"prefer"*']
    assert [t.fts() for t in word_terms("uses go ui k8s")] == ['"use"', '"uses"', '"go"', '"ui"', '"k8s"']
    assert [t.fts() for t in word_terms("ticket OPS-4821 svc_ser29 pnpm-lock")] == [
        '"ticket"*', '"ops 4821"*', '"svc ser29"*', '"pnpm lock"*']
    assert [t.fts() for t in word_terms("机房在哪个城市？")] == ['"机 房"', '"房 在"', '"个 城"', '"城 市"']
    assert [t.fts() for t in word_terms("user's x")] == ['"user"*']  # possessive dropped, one letter is no term
    assert word_terms("the a of") == [WordTerm(("the",)), WordTerm(("of",))]  # only stop words: keep them
    assert word_terms("") == [] and word_terms("?!") == []


def test_the_index_follows_updates_and_deletes(backend, stored):
    new = backend.update(stored["vim"], "The preferred editor is helix.", scope=ALICE)
    assert _found(backend, {**stored, "helix": new.id}, "editor") == {"helix"}  # the old version is superseded
    assert backend.delete(stored["pnpm"], scope=ALICE)
    assert _found(backend, stored, "pnpm") == {"lock"}
    conn = backend.conn
    conn.execute("UPDATE semantic_memories SET text = 'Bob likes yarn.' WHERE id = ?", (stored["lock"],))
    assert _found(backend, stored, "pnpm") == set() and _found(backend, stored, "yarn") == {"lock"}
    conn.execute("DELETE FROM semantic_memories WHERE id = ?", (stored["cafe"],))
    assert backend.keyword_candidates("cafe", scope=ALICE) == []
    counts = {q: conn.execute("SELECT count(*) FROM semantic_words WHERE semantic_words MATCH ?", (q,)).fetchone()[0]
              for q in ('"pnpm"', '"yarn"', '"cafe"', '"helix"', '"vim"')}
    assert counts == {'"pnpm"': 1, '"yarn"': 1, '"cafe"': 0, '"helix"': 1, '"vim"': 1}  # pnpm: the deleted version
    conn.execute("INSERT INTO semantic_words(semantic_words, rank) VALUES ('integrity-check', 0)")  # raises if not


def test_other_scopes_are_not_found(backend, stored):
    backend.add("Bob prefers yarn.", scope=BOB)
    assert _found(backend, stored, "yarn") == set()


@pytest.mark.parametrize("query", [
    '"', '""', 'NEAR(a b)', 'NEAR(', 'col:x', 'text:prefer', '*', '**', 'a" OR "b', 'AND OR NOT', '(((', ')',
    '^prefer', '-minus', '+', 'x\x00y', '\x00', 'prefer' + '"' * 100, '机' * 10_000, 'word ' * 2_000,
    'a' * 10_000, '💥💥💥', '\ud83d', "{text}: prefer", "prefer*", "'; DROP TABLE semantic_memories; --",
])
def test_hostile_queries_never_raise(backend, stored, query):
    assert isinstance(backend.keyword_candidates(query, scope=ALICE), list)
    assert backend.count(scope=ALICE) == len(TEXTS)


def test_fts_syntax_in_a_query_is_read_as_words(backend, stored):
    assert _found(backend, stored, "NEAR(a b)") == {"hostile"}
    assert _found(backend, stored, "text:prefer") == {"pnpm", "vim", "dark"}  # no column filter: two words
    assert _found(backend, stored, "prefer*") == {"pnpm", "vim", "dark"}


@pytest.fixture
def large(backend, monkeypatch):
    """61 memories with a budget of 20 rows: 60 hold "common" (pks 1-60), 15 of them "blue" (pks 1-15), the
    61st "axolotl" and ticket OPS-4821 (every row holds "ops")."""
    monkeypatch.setattr(keyword, "KEYWORD_BUDGET", 20)
    texts = [f"Note {i}: common words, {'blue' if i < 15 else 'green'} ops." for i in range(60)]
    texts.append("User owns a rare axolotl, ticket OPS-4821.")
    assert backend.add_many(texts, scope=ALICE, vectors=np.zeros((61, 384), dtype="float32")) == 61
    return backend


def test_a_term_in_more_than_a_fifth_of_the_rows_is_dropped(large):
    assert large._plan_terms(word_terms("blue axolotl")) == ([WordTerm(("axolotl",), prefix=True)], None)
    # alone, blue (15 rows) fits in the budget and is scored over all its rows
    assert large._plan_terms(word_terms("blue")) == ([WordTerm(("blue",), prefix=True)], None)
    assert len(large.keyword_candidates("blue", scope=ALICE, limit=100)) == 15


def test_a_phrase_is_counted_as_it_matches(large):
    # "ops" is in every row, the phrase "ops 4821" in one: counted exactly, not as its commonest word
    assert large._plan_terms(word_terms("OPS-4821")) == ([WordTerm(("ops", "4821"), prefix=True)], None)
    assert [large.get(i, scope=ALICE).text for i, _ in large.keyword_candidates("OPS-4821", scope=ALICE)] == [
        "User owns a rare axolotl, ticket OPS-4821."]


def test_when_every_term_is_common_only_the_newest_budget_rows_are_scored(large):
    # common (60 rows) and notes (prefix; its word "note" is in 60 rows): both above the budget of 20. The
    # sparsest over the newest rows is scored from the rowid of its 20th newest match, as a word
    kept, floor = large._plan_terms(word_terms("common notes"))
    assert (kept, floor) == ([WordTerm(("common",))], 41)
    found = large.keyword_candidates("common notes", scope=ALICE, limit=100)
    assert len(found) == 20
    pks = [large.conn.execute("SELECT pk FROM semantic_memories WHERE id = ?", (i,)).fetchone()[0] for i, _ in found]
    assert pks == list(range(60, 40, -1))  # equal scores: newest first


def test_a_common_prefix_is_never_expanded_when_its_word_is_common(large):
    assert keyword._rows(large.conn, WordTerm(("common",), prefix=True)) == (None, WordTerm(("common",)))
    assert keyword._rows(large.conn, WordTerm(("axolotl",), prefix=True)) == (1, WordTerm(("axolotl",), prefix=True))


def test_bm25_is_lower_for_better_matches(backend, stored):
    found = backend.keyword_candidates("ticket OPS-4821", scope=ALICE)
    assert [i for i, _ in found] == [stored["ticket"], stored["other_ticket"]]
    assert found[0][1] < found[1][1] < 0


def test_a_fresh_index_has_the_word_index_only(conn):
    migrate(conn, SEMANTIC_MIGRATIONS)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'semantic_fts%'")}
    assert tables == set()
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("SELECT * FROM semantic_fts")


def test_a_term_a_memory_lacks_still_gives_it_a_score(backend):
    # the failing input: in an index without row lengths an OR of the two terms gave NULL for the memory
    mem = backend.add("User uses pnpm.", scope=ALICE)
    found = backend.keyword_candidates("do I use pnpm?", scope=ALICE)
    assert [i for i, _ in found] == [mem.id] and isinstance(found[0][1], float) and found[0][1] < 0


def test_other_scopes_crowding_the_first_page_out_are_paged_past(backend):
    mine = backend.add("We deploy with pnpm.", scope=ALICE)
    assert backend.add_many([f"pnpm pnpm note {i}" for i in range(250)], scope=BOB,
                            vectors=np.zeros((250, 384), dtype="float32")) == 250
    assert [i for i, _ in backend.keyword_candidates("pnpm", scope=ALICE, limit=5)] == [mine.id]
    assert len(backend.keyword_candidates("pnpm", scope=BOB, limit=300)) == 250
