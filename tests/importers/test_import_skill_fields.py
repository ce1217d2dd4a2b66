"""An imported skill's fields get the checks `skill_manage create` gives them, on the values YAML reads: a fresh
tester's `name: "zw\\u200bname"` and `description: "desc \\x1b[2J"` (double-quoted escapes, so the file's bytes
hold no hidden or control character) were imported as `global:zwname` and `global:ctrlname-x`, which create
refuses and export later refused. What a report shows of an entry is escaped and redacted too."""

from __future__ import annotations

import pytest

from pi_memory.cli.app import app

HIDDEN = ("Not saved: the skill text contains a hidden character (invisible_unicode_U+{}), which can smuggle "
          "instructions into future system prompts. Remove it and save the plain text. (field: {})")
CONTROL = ("The {} holds a control character (\\x1b: terminal escape codes or similar), which can hide or change "
           "text on a screen showing it. Nothing was saved. Remove it and write plain text.")
CASES = [  # (file, frontmatter lines, slug, reason)
    ("zw.md", 'name: "zw\\u200bname"\ndescription: "A zero width name"', "zwname", HIDDEN.format("200B", "name")),
    ("ctrl.md", 'name: "ctrlname \\u202e x"\ndescription: "desc \\x1b[2J"', "ctrlname-x",
     CONTROL.format("description")),
    ("rlo.md", 'name: "rlo \\u202e name"\ndescription: "Plain words"', "rlo-name", HIDDEN.format("202E", "name")),
    ("iso.md", 'name: iso\ndescription: "Deploys \\u2066here\\u2069"', "iso", HIDDEN.format("2066", "description")),
    ("esc-name.md", 'name: "esc \\e[31m name"\ndescription: "Plain words"', "esc-31m-name", CONTROL.format("name")),
    ("shown.md", 'name: shown\ndescription: "Plain words"\ndisplay_name: "sho\\u200bwn"', "shown",
     HIDDEN.format("200B", "display name")),
    ("long.md", f"name: {'n' * 70}\ndescription: Plain words", "n" * 64,  # the slug is cut, not the name
     "The name has 70 characters; at most 64 are allowed. Give a short name (a few words, e.g. 'deploy staging'); "
     "put the details in the description and the body."),
]


@pytest.fixture
def peer(machine):
    skills = machine["tmp"] / "X" / "pi-hermes-memory" / "skills"
    skills.mkdir(parents=True)
    for name, head, _slug, _why in CASES:
        (skills / name).write_text(f"---\n{head}\n---\n\nDo the thing step by step.\n", encoding="utf-8")
    (skills / "good.md").write_text("---\nname: good skill\ndescription: Deploys with make\n---\n\nRun make.\n",
                                    encoding="utf-8")
    return machine


@pytest.mark.parametrize("apply", [False, True])
def test_a_field_create_refuses_is_skipped_with_creates_reason(peer, apply):
    report = peer["cli"]("import", "pi-hermes-memory", str(peer["tmp"] / "X"), *(["--apply"] if apply else []))
    skipped = {i["what"]: i["reason"] for i in report["items"] if i["action"] == "skip"}
    assert skipped == {f"global:{slug}": why for _name, _head, slug, why in CASES}
    assert [i["what"] for i in report["items"] if i["action"] == "add"] == ["global:good-skill"]
    folders = sorted(p.name for p in (peer["data"] / "skills").iterdir()) if apply else []
    assert folders == (["good-skill"] if apply else [])


def test_the_report_for_a_person_shows_no_raw_hidden_or_control_character(peer):
    result = peer["runner"].invoke(app, ["import", "pi-hermes-memory", str(peer["tmp"] / "X")],
                                   catch_exceptions=False)
    assert result.exit_code == 1  # refused skills: exit 1, as `import claude-code-memory`
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout and "\u200b" not in result.stdout
    assert "  [skills] global:zwname: " + HIDDEN.format("200B", "name") in result.stdout.splitlines()


def test_a_refused_entry_is_shown_escaped_and_redacted(machine):
    store = machine["tmp"] / "X" / "pi-hermes-memory"
    store.mkdir(parents=True)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    (store / "MEMORY.md").write_text(f"Colour \x1b[31mred\x1b[0m note\n§\nThe CI token is {token}\n§\n"
                                     "Uses pnpm \u202e gnirts\n", encoding="utf-8")
    report = machine["cli"]("import", "pi-hermes-memory", str(machine["tmp"] / "X"))
    items = [(i["what"], i["action"]) for i in report["items"]]
    assert items == [("Colour \\x1b[31mred\\x1b[0m note", "skip"), ("The CI token is [REDACTED:github_token]", "skip"),
                     ("Uses pnpm \\u202e gnirts", "skip")]
    assert report["items"][0]["reason"] == "it holds terminal control characters"
