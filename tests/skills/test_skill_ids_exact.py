"""Every skill action taking an id acts only on a skill that exists as named (breaker finding F2:
``skills delete '!!!EVIL!!!'`` deleted ``global:evil``, a 5,000-character name deleted the 64-character skill,
``skills view ../../evil`` showed ``global:evil``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.skills import SkillStore, render_body
from pi_memory.tools.skills import create_skill_tools

BODY = render_body("When needed", ["do it"])
KNOWN = "Skills that exist: global:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, global:evil. " \
        "Give one of these ids exactly."


@pytest.fixture
def store(tmp_path: Path) -> SkillStore:
    store = SkillStore(tmp_path / "data", clock=lambda: "2026-04-26")
    assert store.create("evil", "An ordinary skill called evil", "global", BODY)["success"]
    assert store.create("a" * 64, "A skill with the longest name", "global", BODY)["success"]
    return store


@pytest.mark.parametrize("given", ["!!!EVIL!!!", "a" * 5000, "../../evil", "EVIL!", "global:Evil!", "evi",
                                   "global:../evil", "a" * 65])
@pytest.mark.parametrize("action", ["view", "delete", "patch", "update", "move"])
def test_an_id_that_does_not_exist_as_given_touches_nothing(store, given, action) -> None:
    calls = {"view": lambda: store.view(given), "delete": lambda: store.delete(given),
             "patch": lambda: store.patch(given, "procedure", "1. other"),
             "update": lambda: store.update(given, description="Changed"),
             "move": lambda: store.move(given, "global")}
    before = {p: p.read_text() for p in store.roots["global"].rglob("SKILL.md")}
    result = calls[action]()
    shown = repr(given if len(given) <= 80 else given[:80] + "…")
    assert result == {"success": False, "code": "not_found", "error": f"No skill {shown}. {KNOWN}"}
    assert {p: p.read_text() for p in store.roots["global"].rglob("SKILL.md")} == before


def test_an_exact_id_a_bare_slug_or_the_skills_own_name_still_work(store) -> None:
    assert store.view("global:evil")["skill"]["id"] == "global:evil"
    assert store.view("a" * 64)["skill"]["id"] == "global:" + "a" * 64
    assert store.view("Evil")["skill"]["id"] == "global:evil"  # its own name, case aside
    assert store.delete("evil")["skill_id"] == "global:evil"
    assert [s.id for s in store.skills()] == ["global:" + "a" * 64]


def test_skill_manage_delete_refuses_an_id_it_would_have_slugified(store) -> None:
    [spec] = create_skill_tools(store)
    out = spec.call({"action": "delete", "skill_id": "!!!EVIL!!!"})
    assert out.is_error and out.result["error"] == f"No skill '!!!EVIL!!!'. {KNOWN}"
    assert [s.id for s in store.skills()] == ["global:" + "a" * 64, "global:evil"]


def test_the_cli_delete_refuses_it_too(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "mem"))
    monkeypatch.chdir(tmp_path)
    SkillStore(tmp_path / "mem").create("a" * 64, "A skill with the longest name", "global", BODY)
    r = CliRunner().invoke(app, ["skills", "delete", "a" * 5000])
    assert r.exit_code == 1 and "No skill 'aaaa" in r.output
    assert (tmp_path / "mem" / "skills" / ("a" * 64) / "SKILL.md").is_file()
