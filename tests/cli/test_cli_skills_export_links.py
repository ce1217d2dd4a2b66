"""``pi-memory skills export`` copies only the regular files of a skill folder (a link's target was never
scanned), but said nothing of the links it left out: a skill whose ``reference.md`` was a link arrived at the
host without it, silently. Now each link left out is named on its skill's line and counted in the summary, as
skipped skills are, with the reason and what to do; ``--json`` lists them per skill and counts them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_homes import skill_home  # tests/: on sys.path by the conftest
from pi_memory.skills import checks, render_body

BODY = render_body("When deploying", ["build", "ship"])
SUMMARY = ("{n} file(s) skipped: a symbolic link inside a skill folder is not copied (what it points to was not "
           "scanned); to have such a file go with its skill, put the file itself in the skill folder in place of "
           "the link, then run this command again.")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home, store, run = skill_home(tmp_path, monkeypatch)
    for name in ("deploy staging", "release notes"):
        assert store.create(name, f"How to do {name}", "global", BODY)["success"]
    outside = tmp_path / "outside"
    (outside / "docs").mkdir(parents=True)
    (outside / "reference.md").write_text("Reference text\n", encoding="utf-8")
    return run, home, store, outside


def test_each_link_left_out_is_named_and_counted(env) -> None:
    run, home, store, outside = env
    folder = store.roots["global"] / "deploy-staging"
    (folder / "reference.md").symlink_to(outside / "reference.md")  # a file
    (folder / "docs").symlink_to(outside / "docs", target_is_directory=True)  # a folder
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.sh").symlink_to(outside / "missing.sh")  # dangling, one level down
    (folder / "scripts" / "ok.sh").write_text("#!/bin/sh\nmake ship\n", encoding="utf-8")
    assert checks.skill_links(folder) == ["docs", "reference.md", "scripts/run.sh"]
    dest = home / ".claude" / "skills"
    lines = run("skills", "export", "--to", "claude-code").stdout.splitlines()
    assert lines == [
        f"global:deploy-staging: copied -> {dest / 'deploy-staging'}; 3 link(s) left out: docs, reference.md, "
        "scripts/run.sh",
        f"global:release-notes: copied -> {dest / 'release-notes'}",
        SUMMARY.format(n=3)]
    assert sorted(str(p.relative_to(dest / "deploy-staging")) for p in (dest / "deploy-staging").rglob("*")) == [
        ".pi-memory-export", "SKILL.md", "scripts", "scripts/ok.sh"]
    data = json.loads(run("skills", "export", "--to", "claude-code", "--json").stdout)
    items = {i["skill_id"]: i for i in data["items"]}
    assert items["global:deploy-staging"]["action"] == "unchanged"  # the same once more: still said
    assert items["global:deploy-staging"]["skippedFiles"] == [
        {"file": "docs", "code": "link"}, {"file": "reference.md", "code": "link"},
        {"file": "scripts/run.sh", "code": "link"}]
    assert "skippedFiles" not in items["global:release-notes"]
    assert (data["skipped"], data["skippedFiles"], data["skippedFilesByReason"]) == (0, 3, {"link": 3})


def test_links_in_two_skills_add_up_and_a_dry_run_says_so_too(env) -> None:
    run, home, store, outside = env
    (store.roots["global"] / "deploy-staging" / "reference.md").symlink_to(outside / "reference.md")
    (store.roots["global"] / "release-notes" / "notes.md").symlink_to(outside / "reference.md")
    dest = home / ".agents" / "skills"
    lines = run("skills", "export", "--to", "codex", "--dry-run").stdout.splitlines()
    assert lines == [
        f"global:deploy-staging: would be copied -> {dest / 'deploy-staging'}; 1 link(s) left out: reference.md",
        f"global:release-notes: would be copied -> {dest / 'release-notes'}; 1 link(s) left out: notes.md",
        SUMMARY.format(n=2)]
    assert not dest.exists()


def test_a_skill_without_links_has_no_such_line(env) -> None:
    run, home, _, _ = env
    out = run("skills", "export", "--to", "claude-code").stdout
    assert "skipped" not in out and "left out" not in out
    data = json.loads(run("skills", "export", "--to", "claude-code", "--json").stdout)
    assert (data["skippedFiles"], data["skippedFilesByReason"]) == (0, {})
