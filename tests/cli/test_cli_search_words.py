"""What a person reads from the search commands (fresh-eyes report): how each session hit was found, read
commands that refuse a mistyped --dir instead of creating it, and refusals and notes in a person's words."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

import pi_memory.cli.semantic  # noqa: F401  (registers the "semantic" sub-app)
from pi_memory.cli import main
from pi_memory.devtools.transcripts import write_pi_session

TURNS = [("user", "the wifi password for the office is on the fridge"),
         ("assistant", "noted, I will keep it private"),
         ("user", "run celery workers with --concurrency 4 in production"),
         ("assistant", "done, the worker pool restarted cleanly"),
         ("user", "we moved the database to Postgres 16 last week"),
         ("assistant", "I updated the README with the new install steps")]


def run(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.ExitStack() as stack:
        if stdin is not None:
            stack.enter_context(_stdin(stdin))
        try:
            main(list(argv))
        except SystemExit as exc:
            return exc.code or 0, out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def _stdin(text: str):
    import sys

    old, sys.stdin = sys.stdin, io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = old


@pytest.fixture
def env(tmp_path: Path, monkeypatch) -> dict:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    return {"data": str(tmp_path / "data"), "project": project, "agent": tmp_path / "agent", "tmp": tmp_path}


@pytest.fixture
def embedded(env) -> dict:
    """One pi session indexed and its turns embedded (``semantic embed-sessions``)."""
    from pi_memory.semantic import sources

    sources.forget()
    write_pi_session(env["agent"] / "sessions" / "--repo--" / "s.jsonl", env["project"], TURNS)
    assert run("--dir", env["data"], "index-sessions")[0] == 0
    assert run("--dir", env["data"], "semantic", "embed-sessions")[0] == 0
    yield env
    sources.forget()


def heads(stdout: str) -> list[str]:
    """The first line of each hit, without its time."""
    return [line.split("  ", 1)[1] for line in stdout.splitlines() if line[:1].isdigit()]


def test_each_session_hit_says_how_it_was_found(embedded):
    code, out, err = run("--dir", embedded["data"], "session-search", "celery")
    assert code == 0
    assert heads(out) == ["user  repo  (by keyword)", "assistant  repo  (by the turns around it)",
                          "assistant  repo  (by the turns around it)", "user  repo  (by the turns around it)",
                          "user  repo  (by the turns around it)"]
    code, out, err = run("--dir", embedded["data"], "session-search", "wireless network credentials", "--limit", "1")
    assert code == 0 and heads(out) == ["user  repo  (by meaning only)"]
    assert out.splitlines()[2] == "   the wifi password for the office is on the fridge"
    assert err == "This hit was found by meaning alone (match: meaning): no word of the query is in it or around it.\n"


def test_a_query_nothing_is_about_finds_nothing_once_turns_have_vectors(embedded):
    for query in ("zzzqqq xylophone", "what is the capital of France"):
        code, out, _ = run("--dir", embedded["data"], "session-search", query)
        assert (code, out) == (0, "No matches. Try fewer or shorter terms, or a different spelling.\n"), query


def test_the_floor_comes_from_the_settings(embedded):
    """``recallMinSimilarity`` 0 (floor off) reaches session_search through the runtime, as it reaches recall."""
    (embedded["agent"] / "settings.json").write_text(json.dumps({"pi-memory": {"recallMinSimilarity": 0}}))
    code, out, _ = run("--dir", embedded["data"], "session-search", "zzzqqq xylophone", "--json")
    assert code == 0 and {h["match"] for h in json.loads(out)["results"]} == {"meaning"}


MISSING = ("error: The data folder {d} (--dir) does not exist, so there is nothing to read; nothing was created. "
           "Check the path, or leave --dir out to use the default data folder.")


@pytest.mark.parametrize("argv", [["semantic", "recall", "db port"], ["semantic", "search", "db"],
                                  ["semantic", "list"], ["semantic", "status"], ["semantic", "history", "x"],
                                  ["session-search", "x"], ["memory-search", "x"], ["status"], ["read", "memory"],
                                  ["insights"], ["projects"]])
def test_a_read_command_refuses_a_missing_dir_and_creates_nothing(env, argv):
    missing = env["tmp"] / "nonexistent" / "x"
    code, out, err = run(*argv, "--dir", str(missing))
    assert (code, out) == (2, "")
    assert " ".join(err.split()) == MISSING.format(d=missing)
    assert not (env["tmp"] / "nonexistent").exists()


def test_blocks_list_previews_the_default_blocks_of_a_new_folder(env):
    """`blocks list` shows the blocks a session start creates in a folder with no block file yet (a new data
    folder too: test_cli_pin_blocks), and creates nothing."""
    new = env["tmp"] / "new" / "x"
    assert run("blocks", "list", "--dir", str(new))[0] == 0
    assert not (env["tmp"] / "new").exists()


def test_a_write_command_still_creates_its_data_folder(env):
    new = env["tmp"] / "new" / "x"
    assert run("add", "memory", "the build uses pnpm", "--dir", str(new))[0] == 0
    assert (new / "MEMORY.md").is_file()


@pytest.mark.parametrize(("argv", "said"), [
    (["session-search", "celery", "--role", "bot"],
     "error: --role bot is not one of the values it takes: user, assistant, tool or summary. Nothing was searched."),
    (["memory-search", "x", "--target", "notes"],
     "error: --target notes is not one of the values it takes: memory, user, project, failure or block. Nothing was "
     "searched."),
    (["memory-search", "x", "--category", "bug"],
     "error: --category bug is not one of the values it takes: failure, correction, insight, preference, convention "
     "or tool-quirk. Nothing was searched."),
])
def test_a_value_an_option_does_not_take_is_named_with_the_allowed_ones(env, argv, said):
    code, out, err = run(*argv, "--dir", env["data"])
    assert (code, out) == (2, "") and " ".join(err.split()) == said


NO_WORD = "The query has no word to search for (only quotes, operators or punctuation). Add a word to search for.\n"


@pytest.mark.parametrize("query", ["'", '"', "-", "*"])
def test_a_query_of_punctuation_alone_has_no_word_to_search_for(env, query):
    assert run("add", "memory", "use - dashes and 'quotes' in names", "--dir", env["data"])[0] == 0
    assert run("memory-search", query, "--dir", env["data"]) == (0, NO_WORD, "")
    assert run("memory-search", "dashes", "--dir", env["data"])[1].startswith("1. memory")


def test_an_empty_semantic_search_says_the_query_is_empty(env):
    assert run("semantic", "search", "", "--dir", env["data"]) == (0, "The query is empty; nothing to search for.\n",
                                                                   "")
    code, out, _ = run("semantic", "search", " ", "--dir", env["data"], "--json")
    assert (code, json.loads(out)) == (0, {"query": " ", "count": 0, "results": [],
                                           "note": "The query is empty; nothing to search for."})


def test_semantic_recall_reads_the_prompt_from_standard_input(env):
    assert run("semantic", "add", "the staging database listens on port 5433", "--dir", env["data"])[0] == 0
    code, out, _ = run("semantic", "recall", "-", "--dir", env["data"], "--json",
                       stdin="which port does the staging db listen on\n")
    data = json.loads(out)
    assert (code, data["prompt"], [h["memory"] for h in data["hits"]]) == (
        0, "which port does the staging db listen on", ["the staging database listens on port 5433"])
