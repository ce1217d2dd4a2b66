"""``pi-memory skills list`` shows a hand-edited skill as the inspector does: one function for both
(:func:`pi_memory.shown_text.shown_value`). A fresh tester's description holding a ``ghp_`` token was printed in
clear by the CLI while the inspector redacted it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.integrations.inspector import shown
from pi_memory.shown_text import raw_prefix, shown_value
from pi_memory.skills import SkillStore

GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SkillStore:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    store = SkillStore(tmp_path / "data")
    for folder, description in (("deploy", f"Deploy with {GITHUB} as the token"),
                                ("beep", "Rings\\x07 the bell\\x1b[2J and clears"),
                                ("long", "x" * 1500)):
        path = store.roots["global"] / folder / "SKILL.md"
        path.parent.mkdir(parents=True)
        path.write_text(f'---\nname: {folder}\ndescription: "{description}"\n---\n1. ship\n', encoding="utf-8")
    return store


def run(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_the_list_redacts_escapes_and_cuts_what_it_prints(store, tmp_path) -> None:
    data = json.loads(run("skills", "list", "--dir", str(tmp_path / "data"), "--json").stdout)
    descriptions = {s["id"]: s["description"] for s in data["skills"]}
    assert descriptions == {"global:beep": "Rings\\x07 the bell\\x1b[2J and clears",
                            "global:deploy": "Deploy with [REDACTED:github_token] as the token",
                            "global:long": "x" * 1024 + "…"}
    text = run("skills", "list", "--dir", str(tmp_path / "data")).stdout
    assert GITHUB not in text and "[REDACTED:github_token]" in text
    assert "\x1b" not in text and "\x07" not in text and "\\x1b[2J" in text


def test_the_inspector_shows_a_skill_with_the_same_function(store) -> None:
    for skill in store.skills():
        assert {k: v for k, v in shown.skill(skill).items() if k != "notes"} == shown_value(skill.summary(), 1024)


def test_a_cut_never_ends_inside_a_credential() -> None:
    text = "word " * 198 + GITHUB + " and more"
    assert raw_prefix(text, 1000) == "word " * 198  # the token straddles the cut: it goes whole, not half shown
    assert shown_value(text, 1000) == "word " * 198 + "…"
    assert shown_value(text, 2000) == "word " * 198 + "[REDACTED:github_token] and more"
    assert shown_value(text, 990) == "word " * 198 + "…"
