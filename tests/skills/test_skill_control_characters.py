"""`skill_manage` refuses a control character in any field it writes (create, update, patch), as a curated entry
is refused: a description `desc ESC[2J` was saved and cleared the screen of whoever listed skills. Tab,
newline and a Windows line end in a body stay allowed."""

from __future__ import annotations

import pytest

from pi_memory.skills import SkillStore

BODY = "1. Run make.\n2. Check the logs.\n"


def words(field: str, shown: str) -> str:
    return (f"The {field} holds a control character ({shown}: terminal escape codes or similar), which can hide or "
            "change text on a screen showing it. Nothing was saved. Remove it and write plain text.")


@pytest.fixture
def store(tmp_path):
    return SkillStore(tmp_path / "data", clock=lambda: "2026-04-26")


@pytest.mark.parametrize(("name", "description", "body", "field", "shown"), [
    ("ctrl name", "desc \x1b[2J", BODY, "description", "\\x1b"),
    ("title \x1b]0;x\x07", "Retitles a window", BODY, "name", "\\x1b"),
    ("bell", "Rings a bell", "1. ring \x07 it\n", "body", "\\x07"),
    ("csi", "Uses a C1 CSI", "1. step \x9b2J\n", "body", "\\x9b"),
    ("nul", "Holds a NUL", "1. a\x00b\n", "body", "\\x00"),
])
def test_create_refuses_a_control_character_in_any_field(store, name, description, body, field, shown):
    result = store.create(name, description, "global", body)
    assert result == {"success": False, "code": "invalid_content", "error": words(field, shown), "field": field}
    assert store.skills() == []


def test_tabs_newlines_and_windows_line_ends_are_fine(store):
    assert store.create("tabs", "Indented\twith a tab", "global", "1. a\tb\r\n2. c\r\n")["success"]


def test_update_and_patch_refuse_a_control_character(store):
    assert store.create("deploy", "Deploys the app", "global", BODY)["success"]
    assert store.update("global:deploy", description="now \x1b[8m hidden") == {
        "success": False, "code": "invalid_content", "error": words("description", "\\x1b"), "field": "description"}
    refused = store.patch("global:deploy", "pitfalls", "watch \x1b[2J out")
    assert refused["success"] is False and refused["code"] == "invalid_content" and refused["field"] == "pitfalls"
    assert store.view("global:deploy")["content"] == BODY.strip()  # unchanged (the store keeps no end newline)
