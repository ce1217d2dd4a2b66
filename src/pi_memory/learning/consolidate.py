"""Consolidation: shrink a full store with a model, and what an add over the limit does
(``memoryOverflowStrategy``).

* ``reject``: the store's refusal, unchanged.
* ``fifo-evict``: the oldest entries (file order) are removed until the new one fits, in one batch with the add;
  the result lists them in ``evictedEntries`` (and the learning log keeps their text). An entry longer than the
  whole store is refused as before.
* ``auto-consolidate`` (default): the first overflow of a target starts a grace period (``overflowGraceMs``,
  180 s) during which the refusal says consolidation is deferred and how to consolidate by hand. The next
  overflow after it runs a consolidation job under a per-target lock (another process holding it: "another
  session is consolidating"); the job must strictly shrink the store, then the add is retried once. A new
  grace period starts after every automatic attempt, so a store that cannot be shrunk never loops.

The automatic job runs on a thread of its own with its own index connection and is waited for at most
:data:`OVERFLOW_WAIT_S` seconds (under the pi extension's 10 s request timeout); when it takes longer the
refusal says it is still running and the add can be retried in a moment. The outcome texts below are read by
the model that made the add (tool results).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock, Timeout

from pi_memory.curated.entries import joined_length
from pi_memory.curated.results import MemoryResult
from pi_memory.curated.store import MemoryStore, Operation
from pi_memory.learning.prompts import LearnReply, stores_block, to_planned
from pi_memory.learning.runner import JobContext, JobReport, JobStop, Learner, PlannedOp, plan_writes

OVERFLOW_WAIT_S = 8.0
LOCK_WAIT_S = 2.0  # a caller waits out brief contention for the per-target lock
CONSOLIDATE_REPLY_TOKENS = 1_500
SYSTEM = (
    "A memory store of a coding agent is full. Consolidate it so that it becomes strictly shorter: merge related "
    "entries into one (replace one of them with the merged text, remove the others), remove entries that are "
    "outdated or superseded by another entry, keep every important fact, and keep preferences and corrections "
    "first. Usage signals (hits, last used) are tie-breakers: an entry never used for a long time is a "
    "candidate for merging or removal. Less is more. Only operate on the target named; oldText is a short "
    "unique piece of the entry as shown."
)


def lock_path(data_dir: Path, store: MemoryStore, target: str) -> Path:
    key = f"project-{store.project_id}" if target == "project" else target
    return Path(data_dir) / ".locks" / f"consolidate-{key}.lock"


def consolidate(learner: Learner, target: str, *, trigger: str = "manual", dry_run: bool | None = None,
                usage: dict[str, tuple[int, str | None]] | None = None, lock_wait: float = LOCK_WAIT_S) -> JobReport:
    """Consolidate ``target`` now (one job, under the per-target lock). ``usage``: entry -> (hits, last used)."""
    store = learner.store
    if target not in store.targets:
        return JobReport("consolidate", "refused", f"there is no {target} store here"
                         + (" (not inside a project)" if target == "project" else ""))
    lock = FileLock(lock_path(store.dir, store, target), timeout=lock_wait)
    try:
        lock.acquire()
    except Timeout:
        return JobReport("consolidate", "locked", f"another session is consolidating {store.name(target)}")
    try:
        return learner.run("consolidate", trigger, lambda ctx: _work(ctx, learner, target, usage or {}),
                           dry_run=dry_run)
    finally:
        lock.release()


def _work(ctx: JobContext, learner: Learner, target: str, usage: dict) -> list[PlannedOp]:
    store = learner.store
    block, ids = stores_block(store, (target,))
    before = store.entries(target)
    signals = "\n".join(f"- hits {usage[e][0]}, last used {usage[e][1] or 'never'}: {e[:80]}"
                        for e in before if e in usage)
    ctx.read([], ids)
    if len(before) < 2:
        count = "1 entry" if before else "no entries"
        ctx.note = f"{store.name(target)} has {count}; there is nothing to merge"
        return []  # not a failure: the job ends "nothing", without a model call
    prompt = f"# Store to consolidate (target \"{target}\")\n\n{block}"
    if signals:
        prompt += f"\n\n# Usage signals\n\n{signals}"
    reply = ctx.ask(prompt, LearnReply, system=SYSTEM, max_tokens=CONSOLIDATE_REPLY_TOKENS)
    ops = [op for op in to_planned(reply.operations, store) if op.target == target]
    after = _after(store, target, ops)
    if joined_length(after) >= joined_length(before):
        raise JobStop("no_shrink", f"the model's operations would not shrink {store.name(target)} "
                      f"({joined_length(before):,} -> {joined_length(after):,} chars); nothing was written")
    ctx.note = f"{store.name(target)}: {joined_length(before):,} -> {joined_length(after):,} chars"
    return ops


def _after(store: MemoryStore, target: str, ops: list[PlannedOp]) -> list[str]:
    entries = store.entries(target)
    for w in plan_writes(store, target, ops):
        if w.action == "add":
            entries.append(w.after)
        elif w.action == "remove":
            entries.remove(w.before)
        else:
            entries[entries.index(w.before)] = w.after
    return entries


class OverflowHandler:
    """The store's ``on_overflow`` hook for one process. ``learner_factory()`` builds a :class:`Learner` with its
    own index connection and store (it runs on a thread of its own); ``usage_of(target)`` gives the usage
    signals."""

    def __init__(self, strategy: str, grace_ms: int, learner_factory: Callable[[], Learner | None],
                 clock: Callable[[], float] = time.monotonic, wait_s: float = OVERFLOW_WAIT_S,
                 model_status: Callable[[], str | None] = lambda: None):
        self.strategy = strategy
        self.grace_s = grace_ms / 1000
        self.learner_factory = learner_factory
        self.clock = clock
        self.wait_s = wait_s
        self.first_overflow: dict[str, float] = {}
        self.running: dict[str, threading.Thread] = {}
        self.reports: list[JobReport] = []
        self.model_status = model_status  # None when a model is named, else why there is none

    def __call__(self, store: MemoryStore, target: str, content: str, refusal: MemoryResult) -> MemoryResult:
        if self.strategy == "fifo-evict":
            return fifo_evict(store, target, content, refusal)
        if self.strategy != "auto-consolidate":
            return refusal
        name = store.name(target)
        off = self.model_status()
        if off is not None:
            return _amend(refusal, f" Automatic consolidation is off ({off}); merge or remove entries yourself.")
        now = self.clock()
        first = self.first_overflow.setdefault(target, now)
        if now - first < self.grace_s:
            left = int((self.grace_s - (now - first)) * 1000)
            return _amend(refusal, f" Automatic consolidation of {name} is deferred for {left:,} ms more (overflow "
                          f"grace period); to make room now, merge or remove entries yourself, or have the user run "
                          f"`pi-memory consolidate {target}` (pi: /memory-consolidate {target}).")
        thread = self.running.get(target)
        if thread is None or not thread.is_alive():
            self.first_overflow[target] = now  # the next automatic attempt waits a new grace period
            box: list[JobReport] = []
            thread = threading.Thread(target=self._job, args=(target, box), name=f"consolidate-{target}",
                                      daemon=True)
            thread.box = box  # type: ignore[attr-defined]
            self.running[target] = thread
            thread.start()
        thread.join(self.wait_s)
        if thread.is_alive():
            return _amend(refusal, f" Consolidation of {name} is running in the background; retry this add in a "
                          "moment.")
        report = thread.box[0] if thread.box else JobReport("consolidate", "error", "no report")  # type: ignore
        self.reports.append(report)
        del self.reports[:-20]
        if report.outcome == "locked":
            return _amend(refusal, f" Another session is consolidating {name}; retry this add in a moment.")
        if report.outcome != "ok":
            return _amend(refusal, f" Automatic consolidation was attempted but failed: {report.message}.")
        retry = store.apply(target, [Operation(action="add", content=content)], single=True)
        if retry.code == "over_limit":
            return _amend(retry, f" Automatic consolidation ran ({report.message}) but did not free enough space.")
        if retry.success:
            retry.message = f"{retry.message} {name} was consolidated first ({report.message}; learning job " \
                            f"{report.job_id}, undo with `pi-memory learning undo {report.job_id}`)."
        return retry

    def _job(self, target: str, box: list) -> None:
        learner = None
        try:
            learner = self.learner_factory()
            if learner is None:
                box.append(JobReport("consolidate", "off", "no model is configured for learning jobs"))
                return
            box.append(consolidate(learner, target, trigger="overflow", dry_run=False,
                                   usage=usage_signals(learner, target)))
        except Exception as exc:  # reported to the caller, never raised on a thread
            box.append(JobReport("consolidate", "error", f"{type(exc).__name__}: {exc}"))
        finally:
            if learner is not None:
                learner.conn.close()


def usage_signals(learner: Learner, target: str) -> dict[str, tuple[int, str | None]]:
    """entry -> (hit count, last used) from the index's memories mirror; ``{}`` when it has none."""
    try:
        rows = learner.conn.execute(
            "SELECT content, hit_count, last_used FROM memories WHERE target = ? AND source = 'markdown'", (target,)
        ).fetchall()
    except Exception:  # noqa: BLE001 - signals are tie-breakers only
        return {}
    return {r[0]: (int(r[1] or 0), r[2]) for r in rows}


def fifo_evict(store: MemoryStore, target: str, content: str, refusal: MemoryResult) -> MemoryResult:
    limit = store.limit(target)
    if len(content) > limit:
        return refusal
    entries = store.entries(target)
    kept, evicted = list(entries), []
    while kept and joined_length([*kept, content]) > limit:
        evicted.append(kept.pop(0))
    ops = [Operation(action="remove", old_text=e) for e in evicted] + [Operation(action="add", content=content)]
    result = store.apply(target, ops)
    if result.success:
        n = len(evicted)
        result.message = (f"Entry added to {store.name(target)}. Rotated {n} older entr{'y' if n == 1 else 'ies'} out "
                          "to stay within the limit (see evictedEntries).")
        result.evicted_entries = evicted
    return result


def _amend(result: MemoryResult, extra: str) -> MemoryResult:
    result.error = (result.error or "") + extra
    return result
