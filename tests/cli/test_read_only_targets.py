"""Writes of memory blocks, skills and pins checked against what they write. ``storage.data_write_problem`` looked
at the data folder only: with its search index at mode 0444 in a writable folder (a host then says the folder is
open for reading only and every write is skipped) a block, a skill and a pin were still written; a skills folder
or ``SKILL.md`` without write bits got ``io_error`` and "retry". Now the index file is part of the check (named with
its ``chmod``), and a skill's own file or folder that cannot be written is ``read_only`` with what to change.

``skills export`` writes outside the data folder, into Claude Code's and Codex's folders: a folder there that
cannot be written (or, not made yet, the folder it would be made in) is refused before anything is written, and
a copy that cannot be replaced leaves the earlier copy as it was.

The suite runs as root, so "read-only" is what pi-memory honours even as root: a file or folder whose mode has no
write bit (``storage.write_blocker``), as the other read-only tests do."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from read_only_folder import cli, own_agent  # noqa: E402,F401
from read_only_folder import tree_state as state  # noqa: E402

pytestmark = pytest.mark.usefixtures("own_agent")
ROOT = "and pi-memory honours that even when running as root"
OTHER = "or use another folder with --dir or $PI_MEMORY_DIR."
SKILL = {"action": "create", "scope": "global", "name": "deploy-steps", "description": "How to deploy the app",
         "when_to_use": "When deploying", "procedure_steps": ["Run make deploy", "Check the logs"]}


@pytest.fixture
def data(tmp_path, monkeypatch):
    """A data folder in use: an entry, a block, a pin and a skill, with its index."""
    folder = tmp_path / "data"
    monkeypatch.setenv("PI_MEMORY_DIR", str(folder))
    assert cli(["add", "memory", "the build uses make"])[0] == 0
    assert cli(["blocks", "create", "notes", "--description", "Project notes"])[0] == 0
    assert cli(["pin", "add", "Always run the tests"])[0] == 0
    assert _tool("skill_manage", SKILL)["success"]
    gc.collect()
    yield folder
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def _tool(name: str, args: dict) -> dict:
    from pi_memory.runtime import open_memory

    memory = open_memory(Path.cwd())
    try:
        return next(t for t in memory.tools() if t.name == name).call(args).result
    finally:
        memory.close()


def _index_words(data: Path, mode: int) -> str:
    index = data / "index.sqlite3"
    return (f"you have no permission to write the file {index} in the data folder {data} (its mode {mode:04o} lets no "
            f"one write it, {ROOT}; while the index cannot be written, the whole data folder is open for reading "
            f"only).")


MODES = [0o444, 0o400, 0o550]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: f"{m:04o}")
@pytest.mark.parametrize(("argv", "subject"), [
    (["blocks", "create", "ideas", "--description", "Ideas"], "Block 'ideas' was not created at {blocks}/ideas.md"),
    (["pin", "add", "Never force push"], "Nothing was saved to STANDING.md"),
    (["pin", "remove", "1"], "Nothing was saved to STANDING.md"),
], ids=["blocks create", "pin add", "pin remove"])
def test_a_read_only_index_refuses_blocks_and_pins_too(data, mode, argv, subject):
    (data / "index.sqlite3").chmod(mode)
    before = state(data)
    code, result, _ = cli(argv)
    index = data / "index.sqlite3"
    assert code == 1, result  # before: 0, written while MEMORY.md was refused
    assert result["error"] == (f"{subject.format(blocks=data / 'blocks')}: {_index_words(data, mode)} Give your "
                               f"user write access to it (for example `chmod u+w {index}`), {OTHER}")
    assert state(data) == before


@pytest.mark.parametrize("mode", MODES, ids=lambda m: f"{m:04o}")
@pytest.mark.parametrize(("tool", "args", "subject"), [
    ("skill_manage", {**SKILL, "name": "release-steps"}, "Could not write {data}/skills/release-steps/SKILL.md; "
                                                         "nothing was changed"),
    ("skill_manage", {"action": "patch", "skill_id": "deploy-steps", "section": "pitfalls",
                      "content": "Never on Fridays"}, "Could not write {data}/skills/deploy-steps/SKILL.md; nothing "
                                                      "was changed"),
    ("updateMemory", {"blockKey": "notes", "newText": "Ship on Tuesdays"}, "Nothing was saved to block 'notes'"),
], ids=["skill create", "skill patch", "block update"])
def test_a_read_only_index_refuses_the_agents_skill_and_block_writes(data, mode, tool, args, subject):
    (data / "index.sqlite3").chmod(mode)
    before = state(data)
    result = _tool(tool, args)
    index = data / "index.sqlite3"
    assert (result["success"], result["code"]) == (False, "read_only"), result
    assert result["error"] == (f"{subject.format(data=data)}: {_index_words(data, mode)} Retrying will not help; tell "
                               f"the user, who can fix it: Give your user write access to it (for example `chmod u+w "
                               f"{index}`), {OTHER}")
    assert state(data) == before


@pytest.mark.parametrize(("what", "args", "path_of"), [
    ("skills folder 0555", {**SKILL, "name": "release-steps"}, lambda d: d / "skills"),
    ("SKILL.md 0444", {"action": "patch", "skill_id": "deploy-steps", "section": "pitfalls",
                       "content": "Never on Fridays"}, lambda d: d / "skills" / "deploy-steps" / "SKILL.md"),
    ("skill folder 0555", {"action": "patch", "skill_id": "deploy-steps", "section": "pitfalls",
                           "content": "Never on Fridays"}, lambda d: d / "skills" / "deploy-steps"),
])
def test_a_skill_file_or_folder_that_cannot_be_written_is_read_only_not_io_error(data, what, args, path_of):
    path = path_of(data)
    path.chmod(0o555 if path.is_dir() else 0o444)
    before = state(data / "skills")
    result = _tool("skill_manage", args)
    assert (result["success"], result["code"]) == (False, "read_only"), result  # before: io_error, "then retry"
    target = data / "skills" / (args.get("name") or args["skill_id"]) / "SKILL.md"
    if path.is_dir():
        said = (f"you have no permission to write in the folder {path} (its mode 0555 lets no one write there, "
                f"{ROOT}).")
    else:
        said = (f"you have no permission to write the file {path} in the folder {path.parent} (its mode 0444 lets no "
                f"one write it, {ROOT}).")
    assert result["error"] == (f"Could not write {target}; nothing was changed: {said} Retrying will not help; tell "
                               f"the user, who can fix it: Give your user write access to it (for example `chmod "
                               f"u+w {path}`), {OTHER}")
    assert state(data / "skills") == before


# ------------------------------------------------------------------ skills export
def _export(to: str) -> tuple[int, dict]:
    code, result, _ = cli(["skills", "export", "--to", to])
    return code, result


@pytest.mark.parametrize(("to", "host", "rel"), [("claude-code", "Claude Code", ".claude/skills"),
                                                 ("codex", "Codex", ".agents/skills")])
@pytest.mark.parametrize("case", ["target 0555", "home 0555, target not made"])
def test_an_export_into_a_folder_that_cannot_be_written_is_refused_before_anything_is_written(data, tmp_path, to,
                                                                                             host, rel, case):
    home = tmp_path / "home"
    target = home / rel
    if case == "target 0555":
        target.mkdir(parents=True)
        target.chmod(0o555)
        blocked, place = target, f"{target}"
    else:
        home.mkdir(exist_ok=True)
        home.chmod(0o555)
        blocked, place = home, f"{home}, where {target} would be made"
    try:
        before = state(home)
        code, result = _export(to)
        assert code == 1, result  # before: copied into it (root writes through a mode)
        assert (result["refusal"], result["folder"]) == ("permission", str(target))
        assert result["error"] == (
            f"The skills cannot be exported where {host} reads them: you have no permission to write in {place} "
            f"(its mode 0555 lets no one write there, {ROOT}). Nothing was exported or changed. Give your user write "
            f"access to it (for example `chmod u+w {blocked}`), then run this command again.")
        assert state(home) == before
    finally:
        home.chmod(0o755)
        if target.exists():
            target.chmod(0o755)


@pytest.mark.parametrize("to", ["claude-code", "codex"])
def test_an_earlier_copy_that_cannot_be_replaced_is_kept_as_it_was(data, tmp_path, to):
    rel = ".claude/skills" if to == "claude-code" else ".agents/skills"
    assert _export(to)[0] == 0
    copy = tmp_path / "home" / rel / "deploy-steps"
    skill = data / "skills" / "deploy-steps" / "SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8") + "\nEdited by hand.\n", encoding="utf-8")
    copy.chmod(0o555)
    try:
        before = state(copy)
        code, result = _export(to)
        assert code == 1 and result["success"] is False and result["failed"] == 1, result
        [item] = [i for i in result["items"] if i["action"] == "failed"]
        assert (item["skill_id"], item["code"]) == ("global:deploy-steps", "permission")
        assert f"you have no permission to write in {copy} (its mode 0555" in item["reason"]
        assert state(copy) == before
    finally:
        copy.chmod(0o755)
    code, result = _export(to)  # once it can be written: the copy is brought up to date
    assert code == 0 and [i["action"] for i in result["items"]] == ["updated"]
    assert "Edited by hand." in (copy / "SKILL.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("to", ["claude-code", "codex"])
def test_a_missing_export_folder_is_made(data, tmp_path, to):
    rel = ".claude/skills" if to == "claude-code" else ".agents/skills"
    code, result = _export(to)
    assert code == 0 and [i["action"] for i in result["items"]] == ["copied"]
    assert (tmp_path / "home" / rel / "deploy-steps" / "SKILL.md").is_file()
