"""A job whose write merged a hand-made store's exact duplicates logs each copy it merged, says so, and its undo
gives back the file as it was before the job, copies included, byte for byte."""

from __future__ import annotations

import pytest
from learning_helpers import llm_block, write_settings
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.learning import PlannedOp, list_jobs, undo_job
from pi_memory.runtime import open_memory


def _add(text: str, target: str = "memory") -> PlannedOp:
    return PlannedOp(target=target, action="add", content=text)


def _remove(text: str) -> PlannedOp:
    return PlannedOp(target="memory", action="remove", old_text=text)


def _replace(old: str, new: str) -> PlannedOp:
    return PlannedOp(target="memory", action="replace", old_text=old, content=new)


def _text(entries: list[str]) -> bytes:
    return ("\n§\n".join(entries) + "\n").encode("utf-8")


CASES = [  # (target, the hand-made file's entries, the job's operation, the entries it leaves, copies merged)
    ("memory", ["A-dup", "A-dup", "B-two"], _add("Z-new"), ["A-dup", "B-two", "Z-new"], 1),  # at the start
    ("memory", ["A-one", "B-dup", "B-dup", "C-three"], _remove("C-three"), ["A-one", "B-dup"], 1),  # middle
    ("memory", ["A-one", "B-two", "C-dup", "C-dup"], _remove("A-one"), ["B-two", "C-dup"], 1),  # at the end
    ("memory", ["A-dup", "B-two", "A-dup", "C-three", "A-dup"], _replace("B-two", "B-2"),
     ["A-dup", "B-2", "C-three"], 2),  # three copies
    ("memory", ["A-dup", "B-dup", "A-dup", "B-dup"], _add("C-new"), ["A-dup", "B-dup", "C-new"], 2),  # interleaved
    ("memory", ["A-dup", "B-two", "A-dup"], _remove("A-dup"), ["B-two"], 1),  # the job removes the entry itself
    ("memory", ["A-dup", "B-two", "A-dup"], _replace("A-dup", "A-changed"), ["A-changed", "B-two"], 1),
    ("user", ["Name is Ada", "Prefers tabs", "Name is Ada"], _add("Works in UTC", "user"),
     ["Name is Ada", "Prefers tabs", "Works in UTC"], 1),  # USER.md
]


def _merged(n: int) -> str:
    return "1 exact duplicate entry" if n == 1 else f"{n} exact duplicate entries"


@pytest.mark.parametrize(("target", "entries", "op", "left", "merged"), CASES)
def test_the_undo_gives_back_the_copies_byte_for_byte(agent, project, target, entries, op, left, merged):
    write_settings(agent, {})
    memory = open_memory(project)
    path = memory.store.path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_text(entries))
    learner = memory.learner()
    report = learner.run("review", "test", lambda ctx: [op], needs_model=False)
    assert (report.outcome, report.message) == ("ok", f"1 write(s), {_merged(merged)} merged")
    assert path.read_bytes() == _text(left)
    assert [w.action for w in report.writes] == ["dedupe"] * merged + [op.action]
    undo = undo_job(learner, report.job_id)
    assert (undo.outcome, undo.message) == ("ok", f"undid job {report.job_id} (review): 1 write(s) reversed, "
                                                  f"{_merged(merged)} given back")
    assert path.read_bytes() == _text(entries)
    assert learner.store.entries(target) == list(dict.fromkeys(entries))
    redo = undo_job(learner, undo.job_id)  # undoing the undo: the job's store again, copies merged again
    assert redo.outcome == "ok"
    assert path.read_bytes() == _text(left)
    again = undo_job(learner, report.job_id)  # and the job can be undone again
    assert again.outcome == "ok" and path.read_bytes() == _text(entries)


def test_the_log_lists_each_merged_copy_with_where_it_stood(agent, project):
    write_settings(agent, {})
    memory = open_memory(project)
    path = memory.store.path("memory")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_text(["A-dup", "B-two", "A-dup", "C-three", "A-dup"]))
    learner = memory.learner()
    job = learner.run("review", "test", lambda ctx: [_add("Z-new")], needs_model=False).job_id
    assert list_jobs(learner.conn)[0]["writes"] == [
        {"target": "memory", "store": "MEMORY.md", "action": "dedupe", "before": "A-dup", "after": None},
        {"target": "memory", "store": "MEMORY.md", "action": "dedupe", "before": "A-dup", "after": None},
        {"target": "memory", "store": "MEMORY.md", "action": "add", "before": None, "after": "Z-new"}]
    places = [r[0] for r in learner.conn.execute("SELECT place FROM learning_writes WHERE job_id = ? ORDER BY seq",
                                                   (job,))]
    assert places == ['{"index": 2, "after": "B-two", "before": "C-three"}',
                      '{"index": 4, "after": "C-three", "before": null}', None]


@pytest.mark.parametrize(("since", "expected", "said"), [
    # the copy's old predecessor is gone: it goes back before its old successor
    (lambda s: s.remove("memory", "B-two"), ["A-dup", "A-dup", "C-three"], "1 exact duplicate entry given back"),
    # the entry it copied is gone: a lone copy would bring back what someone removed
    (lambda s: s.remove("memory", "A-dup"), ["B-two", "C-three"],
     "1 exact duplicate entry not given back (the entry it repeated is no longer there)"),
])
def test_with_other_changes_since_a_copy_goes_back_next_to_its_twin_or_not_at_all(agent, project, since, expected,
                                                                                     said):
    write_settings(agent, {})
    memory = open_memory(project)
    path = memory.store.path("memory")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_text(["A-dup", "B-two", "A-dup", "C-three"]))
    learner = memory.learner()
    job = learner.run("review", "test", lambda ctx: [_add("Z-new")], needs_model=False).job_id
    memory.store.load_from_disk()
    since(memory.store)
    undo = undo_job(learner, job)
    assert (undo.outcome, undo.message) == ("ok", f"undid job {job} (review): 1 write(s) reversed, {said}")
    assert path.read_bytes() == _text(expected)


def test_a_person_reads_it_from_the_cli(agent, llm, brain, tmp_path):
    write_settings(agent, llm_block(llm))
    d = tmp_path / "u"
    d.mkdir()
    path = d / "MEMORY.md"
    path.write_bytes(_text(["A-dup", "B-two", "A-dup"]))
    brain.replies.append({"operations": [{"target": "memory", "action": "remove", "oldText": "B-two"}]})
    run = CliRunner().invoke(app, ["consolidate", "memory", "--dir", str(d)])
    assert run.exit_code == 0
    assert run.stdout.splitlines()[:3] == [
        "consolidate: ok (job 1): MEMORY.md: 13 -> 5 chars; 1 write(s), 1 exact duplicate entry merged",
        "  merge an exact duplicate in MEMORY.md (the first copy is kept): A-dup",
        "  remove from MEMORY.md: B-two"]
    assert path.read_bytes() == _text(["A-dup"])
    undo = CliRunner().invoke(app, ["learning", "undo", "1", "--dir", str(d)])
    assert undo.exit_code == 0
    assert undo.stdout.splitlines()[0] == ("undo: ok (job 2): undid job 1 (consolidate): 1 write(s) reversed, "
                                           "1 exact duplicate entry given back")
    assert path.read_bytes() == _text(["A-dup", "B-two", "A-dup"])
