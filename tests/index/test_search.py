"""session_search and memory_search: hits, ranking, filters, snippets, output bounds, every query edge case."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from pi_memory.index import index_paths
from pi_memory.index.mirror import add_extended, sync_store
from pi_memory.index.query import Term
from pi_memory.index.results import MAX_OUTPUT_BYTES
from pi_memory.retrieval import bm25 as enginemod
from pi_memory.retrieval import memory_search, session_search
from pi_memory.retrieval.search import SearchInputError, make_snippet, parse_time, project_ids

EDGE_CASES = [
    '"unterminated', 'two "quotes" here"', "wrong-book", "'", "''", '"', '""""', "/", "@", "%", "*", "**", "(",
    ")", ":", "(a OR b)", "foo:bar", "NEAR(a b)", "a AND", "OR OR OR", "NOT NOT x", "x OR", "AND x", "^start",
    "{json}", "[bracket]", "semi;colon", "back\\slash", "under_score", "go", "ui", "缓存", "修改youer服务端",
    "日本語のテキスト", "한국어", "emoji 🧪 test", "tab\tseparated", "new\nline", "\x00nul", "-leading", "--flag",
    "a" * 500, " ".join(["word"] * 40), "SELECT * FROM x; DROP TABLE messages;--", 'col:"x"', "it's", "a/b",
    "user@example.com", "100%", "what did we discuss about auth last week?",
]


def texts(result) -> list[str]:
    return [h.snippet.replace("**", "") for h in result.results]


@pytest.fixture
def demo(conn, helpers):
    helpers.add_session(conn, "s1", [
        {"text": "We should use the linear cli to file issues", "timestamp": "2026-11-01T10:00:00.000Z"},
        {"text": "The cli for linear is installed with npm", "role": "assistant", "timestamp": "2026-11-02T10:00:00.000Z"},
        {"text": "我们需要修改youer服务端的配置文件", "timestamp": "2026-11-03T10:00:00.000Z"},
        {"text": "缓存问题已经解决", "role": "assistant", "timestamp": "2026-11-04T10:00:00.000Z"},
        {"text": "go build ./... fails on the ui package", "timestamp": "2026-11-05T10:00:00.000Z"},
        {"text": "fix the wrong-book error in books.py", "timestamp": "2026-11-06T10:00:00.000Z"},
        {"text": "mail me at user@example.com about 100% coverage (it's done: a/b)", "timestamp": "2026-11-07T10:00:00.000Z"},
    ])
    helpers.add_session(conn, "s2", [
        {"text": "linear cli in the other project", "timestamp": "2026-10-01T10:00:00.000Z"},
    ], cwd="/work/other", project_id="bbbbbbbbbbbb", project_name="other")
    return conn


def test_plain_hit_with_provenance(demo):
    r = session_search(demo, "wrong-book")
    assert (r.strategy, r.count) == ("match", 1)
    hit = r.results[0]
    assert hit.snippet == "fix the **wrong-book** error in books.py"
    assert (hit.role, hit.kind, hit.branch, hit.line, hit.entry_id, hit.session_id, hit.source) == (
        "user", "message", "active", 7, "s1-6", "s1", "pi")
    assert (hit.file, hit.cwd, hit.project, hit.project_id) == ("/sessions/s1.jsonl", "/work/demo", "demo", "a" * 12)
    assert hit.timestamp == "2026-11-06T10:00:00.000Z" and hit.score > 0 and hit.match == "all"


def test_cjk_substring_and_mixed_script(demo):
    assert texts(session_search(demo, "服务端")) == ["我们需要修改youer服务端的配置文件"]
    assert texts(session_search(demo, "务端的配")) == ["我们需要修改youer服务端的配置文件"]
    r = session_search(demo, "修改youer服务端")
    assert texts(r) == ["我们需要修改youer服务端的配置文件"]
    assert r.results[0].snippet == "我们需要**修改youer服务端**的配置文件"  # three terms, touching: one highlight
    assert texts(session_search(demo, "缓存")) == ["缓存问题已经解决"]


def test_short_latin_terms(demo):
    assert texts(session_search(demo, "go")) == ["go build ./... fails on the ui package"]
    assert texts(session_search(demo, "ui")) == ["go build ./... fails on the ui package"]


def test_multi_word_is_not_a_phrase_and_quotes_are(demo):
    r = session_search(demo, "linear cli", project="demo")
    assert texts(r) == ["The cli for linear is installed with npm", "We should use the linear cli to file issues"]
    assert {h.match for h in r.results} == {"all"}
    assert texts(session_search(demo, '"linear cli"', project="demo")) == ["We should use the linear cli to file issues"]


def test_and_falls_back_to_or(demo):
    r = session_search(demo, "linear zebra", project="demo")
    assert r.strategy == "any" and r.count == 2 and {h.match for h in r.results} == {"any"}
    assert "only some of the terms" in r.note


def test_fill_with_any_after_all_terms(demo):
    r = session_search(demo, "linear npm", project="demo")
    assert r.strategy == "match+any"
    assert [h.match for h in r.results] == ["all", "any"]
    assert texts(r)[0] == "The cli for linear is installed with npm"


def test_uppercase_operators(demo):
    assert len(session_search(demo, "wrong-book OR 服务端").results) == 2
    assert texts(session_search(demo, "linear NOT npm", project="demo")) == ["We should use the linear cli to file issues"]
    assert session_search(demo, "linear AND zebra").strategy == "none"  # operator queries are never broadened


@pytest.mark.parametrize("q", EDGE_CASES)
def test_no_query_raises(demo, q):
    r = session_search(demo, q)
    assert r.kind == "session"
    json.dumps(r.to_dict())


@pytest.mark.parametrize("q", ["user@example.com", "100%", "it's", "a/b", "(it's done: a/b)"])
def test_special_characters_are_literal(demo, q):
    assert session_search(demo, q).count == 1


@pytest.mark.parametrize("q", ["", "   ", "\n"])
def test_blank_query_returns_nothing(demo, q):
    r = session_search(demo, q)
    assert (r.strategy, r.count, r.results) == ("none", 0, [])
    assert r.note == "The query is empty; nothing to search for."


def test_like_escapes_wildcards(conn, helpers):
    helpers.add_session(conn, "s", [{"text": "progress 5% done"}, {"text": "progress 55 done"}, {"text": "a_b"}, {"text": "axb"}])
    assert texts(session_search(conn, "5%")) == ["progress 5% done"]
    assert texts(session_search(conn, "a_")) == ["a_b"]


def test_filters(demo):
    assert {h.project for h in session_search(demo, "linear", project="other").results} == {"other"}
    assert {h.project for h in session_search(demo, "linear", project="bbbbbbbbbbbb").results} == {"other"}
    assert session_search(demo, "linear", project="nope").count == 0
    assert texts(session_search(demo, "linear", role="assistant")) == ["The cli for linear is installed with npm"]
    assert texts(session_search(demo, "linear", since="2026-11-02")) == ["The cli for linear is installed with npm"]
    assert texts(session_search(demo, "linear", until="2026-10-01")) == ["linear cli in the other project"]
    assert session_search(demo, "linear", since=date(2026, 11, 1), until="2026-11-01").count == 1


def test_project_filter_by_path(conn, helpers, tmp_path):
    from pi_memory.project import project_id, project_root

    pid = project_id(project_root(tmp_path))
    helpers.add_session(conn, "s", [{"text": "path filtered text"}], project_id=pid, project_name=tmp_path.name)
    assert project_ids(conn, str(tmp_path)) == [pid]
    assert session_search(conn, "filtered", project=str(tmp_path)).count == 1


def test_invalid_filters_say_what_is_accepted(demo):
    with pytest.raises(SearchInputError, match="use one of: user, assistant, tool, system, summary"):
        session_search(demo, "x", role="robot")
    with pytest.raises(SearchInputError, match="2026-11-29"):
        session_search(demo, "x", since="last tuesday")


def test_parse_time():
    assert parse_time("2026-11-29") == "2026-11-29T00:00:00.000Z"
    assert parse_time("2026-11-29", upper=True) == "2026-11-29T23:59:59.999Z"
    assert parse_time("2026-11-29T13:28:00+02:00") == "2026-11-29T11:28:00.000Z"
    assert parse_time("2026-11-29T13:28:00Z") == "2026-11-29T13:28:00.000Z"
    assert parse_time(None) is None and parse_time("  ") is None
    assert parse_time("7d") < parse_time("1h")


def test_better_match_ranks_first_and_recency_breaks_ties(conn, helpers):
    helpers.add_session(conn, "s", [
        {"text": "long message " + "filler words here " * 40 + "mentions kiwi once", "timestamp": "2026-11-09T00:00:00.000Z"},
        {"text": "kiwi kiwi kiwi: all about kiwi", "timestamp": "2026-11-01T00:00:00.000Z"},
        {"text": "same text about mango", "timestamp": "2026-11-01T00:00:00.000Z"},
        {"text": "same text about mango", "timestamp": "2026-11-05T00:00:00.000Z"},
    ])
    r = session_search(conn, "kiwi")
    assert texts(r)[0] == "kiwi kiwi kiwi: all about kiwi"
    assert r.results[0].score > r.results[1].score
    r = session_search(conn, "mango")
    assert [h.timestamp for h in r.results] == ["2026-11-05T00:00:00.000Z", "2026-11-01T00:00:00.000Z"]


def test_rare_term_weighs_more_than_common_term(conn, helpers):
    rows = [{"text": f"common filler {i}"} for i in range(30)]
    rows += [{"text": "common common common rareword"}, {"text": "common rareword rareword rareword"}]
    helpers.add_session(conn, "s", rows)
    assert texts(session_search(conn, "common rareword"))[0] == "common rareword rareword rareword"


def test_short_word_outranks_substring(conn, helpers):
    helpers.add_session(conn, "s", [{"text": "going to the store going going"}, {"text": "we go now"}])
    assert texts(session_search(conn, "go"))[0] == "we go now"


def test_snippet_is_cut_around_the_match_and_highlighted(conn, helpers):
    long = "intro " * 200 + "the needle is here " + "outro " * 200
    helpers.add_session(conn, "s", [{"text": long}])
    hit = session_search(conn, "needle", snippet_chars=60).results[0]
    assert hit.truncated and hit.text_chars == len(long)
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert "**needle**" in hit.snippet
    assert len(hit.snippet.replace("**", "")) <= 62


def test_make_snippet_prefers_the_window_with_most_terms():
    text = "alpha " + "x " * 300 + "alpha beta gamma " + "y " * 300
    snippet, cut = make_snippet(text, [Term("alpha"), Term("beta"), Term("gamma")], 80)
    assert cut and "**alpha** **beta** **gamma**" in snippet
    assert make_snippet("short text", [Term("text")], 300) == ("short **text**", False)


def test_limit_is_clamped(conn, helpers):
    helpers.add_session(conn, "s", [{"text": f"pear number {i}"} for i in range(80)])
    assert session_search(conn, "pear", limit=0).count == 1
    r = session_search(conn, "pear", limit=500)
    assert r.count + r.omitted == 50  # 50 hits, some dropped again by the 16 KiB output cap
    assert session_search(conn, "pear", limit="x").count == 10  # type: ignore[arg-type]


def test_total_output_is_capped(conn, helpers):
    helpers.add_session(conn, "s", [{"text": f"plum {i} " + "lorem ipsum dolor " * 200} for i in range(60)])
    r = session_search(conn, "plum", limit=50, snippet_chars=2000)
    assert len(r.to_json().encode()) <= MAX_OUTPUT_BYTES
    assert r.truncated and r.omitted == 50 - r.count and r.count >= 1
    assert "left out to keep the output under 16 KiB" in r.note


def test_candidate_cap_ranks_the_newest_matches_and_says_so(conn, helpers, monkeypatch):
    monkeypatch.setattr(enginemod, "CANDIDATE_CAP", 20)
    helpers.add_session(conn, "s", [{"text": f"apple {i}"} for i in range(50)])
    r = session_search(conn, "apple", limit=5)
    assert "newest 20 matches were ranked" in r.note
    assert all(int(t.split()[1]) >= 30 for t in texts(r))


def test_json_is_camel_case(demo):
    data = session_search(demo, "wrong-book").to_dict()
    assert set(data) >= {"kind", "query", "strategy", "expression", "count", "results"}
    assert set(data["results"][0]) >= {"textChars", "sessionId", "entryId", "projectId", "toolName"} - {"toolName"}


def test_fixture_hit_points_at_its_line(conn, fixtures_dir):
    index_paths(conn, [fixtures_dir])
    r = session_search(conn, "tui-renderer", limit=3)
    assert r.count == 3
    for hit in r.results:
        line = Path(hit.file).read_text(encoding="utf-8").splitlines()[hit.line - 1]
        assert "tui-renderer" in line.lower()
        assert hit.cwd == "/Users/badlogic/workspaces/pi-mono" and hit.project == "pi-mono"


def test_abandoned_branch_is_labelled(conn, fixtures_dir):
    index_paths(conn, [fixtures_dir])
    r = session_search(conn, "hello-from-bash", project="scratch-race", limit=10)
    got = {(h.line, h.kind, h.branch) for h in r.results if h.line in (13, 14, 18)}
    assert got == {(13, "tool_call", "abandoned"), (14, "tool_result", "abandoned"), (18, "branch_summary", "active")}
    r = session_search(conn, "Fourth prompt on the new branch", project="scratch-race")
    assert r.results[0].branch == "active"


# ------------------------------------------------------------------------------------------ memory_search
@pytest.fixture
def memories(conn):
    sync_store(conn, "global", None, "memory", ["Project uses uv, not pip", "Tests run with pytest -q"])
    sync_store(conn, "global", None, "user", ["Name is Ada; prefers short answers"])
    sync_store(conn, "global", None, "failure", [
        "[correction] Use pnpm, not npm — Failed: npm broke the lockfile",
        "[tool-quirk] CI needs --frozen-lockfile",
    ])
    sync_store(conn, "project", "cccccccccccc", "project", ["The api repo deploys with make deploy"])
    sync_store(conn, "project", "dddddddddddd", "project", ["The web repo deploys with vercel"])
    return conn


def test_memory_search_hits_and_updates_usage(memories):
    r = memory_search(memories, "pytest")
    assert [h.content for h in r.results] == ["Tests run with pytest -q"]
    hit = r.results[0]
    assert (hit.scope, hit.target, hit.source, hit.hit_count) == ("global", "memory", "markdown", 1)
    assert hit.last_used is not None and hit.snippet == "Tests run with **pytest** -q"
    assert memory_search(memories, "pytest").results[0].hit_count == 2
    memory_search(memories, "pytest", record_use=False)
    assert memories.execute("SELECT hit_count FROM memories WHERE content LIKE 'Tests%'").fetchone()[0] == 2


def test_memory_search_filters(memories):
    assert [h.content for h in memory_search(memories, "lockfile", category="tool-quirk").results] == [
        "[tool-quirk] CI needs --frozen-lockfile"]
    assert len(memory_search(memories, "lockfile", target="failure").results) == 2
    assert memory_search(memories, "lockfile", target="memory").count == 0
    r = memory_search(memories, "deploys", project="cccccccccccc")
    assert [h.content for h in r.results] == ["The api repo deploys with make deploy"]
    assert len(memory_search(memories, "deploys").results) == 2
    r = memory_search(memories, "pytest OR deploys", project="cccccccccccc")
    assert {h.scope for h in r.results} == {"global", "project"}
    hit = memory_search(memories, "pnpm").results[0]
    assert (hit.category, hit.failure_reason) == ("correction", "npm broke the lockfile")
    with pytest.raises(SearchInputError, match="tool-quirk"):
        memory_search(memories, "x", category="bug")
    with pytest.raises(SearchInputError, match="memory, user, project, failure"):
        memory_search(memories, "x", target="notes")


def test_memory_search_short_and_cjk_terms(memories):
    add_extended(memories, "数据库连接池的大小是20")
    add_extended(memories, "the ui theme is dark")
    assert [h.content for h in memory_search(memories, "数据").results] == ["数据库连接池的大小是20"]
    r = memory_search(memories, "ui")  # a whole word: not inside "quirk" (same rules as session_search)
    assert [h.content for h in r.results] == ["the ui theme is dark"]
    r = memory_search(memories, "frozen")  # "--frozen-lockfile" is the words "frozen" and "lockfile"
    assert ([h.content for h in r.results], r.strategy) == (["[tool-quirk] CI needs --frozen-lockfile"], "match")
    r = memory_search(memories, "lockf")  # no such word: the broadened prefix finds "lockfile" (twice)
    assert (r.count, r.strategy) == (2, "any")
    assert memory_search(memories, "连接池").results[0].source == "extended"


def test_memory_search_natural_language_falls_back(memories):
    r = memory_search(memories, "Who am I and what is my name")
    assert r.results and r.results[0].content == "Name is Ada; prefers short answers"


def test_memory_search_empty_store_and_no_match(conn, memories):
    assert memory_search(memories, "zebra").note == "No matches. Try fewer or shorter terms, or a different spelling."


def test_memory_search_on_an_empty_store(conn):
    r = memory_search(conn, "anything")
    assert (r.count, r.note) == (0, "No memories are stored yet.")


def test_a_huge_query_keeps_the_output_bounded(tmp_path):
    from pi_memory.index import open_index
    from pi_memory.index.results import MAX_OUTPUT_BYTES
    from pi_memory.retrieval import session_search

    conn = open_index(tmp_path)
    result = session_search(conn, "a" * 100_000)
    assert len(result.to_json().encode()) <= MAX_OUTPUT_BYTES
    assert len(result.query) == 1000


def test_a_word_and_its_broadened_forms_are_scored_once():
    """``paintings``, ``paintings*`` and ``paint*`` are one word: only the prefix that covers the others is
    scored (a stemming index's one stem); phrases, several words and unrelated terms are kept."""
    paintings, stem = Term("paintings", words=True), Term("paint", words=True, prefix=True)
    word_prefix, name = Term("paintings", words=True, prefix=True), Term("Gina's", words=True)
    assert enginemod.scored_terms([paintings, word_prefix, stem]) == [stem]
    assert enginemod.scored_terms([name, Term("gina", words=True, prefix=True)]) == [
        Term("gina", words=True, prefix=True)]
    kept = [Term("career-high", words=True), Term("paint brush", words=True, phrase=True), stem,
            Term("painter", words=True, negated=True, prefix=True), Term("pain", words=True)]
    assert enginemod.scored_terms(kept) == kept


def test_broadened_word_forms_weigh_alike(conn, helpers):
    """Failing input (LoCoMo, issue 13): a broadened ``paintings`` counted three times in "my paintings" and
    once in "she painted!" (same length); now both hold the word once and score the same."""
    helpers.add_session(conn, "s", [{"text": "my paintings"}, {"text": "she painted!"},
                                    *({"text": f"other words {i}"} for i in range(20))])
    r = session_search(conn, "paintings watercolour")
    assert r.strategy == "any"
    assert sorted(texts(r)) == ["my paintings", "she painted!"]
    assert r.results[0].score == r.results[1].score
