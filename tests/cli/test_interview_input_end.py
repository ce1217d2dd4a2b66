"""`printf 'Alice\\n' | pi-memory interview` printed `Aborted.`, exited 1 and saved nothing. An end of input now
saves the answers given so far and says the rest were skipped; with no answer given it says nothing was saved;
Ctrl-C saves nothing and says so."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from pi_memory.cli.app import app


@pytest.fixture
def run(tmp_path):
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_MEMORY_DIR": str(tmp_path / "data")}

    def run(given: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pi_memory", "interview"], input=given, capture_output=True,
                              text=True, env=env, timeout=60, cwd=tmp_path)

    return run


QUESTIONS = ("What should the agent call you?: What is your role, and what do you mostly work on?: Which languages, "
             "tools and package managers do you prefer?: How should answers be: short or detailed, and in which "
             "language?: Anything the agent should avoid or always check first?: ")


def test_the_tester_s_pipe_saves_the_name_it_gave(run, tmp_path):
    done = run("Alice\n")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (QUESTIONS[:QUESTIONS.index("Which")] + "\nInput ended at question 2 of 5: the answers "
                           "given are saved, the rest skipped.\nsaved: The user's name is Alice.\nUSER.md now: 1% — "
                           "25/1,375 chars.\n")
    assert (tmp_path / "data" / "USER.md").read_text(encoding="utf-8") == "The user's name is Alice.\n"


def test_answers_with_skipped_ones_between_are_saved_up_to_the_end(run, tmp_path):
    done = run("Alice\n\nPython, uv\n")
    assert done.returncode == 0 and "Input ended at question 4 of 5: the answers given are saved" in done.stdout
    assert (tmp_path / "data" / "USER.md").read_text(encoding="utf-8") == (
        "The user's name is Alice.\n§\nPreferred languages and tools: Python, uv.\n")


@pytest.mark.parametrize(("given", "at"), [("", 1), ("\n\n", 3)])
def test_input_ending_before_any_answer_says_nothing_was_saved(run, tmp_path, given, at):
    done = run(given)
    assert done.returncode == 1 and done.stdout.endswith(
        f"\nInput ended at question {at} of 5 before any answer: nothing was saved.\n")
    assert not (tmp_path / "data" / "USER.md").exists()


def test_every_question_answered_is_as_before(run, tmp_path):
    done = run("Alice\nBackend dev\nPython\nShort\nForce pushes\n")
    assert done.returncode == 0 and "Input ended" not in done.stdout
    assert done.stdout.count("saved: ") == 5


def test_ctrl_c_saves_nothing_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    answers = iter(["Alice"])

    def prompt(*args, **kwargs):
        try:
            return next(answers)
        except StopIteration:
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt:
                raise typer.Abort() from None  # as click's prompt turns Ctrl-C into Abort

    monkeypatch.setattr(typer, "prompt", prompt)
    result = CliRunner().invoke(app, ["interview"])
    assert (result.exit_code, result.stdout) == (130, "\nInterrupted at question 2 of 5: nothing was saved.\n")
    assert not (tmp_path / "data" / "USER.md").exists()
