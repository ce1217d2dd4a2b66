"""Text a person sees from search results never runs in their terminal.

Transcripts keep tool output as it was, colours and terminal titles included (``\\x1b[31m``, ``\\x1b]0;…\\x07``),
and a semantic memory an older version stored may hold them too: ``session-search``, ``semantic search|list|history`` show such codes
as ``\\xNN`` (as ``read`` does), so a result cannot clear the screen, retitle the window or hide text."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import pi_memory.cli.semantic  # noqa: F401  (registers the "semantic" sub-app)
from pi_memory.cli.app import app
from pi_memory.devtools.transcripts import write_pi_session

RUN = CliRunner()
HOSTILE = "pelican build \x1b]0;pwned\x07 then \x1b[2J done \x1b[31mred\x1b[0m"
SHOWN = "pelican build \\x1b]0;pwned\\x07 then \\x1b[2J done \\x1b[31mred\\x1b[0m"


@pytest.fixture
def env(tmp_path: Path, monkeypatch) -> dict:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    return {"data": str(tmp_path / "data"), "project": project, "agent": tmp_path / "agent"}


def test_session_search_shows_escape_codes_of_a_transcript(env) -> None:
    write_pi_session(env["agent"] / "sessions" / "--repo--" / "s.jsonl", env["project"],
                     [("user", HOSTILE), ("assistant", "ok")])
    assert RUN.invoke(app, ["--dir", env["data"], "index-sessions"]).exit_code == 0
    r = RUN.invoke(app, ["--dir", env["data"], "session-search", "pelican"])
    assert r.exit_code == 0 and "\x1b" not in r.stdout and "\x07" not in r.stdout
    assert r.stdout.splitlines()[-1].strip() == SHOWN


def test_semantic_search_and_list_show_escape_codes(env) -> None:
    """An add refuses such codes now (as the curated stores do); a memory an older version stored is shown
    escaped."""
    from pi_memory.index import open_index

    base = ["--dir", env["data"], "--project", str(env["project"])]
    refused = RUN.invoke(app, ["semantic", "add", HOSTILE, *base])
    assert refused.exit_code == 2 and " ".join(refused.output.split()) == (
        "error: Not saved: the memory text holds a control character (\\x1b: terminal escape codes or similar), "
        "which can hide or change text on a screen showing it. Remove it and send plain text.")
    assert RUN.invoke(app, ["semantic", "add", "pelican build then done red", *base]).exit_code == 0
    db = open_index(Path(env["data"]))
    with db:  # as an older version stored it
        db.execute("UPDATE semantic_memories SET text = ?", (HOSTILE,))
        db.execute("UPDATE semantic_history SET new_text = ?", (HOSTILE,))
    db.close()
    for command in (["semantic", "search", "pelican build"], ["semantic", "list"]):
        r = RUN.invoke(app, [*command, *base])
        assert r.exit_code == 0 and "\x1b" not in r.stdout, command
        assert r.stdout.splitlines()[1] == "  " + SHOWN, command
    mid = RUN.invoke(app, ["semantic", "list", *base]).stdout.split()[0]
    r = RUN.invoke(app, ["semantic", "history", mid, *base])
    assert r.exit_code == 0 and "\x1b" not in r.stdout and f"  after:  {SHOWN}" in r.stdout.splitlines()


def test_emoji_codes_in_stored_text_are_printed_as_written(env) -> None:
    """Breaker F10: Rich turned `:x:` into an emoji on display, so `read` showed text the file does not hold."""
    d = env["data"]
    assert RUN.invoke(app, ["--dir", d, "add", "memory", "Press :x: to close, :smile: is fine"]).exit_code == 0
    r = RUN.invoke(app, ["--dir", d, "read", "memory"])
    assert r.exit_code == 0 and "1. Press :x: to close, :smile: is fine" in r.stdout.splitlines()
    r = RUN.invoke(app, ["--dir", d, "pin", "add", "Use :thumbs_up:"])
    assert r.exit_code == 0 and ":thumbs_up:" in r.stdout and "\U0001f44d" not in r.stdout
    r = RUN.invoke(app, ["--dir", d, "pin", "list"])
    assert r.exit_code == 0 and "Use :thumbs_up:" in r.stdout and "\U0001f44d" not in r.stdout
