"""A data folder made read-only with ``chmod`` (no write bit for anyone) gets no new file from any command, also
when pi-memory runs as root, whom the kernel would let write there (the suite runs as root): the same refusal a
user who is not root gets, naming the folder, its mode and what to do (``storage.refuse_read_only_folder``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from pi_memory.storage import ReadOnlyFolderError, probe_folder, refuse_read_only_folder, storage_problem
from read_only_folder import cli  # noqa: E402

WRITES = [
    ["add", "memory", "the build uses make"],
    ["add", "user", "prefers short answers"],
    ["semantic", "add", "The team deploys on Fridays"],
    ["pin", "add", "never push to main"],
    ["index-sessions"],
    ["reindex"],
    ["sync-markdown"],
]


@pytest.fixture(autouse=True)
def _own_agent(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)


def files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def run(argv: list[str]) -> tuple[int, dict]:
    return cli(argv)[:2]


@pytest.fixture
def seeded(tmp_path):
    """A data folder in use (an entry and an index), then ``chmod 0555`` (its files 0444)."""
    folder = tmp_path / "data"
    subprocess.run([sys.executable, "-m", "pi_memory", "add", "memory", "note about the build", "--dir",
                    str(folder)], check=True, capture_output=True, timeout=60,
                   env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


@pytest.fixture
def empty(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir(mode=0o555)
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


def assert_refused(code: int, data: dict, folder: Path) -> None:
    assert code == 1, data
    if "problem" in data:
        assert data["problem"] == "permission" and data["dataDir"] == str(folder), data
        assert "0555 lets no one write there" in data["error"] and f"chmod u+w {folder}" in data["error"], data
    elif data.get("target") in ("memory", "user"):  # a curated store's result, refused before its file is touched
        assert data["code"] == "read_only" and data["error"] == (
            f"Nothing was saved to {data['target'].upper()}.md: you have no permission to write in the data folder "
            f"{folder} (its mode 0555 lets no one write there, and pi-memory honours that even when running as "
            "root). Retrying will not help; tell the user, who can fix it: Give your user write access to it (for "
            f"example `chmod u+w {folder}`), or use another folder with --dir or $PI_MEMORY_DIR."), data
    else:  # STANDING.md's own result shape, in the curated refusal's words (a person's: only a person pins)
        assert data["code"] == "read_only" and data["error"] == (
            f"Nothing was saved to STANDING.md: you have no permission to write in the data folder {folder} (its mode "
            "0555 lets no one write there, and pi-memory honours that even when running as root). Give your user "
            f"write access to it (for example `chmod u+w {folder}`), or use another folder with --dir or "
            "$PI_MEMORY_DIR."), data


@pytest.mark.parametrize("argv", WRITES, ids=lambda a: " ".join(a[:2]))
def test_a_write_into_a_read_only_folder_is_refused_and_adds_no_file(seeded, argv):
    before = files(seeded)
    code, data = run([*argv, "--dir", str(seeded)])
    assert_refused(code, data, seeded)
    assert files(seeded) == before
    assert (seeded / "MEMORY.md").read_text() == "note about the build\n"


@pytest.mark.parametrize("argv", WRITES, ids=lambda a: " ".join(a[:2]))
def test_an_empty_read_only_folder_stays_empty(empty, argv):
    code, data = run([*argv, "--dir", str(empty)])
    assert_refused(code, data, empty)
    assert files(empty) == []


@pytest.mark.parametrize("argv", [["memory-search", "build"], ["session-search", "build"],
                                  ["semantic", "recall", "how is the build done?"], ["semantic", "list"]],
                         ids=lambda a: " ".join(a[:2]))
def test_searching_a_read_only_folder_answers_and_adds_no_file(seeded, argv):
    before = files(seeded)
    code, data = run([*argv, "--dir", str(seeded)])
    assert code == 0, data  # the index is opened for reading only (immutable: no -wal/-shm), counters untouched
    if argv[0] == "memory-search":
        assert [hit["content"] for hit in data["results"]] == ["note about the build"], data
    assert files(seeded) == before  # no index -wal/-shm, no lock file


def test_reading_a_read_only_folder_works_and_adds_no_file(seeded):
    before = files(seeded)
    code, data = run(["read", "memory", "--dir", str(seeded)])
    assert code == 0 and data["entries"] == ["note about the build"], data
    code, data = run(["status", "--dir", str(seeded)])
    assert code == 0 and data["dataDir"] == str(seeded), data
    assert files(seeded) == before  # the status's read-only look at the index is immutable: no -wal/-shm


def test_a_folder_not_created_yet_under_a_read_only_parent_is_not_created(empty):
    target = empty / "new" / "data"
    code, data = run(["add", "memory", "x", "--dir", str(target)])
    assert code == 1 and files(empty) == []
    assert data["code"] == "read_only" and str(target) in data["error"], data


def test_a_folder_with_any_write_bit_is_used(tmp_path):
    for mode in (0o755, 0o775, 0o555 | 0o002, 0o700):
        folder = tmp_path / f"m{mode:o}"
        folder.mkdir()
        folder.chmod(mode)
        code, data = run(["add", "memory", "kept", "--dir", str(folder)])
        assert code == 0 and data["success"] is True, (oct(mode), data)
        assert (folder / "MEMORY.md").read_text() == "kept\n"
        assert probe_folder(folder) is None


def test_probe_and_refusal_name_the_mode(empty):
    assert probe_folder(empty) == ("permission", "its mode 0555 lets no one write there, and pi-memory honours "
                                   "that even when running as root")
    assert probe_folder(empty / "a" / "b") == ("permission", f"the mode of {empty}, where it would be created, 0555 "
                                              "lets no one write there, and pi-memory honours that even when "
                                              "running as root")
    with pytest.raises(ReadOnlyFolderError) as caught:
        refuse_read_only_folder(empty)
    problem = storage_problem(caught.value, empty)
    assert problem is not None and problem.kind == "permission" and problem.folder == empty
    assert problem.message == (
        f"You have no permission to write in the data folder {empty} (its mode 0555 lets no one write there, and "
        "pi-memory honours that even when running as root). The command stopped. Give your user write access to "
        f"it (for example `chmod u+w {empty}`), or use another folder with --dir or $PI_MEMORY_DIR.")


def test_mcp_starts_on_a_read_only_folder_for_reading_and_says_so(seeded):
    """The server answers its read tools from what is there (tests/index/test_read_only_index.py drives them);
    its start line says the folder is open for reading only, and what to do."""
    proc = subprocess.run([sys.executable, "-m", "pi_memory", "mcp", "--dir", str(seeded), "--json"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr
    events = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    started = next(e for e in events if e["event"] == "started")
    assert "0555 lets no one write there" in started["readOnly"], started
    assert "opened it for reading only" in started["readOnly"] and f"chmod u+w {seeded}" in started["readOnly"]


def test_skills_and_blocks_are_not_written_into_a_read_only_folder(empty):
    from pi_memory.blocks import BlockStore
    from pi_memory.skills import SkillStore

    store = SkillStore(empty, project_root=None)
    out = store.create("deploy staging", "How to deploy staging", "global", "## Procedure\n1. make deploy")
    assert out["success"] is False, out
    made = BlockStore(empty / "blocks").create("team", "who is on the team", value="Ana and Bo")
    assert made.success is False, made
    assert files(empty) == []
