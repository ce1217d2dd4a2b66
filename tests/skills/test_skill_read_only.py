"""A data folder opened for reading only gets no skill write: ``skill_manage`` create / patch / update / delete /
move (the model's), ``pi-memory skills delete|move`` (a person's) and an import's ``adopt`` are refused before the
skills lock, though ``skills/`` keeps its write bits (and root may write anywhere): no new skill, no edit, no
folder moved into ``.trash``. And a delete's ``.trash`` is private, as the rest of the data folder."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from read_only_folder import (  # noqa: E402,F401
    TELL,
    own_agent,
    root_read_only,
    root_todo,
    seed_every_store,
    text_cli,
    tree_state,
)

pytestmark = pytest.mark.usefixtures("own_agent")


@pytest.fixture
def data(tmp_path):
    (tmp_path / "proj" / ".git").mkdir(parents=True)  # a project, so project skills and `move` have a place
    folder = tmp_path / "data"
    seed_every_store(folder)
    yield folder
    folder.chmod(0o755)


CALLS = [
    ({"action": "create", "name": "ro-skill", "description": "A skill saved while read-only", "scope": "global",
      "procedure_steps": ["step one"]}, "Could not write {data}/skills/ro-skill/SKILL.md"),
    ({"action": "patch", "skill_id": "global:evil", "section": "pitfalls", "content": "none"},
     "Could not write {data}/skills/evil/SKILL.md"),
    ({"action": "update", "skill_id": "global:evil", "description": "Deploys staging, read-only"},
     "Could not write {data}/skills/evil/SKILL.md"),
    ({"action": "delete", "skill_id": "global:evil"}, "Could not delete global:evil"),
    ({"action": "move", "skill_id": "global:evil", "scope": "project"}, "Could not move global:evil"),
]


@pytest.mark.parametrize(("args", "failed"), CALLS, ids=[c[0]["action"] for c in CALLS])
def test_skill_manage_is_refused_and_changes_nothing(data, tmp_path, args, failed):
    from pi_memory.runtime import open_memory

    why = root_read_only(data)
    before = tree_state(data)
    memory = open_memory(tmp_path / "proj", override_dir=data)
    try:
        tools = {tool.name: tool for tool in memory.tools()}
        result = tools["skill_manage"].call(args).result
    finally:
        memory.close()
    assert (result["success"], result["code"]) == (False, "read_only")
    assert result["error"] == f"{failed.format(data=data)}; nothing was changed: {why} {TELL}{root_todo(data)}"
    assert tree_state(data) == before


@pytest.mark.parametrize("argv", [["skills", "delete", "global:evil"], ["skills", "move", "global:evil", "--to",
                                                                          "project"]], ids=["delete", "move"])
def test_the_cli_says_it_in_a_persons_words(data, tmp_path, argv):
    why = root_read_only(data)
    before = tree_state(data)
    code, out, err = text_cli([*argv, "--dir", str(data), "--project", str(tmp_path / "proj")])
    assert (code, out) == (1, "")
    assert err.strip().splitlines()[-1] == (f"refused: Could not {argv[1]} global:evil; nothing was changed: {why} "
                                            f"{root_todo(data)}")
    assert tree_state(data) == before


def test_an_import_adopts_no_skill(data, tmp_path):
    from pi_memory.config import load_settings
    from pi_memory.skills import SkillStore

    store = SkillStore.from_settings(load_settings(tmp_path, override_dir=data), cwd=tmp_path / "proj")
    why = root_read_only(data)
    before = tree_state(data)
    result = store.adopt("global", "imported", text="---\nname: imported\ndescription: x\n---\n\nbody\n")
    assert (result["success"], result["code"]) == (False, "read_only")
    assert why in result["error"]
    assert tree_state(data) == before


def test_a_deleted_skill_goes_into_a_private_trash(data, tmp_path):
    from pi_memory.runtime import open_memory

    memory = open_memory(tmp_path / "proj", override_dir=data)
    try:
        result = memory.skills().delete("global:evil")
    finally:
        memory.close()
    assert result["success"], result
    assert Path(result["trash"]).parent == data / ".trash" / "skills"
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (data / ".trash", data / ".trash" / "skills")}
    assert modes == {".trash": 0o700, "skills": 0o700}
