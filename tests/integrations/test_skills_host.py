"""The bridge's ``skills`` method, in process: discovery paths, batch moves and deletes, the complex-run rule."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pi_memory.integrations.pi.bridge import Bridge
from pi_memory.skills import SkillStore, render_body

BODY = render_body("x", ["step"])


@pytest.fixture
def bridge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "home" / ".pi" / "agent"))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PI_MEMORY_CATCH_UP", "0")
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    b = Bridge()
    b.hello(cwd=str(project))
    store = SkillStore(tmp_path / "data", project_root=project)
    yield b, store
    b.shutdown(wait=0.5)


def call(b: Bridge, **params) -> dict:
    reply = b.handle(json.dumps({"id": 1, "method": "skills", "params": params}))
    assert "result" in reply, reply
    return reply["result"]


def test_paths_and_list(bridge) -> None:
    b, store = bridge
    store.create("deploy", "Deploy it", "global", BODY)
    store.create("migrate", "Migrate it", "project", BODY)
    from pi_memory.skills.builtin import BUILTIN_DIR

    assert call(b, action="paths") == {"paths": [str(store.roots["global"] / "deploy"),
                                                 str(store.roots["project"] / "migrate"),
                                                 str(BUILTIN_DIR / "learn-memory-tool")]}
    listing = call(b, action="list")
    assert listing["project"] == "repo" and [s["id"] for s in listing["skills"]] == ["global:deploy", "project:migrate"]


def test_batch_move_is_partial_and_reports_each(bridge) -> None:
    b, store = bridge
    store.create("deploy", "Deploy it", "global", BODY)
    shutil.copytree(store.folder("global", "deploy"), store.folder("project", "deploy"))  # by hand: create refuses
    store.create("lint", "Lint it", "global", BODY)
    results = call(b, action="move", ids=["global:deploy", "global:lint"], to="project")["results"]
    assert [(r["id"], r["success"]) for r in results] == [("global:deploy", False), ("global:lint", True)]
    # the /memory-skills manager is read by a person: no rename exists, so it says what can be done
    assert results[0]["error"] == (
        f"project:deploy already exists; global:deploy stays where it is. To keep one skill, copy what global:deploy "
        f"adds into {store.folder('project', 'deploy') / 'SKILL.md'}, then run `pi-memory skills delete "
        "global:deploy`; to have global:deploy there instead, run `pi-memory skills delete project:deploy` first, "
        "then move global:deploy again (a deleted skill is kept in the data folder's .trash/skills/).")
    deleted = call(b, action="delete", ids=["project:lint", "nope"])["results"]
    assert [r["success"] for r in deleted] == [True, False]


@pytest.mark.parametrize(("names", "asked"), [
    (["bash"] * 7 + ["read"], True),
    (["bash"] * 6 + ["read"], False),
    (["bash"] * 12, False),
    ([], False),
])
def test_complex_run_rule(bridge, names: list[str], asked: bool) -> None:
    b, _ = bridge
    text = call(b, action="nudge", toolNames=names)["text"]
    assert (text is not None) is asked


def test_bad_requests_are_errors(bridge) -> None:
    b, _ = bridge
    reply = b.handle(json.dumps({"id": 2, "method": "skills", "params": {"action": "explode"}}))
    assert reply["error"]["message"].startswith("unknown skills action 'explode'")
    reply = b.handle(json.dumps({"id": 3, "method": "skills", "params": {"action": "move", "ids": "x"}}))
    assert reply["error"]["message"] == "'ids' must be a list of skill ids"


def test_install_ships_skills_ts_beside_index_ts(tmp_path: Path) -> None:
    from pi_memory.integrations.pi import EXTENSION_DIR
    from pi_memory.integrations.pi.install import install_pi_extension

    installed = install_pi_extension(tmp_path / "agent", python="/usr/bin/python3").folder
    assert (installed / "skills.ts").read_text() == (EXTENSION_DIR / "skills.ts").read_text()
    assert 'import { registerSkills } from "./skills.ts";' in (installed / "index.ts").read_text()


def test_nudge_rule_matches_the_python_rule(bridge) -> None:
    b, _ = bridge
    rule = call(b, action="nudge_rule")
    assert (rule["minToolCalls"], rule["minDistinctTools"]) == (8, 2)
    text = rule["template"].replace("{calls}", "9").replace("{tools}", "3")
    assert text == call(b, action="nudge", toolNames=["a"] * 7 + ["b", "c"])["text"]
