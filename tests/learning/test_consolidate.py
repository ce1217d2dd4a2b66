"""Overflow strategies: reject, fifo-evict, auto-consolidate (grace, lock, shrink check, retry once) and the
manual consolidation."""

from __future__ import annotations

from filelock import FileLock
from learning_helpers import llm_block, write_settings

from pi_memory.learning.consolidate import consolidate, lock_path
from pi_memory.runtime import open_memory

FILL = ["Uses uv for Python envs " + "a" * 30, "Uses uv, never pip " + "b" * 30, "Deploys on Fridays " + "c" * 30]
NEW = "Tests run with pytest -q " + "d" * 30
MERGE = {"operations": [
    {"target": "memory", "action": "replace", "oldText": "never pip", "content": "Uses uv (never pip)"},
    {"target": "memory", "action": "remove", "oldText": "Python envs"}]}


def _full(agent, project, llm=None, **settings):
    block = llm_block(llm, memoryCharLimit=180, **settings) if llm else {"memoryCharLimit": 180, **settings}
    write_settings(agent, block)
    memory = open_memory(project)
    for entry in FILL:
        assert memory.store.add("memory", entry).success
    return memory


def test_reject_keeps_the_refusal(agent, project):
    memory = _full(agent, project, memoryOverflowStrategy="reject")
    result = memory.store.add("memory", NEW)
    assert result.code == "over_limit" and "deferred" not in result.error


def test_fifo_evict_drops_the_oldest_and_reports_them(agent, project):
    memory = _full(agent, project, memoryOverflowStrategy="fifo-evict")
    result = memory.store.add("memory", NEW)
    assert result.success and result.evicted_entries == [FILL[0]]
    assert memory.store.entries("memory") == [FILL[1], FILL[2], NEW]
    assert "Rotated 1 older entry" in result.message
    assert memory.store.add("memory", "x" * 181).code == "over_limit"  # alone too long: refused as before


def test_auto_consolidate_defers_during_the_grace_period_then_consolidates_and_retries(agent, llm, brain, project):
    memory = _full(agent, project, llm, overflowGraceMs=60_000)
    handler = memory.store.on_overflow
    clock = [1000.0]
    handler.clock = lambda: clock[0]
    first = memory.store.add("memory", NEW)
    assert first.code == "over_limit" and "deferred for 60,000 ms more" in first.error
    assert "pi-memory consolidate memory" in first.error and llm.chat_requests == []
    clock[0] += 61
    brain.replies.append(MERGE)
    done = memory.store.add("memory", NEW)
    assert done.success, done.error
    assert memory.store.entries("memory") == ["Uses uv (never pip)", FILL[2], NEW]
    assert "was consolidated first" in done.message and "pi-memory learning undo" in done.message


def test_auto_consolidation_that_does_not_shrink_writes_nothing(agent, llm, brain, project):
    memory = _full(agent, project, llm, overflowGraceMs=0)
    brain.replies.append({"operations": [{"target": "memory", "action": "add", "content": "More text"}]})
    result = memory.store.add("memory", NEW)
    assert result.code == "over_limit" and "attempted but failed" in result.error
    assert "would not shrink" in result.error and memory.store.entries("memory") == FILL


def test_another_session_consolidating(agent, llm, brain, project):
    memory = _full(agent, project, llm, overflowGraceMs=0)
    lock = FileLock(lock_path(memory.settings.data_dir, memory.store, "memory"))
    lock.acquire()
    try:
        learner = memory.learner()
        report = consolidate(learner, "memory", lock_wait=0.05)
        assert report.outcome == "locked" and report.message == "another session is consolidating MEMORY.md"
    finally:
        lock.release()


def test_manual_consolidation_dry_run_and_usage_signals(agent, llm, brain, project):
    memory = _full(agent, project, llm)
    learner = memory.learner()
    brain.replies.append(MERGE)
    report = consolidate(learner, "memory", dry_run=True, usage={FILL[2]: (7, "2026-11-30T10:00:00Z")})
    assert report.outcome == "dry_run" and [w.action for w in report.writes] == ["replace", "remove"]
    assert learner.store.read("memory").entries == FILL
    assert "hits 7, last used 2026-11-30T10:00:00Z" in brain.prompts[0][1]


def test_auto_consolidate_without_a_model_says_it_is_off(agent, project):
    memory = _full(agent, project, overflowGraceMs=0)
    result = memory.store.add("memory", NEW)
    assert result.code == "over_limit"
    assert result.error.endswith(" Automatic consolidation is off (no model for learning jobs: no model configured — "
                                 "set \"pi-memory\": {\"llm\": {\"provider\": \"openai-compatible\", \"baseUrl\": ..., "
                                 "\"model\": ...}} (or {\"llm\": {\"fromPi\": \"provider/model\"}}, or {\"llm\": "
                                 "{\"fromPi\": \"default\"}} for pi's default model) in " + str(agent / "settings.json") + "); "
                                 "merge or remove entries yourself.")


def test_manual_consolidation_of_a_small_store_says_how_many_entries_in_words(agent, llm, brain, project):
    write_settings(agent, llm_block(llm))
    memory = open_memory(project)
    learner = memory.learner()
    messages = []
    for entry in ["", "Uses uv for Python envs"]:
        if entry:
            assert memory.store.add("memory", entry).success
        report = consolidate(learner, "memory")
        assert report.outcome == "nothing"  # not a failure: a job with nothing to do (the CLI exits 0)
        messages.append(report.message)
    assert messages == ["MEMORY.md has no entries; there is nothing to merge",
                        "MEMORY.md has 1 entry; there is nothing to merge"]
    assert brain.prompts == []
