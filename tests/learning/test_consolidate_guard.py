"""A consolidation never empties a store, nor removes more than half of its entries without merging them: a reply
removing every entry was applied ("MEMORY.md: 117 -> 0 chars"). Such an answer is refused and nothing is written
(consolidate.MAX_DROPPED_SHARE); merging, and pruning up to half, go through as before."""

from __future__ import annotations

import pytest
from learning_helpers import cli, llm_block, write_settings

from pi_memory.learning.consolidate import consolidate
from pi_memory.runtime import open_memory

ENTRIES = ["Uses uv for Python envs", "Deploys on Fridays", "CI runs on Buildkite", "Release notes live in docs/"]


def _op(action: str, old: str, content: str | None = None) -> dict:
    return {"target": "memory", "action": action, "oldText": old, **({"content": content} if content else {})}


def _memory(agent, llm, project):
    write_settings(agent, llm_block(llm))
    memory = open_memory(project)
    for entry in ENTRIES:
        assert memory.store.add("memory", entry).success
    return memory


ALL_GONE = ("the model's answer would remove all 4 entries of MEMORY.md, so nothing was written: a consolidation "
            "merges and prunes, it never empties a store (`pi-memory remove memory TEXT` deletes an entry by hand)")


def _dropped(n: int) -> str:
    return (f"the model's answer would remove {n} of the 4 entries of MEMORY.md without merging them into another (no "
            "replace, no add), so nothing was written: a consolidation drops at most half of a store's entries unless "
            "it merges them (`pi-memory remove memory TEXT` deletes an entry by hand)")


@pytest.mark.parametrize(("ops", "said"), [
    pytest.param([_op("remove", e[:10]) for e in ENTRIES], ALL_GONE, id="every-entry"),
    pytest.param([_op("replace", ENTRIES[0][:10], "Deploys on Fridays"), _op("remove", ENTRIES[1][:10]),
                  _op("remove", ENTRIES[2][:10]), _op("remove", ENTRIES[3][:10])], ALL_GONE,
                 id="merged-onto-one-then-removed"),
    pytest.param([_op("remove", e[:10]) for e in ENTRIES[:3]], _dropped(3), id="three-of-four"),
])
def test_a_deletion_is_refused_and_nothing_is_written(agent, llm, brain, project, ops, said):
    memory = _memory(agent, llm, project)
    brain.replies.append({"operations": ops})
    report = consolidate(memory.learner(), "memory")
    assert (report.outcome, report.writes) == ("refused", []), report.message
    assert report.message == said
    assert open_memory(project).store.read("memory").entries == ENTRIES


def test_the_cli_says_it_and_exits_1(agent, llm, brain, project, monkeypatch):
    _memory(agent, llm, project)
    monkeypatch.chdir(project)
    brain.replies.append({"operations": [_op("remove", e[:10]) for e in ENTRIES]})
    code, data = cli("consolidate", "memory", "--json")
    assert (code, data["outcome"], data["message"], data["writes"]) == (1, "refused", ALL_GONE, [])


@pytest.mark.parametrize(("ops", "left"), [
    pytest.param([_op("remove", ENTRIES[1][:10]), _op("remove", ENTRIES[3][:10])],
                 [ENTRIES[0], ENTRIES[2]], id="half-pruned"),
    pytest.param([_op("replace", ENTRIES[0][:10], "uv envs; Buildkite CI; Friday deploys"),
                  _op("remove", ENTRIES[1][:10]), _op("remove", ENTRIES[2][:10])],
                 ["uv envs; Buildkite CI; Friday deploys", ENTRIES[3]], id="three-merged-into-one"),
])
def test_merging_and_pruning_up_to_half_go_through(agent, llm, brain, project, ops, left):
    memory = _memory(agent, llm, project)
    brain.replies.append({"operations": ops})
    report = consolidate(memory.learner(), "memory")
    assert report.outcome == "ok", report.message
    assert open_memory(project).store.read("memory").entries == left
