"""``pi-memory skills`` commands, in process (typer's runner) on real folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.skills import SkillStore, render_body

BODY = render_body("When deploying", ["build", "ship"])


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home / ".pi" / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    monkeypatch.chdir(repo)
    data = home / ".pi" / "agent" / "memories"
    store = SkillStore(data, project_root=repo)
    store.create("deploy staging", "Deploy the app to staging", "global", BODY)
    store.create("run migrations", "Run this repo's DB migrations", "project", BODY)
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, list(args), catch_exceptions=False)

    return run, home, repo, store


def test_list_json_and_text(env) -> None:
    run, *_ = env
    result = run("skills", "list", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert [s["id"] for s in data["skills"]] == ["global:deploy-staging", "project:run-migrations"]
    text = run("skills", "list", "--scope", "project").stdout
    assert "project:run-migrations" in text and "global:deploy-staging" not in text


def test_view_prints_the_file(env) -> None:
    run, _, _, store = env
    result = run("skills", "view", "deploy-staging")
    assert result.exit_code == 0
    assert result.stdout == (store.roots["global"] / "deploy-staging" / "SKILL.md").read_text()


def test_unknown_id_exits_1_with_json_error(env) -> None:
    run, *_ = env
    result = run("skills", "view", "nope", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["success"] is False and data["refusal"] == "not_found" and data["exitCode"] == 1


def test_move_and_delete(env) -> None:
    run, _, _, store = env
    assert run("skills", "move", "deploy-staging", "--to", "project").exit_code == 0
    assert [s.id for s in store.skills()] == ["project:deploy-staging", "project:run-migrations"]
    result = run("skills", "delete", "project:deploy-staging")
    assert result.exit_code == 0 and "Kept a copy in" in result.stdout
    assert run("skills", "move", "run-migrations", "--to", "elsewhere").exit_code == 2


def test_export_links_and_never_overwrites_a_users_skill(env) -> None:
    run, home, repo, store = env
    mine = home / ".claude" / "skills" / "deploy-staging"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: deploy-staging\ndescription: mine\n---\nmine\n")
    result = run("skills", "export", "--to", "claude-code", "--json")
    items = {i["skill_id"]: i for i in json.loads(result.stdout)["items"]}
    assert items["global:deploy-staging"]["action"] == "skipped"
    assert (mine / "SKILL.md").read_text().endswith("mine\n")
    link = repo / ".claude" / "skills" / "run-migrations"
    assert items["project:run-migrations"]["action"] == "linked" and link.is_symlink()
    assert link.resolve() == (store.roots["project"] / "run-migrations").resolve()
    again = json.loads(run("skills", "export", "--to", "claude-code", "--json").stdout)
    assert [i["action"] for i in again["items"]] == ["skipped", "unchanged"]


def test_export_codex_copy_then_refresh(env) -> None:
    run, home, _, store = env
    dry = json.loads(run("skills", "export", "--to", "codex", "--copy", "--scope", "global", "--dry-run",
                         "--json").stdout)
    assert [i["action"] for i in dry["items"]] == ["copied"]
    assert not (home / ".agents" / "skills" / "deploy-staging").exists()
    run("skills", "export", "--to", "codex", "--copy", "--scope", "global")
    copy = home / ".agents" / "skills" / "deploy-staging"
    assert (copy / ".pi-memory-export").read_text() == "global:deploy-staging\n" and not copy.is_symlink()
    store.patch("deploy-staging", "pitfalls", "Not on Friday")
    again = json.loads(run("skills", "export", "--to", "codex", "--copy", "--scope", "global", "--json").stdout)
    assert [i["action"] for i in again["items"]] == ["updated"]
    assert "Not on Friday" in (copy / "SKILL.md").read_text()
    assert os.listdir(copy.parent) == ["deploy-staging"]


def test_export_after_a_move_drops_the_dangling_link_and_links_the_new_place(env) -> None:
    run, home, repo, store = env
    run("skills", "export", "--to", "claude-code")
    old = home / ".claude" / "skills" / "deploy-staging"
    assert old.is_symlink()
    store.move("global:deploy-staging", "project")
    result = run("skills", "export", "--to", "claude-code", "--json")
    items = [(i["skill_id"], i["action"]) for i in json.loads(result.stdout)["items"]]
    assert items == [("deploy-staging", "removed"), ("project:deploy-staging", "linked"),
                     ("project:run-migrations", "unchanged")]
    assert not old.is_symlink() and (repo / ".claude" / "skills" / "deploy-staging").is_symlink()


def test_deleting_or_moving_an_exported_skill_removes_the_hosts_links_at_once(env) -> None:
    """They pointed nowhere until the next export (a fresh tester found Claude Code listing a deleted skill)."""
    run, home, repo, _store = env
    run("skills", "export", "--to", "claude-code")
    run("skills", "export", "--to", "codex", "--copy")
    claude, agents = home / ".claude" / "skills", home / ".agents" / "skills"
    assert (claude / "deploy-staging").is_symlink() and (repo / ".claude" / "skills" / "run-migrations").is_symlink()
    assert run("skills", "delete", "global:deploy-staging").exit_code == 0
    assert not (claude / "deploy-staging").is_symlink() and not (claude / "deploy-staging").exists()
    assert (agents / "deploy-staging").is_dir()  # a marked copy is not a link: the next export refreshes it
    assert run("skills", "move", "project:run-migrations", "--to", "global").exit_code == 0
    assert not (repo / ".claude" / "skills" / "run-migrations").is_symlink()
    assert sorted(p.name for p in claude.iterdir()) == []


def test_the_list_keeps_the_description_in_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 64-character id used to push the description column out of an 80-column terminal."""
    data = tmp_path / "d"
    SkillStore(data).create("a" * 64, "Deploy the app to the staging cluster", "global", BODY)
    env = {**os.environ, "PI_MEMORY_DIR": str(data), "HOME": str(tmp_path / "h"), "COLUMNS": "80"}
    out = subprocess.run([sys.executable, "-m", "pi_memory", "skills", "list"], capture_output=True, text=True,
                         env=env, timeout=60).stdout
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "Deploy the app to the" in out and "staging cluster" in out
