"""``skills delete`` and ``skills move`` moved a skill's folder with ``shutil.move``, which follows the operating
system's permissions only: run as root (as here) it went through a skills folder without write bits, a folder the
user had made read-only on purpose. Now the folder a skill leaves, the one it goes into (or the one that would be
made) and the skill's own folder are checked for write bits first, as every other write of pi-memory is
(``storage.refuse_read_only_folder``): refused with the folder and its ``chmod``, nothing moved."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from pi_memory.skills import SkillStore, render_body  # noqa: E402
from read_only_folder import TELL, own_agent, text_cli, tree_state  # noqa: E402,F401

BODY = render_body("When deploying", ["build", "ship"])


def why(folder: Path) -> str:
    return (f"you have no permission to write in the folder {folder} (its mode 0555 lets no one write there, and "
            f"pi-memory honours that even when running as root).")


def todo(folder: Path) -> str:
    return (f"Give your user write access to it (for example `chmod u+w {folder}`), or use another folder with "
            "--dir or $PI_MEMORY_DIR.")


@pytest.fixture
def store(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    skills = SkillStore(tmp_path / "data", project_root=tmp_path / "repo")
    assert skills.create("deploy staging", "Deploy the app to staging", "global", BODY)["success"]
    assert skills.create("lint", "Lint the code", "project", BODY)["success"]
    made = []

    def read_only(folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o555)
        made.append(folder)
        return folder

    skills.read_only = read_only
    yield skills
    for folder in made:
        folder.chmod(0o755)


def where(store: SkillStore, name: str) -> str:
    return {"skills": str(store.roots["global"]), "skill": str(store.folder("global", "deploy-staging")),
            "project": str(store.roots["project"]), "trash": str(store.data_dir / ".trash")}[name]


CASES = [  # (the call, the folder made read-only, the folder the refusal names)
    ("delete", "skills", "skills"),
    ("delete", "skill", "skill"),
    ("delete", "trash", "trash"),  # .trash/skills would be made in it
    ("move", "skills", "skills"),
    ("move", "skill", "skill"),
    ("move", "project", "project"),
]


@pytest.mark.parametrize(("action", "frozen", "named"), CASES, ids=[f"{a}-{f}" for a, f, _ in CASES])
def test_a_folder_without_write_bits_stops_the_move_even_as_root(store, action, frozen, named):
    store.read_only(Path(where(store, frozen)))
    before = tree_state(store.data_dir)
    result = (store.delete("global:deploy-staging") if action == "delete"
              else store.move("global:deploy-staging", "project"))
    folder = Path(where(store, named))
    assert result == {"success": False, "code": "read_only", "error": (
        f"Could not {action} global:deploy-staging; nothing was changed: {why(folder)} {TELL}{todo(folder)}")}
    assert tree_state(store.data_dir) == before
    assert (store.folder("global", "deploy-staging") / "SKILL.md").is_file()


def test_with_write_bits_back_the_delete_goes_through(store):
    store.read_only(store.roots["global"]).chmod(0o755)
    result = store.delete("global:deploy-staging")
    assert (result["success"], result["message"]) == (True, "Deleted skill global:deploy-staging.")


@pytest.mark.usefixtures("own_agent")
@pytest.mark.parametrize("argv", [["skills", "delete", "global:deploy-staging"],
                                  ["skills", "move", "global:deploy-staging", "--to", "project"]],
                         ids=["delete", "move"])
def test_the_cli_refuses_in_a_persons_words(store, tmp_path, argv):
    folder = store.read_only(store.roots["global"])
    before = tree_state(store.data_dir)
    code, out, err = text_cli([*argv, "--dir", str(store.data_dir), "--project", str(tmp_path / "repo")])
    assert (code, out) == (1, "")
    assert " ".join(err.split()) == (f"refused: Could not {argv[1]} global:deploy-staging; nothing was changed: "
                                     f"{why(folder)} {todo(folder)}")
    assert tree_state(store.data_dir) == before
