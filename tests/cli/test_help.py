"""The help a person reads: every command and option described, no type label on flags, no sentence broken
by a source line break, ``-h`` and ``--version``, one type for ``--project``. Commands come from the app, so
a command added later is held to the same rules."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

import pi_memory
from pi_memory.cli import main
from pi_memory.cli.app import build_command

COMMAND = build_command()


def _walk(command, path=()):
    if hasattr(command, "commands"):
        yield path, command
        for name, sub in command.commands.items():
            yield from _walk(sub, (*path, name))
    else:
        yield path, command


ALL = {" ".join(path): command for path, command in _walk(COMMAND)}


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(list(argv))
        except SystemExit as exc:
            return exc.code or 0, out.getvalue()
    return 0, out.getvalue()


@pytest.mark.parametrize("name", sorted(ALL))
def test_help_has_no_flag_label_and_h_is_help(name):
    code, text = _run(*name.split(), "--help")
    assert code == 0 and "Usage: pi-memory" in text
    assert "<bool>" not in text
    assert _run(*name.split(), "-h") == (0, text)


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_option_and_command_is_described_in_whole_paragraphs(name):
    command = ALL[name]
    if name:
        assert command.help, f"{name} has no description"
        for paragraph in command.help.split("\n\n"):
            lines = paragraph.split("\n")
            assert len(lines) == 1 or all(x.lstrip().startswith(("-", "*")) or x.startswith(" ") for x in lines[1:]), (
                f"{name}: a line break inside a sentence: {paragraph!r}")
        assert "\n" not in (command.short_help or "")
    for param in command.params:
        if param.param_type_name == "option":
            assert param.help and param.help.strip(), f"{name} {param.opts[0]} has no help"


def test_top_level_json_and_the_options_the_issue_named_have_help():
    code, text = _run("--help")
    assert re.search(r"--json\s+Print every result and error as JSON", text), text
    assert "--version" in text and "-h" in text
    helps = {(name, p.opts[0]): p.help for name, command in ALL.items() for p in command.params
             if p.param_type_name == "option"}
    assert helps["semantic search", "--top-k"] == "How many memories to show at most (the best first)."
    assert helps["semantic delete", "--reason"].startswith("Why it is deleted; kept in the memory's history")


def test_version():
    assert _run("--version") == (0, f"pi-memory {pi_memory.__version__}\n")
    assert _run("--version", "status") == (0, f"pi-memory {pi_memory.__version__}\n")  # eager: nothing else runs


def test_project_is_a_path_in_every_command():
    kinds = {name: str(p.type_descriptor.annotation) for name, command in ALL.items() for p in command.params
             if p.name == "project"}
    assert {"session-search", "memory-search", "semantic search"} <= set(kinds)
    assert set(kinds.values()) == {str(next(iter(kinds.values())))} and "Path" in next(iter(kinds.values()))
