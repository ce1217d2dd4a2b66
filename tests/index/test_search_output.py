"""What search shows (issue 9, item 11 "Search output" and "index-sessions"; item 1 for snippet windows):
highlights that are not doubled, whole-word highlights, a note that fits a query without words, bold instead of
raw markers for a person, snippet windows that never cut a credential, and index-sessions' errors and sizes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.cli.search import highlighted
from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import index_paths, open_index
from pi_memory.index.query import Term
from pi_memory.index.snippets import make_snippet
from pi_memory.reports import index_pass_text, size_text
from pi_memory.retrieval import memory_search, session_search

KEY = "sk-proj-Qm4Tz8Lp2Vx7Nc3Rb9Wk5Hd1Jf6Gs0Ya"


def pi_session(path: Path, session_id: str, cwd: str, turns: list[tuple[str, str]]) -> Path:
    return write_pi_session(path, Path(cwd), turns, session_id)


@pytest.mark.parametrize(("text", "terms", "expected"), [
    ("Use **docker** compose here", [Term("docker", words=True)], "Use **docker** compose here"),
    ("**docker compose** is the tool", [Term("docker", words=True)], "**docker** compose is the tool"),
    ("****docker**** twice", [Term("docker", words=True)], "****docker**** twice"),  # not emphasis: kept, once
    ("2**10 is 1024 in docker", [Term("docker", words=True)], "2**10 is 1024 in **docker**"),
])
def test_text_that_already_holds_markers_is_highlighted_once(text, terms, expected) -> None:
    assert make_snippet(text, terms, 300)[0] == expected


@pytest.mark.parametrize(("text", "term", "expected"), [
    ("a data race and a banana", Term("a", words=True), "**a** data race and **a** banana"),
    ("x-axis max box", Term("x", words=True), "**x**-axis max box"),
    ("snake_case and case", Term("case", words=True), "snake_**case** and **case**"),
    ("deployment deploy", Term("deploy", words=True, prefix=True), "**deployment** **deploy**"),
    ("我们需要修改youer服务端", Term("youer", words=True), "我们需要修改**youer**服务端"),
    ("trigram in data", Term("a"), "trigr**a**m in d**a**t**a**"),  # a trigram term matches anywhere
])
def test_word_terms_are_highlighted_as_whole_words(text, term, expected) -> None:
    assert make_snippet(text, [term], 300)[0] == expected


def test_a_or_highlights_the_word_a_only(tmp_path: Path) -> None:
    conn = open_index(tmp_path / "data")
    index_paths(conn, [pi_session(tmp_path / "s.jsonl", "s", "/w", [("user", "a metadata banana table")])])
    [hit] = session_search(conn, "a OR").results
    assert hit.snippet == "**a** metadata banana table"


@pytest.mark.parametrize(("query", "note"), [
    ('"', "The query has no word to search for (only quotes, operators or punctuation). Add a word to search for."),
    ('""', "The query has no word to search for (only quotes, operators or punctuation). Add a word to search for."),
    ('" "', "The query has no word to search for (only quotes, operators or punctuation). Add a word to search for."),
    ("NOT docker", "The query only excludes terms (NOT ...), so nothing can match it. Add a term to search for."),
])
def test_a_query_without_words_gets_a_note_that_fits(tmp_path: Path, query: str, note: str) -> None:
    conn = open_index(tmp_path / "data")
    index_paths(conn, [pi_session(tmp_path / "s.jsonl", "s", "/w", [("user", "docker compose up")])])
    assert session_search(conn, query).note == note
    conn.execute("INSERT INTO memories(scope, target, content, source, created) VALUES "
                 "('global', 'memory', 'docker', 'extended', '2026-01-01')")
    assert memory_search(conn, query).note == note


def test_people_see_bold_not_markers() -> None:
    text = highlighted("use **docker** and **compose** now")
    assert text.plain == "use docker and compose now"
    assert [(text.plain[s.start:s.end], s.style) for s in text.spans] == [("docker", "bold"), ("compose", "bold")]
    assert highlighted("2**10 is **big**").plain == "2**10 is **big**"  # odd markers: shown as written


def test_the_cli_prints_no_raw_markers(tmp_path: Path) -> None:
    conn = open_index(tmp_path / "data")
    index_paths(conn, [pi_session(tmp_path / "s.jsonl", "s", "/w", [("user", "run **docker** compose up")])])
    conn.close()
    human = CliRunner().invoke(app, ["session-search", "docker", "--dir", str(tmp_path / "data")])
    assert human.exit_code == 0 and "docker compose up" in human.output and "**" not in human.output
    js = CliRunner().invoke(app, ["session-search", "docker", "--json", "--dir", str(tmp_path / "data")])
    assert json.loads(js.output)["results"][0]["snippet"] == "run **docker** compose up"  # models keep them


@pytest.mark.parametrize("pad", [20, 37, 41, 55, 70])
def test_a_snippet_window_never_ends_inside_a_credential(pad: int) -> None:
    text = "deploy " + "x" * pad + f" OPENAI_API_KEY={KEY} and the rest of the deploy notes go on " + "y" * 200
    for redacted_text in (text, None):
        snippet, _ = make_snippet(redacted_text or text, [Term("deploy", words=True)], 80)
        assert not any(KEY[i : i + 8] in snippet for i in range(len(KEY) - 7)), snippet
    marked = "deploy " + "x" * pad + " key [REDACTED:openai_api_key] " + "y" * 200
    snippet, _ = make_snippet(marked, [Term("deploy", words=True)], 80, redacted=True)
    assert "[REDACTED:" not in snippet or "[REDACTED:openai_api_key]" in snippet  # a marker is never cut


@pytest.mark.parametrize(("n", "text"), [(0, "0 bytes"), (1, "1 byte"), (999, "999 bytes"), (5_300, "5.3 kB"),
                                         (617_000, "617 kB"), (12_400_000, "12.4 MB"), (1_200_000_000, "1.20 GB")])
def test_sizes_are_printed_sensibly(n: int, text: str) -> None:
    assert size_text(n) == text


def test_an_index_pass_is_one_sentence_with_plurals_right() -> None:
    """A tester's case: "1 messages added"."""
    one = {"files_seen": 1, "files_new": 1, "files_appended": 0, "files_replaced": 0, "files_unchanged": 0,
           "files_failed": 0, "messages_added": 1, "bytes_read": 512, "seconds": 0.013}
    assert index_pass_text(one) == ("1 file: 1 new, 0 appended, 0 rewritten, 0 unchanged, 0 failed; 1 message added, "
                                    "512 bytes in 0.01 s")
    many = {**one, "files_seen": 3, "files_unchanged": 2, "messages_added": 0, "bytes_read": 5_300}
    assert index_pass_text(many) == ("3 files: 1 new, 0 appended, 0 rewritten, 2 unchanged, 0 failed; 0 messages "
                                     "added, 5.3 kB in 0.01 s")


def test_index_sessions_refuses_a_path_that_does_not_exist(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["index-sessions", str(tmp_path / "nope"), "--dir", str(tmp_path / "data")])
    assert res.exit_code == 1 and "does not exist; nothing was indexed" in res.output
    two = runner.invoke(app, ["index-sessions", str(tmp_path / "a"), str(tmp_path / "b"), "--json",
                              "--dir", str(tmp_path / "data")])
    assert two.exit_code == 1 and json.loads(two.output)["error"].startswith(f"{tmp_path / 'a'}, {tmp_path / 'b'} do")
    real = pi_session(tmp_path / "s.jsonl", "s", "/w", [("user", "hello there")])
    mixed = runner.invoke(app, ["index-sessions", str(real), str(tmp_path / "gone.jsonl"), "--dir",
                                str(tmp_path / "data")])
    assert mixed.exit_code == 1 and not (tmp_path / "data" / "index.sqlite3").exists()  # nothing half done


def test_a_binary_file_is_a_failure_wherever_it_lies(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    blob = bytes(range(256)) * 8 + b"\n" + os.urandom(64).replace(b"\n", b"x") + b"\n"
    inside = tmp_path / ".claude" / "projects" / "-w" / "x.jsonl"
    elsewhere = tmp_path / "elsewhere" / "x.jsonl"
    pi = tmp_path / ".pi" / "agent" / "sessions" / "--w--" / "2026-11-01T10-00-00-000Z_x.jsonl"
    codex = tmp_path / ".codex" / "sessions" / "2026" / "11" / "01" / "rollout-2026-11-01T10-00-00-x.jsonl"
    for path in (inside, elsewhere, pi, codex):
        path.parent.mkdir(parents=True)
        path.write_bytes(blob)
    conn = open_index(tmp_path / "data")
    stats = index_paths(conn, [inside, elsewhere, pi, codex])
    assert (stats.files_new, stats.files_failed) == (0, 4)
    assert all("cannot tell which agent wrote" in e for e in stats.errors)
    text = inside.with_name("y.jsonl")  # a real transcript in the same folder is still read
    text.write_text(json.dumps({"type": "user", "uuid": "u1", "sessionId": "s", "message": {"role": "user",
                                "content": "hello"}}) + "\n")
    assert index_paths(conn, [text]).files_new == 1
