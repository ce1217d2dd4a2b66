"""What an add over a store's limit does (``memoryOverflowStrategy``); the consolidation job itself is
:mod:`pi_memory.learning.consolidate`, imported only when an overflow runs it.

* ``reject``: the store's refusal, unchanged.
* ``fifo-evict``: the oldest entries (file order) are removed until the new one fits, in one batch with the add;
  the result lists them in ``evictedEntries`` (and the learning log keeps their text). An entry longer than the
  whole store is refused as before.
* ``auto-consolidate`` (default): the first overflow of a target starts a grace period (``overflowGraceMs``,
  180 s) during which the refusal says consolidation is deferred and how to consolidate by hand. The next
  overflow after it runs a consolidation job under a per-target lock (another process holding it: "another
  session is consolidating"); the job must strictly shrink the store, and makes the add in the same batch when
  it then fits, so undoing that job (``pi-memory learning undo N``, which the result names) gives back the store
  as it was before the add. When the add does not fit with the job's writes, the consolidation is kept and the
  add is retried once. A new grace period starts after every automatic attempt, so a store that cannot be shrunk
  never loops. An entry longer than the whole store is refused as it is (no consolidation can make it fit), and
  so is one while the day's learning budget has less left than a consolidation of the store needs: the refusal
  then says so, when the budget resets and how to raise it, and to remove or replace an entry for now.

The automatic job runs on a thread of its own with its own index connection and is waited for at most
:data:`OVERFLOW_WAIT_S` seconds (under the pi extension's 10 s request timeout); when it takes longer the
refusal says it is still running (the job still makes the add when it frees enough room). The outcome texts
below are read by the model that made the add (tool results); each has its words for a person too
(``MemoryResult.say_to_person``: the CLI's ``pi-memory add``, which never waits out a grace period).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from pi_memory.curated.entries import joined_length
from pi_memory.curated.messages import success
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
                 model_status: Callable[[], str | None] = lambda: None,
                 budget_left: Callable[[], int | None] = lambda: None):
        self.strategy = strategy
        self.grace_s = grace_ms / 1000
        self.learner_factory = learner_factory
        self.clock = clock
        self.wait_s = wait_s
        self.first_overflow: dict[str, float] = {}
        self.running: dict[str, threading.Thread] = {}
        self.reports: list = []  # the last 20 JobReports
        self.model_status = model_status  # None when a model is named, else why there is none
        self.budget_left = budget_left  # tokens left of today's learning budget (None: not known)

    def __call__(self, store: MemoryStore, target: str, content: str, refusal: MemoryResult) -> MemoryResult:
        if self.strategy == "fifo-evict":
            return fifo_evict(store, target, content, refusal)
        if self.strategy != "auto-consolidate":
            return refusal
        if len(content) > store.limit(target):
            return refusal  # longer than the whole store: no consolidation makes it fit
        name = store.name(target)
        off = self.model_status()
        if off is not None:
            return _amend(refusal, f" Automatic consolidation is off ({off}); merge or remove entries yourself.",
                          f" Automatic consolidation is off ({off}).")
        spent = self._budget_spent(store, target)
        if spent is not None:
            return _amend(refusal, *spent)
        now = self.clock()
        first = self.first_overflow.setdefault(target, now)
        if now - first < self.grace_s:
            left = int((self.grace_s - (now - first)) * 1000)
            return _amend(refusal, f" Automatic consolidation of {name} is deferred for {left:,} ms more (overflow "
                          f"grace period); to make room now, merge or remove entries yourself, or have the user run "
                          f"`pi-memory consolidate {target}` (pi: /memory-consolidate {target}).",
                          f" Or have the model merge entries: run `pi-memory consolidate {target}`, then add it "
                          "again.")
        thread = self.running.get(target)
        if thread is None or not thread.is_alive():
            self.first_overflow[target] = now  # the next automatic attempt waits a new grace period
            box: list[JobReport] = []
            thread = threading.Thread(target=self._job, args=(target, content, box), name=f"consolidate-{target}",
                                      daemon=True)
            thread.box = box  # type: ignore[attr-defined]
            self.running[target] = thread
            thread.start()
        thread.join(self.wait_s)
        if thread.is_alive():
            return _amend(refusal, f" Consolidation of {name} is running in the background and makes this add "
                          "when it frees enough room; read the store in a moment to see whether it did (retrying "
                          "this add then is safe).",
                          f" Consolidation of {name} is still running; it adds this entry if it frees enough room. "
                          f"`pi-memory read {target}` shows whether it did; if not, add it again.")
        from pi_memory.learning.runner import JobReport

        report = thread.box[0] if thread.box else JobReport("consolidate", "error", "no report")  # type: ignore
        self.reports.append(report)
        del self.reports[:-20]
        if report.outcome == "locked":
            return _amend(refusal, f" Another session is consolidating {name}; retry this add in a moment.",
                          f" Another session is consolidating {name}; add the entry again in a moment.")
        if report.outcome != "ok":
            return _amend(refusal, f" Automatic consolidation was attempted but failed: {report.message}.")
        undo = f"learning job {report.job_id}, undo with `pi-memory learning undo {report.job_id}`"
        if any(w.action == "add" and w.after == content for w in report.writes):  # the job made the add
            store.read(target)  # this store learns what the job wrote
            retry = MemoryResult(success=True, code="ok", target=target, done=True, entry_count=len(
                store.entries(target)), usage=store.usage(target), message=success(
                    [Operation(action="add", content=content)], name, [], True))
            undo += ", which takes back the consolidation and this entry"
        else:
            retry = store.apply(target, [Operation(action="add", content=content)], single=True)
        if retry.code == "over_limit":
            return _amend(retry, f" Automatic consolidation ran ({report.message}) but did not free enough space.")
        if retry.success:
            retry.message = f"{retry.message} {name} was consolidated first ({report.message}; {undo})."
        return retry

    def _budget_spent(self, store: MemoryStore, target: str) -> tuple[str, str] | None:
        """When what is left of today's learning budget is too little to consolidate ``target``, what the model
        and a person are told instead of "consolidate" (which would be refused): ``(model's, person's)``."""
        from pi_memory.learning.log import next_reset
        from pi_memory.learning.wording import consolidation_tokens

        left = self.budget_left()
        need = consolidation_tokens(joined_length(store.entries(target)))
        if left is None or left >= need:
            return None
        name, reset = store.name(target), next_reset()
        used = "is used up" if left == 0 else f"has {left:,} tokens left"
        return (f" Automatic consolidation cannot run: today's learning budget {used} and consolidating {name} "
                f"needs about {need:,} (it resets at {reset}); make room yourself as said above.",
                f" `pi-memory consolidate {target}` would be refused too: today's learning budget {used}, and "
                f"consolidating {name} needs about {need:,} tokens. The budget resets at {reset} (UTC midnight); "
                "raise learning.dailyTokenBudget in settings to consolidate before then. For now, remove an entry "
                f"(`pi-memory remove {target} TEXT`) or replace one with a shorter text (`pi-memory replace "
                f"{target} OLD NEW`).")

    def _job(self, target: str, content: str, box: list) -> None:
        from pi_memory.learning.consolidate import consolidate, usage_signals
        from pi_memory.learning.runner import JobReport

        learner = None
        try:
            learner = self.learner_factory()
            if learner is None:
                box.append(JobReport("consolidate", "off", "no model is configured for learning jobs"))
                return
            box.append(consolidate(learner, target, trigger="overflow", dry_run=False,
                                   usage=usage_signals(learner, target), then_add=content))
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


def _amend(result: MemoryResult, extra: str, for_person: str | None = None) -> MemoryResult:
    """``result`` with ``extra`` said to the model after its error; a person reads ``for_person`` instead."""
    result.error = (result.error or "") + extra
    if for_person is not None:
        result.say_to_person(extra, for_person)
    return result
