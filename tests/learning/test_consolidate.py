"""Overflow strategies: reject, fifo-evict, auto-consolidate (grace, lock, shrink check, retry once) and the
manual consolidation."""

from __future__ import annotations

import json

import pytest
from filelock import FileLock
from learning_helpers import llm_block, write_settings
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.learning import undo_job
from pi_memory.learning.consolidate import consolidate, lock_path
from pi_memory.runtime import open_memory

RUN = CliRunner()

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


def test_the_advertised_undo_of_an_overflow_consolidation_gives_back_the_store_before_the_add(agent, llm, brain,
                                                                                               project):
    """The undo the add's result names was refused at once ("would use 2,360 of 2,200 chars"): the add the
    consolidation made room for stayed. The job now makes the add in its batch, and its undo takes back both."""
    memory = _full(agent, project, llm, overflowGraceMs=0)
    before = memory.store.path("memory").read_bytes()
    brain.replies.append(MERGE)
    done = memory.store.add("memory", NEW)
    assert done.success and done.message == (
        "Saved to MEMORY.md. This change is complete; do not repeat it. MEMORY.md was consolidated first (MEMORY.md: "
        "158 -> 71 chars, then the new entry added; 3 write(s); learning job 1, undo with `pi-memory learning undo "
        "1`, which takes back the consolidation and this entry).")
    assert memory.store.entries("memory") == ["Uses uv (never pip)", FILL[2], NEW]  # this store saw the job's write
    assert (done.entry_count, done.usage) == (3, "71% — 129/180 chars")
    learner = memory.learner()
    undo = undo_job(learner, 1)
    assert undo.outcome == "ok", undo.message
    assert memory.store.path("memory").read_bytes() == before


def test_an_overflow_consolidation_that_frees_too_little_keeps_its_work_and_its_undo_works(agent, llm, brain,
                                                                                           project):
    memory = _full(agent, project, llm, overflowGraceMs=0)
    before = memory.store.path("memory").read_bytes()
    brain.replies.append({"operations": [
        {"target": "memory", "action": "replace", "oldText": "Deploys on Fridays", "content": "Deploys on Fridays"
                                                                                                 + "c" * 20}]})
    result = memory.store.add("memory", NEW)
    assert result.code == "over_limit" and result.error.endswith(
        " Automatic consolidation ran (MEMORY.md: 158 -> 147 chars; 1 write(s)) but did not free enough space.")
    assert undo_job(memory.learner(), 1).outcome == "ok"
    assert memory.store.path("memory").read_bytes() == before


def test_an_entry_longer_than_the_store_is_refused_without_a_consolidation(agent, llm, brain, project):
    memory = _full(agent, project, llm, overflowGraceMs=0)
    result = memory.store.add("memory", "z" * 200)
    assert result.error == ("This entry is 200 chars, longer than MEMORY.md's whole limit of 180, so it can never "
                            "fit. Nothing was saved. Save a short summary of it instead (one fact per entry).")
    assert llm.chat_requests == []


def test_the_cli_add_says_what_a_person_can_do_and_the_model_keeps_its_words(agent, llm, brain, project,
                                                                             monkeypatch):
    """A one-shot CLI never waits out a grace period: "deferred for 180,000 ms more" and "have the user run" were
    words for a model."""
    _full(agent, project, llm)
    monkeypatch.chdir(project)
    full = ("MEMORY.md is full: it uses 158 of 180 chars and this entry needs 58 more (separator included). Nothing "
            "was saved. Make room first: merge related entries with ")
    result = RUN.invoke(app, ["add", "memory", NEW])
    assert result.exit_code == 1 and result.stderr.splitlines()[0] == (
        f"refused (over_limit): {full}`pi-memory replace` or delete stale ones with `pi-memory remove` (see the entries "
        "listed below), then add it again. Or have the model merge entries: run `pi-memory consolidate memory`, then "
        "add it again.")
    result = RUN.invoke(app, ["add", "memory", NEW, "--json"])
    assert json.loads(result.stdout)["error"] == (
        f"{full}memory_replace or delete stale ones with memory_remove (see currentEntries), then retry this add in "
        "the same turn. Automatic consolidation of MEMORY.md is deferred for 180,000 ms more (overflow grace "
        "period); to make room now, merge or remove entries yourself, or have the user run `pi-memory consolidate "
        "memory` (pi: /memory-consolidate memory).")
    result = RUN.invoke(app, ["add", "memory", "z" * 200])
    assert result.stderr.splitlines()[0] == (
        "refused (over_limit): This entry is 200 chars, longer than MEMORY.md's whole limit of 180, so it can never "
        "fit. Nothing was saved. Save a short summary of it instead (one fact per entry).")


def test_a_person_reads_the_other_overflow_outcomes_in_their_own_words(agent, project):
    memory = _full(agent, project, overflowGraceMs=0)
    result = memory.store.add("memory", NEW).for_person()
    assert result.error.endswith("then add it again. Automatic consolidation is off (no model for learning jobs: no "
                                 "model configured — set \"pi-memory\": {\"llm\": {\"provider\": \"openai-compatible\", "
                                 "\"baseUrl\": ..., \"model\": ...}} (or {\"llm\": {\"fromPi\": \"provider/model\"}}, "
                                 "or {\"llm\": {\"fromPi\": \"default\"}} for pi's default model) in "
                                 + str(agent / "settings.json") + ").")


@pytest.mark.parametrize(("ops", "message"), [
    ([{"target": "memory", "action": "remove", "oldText": "Uses uv"}],
     "the model's answer could not be applied: it names the entry to remove by 'Uses uv', which is in 2 entries of "
     "MEMORY.md (it must be in exactly one), so nothing was written"),
    ([{"target": "memory", "action": "replace", "oldText": "Uses poetry", "content": "x"}],
     "the model's answer could not be applied: it names the entry to replace by 'Uses poetry', which is in no entry "
     "of MEMORY.md (it must be in exactly one), so nothing was written"),
    ([{"target": "memory", "action": "remove"}],
     "the model's answer could not be applied: it does not say which entry of MEMORY.md to remove, so nothing was "
     "written"),
])
def test_an_operation_naming_no_single_entry_is_said_as_such_not_as_no_shrink(agent, llm, brain, project, ops,
                                                                              message):
    """An ambiguous oldText was reported as `no_shrink (158 -> 158 chars)`."""
    memory = _full(agent, project, llm)
    brain.replies.append({"operations": ops})
    report = consolidate(memory.learner(), "memory")
    assert (report.outcome, report.message) == ("invalid_output", message)
    assert memory.store.path("memory").read_text().count("§") == 2


def test_a_consolidation_past_the_wait_still_makes_the_add_as_the_refusal_says(agent, llm, brain, project):
    import time

    memory = _full(agent, project, llm, overflowGraceMs=0)
    handler = memory.store.on_overflow
    handler.wait_s = 0.05
    real = brain.__call__

    def slow(messages, tools):
        time.sleep(0.5)
        return real(messages, tools)

    llm.responder = slow
    brain.replies.append(MERGE)
    result = memory.store.add("memory", NEW)
    assert result.code == "over_limit" and result.error.endswith(
        " Consolidation of MEMORY.md is running in the background and makes this add when it frees enough room; "
        "read the store in a moment to see whether it did (retrying this add then is safe).")
    assert result.for_person().error.endswith(
        " Consolidation of MEMORY.md is still running; it adds this entry if it frees enough room. `pi-memory read "
        "memory` shows whether it did; if not, add it again.")
    handler.running["memory"].join(10)
    assert memory.store.read("memory").entries == ["Uses uv (never pip)", FILL[2], NEW]
    assert memory.store.add("memory", NEW).success  # the retry the model was told is safe


PNPM = ["The project uses pnpm as its package manager", "Node version is 20",
        "The project package manager is pnpm, never npm"]
PNPM_MERGE = [
    {"target": "memory", "action": "replace", "oldText": "uses pnpm",
     "content": "Package manager: pnpm (never npm); Node version is 20"},
    {"target": "memory", "action": "remove", "oldText": "Node version is 20"},
    {"target": "memory", "action": "remove", "oldText": "never npm"}]


@pytest.mark.parametrize("order", [(0, 1, 2), (1, 2, 0), (2, 0, 1)])
def test_a_merge_as_the_prompt_asks_is_applied_whatever_the_order_of_its_operations(agent, llm, brain, project, order):
    """A tester's case: the merged text holds the pieces that name the entries to remove, and matched against the
    store as the earlier operations left it each such piece was in two entries, so every good merge was refused."""
    write_settings(agent, llm_block(llm))
    memory = open_memory(project)
    for entry in PNPM:
        assert memory.store.add("memory", entry).success
    brain.replies.append({"operations": [PNPM_MERGE[i] for i in order]})
    report = consolidate(memory.learner(), "memory")
    assert report.outcome == "ok", report.message
    assert [w.action for w in report.writes] == [PNPM_MERGE[i]["action"] for i in order]
    assert memory.store.path("memory").read_text() == "Package manager: pnpm (never npm); Node version is 20\n"
    undo_job(memory.learner(), report.job_id)
    assert memory.store.read("memory").entries == PNPM


def test_two_operations_on_one_entry_are_said_as_such(agent, llm, brain, project):
    write_settings(agent, llm_block(llm))
    memory = open_memory(project)
    for entry in PNPM:
        assert memory.store.add("memory", entry).success
    brain.replies.append({"operations": [PNPM_MERGE[0], {"target": "memory", "action": "remove",
                                                         "oldText": "uses pnpm as its"}]})
    report = consolidate(memory.learner(), "memory")
    assert (report.outcome, report.message) == (
        "invalid_output", "the model's answer could not be applied: it names the entry to remove by 'uses pnpm as "
        "its', an entry of MEMORY.md that its operation 1 already changed (each entry may be replaced or removed "
        "once), so nothing was written")
    assert memory.store.read("memory").entries == PNPM
