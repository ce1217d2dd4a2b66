"""Undo puts every entry back where it stood: byte for byte when nothing else changed, next to an old neighbour
when other entries changed meanwhile; a refused undo says what to do and logs no job."""

from __future__ import annotations

import json

import pytest
from learning_helpers import llm_block, write_settings
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.learning import PlannedOp, list_jobs, undo_job
from pi_memory.runtime import open_memory

RUN = CliRunner()
ABC = ["A-first entry", "B-second entry", "C-third entry"]


def cli(*args: str) -> tuple[int, str]:
    result = RUN.invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


def _op(action: str, old: str | None = None, content: str | None = None) -> dict:
    op = {"target": "memory", "action": action}
    return {**op, **({"oldText": old} if old else {}), **({"content": content} if content else {})}


@pytest.mark.parametrize(("entries", "ops"), [
    # the tester's case: merge the first two, the second comes back between the first and the third
    (ABC, [_op("replace", "A-first", "A and B merged"), _op("remove", "B-second")]),
    (ABC, [_op("remove", "A-first")]),  # the first entry
    (ABC, [_op("remove", "C-third")]),  # the last
    # two in a row (of five: a consolidation removing more than half without merging is refused)
    ([f"{c}-entry" for c in "ABCDE"], [_op("remove", "B-entry"), _op("remove", "C-entry")]),
    (ABC, [_op("replace", "C-third", "A-first entry")]),  # a replace onto an existing entry merges (a remove)
    ([f"Fact {n}: " + "x" * 20 for n in range(1, 6)],
     [_op("remove", "Fact 2:"), _op("remove", "Fact 4:"), _op("replace", "Fact 5:", "Fact 5, shorter")]),
])
def test_undo_gives_back_the_file_byte_for_byte_and_undoing_the_undo_the_job_again(agent, llm, brain, tmp_path,
                                                                                    entries, ops):
    write_settings(agent, llm_block(llm))
    d = str(tmp_path / "u")
    for entry in entries:
        assert cli("add", "memory", entry, "--dir", d)[0] == 0
    path = tmp_path / "u" / "MEMORY.md"
    before = path.read_bytes()
    brain.replies.append({"operations": ops})
    assert cli("consolidate", "memory", "--dir", d)[0] == 0
    consolidated = path.read_bytes()
    code, text = cli("learning", "undo", "1", "--dir", d)
    assert code == 0 and text.startswith("undo: ok (job 2): undid job 1 (consolidate): ")
    assert path.read_bytes() == before  # it was A, C, B for the tester's case
    assert cli("learning", "undo", "2", "--dir", d)[0] == 0
    assert path.read_bytes() == consolidated


def _job(learner, *ops: PlannedOp):
    report = learner.run("review", "test", lambda ctx: list(ops), needs_model=False)
    assert report.outcome == "ok", report.message
    return report.job_id


def _remove(text: str) -> PlannedOp:
    return PlannedOp(target="memory", action="remove", old_text=text)


@pytest.mark.parametrize(("since", "expected"), [
    (lambda s: s.add("memory", "e-new"), ["a-one", "b-two", "c-three", "d-four", "e-new"]),
    (lambda s: s.remove("memory", "b-two"), ["a-one", "c-three", "d-four"]),  # before its old successor
    (lambda s: (s.remove("memory", "b-two"), s.remove("memory", "d-four"), s.add("memory", "e-new")),
     ["a-one", "e-new", "c-three"]),  # both neighbours gone: its old index
    (lambda s: (s.remove("memory", "b-two"), s.remove("memory", "d-four")), ["a-one", "c-three"]),
])
def test_with_other_changes_since_an_entry_goes_back_next_to_an_old_neighbour(agent, project, since, expected):
    write_settings(agent, {})
    memory = open_memory(project)
    for entry in ("a-one", "b-two", "c-three", "d-four"):
        assert memory.store.add("memory", entry).success
    learner = memory.learner()
    job = _job(learner, _remove("c-three"))
    memory.store.load_from_disk()
    since(memory.store)
    assert undo_job(learner, job).outcome == "ok"
    assert learner.store.read("memory").entries == expected


def test_a_removed_first_entry_goes_back_before_its_old_successor_and_a_last_one_after_its_predecessor(agent,
                                                                                                        project):
    write_settings(agent, {})
    memory = open_memory(project)
    for entry in ("a-one", "b-two", "c-three"):
        assert memory.store.add("memory", entry).success
    learner = memory.learner()
    job = _job(learner, _remove("a-one"), _remove("c-three"))
    memory.store.load_from_disk()
    memory.store.add("memory", "z-new")
    assert undo_job(learner, job).outcome == "ok"
    assert learner.store.read("memory").entries == ["a-one", "b-two", "c-three", "z-new"]


def test_a_job_logged_before_places_were_kept_gets_its_entries_back_at_the_end(agent, project):
    write_settings(agent, {})
    memory = open_memory(project)
    for entry in ("a-one", "b-two", "c-three"):
        assert memory.store.add("memory", entry).success
    learner = memory.learner()
    job = _job(learner, _remove("a-one"))
    learner.conn.execute("UPDATE learning_writes SET place = NULL")
    assert undo_job(learner, job).outcome == "ok"
    assert learner.store.read("memory").entries == ["b-two", "c-three", "a-one"]


def test_a_refused_undo_logs_no_job_and_says_what_to_do(agent, project):
    write_settings(agent, {"memoryCharLimit": 50})
    memory = open_memory(project)
    for entry in ("a" * 12, "b" * 12, "c" * 12):
        assert memory.store.add("memory", entry).success
    learner = memory.learner()
    job = _job(learner, _remove("a" * 12), _remove("b" * 12))
    memory.store.load_from_disk()
    assert memory.store.add("memory", "d" * 30).success  # 12 + 3 + 30 = 45 of 50
    for _ in range(3):  # retries log nothing
        report = undo_job(learner, job)
        assert (report.outcome, report.job_id) == ("refused", None)
        assert report.message == (
            f"job {job} cannot be undone now: MEMORY.md would hold 75 of its 50 characters afterwards. Nothing was "
            "changed. Make room first (`pi-memory remove memory TEXT`, or `pi-memory consolidate memory`), or raise "
            f"memoryCharLimit in settings, then run `pi-memory learning undo {job}` again")
    assert [j["kind"] for j in list_jobs(learner.conn)] == ["review"]
    assert memory.store.remove("memory", "d" * 30).success
    assert undo_job(learner, job).outcome == "ok"
    assert learner.store.read("memory").entries == ["a" * 12, "b" * 12, "c" * 12]


def test_an_undo_of_an_entry_changed_since_is_refused_without_a_job(agent, project):
    write_settings(agent, {})
    memory = open_memory(project)
    learner = memory.learner()
    job = _job(learner, PlannedOp(target="memory", action="add", content="Uses uv"))
    memory.store.load_from_disk()
    assert memory.store.replace("memory", "Uses uv", "Uses uv for envs").success
    report = undo_job(learner, job)
    assert (report.outcome, report.job_id) == ("refused", None)
    assert report.message == (
        f"job {job} cannot be undone: MEMORY.md has changed since (\"Uses uv\", which it wrote, is no longer "
        "there). Nothing was changed; edit the store by hand instead (`pi-memory replace memory ...` / `pi-memory "
        "remove memory ...`): `pi-memory learning log` shows the old text")
    assert memory.store.add("memory", "Uses uv").success  # back, but now also part of another entry
    report = undo_job(learner, job)
    assert report.message == (
        f"job {job} cannot be undone: MEMORY.md has changed since (\"Uses uv\" is now also part of another entry, "
        "so it cannot be told apart). Nothing was changed; edit the store by hand instead (`pi-memory replace "
        "memory ...` / `pi-memory remove memory ...`): `pi-memory learning log` shows the old text")
    assert [j["kind"] for j in list_jobs(learner.conn)] == ["review"]


def test_an_undo_of_another_projects_store_is_refused(agent, project, tmp_path):
    import subprocess

    write_settings(agent, {})
    memory = open_memory(project)
    learner = memory.learner()
    job = _job(learner, PlannedOp(target="project", action="add", content="Builds with make"))
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    elsewhere = open_memory(other).learner()
    report = undo_job(elsewhere, job)
    assert (report.outcome, report.job_id) == ("refused", None)
    assert report.message == (f"job {job} wrote to {memory.store.name('project')}, which is not a store of this "
                              f"folder; run `pi-memory learning undo {job}` inside the project it was made in")
    assert memory.store.read("project").entries == ["Builds with make"]
    assert undo_job(learner, job).outcome == "ok" and memory.store.read("project").entries == []


def test_undo_json_of_a_refusal_has_no_job_id(agent, project, monkeypatch):
    write_settings(agent, {})
    monkeypatch.chdir(project)
    code, text = cli("learning", "undo", "7", "--json")
    assert code == 1 and json.loads(text)["jobId"] is None


def test_a_job_whose_undo_was_undone_is_in_effect_again_and_can_be_undone_again(agent, llm, brain, tmp_path):
    # the log showed job 1 "undone" and `undo 1` was refused, though its writes were back in the store
    write_settings(agent, llm_block(llm))
    d = str(tmp_path / "u")
    for entry in ("A-first entry", "B-second entry", "C-third entry"):
        assert cli("add", "memory", entry, "--dir", d)[0] == 0
    path = tmp_path / "u" / "MEMORY.md"
    before = path.read_bytes()
    brain.replies.append({"operations": [{"target": "memory", "action": "remove", "oldText": "B-second"}]})
    assert cli("consolidate", "memory", "--dir", d)[0] == 0
    assert cli("learning", "undo", "1", "--dir", d)[0] == 0
    assert cli("learning", "undo", "2", "--dir", d)[0] == 0  # job 1's write is back
    code, text = cli("learning", "log", "--json", "--dir", d)
    first = next(j for j in json.loads(text)["jobs"] if j["id"] == 1)
    assert first["undoneAt"] is None and first["detail"].endswith("(undone by job 2) (in effect again: job 3 undid job 2)")
    code, text = cli("learning", "undo", "1", "--dir", d)
    assert code == 0 and text.startswith("undo: ok (job 4): undid job 1 (consolidate): ")
    assert path.read_bytes() == before
