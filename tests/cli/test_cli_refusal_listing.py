"""A refusal lists the entries to pick from; what it prints must be as safe and as readable as ``read``.

A hand-edited MEMORY.md can hold terminal escape codes (``add`` refuses them, an editor does not): the listing
shows them as ``\\xNN`` like ``read`` does, so a refusal never sets the terminal's title or clears the screen,
and a multi-line entry's next lines are indented under its ``-`` so they do not read as other entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app

RUN = CliRunner()
FILE = "Deploy notes\x1b]0;pwned\x07 here\n§\nsecond \x1b[2J entry\n§\ncrlf line\nsecond line\n"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "mem"
    folder.mkdir()
    (folder / "MEMORY.md").write_text(FILE, encoding="utf-8")
    return folder


def test_no_match_lists_entries_with_escape_codes_shown_and_lines_indented(data: Path) -> None:
    r = RUN.invoke(app, ["--dir", str(data), "remove", "memory", "nomatch"])
    assert r.exit_code == 1 and "\x1b" not in r.stderr and "\x07" not in r.stderr
    assert r.stderr.split("current entries:\n", 1)[1] == (
        "  - Deploy notes\\x1b]0;pwned\\x07 here\n"
        "  - second \\x1b[2J entry\n"
        "  - crlf line\n"
        "    second line\n")
    assert (data / "MEMORY.md").read_text(encoding="utf-8") == FILE


def test_ambiguous_lists_matches_with_escape_codes_shown(data: Path) -> None:
    r = RUN.invoke(app, ["--dir", str(data), "replace", "memory", "e", "new text"])
    assert r.exit_code == 1 and "\x1b" not in r.stderr
    listing = r.stderr.split("matching entries:\n", 1)[1]
    assert listing.startswith("  - Deploy notes\\x1b]0;pwned\\x07 here\n  - second \\x1b[2J entry\n")
    assert (data / "MEMORY.md").read_text(encoding="utf-8") == FILE
