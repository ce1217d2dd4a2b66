"""Anchor-mode session search: session files read directly, ``path:start-end`` anchors, bounded and redacted."""

from __future__ import annotations

import os
import time

import pytest
from conftest import pi_session

from pi_memory.index import SearchInputError, anchor_search
from pi_memory.index.anchors import MAX_TEXT_CHARS, render
from pi_memory.tools.search import create_search_tools


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "sessions"
    a = pi_session(root / "--repo--" / "a.jsonl", "s-a", "/work/repo", [
        ("user", "How do we refresh the auth token?"),                 # line 2
        ("assistant", "The auth token is refreshed by the JWT middleware."),  # line 3
        ("user", "Thanks, and the deploy script?"),                    # line 4
        ("assistant", "Run make deploy."),                             # line 5
        ("user", "Unrelated chatter about lunch."),                    # line 6
        ("user", "One more: auth token expiry is 15 minutes."),        # line 7 (2 lines after 5: same gap rule)
    ], day="2026-11-03")
    b = pi_session(root / "--other--" / "b.jsonl", "s-b", "/work/other", [
        ("user", "The auth flow uses OAuth, no token here"),           # line 2
        ("assistant", "Noted: oauth."),                                # line 3
    ], day="2026-10-20")
    old = time.time() - 90 * 86400
    os.utime(b, (old, old))
    return root, a, b


def test_all_terms_give_merged_anchors_with_reasons(corpus):
    root, a, b = corpus
    result = anchor_search([root], all_terms=["Auth", "token"])
    assert result.count == 3
    assert [(x.path, x.start_line, x.end_line) for x in result.anchors] == [
        (str(a), 7, 7), (str(a), 2, 3), (str(b), 2, 2)]
    assert result.anchors[1].reason == "user+assistant 2026-11-03 in /work/repo: auth, token"


def test_any_and_exclude(corpus):
    root, a, b = corpus
    result = anchor_search([root], any_terms=["oauth", "jwt"], exclude=["no token"])
    assert [(x.path, x.start_line, x.end_line) for x in result.anchors] == [(str(a), 3, 3), (str(b), 3, 3)]
    assert result.anchors[0].reason.endswith(": jwt")


def test_from_to_and_cwd(corpus):
    root, a, b = corpus
    assert [x.path for x in anchor_search([root], all_terms=["auth"], since="2026-11-01").anchors] == [str(a)] * 2
    assert [x.path for x in anchor_search([root], all_terms=["auth"], until="2026-10-20").anchors] == [str(b)]
    assert [x.path for x in anchor_search([root], all_terms=["auth"], cwd="/work/other").anchors] == [str(b)]
    assert anchor_search([root], all_terms=["auth"], cwd="/work/rep").count == 0  # a folder, not a prefix
    # a file last written before `from` is not even opened
    assert anchor_search([root], all_terms=["oauth"], since="2026-11-01").files_skipped == 2


def test_limit_count_and_message(corpus):
    root, _a, _b = corpus
    result = anchor_search([root], all_terms=["auth"], limit=1)
    assert result.count == 3 and len(result.anchors) == 1
    assert result.message.startswith("3 anchors matched; the newest 1 are shown.")
    text = result.text()
    assert text.splitlines()[0] == "count: 3" and text.splitlines()[1].startswith("message: 3 anchors matched")
    assert text.splitlines()[2].endswith("a.jsonl:7 user 2026-11-03 in /work/repo: auth")


def test_nothing_matched_says_what_to_try(corpus):
    root, _a, _b = corpus
    result = anchor_search([root], all_terms=["kubernetes"])
    assert result.count == 0 and result.text().startswith("count: 0\nmessage: Nothing matched.")
    assert result.files_read == 0  # the raw pre-check skipped both files


@pytest.mark.parametrize(("kwargs", "words"), [
    ({}, "at least one term"),
    ({"all_terms": ["  "]}, "at least one term"),
    ({"all_terms": ["x"], "limit": 0}, "between 1 and 50"),
    ({"all_terms": ["x"], "limit": 51}, "between 1 and 50"),
    ({"all_terms": ["x"], "since": "last tuesday"}, "Cannot read the time"),
    ({"all_terms": [f"t{i}" for i in range(21)]}, "at most 20"),
])
def test_bad_requests_are_refused_with_what_to_do(corpus, kwargs, words):
    root, _a, _b = corpus
    with pytest.raises(SearchInputError, match=words):
        anchor_search([root], **kwargs)


def test_non_ascii_and_quoted_terms_skip_the_raw_check_and_still_match(tmp_path):
    f = pi_session(tmp_path / "s" / "c.jsonl", "s-c", "/w", [("user", 'Der Schlüssel heißt "blue"'),
                                                              ("user", "日本語のメモ")])
    assert [x.start_line for x in anchor_search([tmp_path / "s"], all_terms=["SCHLÜSSEL", '"blue"']).anchors] == [2]
    assert [x.start_line for x in anchor_search([tmp_path / "s"], any_terms=["メモ"]).anchors] == [3]
    assert f.exists()


def test_output_is_redacted_and_bounded(tmp_path):
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    pi_session(tmp_path / "s" / "k.jsonl", "s-k", "/w", [("user", f"the key is {key}")])
    result = anchor_search([tmp_path / "s"], all_terms=[key])
    assert result.count == 1 and key not in result.text() and "[REDACTED" in result.text()
    many = {"success": True, "count": 50, "anchors": [
        {"path": "/p/" + "x" * 200 + ".jsonl", "startLine": i, "endLine": i + 1, "reason": "user: " + "y" * 150}
        for i in range(50)]}
    text = render(many)
    assert len(text) <= MAX_TEXT_CHARS + 200 and text.splitlines()[-1].startswith("… ")


def test_unreadable_file_is_reported_not_fatal(corpus):
    root, _a, _b = corpus
    (root / "--repo--" / "junk.jsonl").write_bytes(b"auth token but not json\n")
    result = anchor_search([root], all_terms=["auth", "token"])
    assert result.count == 3 and "1 file(s) could not be read" in result.message


def test_the_tool_variant_answers_in_plain_text_without_the_index(corpus):
    root, a, _b = corpus

    def no_index():
        raise AssertionError("anchor mode must not open the index")

    tools = {t.name: t for t in create_search_tools(no_index, "/work/repo", session_variant="anchors",
                                                    session_roots=lambda: [root])}
    tool = tools["session_search"]
    assert {"all", "any", "exclude", "from", "to", "cwd", "limit", "query"} <= set(tool.parameters["properties"])
    out = tool.call({"all": ["auth"], "any": ["jwt", "expiry"], "cwd": "current", "from": "2026-11-01"})
    assert out.is_error is False
    assert out.text == (f"count: 2\n{a}:7 user 2026-11-03 in /work/repo: auth, expiry\n"
                        f"{a}:3 assistant 2026-11-03 in /work/repo: auth, jwt")
    assert out.result["anchors"][0] == {"path": str(a), "startLine": 7, "endLine": 7,
                                        "reason": "user 2026-11-03 in /work/repo: auth, expiry"}
    assert tool.call({"query": "deploy script"}).text.startswith("count: 1\n")
    bad = tool.call({"limit": 3})
    assert bad.is_error and bad.text == "error: Give at least one term in 'all' or 'any' (words or phrases to find)."
    assert tool.call({"all": ["x"], "bogus": 1}).is_error


def test_legacy_variant_is_the_default(corpus):
    tools = {t.name: t for t in create_search_tools(lambda: None, None)}
    assert "query" in tools["session_search"].parameters["required"]
