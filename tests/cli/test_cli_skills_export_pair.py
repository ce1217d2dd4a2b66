"""A global and a project skill of one name (made by hand, or before a new skill was refused a name the other scope
has) were both exported: ``~/.claude/skills/deploy-staging`` and ``<repo>/.claude/skills/deploy-staging``, two
skills of one name for the host, which picks one by its own rule. pi is handed the project's only
(``SkillStore.discoverable``); now the export follows that rule: the project's is copied, the global one skipped
(code ``project_wins``) and an earlier export of it removed, also when a write through the store refreshes it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.skills import SkillStore, render_body
from pi_memory.skills.export import export_skills, refresh

BODY = render_body("When deploying", ["build", "ship"])
HOSTS = {"claude-code": Path(".claude") / "skills", "codex": Path(".agents") / "skills"}


@pytest.fixture
def pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home, repo = tmp_path / "home", tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home / ".pi" / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    monkeypatch.chdir(repo)
    store = SkillStore(home / ".pi" / "agent" / "memories", project_root=repo)
    assert store.create("deploy staging", "Deploy the app to staging", "global", BODY)["success"]
    assert store.create("lint", "Lint the code", "global", BODY)["success"]
    shutil.copytree(store.folder("global", "deploy-staging"), store.folder("project", "deploy-staging"))  # the pair
    return store, home, repo


@pytest.mark.parametrize("target", ["claude-code", "codex"])
def test_only_the_project_skill_of_a_pair_is_exported(pair, target: str) -> None:
    store, home, repo = pair
    result = CliRunner().invoke(app, ["skills", "export", "--to", target, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stdout
    data = json.loads(result.stdout)
    items = {i["skill_id"]: (i["action"], i.get("code"), i.get("reason")) for i in data["items"]}
    assert items == {
        "global:deploy-staging": ("skipped", "project_wins", "the project skill project:deploy-staging has its name "
                                                             "and is exported in its place"),
        "global:lint": ("copied", None, None),
        "project:deploy-staging": ("copied", None, None)}
    assert data["byReason"] == {"project_wins": 1}
    assert sorted(p.name for p in (home / HOSTS[target]).iterdir()) == ["lint"]
    assert sorted(p.name for p in (repo / HOSTS[target]).iterdir()) == ["deploy-staging"]


def test_an_earlier_export_of_the_global_one_is_removed(pair) -> None:
    store, home, repo = pair
    shutil.rmtree(store.folder("project", "deploy-staging"))
    export_skills(store, "claude-code", home)  # before the pair: the global one exported
    assert (home / HOSTS["claude-code"] / "deploy-staging" / "SKILL.md").is_file()
    shutil.copytree(store.folder("global", "deploy-staging"), store.folder("project", "deploy-staging"))
    assert store.update("global:deploy-staging", description="Deploy the app to staging, v2")["success"]
    [item] = refresh(store, home, "global:deploy-staging")  # a write through the store never brings it back
    assert (item.action, item.code, item.reason) == (
        "skipped", "project_wins", "the project skill project:deploy-staging has its name and is exported in its "
        "place; its earlier export was removed")
    assert not (home / HOSTS["claude-code"] / "deploy-staging").exists()
    items = {i.skill_id: i.action for i in export_skills(store, "claude-code", home)}
    assert items == {"global:deploy-staging": "skipped", "global:lint": "unchanged", "project:deploy-staging": "copied"}
    assert not (home / HOSTS["claude-code"] / "deploy-staging").exists()


def test_the_text_summary_says_what_to_do(pair) -> None:
    result = CliRunner().invoke(app, ["skills", "export", "--to", "claude-code"], catch_exceptions=False)
    assert result.exit_code == 0
    assert ("1 skipped: a project skill has its name, and the project's is the one exported; pi uses the project's "
            "too; delete the one you no longer need (`pi-memory skills delete ID`) to keep one skill of that name."
            ) in " ".join(result.stdout.split())
