"""A skill body is at most 20,000 characters (breaker finding F3: a 2,000,000-character body was saved and
returned whole): refused on create, patch and update through the store, the tool and a raw SKILL.md; a
hand-edited file past it is shown cut, with a note, by the tool's view and ``pi-memory skills view``."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.skills import render_body
from pi_memory.skills.document import MAX_BODY


def refusal(n: int) -> str:
    return (f"The skill's body would have {n:,} characters; at most 20,000 are allowed (a view returns the whole "
            "body to the model). Nothing was saved. Keep the steps that matter and cut the rest, or split it into "
            "two skills.")


def test_create_refuses_a_body_over_the_limit(tool) -> None:
    spec, store = tool
    out = spec.call({"action": "create", "scope": "global", "name": "big", "description": "big",
                     "content": "z" * 2_000_000})
    assert MAX_BODY == 20_000
    assert out.is_error and (out.result["code"], out.result["error"]) == ("too_long", refusal(2_000_000))
    assert store.skills() == [] and not (store.roots["global"] / "big").exists()
    raw = "---\nname: big\ndescription: big\n---\n" + "z" * 20_001
    assert spec.call({"action": "create", "scope": "global", "content": raw}).result["error"] == refusal(20_001)
    assert spec.call({"action": "create", "scope": "global", "name": "big", "description": "big",
                      "content": "z" * 20_000}).result["success"] is True  # the limit itself fits


def test_update_and_patch_refuse_to_grow_a_body_past_it(tool) -> None:
    spec, store = tool
    assert store.create("deploy", "Deploy the app", "global", render_body(None, ["build"]))["success"]
    before = (store.roots["global"] / "deploy" / "SKILL.md").read_text()
    out = spec.call({"action": "update", "skill_id": "global:deploy", "content": "y" * 30_000})
    assert (out.result["code"], out.result["error"]) == ("too_long", refusal(30_000))
    out = spec.call({"action": "patch", "skill_id": "global:deploy", "section": "pitfalls",
                     "content": "p" * 20_000})
    assert out.result["code"] == "too_long" and out.result["error"].startswith("The skill's body would have 20,0")
    assert (store.roots["global"] / "deploy" / "SKILL.md").read_text() == before


def test_a_hand_edited_big_body_is_viewed_cut_with_a_note(tool, tmp_path, monkeypatch) -> None:
    spec, store = tool
    folder = store.roots["global"] / "big"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: big\ndescription: big\n---\n" + "z" * 2_000_000 + "\n")
    view = spec.call({"action": "view", "skill_id": "big"}).result
    assert (len(view["content"]), view["truncated"], view["total"]) == (20_000, True, 2_000_000)
    assert view["note"] == ("Only the first 20,000 of the body's 2,000,000 characters are shown: the file was "
                            "edited past the 20,000-character limit of a skill body. To fix it, save a shorter body "
                            "with action 'update' (or ask the user to shorten the file).")
    shrunk = spec.call({"action": "update", "skill_id": "big", "content": "z" * 1_999_000}).result
    assert shrunk["success"] is True  # a body already past the limit may still shrink
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["skills", "view", "big", "--dir", str(tmp_path / "data"), "--json"])
    data = json.loads(r.stdout)
    assert data["text"].count("z") == 20_000 and data["text"].startswith("---\n")
    assert data["note"] == (f"[Cut: the body has 1,999,000 characters, past the 20,000-character limit of a skill; "
                            f"the whole file is {folder / 'SKILL.md'}.]")
