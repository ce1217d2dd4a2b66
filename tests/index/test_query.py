"""User text -> FTS5 plan: exact plans, and no input ever makes SQLite raise."""

from __future__ import annotations

import sqlite3

import pytest

from pi_memory.index.query import Term, describe, light_stem, plan_query, split_scripts


def strict(q: str) -> str:
    return describe(plan_query(q))


def loose(q: str) -> list[str]:
    return [c.terms[0].text for c in plan_query(q).loose]


@pytest.mark.parametrize("q", ["", "   ", "\t\n", None, '""', '"   "'])
def test_blank_queries_give_an_empty_plan(q):
    plan = plan_query(q)
    assert plan.empty and plan.clauses == () and plan.loose == ()


def test_words_are_anded_and_loosened_to_or():
    assert strict("linear cli") == '"linear" AND "cli"'
    assert loose("linear cli") == ["linear", "cli"]
    assert not plan_query("linear cli").operators


def test_quoted_phrase_stays_a_phrase():
    assert strict('"linear cli" tool') == '"linear cli" AND "tool"'
    assert loose('"linear cli" tool') == ["linear cli", "tool"]


def test_single_plain_term_has_no_loose_plan_unless_it_has_a_stem():
    assert plan_query("compaction").loose == ()
    assert loose("paintings") == ["paintings", "paint"]


def test_uppercase_operators():
    assert strict("alpha OR beta") == '("alpha") OR ("beta")'
    assert strict("alpha AND beta") == '"alpha" AND "beta"'
    assert strict("alpha NOT beta") == '"alpha" AND NOT "beta"'
    assert strict("alpha beta OR gamma NOT delta") == '("alpha" AND "beta") OR ("gamma" AND NOT "delta")'
    plan = plan_query("alpha OR beta")
    assert plan.operators and plan.loose == ()


def test_fts_expression_of_a_negated_clause():
    clause = plan_query("alpha beta NOT gamma NOT delta").clauses[0]
    assert clause.match_expression() == '("alpha" AND "beta") NOT ("gamma" OR "delta")'


def test_lowercase_connectors_are_words_not_operators():
    plan = plan_query("alpha or beta")
    assert not plan.operators
    assert strict("alpha or beta") == '"alpha" AND "beta"'  # "or" is a stop word here
    assert plan.dropped == ("or",)
    assert strict("or") == "LIKE '%or%'"


def test_operator_words_alone_are_searched_as_words():
    assert strict("OR") == "LIKE '%OR%'"
    assert strict("AND NOT") == '"AND" AND "NOT"'


def test_dangling_operators_are_ignored():
    assert strict("OR alpha OR") == '"alpha"'
    assert strict("NOT alpha") == ""  # only an exclusion: nothing to look for
    assert plan_query("NOT alpha").empty


def test_unmatched_quote_reads_the_rest_as_words():
    assert strict('say "hello world') == '"say" AND "hello" AND "world"'
    assert strict('"') == ""


def test_stop_words_dropped_only_when_something_is_left():
    assert strict("what did Caroline paint") == '"Caroline" AND "paint"'
    assert strict("who am I") == "\"who\" AND LIKE '%am%' AND LIKE '%I%'"


def test_punctuation_at_word_edges_is_dropped_inside_kept():
    assert strict("(auth) failed?") == '"auth" AND "failed"'
    assert strict("wrong-book") == '"wrong-book"'
    assert strict("@types/node 100% user's a:b") == '"@types/node" AND "100%" AND "user\'s" AND "a:b"'
    assert strict("prefix*") == '"prefix"'
    assert strict("::") == "LIKE '%::%'"


def test_quotes_inside_terms_are_doubled():
    assert Term('say "hi"').fts() == '"say ""hi"""'


def test_short_terms_become_escaped_like_patterns():
    assert strict("go") == "LIKE '%go%'"
    assert strict("ui build") == "LIKE '%ui%' AND \"build\""
    assert Term("%_").like() == "%\\%\\_%"
    assert Term("a\\").like() == "%a\\\\%"
    clause = plan_query("go fmt").clauses[0]
    assert clause.match_expression() == '"fmt"'
    assert clause.like_filters() == [("%go%", False)]


def test_short_terms_are_left_out_of_the_loose_plan_when_longer_ones_exist():
    assert loose("go build tool") == ["build", "tool"]
    assert loose("go ui") == ["go", "ui"]


def test_mixed_scripts_split_where_the_script_changes():
    assert split_scripts("修改youer服务端") == ["修改", "youer", "服务端"]
    assert split_scripts("hello") == ["hello"]
    assert strict("修改youer服务端") == "LIKE '%修改%' AND \"youer\" AND \"服务端\""
    assert strict('"修改youer服务端"') == '"修改youer服务端"'
    assert strict("缓存") == "LIKE '%缓存%'"
    assert strict("服务端，配置。") == '"服务端" AND LIKE \'%配置%\''


def test_light_stem():
    assert [light_stem(w) for w in ["paintings", "painted", "studies", "matches", "classes", "names", "glass",
                                    "runs", "go", "数据库", "C++"]] == [
        "paint", "paint", "studi", "match", "class", "name", "glass", "runs", "go", "数据库", "C++"]


EDGE_CASES = [
    '"unterminated', 'two "quotes" here"', "wrong-book", "it's", "a/b/c", "user@example.com", "100%", "50% off",
    "*", "**", "star*", "(", ")", "(a OR b)", "foo:bar", "col:value", "NEAR(a b)", "a AND", "OR OR OR",
    "NOT NOT x", "^start", "x + y", "{json}", "[bracket]", "semi;colon", "back\\slash", "under_score", "'",
    "''", '"', '""""', "go", "ui", "缓存", "修改youer服务端", "日本語のテキスト", "한국어", "emoji 🧪 test",
    "tab\tseparated", "new\nline", "\x00nul", "  padded  ", "-leading", "trailing-", "--flag", "a" * 500,
    " ".join(["word"] * 40), "SELECT * FROM x; DROP TABLE messages;--", 'col:"x"', "x OR", "AND x",
]


@pytest.mark.parametrize("q", EDGE_CASES)
def test_every_plan_is_valid_fts5(q):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='trigram')")
    db.execute("INSERT INTO t(text) VALUES ('some text with wrong-book and 缓存 in it')")
    plan = plan_query(q)
    for clause in (*plan.clauses, *plan.loose):
        expr = clause.match_expression()
        if expr is not None:
            db.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,)).fetchall()
        for pattern, _neg in clause.like_filters():
            db.execute("SELECT rowid FROM t WHERE text LIKE ? ESCAPE '\\'", (pattern,)).fetchall()


def test_terms_are_capped():
    plan = plan_query(" ".join(f"word{i}" for i in range(40)))
    assert len(plan.clauses[0].terms) == 12


def test_a_question_drops_its_fillers_a_strict_search_keeps_them():
    q = "What kind of paintings did Melanie go to see?"
    assert [t.text for t in plan_query(q, words=True).terms] == ["kind", "paintings", "Melanie", "go", "see"]
    assert [t.text for t in plan_query(q, words=True, question=True).terms] == ["paintings", "Melanie", "see"]
    assert [t.text for t in plan_query("go build fails", words=True).terms] == ["go", "build", "fails"]
    assert [t.text for t in plan_query("go build fails", words=True, question=True).terms] == ["build", "fails"]
    assert [t.text for t in plan_query("what type", words=True, question=True).terms] == ["what", "type"]
    assert [t.text for t in plan_query('"kind of" things', words=True, question=True).terms] == ["kind of"]
