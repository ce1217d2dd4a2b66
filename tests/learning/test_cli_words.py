"""The learning commands' words: `learning undo --dry-run` uses no model (its help said "Run the model"), and
`pi-memory review FILE` says what is wrong with the file (a missing one "is not a file"; an empty one "cannot tell
which agent wrote ...")."""

from __future__ import annotations

import pytest
from learning_helpers import cli, llm_block, write_settings

from pi_memory.cli.app import build_command


def _option_help(path: tuple[str, ...], name: str) -> str:
    command = build_command()
    for part in path:
        command = command.commands[part]
    return next(p.help for p in command.params if p.name == name)


def test_undo_dry_run_has_its_own_help():
    assert _option_help(("learning", "undo"), "dry_run") == ("Report the writes the undo would make, without writing "
                                                             "(no model is involved).")
    assert _option_help(("review",), "dry_run") == "Run the model and report the writes, without writing."
    assert _option_help(("consolidate",), "dry_run") == "Run the model and report the writes, without writing."


@pytest.mark.parametrize(("make", "problem"), [
    (lambda p: None, "does not exist"),
    (lambda p: p.mkdir(), "is a folder, not a file"),
    (lambda p: p.write_bytes(b""), "is empty"),
    (lambda p: p.write_text("\n\n  \n", encoding="utf-8"), "holds only blank lines, no session records"),
])
def test_review_says_what_is_wrong_with_the_file_before_reading_it(agent, llm, project, monkeypatch, make, problem):
    write_settings(agent, llm_block(llm))
    monkeypatch.chdir(project)
    path = project / "session.jsonl"
    make(path)
    code, data = cli("review", str(path), "--json")
    assert (code, data["error"]) == (2, f"{path} {problem}; pass the path of a session transcript (.jsonl) of pi, "
                                        "Claude Code or Codex.")
    assert llm.chat_requests == []


def test_review_of_a_broken_link_says_so(agent, llm, project, monkeypatch):
    write_settings(agent, llm_block(llm))
    monkeypatch.chdir(project)
    path = project / "session.jsonl"
    path.symlink_to(project / "gone.jsonl")
    code, data = cli("review", str(path), "--json")
    assert (code, data["error"]) == (2, f"{path} does not exist (a broken link); pass the path of a session "
                                        "transcript (.jsonl) of pi, Claude Code or Codex.")


@pytest.mark.parametrize(("text", "problem"), [
    ("just some notes\nnot json\n", "none of its lines is a JSON record, so it is no JSONL transcript"),
    ('{"kind": "note", "body": "hello"}\n', "its records are JSON, but not of a session format pi-memory reads (pi, "
                                             "Claude Code, Codex), and its folder does not say which agent wrote it"),
])
def test_review_of_a_file_that_is_no_transcript_says_why(agent, llm, project, monkeypatch, text, problem):
    write_settings(agent, llm_block(llm))
    monkeypatch.chdir(project)
    path = project / "notes.jsonl"
    path.write_text(text, encoding="utf-8")
    code, data = cli("review", str(path), "--json")
    assert (code, data["error"]) == (2, f"Cannot read {path} as a session transcript: {problem}.")
