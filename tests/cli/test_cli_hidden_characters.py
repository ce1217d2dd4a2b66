"""Text a person reads from a hand-edited store or skill shows a right-to-left override (U+202E), a zero-width
space (U+200B) and the like as escapes, as it shows ``ESC`` as ``\\x1b``: `read`, `insights`, `skills list` and
`skills view` printed them raw (U+202E printed ``pnpm gnirts`` as ``pnpm strings``, reversed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app

MEMORY = "Uses pnpm \u202e gnirts\n§\nzw\u200bspace note \u2066iso\u2069\n§\nPersian می\u200cخواهم stays\n"


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    d = tmp_path / "data"
    d.mkdir()
    (d / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    skill = d / "skills" / "bidi" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text('---\nname: bidi\ndescription: "Deploys \\u202e gnirts"\n---\n1. ship \u202e now \x1b[2J\n',
                     encoding="utf-8")
    return d


def run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    for ch in "\u202e\u200b\u2066\u2069\x1b":
        assert ch not in result.stdout, repr(ch)
    return result.stdout


def test_read_shows_hidden_characters_as_escapes(data):
    assert run("read", "memory", "--dir", str(data)).splitlines()[1:4] == [
        "1. Uses pnpm \\u202e gnirts", "2. zw\\u200bspace note \\u2066iso\\u2069", "3. Persian می\u200cخواهم stays"]


def test_insights_shows_hidden_characters_as_escapes(data):
    text = run("insights", "--dir", str(data))
    assert "  1. Uses pnpm \\u202e gnirts" in text.splitlines()
    assert "  2. zw\\u200bspace note \\u2066iso\\u2069" in text.splitlines()


def test_skills_list_and_view_show_hidden_characters_as_escapes(data):
    listed = run("skills", "list", "--dir", str(data))
    assert "Deploys \\u202e gnirts" in listed
    viewed = run("skills", "view", "bidi", "--dir", str(data))
    assert viewed.splitlines()[-1] == "1. ship \\u202e now \\x1b[2J"
