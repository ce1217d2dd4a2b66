"""What an add over a store's limit does (``memoryOverflowStrategy``); the consolidation job itself is
:mod:`pi_memory.learning.consolidate`, imported only when an overflow runs it.

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
from typing import TYPE_CHECKING

from pi_memory.curated.entries import joined_length
from pi_memory.curated.results import MemoryResult
from pi_memory.curated.store import MemoryStore, Operation

if TYPE_CHECKING:
    from pi_memory.learning.runner import Learner

OVERFLOW_WAIT_S = 8.0


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
        self.reports: list = []  # the last 20 JobReports
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
        from pi_memory.learning.runner import JobReport

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
        from pi_memory.learning.consolidate import consolidate, usage_signals
        from pi_memory.learning.runner import JobReport

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
