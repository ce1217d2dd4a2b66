"""A dry run of a job on a hand-made store holding exact duplicates says what the real run then does: the write
merges the copies (``dedupe`` writes, "N exact duplicate entries would be merged", ``duplicatesMerged``)."""

from __future__ import annotations

import json

import pytest
from learning_helpers import llm_block, write_settings
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.learning import PlannedOp
from pi_memory.runtime import open_memory


def _text(entries: list[str]) -> bytes:
    return ("\n§\n".join(entries) + "\n").encode("utf-8")


CASES = [  # (the hand-made file's entries, the job's operations, copies merged)
    (["A-dup", "B-two", "A-dup"], [PlannedOp(target="memory", action="add", content="Z-new")], 1),
    (["A-dup", "B-dup", "A-dup", "B-dup", "A-dup"], [PlannedOp(target="memory", action="remove", old_text="B-dup")],
     3),
    (["A-one", "B-two", "B-two"], [PlannedOp(target="memory", action="replace", old_text="A-one", content="A-1")], 1),
    # a batch that changes nothing writes nothing, so nothing is merged
    (["A-dup", "B-two", "A-dup"], [PlannedOp(target="memory", action="add", content="B-two")], 0),
]


def _merged(n: int) -> str:
    return "1 exact duplicate entry" if n == 1 else f"{n} exact duplicate entries"


@pytest.mark.parametrize(("entries", "ops", "merged"), CASES)
def test_the_dry_run_predicts_the_merge_the_real_run_makes(agent, project, entries, ops, merged):
    write_settings(agent, {})
    memory = open_memory(project)
    path = memory.store.path("memory")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_text(entries))
    learner = memory.learner()
    dry = learner.run("review", "test", lambda ctx: list(ops), dry_run=True, needs_model=False)
    made = sum(w.action != "dedupe" for w in dry.writes)
    said = f", {_merged(merged)} would be merged" if merged else ""
    assert (dry.outcome, dry.message) == ("dry_run", f"dry run: {made} write(s) not made{said}")
    assert dry.to_dict()["duplicatesMerged"] == merged
    assert path.read_bytes() == _text(entries)  # nothing written
    real = learner.run("review", "test", lambda ctx: list(ops), needs_model=False)
    assert real.to_dict()["duplicatesMerged"] == merged
    assert [w.to_dict() for w in dry.writes] == [w.to_dict() for w in real.writes]
    assert [w.place for w in dry.writes] == [w.place for w in real.writes]  # where each copy stood, alike
    assert path.read_bytes() != _text(entries) or not made


def test_a_person_reads_the_prediction_in_the_cli_and_a_program_in_the_json(agent, llm, brain, tmp_path):
    write_settings(agent, llm_block(llm))
    d = tmp_path / "u"
    d.mkdir()
    path = d / "MEMORY.md"
    path.write_bytes(_text(["A-dup", "B-two", "A-dup", "C-three", "A-dup"]))
    reply = {"operations": [{"target": "memory", "action": "remove", "oldText": "B-two"}]}
    brain.replies.append(reply)
    run = CliRunner().invoke(app, ["consolidate", "memory", "--dry-run", "--dir", str(d)])
    assert run.exit_code == 0
    assert run.stdout.splitlines() == [
        "consolidate: dry_run (job 1): MEMORY.md: 23 -> 15 chars; dry run: 1 write(s) not made, 2 exact duplicate "
        "entries would be merged",
        "  would merge an exact duplicate in MEMORY.md (the first copy is kept): A-dup",
        "  would merge an exact duplicate in MEMORY.md (the first copy is kept): A-dup",
        "  would remove from MEMORY.md: B-two",
        "model calls: 1, tokens: " + run.stdout.split("model calls: 1, tokens: ")[1].strip()]
    brain.replies.append(reply)
    data = json.loads(CliRunner().invoke(app, ["consolidate", "memory", "--dry-run", "--json", "--dir",
                                               str(d)]).stdout)
    assert (data["outcome"], data["duplicatesMerged"]) == ("dry_run", 2)
    assert [w["action"] for w in data["writes"]] == ["dedupe", "dedupe", "remove"]
    assert path.read_bytes() == _text(["A-dup", "B-two", "A-dup", "C-three", "A-dup"])
    brain.replies.append(reply)
    real = json.loads(CliRunner().invoke(app, ["consolidate", "memory", "--json", "--dir", str(d)]).stdout)
    assert (real["outcome"], real["duplicatesMerged"], real["writes"]) == ("ok", 2, data["writes"])
    assert path.read_bytes() == _text(["A-dup", "C-three"])
