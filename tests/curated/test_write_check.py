"""A curated write refused before anything is touched (``MemoryStore.write_check``): the Markdown file, its lock
and backups stay as they were, the result's code says why (``read_only`` for a folder that cannot be written,
``unreadable`` / ``not_an_index`` for an index that cannot be used), the model is told not to retry and a person
what to do; the team project store is not called either."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from pi_memory.curated import MemoryStore
from pi_memory.curated.store import Operation
from pi_memory.curated.team_client import TeamProjectClient
from pi_memory.storage import StorageProblem, read_only_problem


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def store(tmp_path):
    s = MemoryStore(tmp_path)
    assert s.add("memory", "the build uses make").success
    assert s.add("user", "prefers short answers").success
    return s


CASES = [  # problem, code, what the model reads after "Nothing was saved to <name>: "
    (read_only_problem("read_only", Path("/data")), "read_only",
     "the data folder /data is on a read-only file system, so pi-memory cannot write there. Retrying will not "
     "help; tell the user, who can fix it: Remount it read-write, or use another folder with --dir or "
     "$PI_MEMORY_DIR."),
    (read_only_problem("permission", Path("/data"), "its mode 0555 lets no one write there"), "read_only",
     "you have no permission to write in the data folder /data (its mode 0555 lets no one write there). Retrying "
     "will not help; tell the user, who can fix it: Give your user write access to it (for example `chmod u+w "
     "/data`), or use another folder with --dir or $PI_MEMORY_DIR."),
    (read_only_problem("disk_full", Path("/data"), "512 KiB free"), "read_only",
     "the disk holding the data folder /data is full (512 KiB free). Retrying will not help; tell the user, who "
     "can fix it: Free some space on that disk, or use another folder with --dir or $PI_MEMORY_DIR, then run it "
     "again."),
    (StorageProblem("unreadable", Path("/data"), "The file /data/index.sqlite3 cannot be read."), "unreadable",
     "its search index cannot be used. The file /data/index.sqlite3 cannot be read. Retrying will not help; tell "
     "the user."),
    (StorageProblem("not_an_index", Path("/data"), "The file /data/index.sqlite3 is not a pi-memory search "
                    "index."), "not_an_index",
     "its search index cannot be used. The file /data/index.sqlite3 is not a pi-memory search index. Retrying "
     "will not help; tell the user."),
]


@pytest.mark.parametrize(("problem", "code", "said"), CASES, ids=[c[0].kind for c in CASES])
@pytest.mark.parametrize("call", ["add", "replace", "remove", "batch", "failure"])
def test_a_refused_write_touches_nothing_and_says_why(store, tmp_path, problem, code, said, call):
    before = snapshot(tmp_path)
    store.write_check = lambda: problem
    result = {
        "add": lambda: store.add("memory", "the deploy port is 8443"),
        "replace": lambda: store.replace("memory", "build", "the build uses just"),
        "remove": lambda: store.remove("memory", "build"),
        "batch": lambda: store.apply("memory", [Operation(action="add", content="one"),
                                                Operation(action="remove", old_text="build")]),
        "failure": lambda: store.add_failure("ran the wrong test", "tool-quirk"),
    }[call]()
    name = "FAILURES.md" if call == "failure" else "MEMORY.md"
    assert (result.success, result.code, result.target) == (False, code, "failure" if call == "failure" else "memory")
    assert result.error == f"Nothing was saved to {name}: {said}"
    person = result.for_person().error
    assert "Retrying will not help" not in person and person.startswith(f"Nothing was saved to {name}: ")
    assert snapshot(tmp_path) == before  # no write, no lock file, no backup


def test_the_check_is_asked_at_every_write(store, tmp_path):
    problems = [None, read_only_problem("permission", tmp_path), None]
    store.write_check = lambda: problems.pop(0)
    assert store.add("memory", "first").success
    assert store.add("memory", "second").code == "read_only"
    assert store.add("memory", "third").success
    assert store.read("memory").entries == ["the build uses make", "first", "third"]


def test_a_refusal_counts_toward_the_retry_limit(store, tmp_path):
    store.write_check = lambda: read_only_problem("read_only", tmp_path)
    store.begin_turn()
    assert [store.add("memory", "same").code for _ in range(4)] == ["read_only"] * 3 + ["retry_limit"]
    assert store.add("memory", "another").code == "read_only"  # another call still gets the reason


def test_split_apply_is_refused_before_rewriting(store, tmp_path):
    store.write_check = lambda: read_only_problem("read_only", tmp_path)
    assert store.write_refused("memory").code == "read_only"
    before = snapshot(tmp_path)
    with pytest.raises(PermissionError, match="^Nothing was saved to MEMORY.md: the data folder "):
        store.rewrite("memory", ["a", "b"])
    assert snapshot(tmp_path) == before


def test_the_team_project_store_is_not_called(tmp_path):
    calls: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json={"entries": [], "version": 1, "limit": 2200})

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    client = TeamProjectClient("http://team.example", "acme", "token", transport=httpx.MockTransport(answer))
    store = MemoryStore(tmp_path / "data", project_root=repo, team_project=client)
    store.write_check = lambda: read_only_problem("permission", tmp_path / "data", "its mode 0555 lets no one "
                                                  "write there")
    for call in (lambda: store.add("project", "deploys go through CI"),
                 lambda: store.replace("project", "CI", "deploys go through the pipeline"),
                 lambda: store.remove("project", "CI")):
        result = call()
        assert (result.success, result.code) == (False, "read_only")
        assert result.error.startswith(f"Nothing was saved to team project store 'acme' on http://team.example: "
                                       f"you have no permission to write in the data folder {tmp_path / 'data'}")
    assert calls == [] and not (tmp_path / "data").exists()
