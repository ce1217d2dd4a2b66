"""What a fresh-eyes tester typed and got a traceback or a model's words for: numbers past what SQLite holds,
``~/.claude/skills`` being a file, a skill refusal and an empty listing in a model's words, a block file whose
limit is not used (said nowhere but ``blocks list``), a 50 MB standing rule scanned before its refusal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pi_memory import safety
from pi_memory.cli.app import app
from pi_memory.skills import SkillStore, render_body

HUGE = "99999999999999999999"
BODY = render_body("When it applies", ["Do the step"], ["A pitfall"], ["It worked"])
LIMIT_NOTE = "limit 200000 is not a whole number from 1 to 100,000; the default limit 2,000 is used instead"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home, repo = tmp_path / "home", tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home / ".pi" / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    monkeypatch.chdir(repo)
    runner = CliRunner()
    data = home / ".pi" / "agent" / "memories"

    def run(*args: str, input: str | None = None):
        return runner.invoke(app, list(args), input=input)

    return run, home, data


def _pi_memory(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
           "PI_MEMORY_DIR": str(tmp_path / "data")}
    return subprocess.run([sys.executable, "-m", "pi_memory", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)


def test_learning_undo_of_a_job_id_past_sqlite_is_no_such_job(tmp_path: Path) -> None:
    run = _pi_memory(tmp_path, "learning", "undo", HUGE)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f"undo: refused: there is no learning job {HUGE}; `pi-memory learning log` lists them\n"
    run = _pi_memory(tmp_path, "learning", "undo", "--json", "--", "-" + HUGE)
    data = json.loads(run.stdout)
    assert (run.returncode, data["success"], data["outcome"]) == (1, False, "refused")
    assert data["message"] == f"there is no learning job -{HUGE}; `pi-memory learning log` lists them"
    run = _pi_memory(tmp_path, "--json", "semantic", "list", "--limit", HUGE)  # the usage error as JSON
    assert json.loads(run.stdout) == {"success": False, "exitCode": 2, "error": "Invalid value for '--limit': Input "
                                      "should be less than or equal to 1000000 (see `pi-memory semantic list --help`)"}


def test_other_numbers_past_their_bound(env) -> None:
    run, _, _ = env
    r = run("learning", "log", "--limit", HUGE)  # taken as its maximum, as its help says
    assert r.exit_code == 0 and "No learning jobs yet." in r.stdout
    r = run("pin", "remove", HUGE, "1")
    assert r.exit_code == 1 and "Traceback" not in r.output
    r = run("mcp", "--index-interval", "1e300")
    assert r.exit_code == 2
    assert "Invalid value for '--index-interval' (env var: 'PI_MEMORY_INDEX_INTERVAL'): Input should be less" in (
        " ".join(line.strip("│ ") for line in r.output.splitlines()))
    r = run("blocks", "create", "big", "--limit", HUGE)
    assert (r.exit_code, r.output) == (1, f"refused: The limit must be a whole number from 1 to 100,000 characters, "
                                          f"not {HUGE}.\n")


def test_export_into_a_skills_path_that_is_a_file_is_refused_in_words(env) -> None:
    run, home, data = env
    assert SkillStore(data).create("deploy staging", "Deploy the app to staging", "global", BODY)["success"]
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "skills").write_text("not a folder", encoding="utf-8")
    for dry in ([], ["--dry-run"]):
        r = run("skills", "export", "--to", "claude-code", "--scope", "global", *dry)
        assert (r.exit_code, r.output) == (1, f"refused: {home}/.claude/skills is a file, but Claude Code reads "
                                              "skills from a folder of that name. Nothing was exported. Move or "
                                              "rename that file, then run this command again.\n")
    (home / ".agents").write_text("a file where a folder goes", encoding="utf-8")
    r = run("skills", "export", "--to", "codex", "--scope", "global", "--json")
    assert (r.exit_code, json.loads(r.stdout)) == (1, {
        "success": False, "exitCode": 1, "refusal": "not_a_folder", "folder": f"{home}/.agents/skills",
        "error": f"{home}/.agents is a file, so the folder {home}/.agents/skills, where Codex reads skills, cannot "
                 "be made. Nothing was exported. Move or rename that file, then run this command again."})
    assert (home / ".claude" / "skills").read_text(encoding="utf-8") == "not a folder"


def test_export_through_a_link_to_nothing_says_so(env) -> None:
    """A ~/.claude/skills linked to a missing folder was called "a file"."""
    run, home, data = env
    assert SkillStore(data).create("deploy staging", "Deploy the app to staging", "global", BODY)["success"]
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "skills").symlink_to(home / "gone")
    r = run("skills", "export", "--to", "claude-code", "--scope", "global")
    assert (r.exit_code, r.output) == (1, f"refused: {home}/.claude/skills is a symbolic link to {home}/gone, which "
                                          f"does not exist, so the folder {home}/.claude/skills, where Claude Code "
                                          "reads skills, cannot be made. Nothing was exported. Make the folder it "
                                          "points to, or remove the link, then run this command again.\n")
    assert not (home / "gone").exists()


def test_skill_refusals_and_an_empty_list_are_in_a_persons_words(env) -> None:
    run, _, data = env
    r = run("skills", "list", "--scope", "global")
    assert r.exit_code == 0
    assert r.stdout.endswith("The agent saves a skill when a task taught it a procedure worth reusing, or when you "
                             "ask it to save one.\n")
    assert "skill_manage" not in r.stdout
    store = SkillStore(data)
    for i in range(22):
        assert store.create(f"procedure {i} {'abcdefghijklmnopqrstuv'[i]}", f"Does thing number {i} well {i * 7}",
                            "global", BODY)["success"]
    for args in (["view", "nonexist"], ["delete", "nonexist"], ["move", "nonexist", "--to", "global"]):
        r = run("skills", *args)
        assert r.exit_code == 1 and r.output.startswith("refused: No skill 'nonexist'. Skills that exist: global:")
        assert r.output.endswith(" and 2 more (`pi-memory skills list` lists them). Give one of these ids exactly.\n")


def test_a_block_limit_that_is_not_used_is_named_by_show_and_preview_context(env) -> None:
    run, _, data = env
    (data / "blocks").mkdir(parents=True)
    (data / "blocks" / "ok_key.md").write_text("---\ndescription: Notes\nlimit: 200000\n---\n\n" + "abcd " * 1000,
                                               encoding="utf-8")
    (data / "blocks" / "odd.md").write_text("---\nlimit: abc\n---\n\nshort\n", encoding="utf-8")
    r = run("blocks", "show", "ok_key")
    assert r.stdout.splitlines()[1] == f"warning: {LIMIT_NOTE}"
    assert f"  warning: {LIMIT_NOTE}" in run("blocks", "list").stdout
    lines = run("preview-context").stdout.splitlines()
    assert lines[-2:] == [
        f"warning: memory block odd ({data}/blocks/odd.md): limit 'abc' is not a whole number from 1 to 100,000; "
        "the default limit 2,000 is used instead",
        f"warning: memory block ok_key ({data}/blocks/ok_key.md): {LIMIT_NOTE}"]
    shown = json.loads(run("preview-context", "--json").stdout)["blockProblems"]
    assert shown[1] == {"key": "ok_key", "file": f"{data}/blocks/ok_key.md", "problem": LIMIT_NOTE}


def test_a_standing_rule_past_the_cap_is_refused_before_any_scan(env, monkeypatch) -> None:
    run, _, _ = env

    def scanned(*_args, **_kwargs):
        raise AssertionError("scanned a rule that can never be pinned")

    monkeypatch.setattr(safety, "check_write", scanned)
    monkeypatch.setattr(safety, "is_unreadable", scanned)
    r = run("pin", "add", "-", input="never run find / " * 200_000)
    assert (r.exit_code, r.output) == (1, "refused: The rule is 3,399,999 characters long; all the standing "
                                          "instructions together may take at most 2,000. Nothing was pinned. "
                                          "Shorten it to one short instruction.\n")
