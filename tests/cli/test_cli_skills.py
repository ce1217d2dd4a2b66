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


def test_export_copies_and_never_overwrites_a_users_skill(env) -> None:
    run, home, repo, store = env
    mine = home / ".claude" / "skills" / "deploy-staging"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: deploy-staging\ndescription: mine\n---\nmine\n")
    result = run("skills", "export", "--to", "claude-code", "--json")
    items = {i["skill_id"]: i for i in json.loads(result.stdout)["items"]}
    assert items["global:deploy-staging"]["action"] == "skipped"
    assert (mine / "SKILL.md").read_text().endswith("mine\n")
    copy = repo / ".claude" / "skills" / "run-migrations"
    source = store.roots["project"] / "run-migrations"
    assert items["project:run-migrations"]["action"] == "copied" and copy.is_dir() and not copy.is_symlink()
    assert (copy / "SKILL.md").read_text() == (source / "SKILL.md").read_text()
    assert (copy / ".pi-memory-export").read_text() == f"project:run-migrations\n{source.resolve()}\n"
    again = json.loads(run("skills", "export", "--to", "claude-code", "--json").stdout)
    assert [i["action"] for i in again["items"]] == ["skipped", "unchanged"]


def test_export_codex_copy_then_refresh(env) -> None:
    """``--copy`` is still accepted (every export is a copy now)."""
    run, home, _, store = env
    dry = json.loads(run("skills", "export", "--to", "codex", "--copy", "--scope", "global", "--dry-run",
                         "--json").stdout)
    assert [i["action"] for i in dry["items"]] == ["copied"]
    assert not (home / ".agents" / "skills" / "deploy-staging").exists()
    run("skills", "export", "--to", "codex", "--copy", "--scope", "global")
    copy = home / ".agents" / "skills" / "deploy-staging"
    source = (store.roots["global"] / "deploy-staging").resolve()
    assert (copy / ".pi-memory-export").read_text() == f"global:deploy-staging\n{source}\n"
    assert not copy.is_symlink()
    store.patch("deploy-staging", "pitfalls", "Not on Friday")  # a store without the runtime's hooks
    again = json.loads(run("skills", "export", "--to", "codex", "--scope", "global", "--json").stdout)
    assert [i["action"] for i in again["items"]] == ["updated"]
    assert "Not on Friday" in (copy / "SKILL.md").read_text()
    assert os.listdir(copy.parent) == ["deploy-staging"]


def test_export_after_a_move_drops_the_old_copy_and_copies_the_new_place(env) -> None:
    run, home, repo, store = env
    run("skills", "export", "--to", "claude-code")
    old = home / ".claude" / "skills" / "deploy-staging"
    assert old.is_dir()
    store.move("global:deploy-staging", "project")  # a store without the runtime's hooks: the export cleans up
    result = run("skills", "export", "--to", "claude-code", "--json")
    items = [(i["skill_id"], i["action"]) for i in json.loads(result.stdout)["items"]]
    assert items == [("deploy-staging", "removed"), ("project:deploy-staging", "copied"),
                     ("project:run-migrations", "unchanged")]
    assert not old.exists() and (repo / ".claude" / "skills" / "deploy-staging" / "SKILL.md").is_file()


def test_deleting_or_moving_an_exported_skill_removes_the_hosts_copies_at_once(env) -> None:
    """They were left behind until the next export (a fresh tester found Claude Code listing a deleted skill)."""
    run, home, repo, _store = env
    run("skills", "export", "--to", "claude-code")
    run("skills", "export", "--to", "codex")
    claude, agents = home / ".claude" / "skills", home / ".agents" / "skills"
    assert (claude / "deploy-staging").is_dir() and (repo / ".claude" / "skills" / "run-migrations").is_dir()
    assert (agents / "deploy-staging").is_dir()
    assert run("skills", "delete", "global:deploy-staging").exit_code == 0
    assert not (claude / "deploy-staging").exists() and not (agents / "deploy-staging").exists()
    assert run("skills", "move", "project:run-migrations", "--to", "global").exit_code == 0
    assert not (repo / ".claude" / "skills" / "run-migrations").exists()
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
