"""A job's writes are all or nothing across its stores: every store's batch is checked before any is written.

The store applies one batch per target all or nothing (:meth:`pi_memory.curated.store.MemoryStore.apply`); a job
that writes to two stores (a review adding to USER.md and MEMORY.md) makes two batches. Before the first is
written, :func:`first_refusal` runs on each the checks the store would refuse it for: the target exists here, the
folder can be written, the file is in the store's format (no drift), each ``oldText`` names one entry, the
content rules and the threat and secret scans (:meth:`MemoryStore.check`), and the size after the batch. One
refused batch refuses the job and nothing is written, so "nothing was written" is true, the log row holds no
writes and there is nothing to undo.

Only what no check can see beforehand (another process changing a store file in the moment between the check and
the write, a team server refusing) can still refuse a later batch after an earlier one was written: the job then
ends ``partial``, and its message names the stores written and the ones not (:func:`partial_message`); its writes
are logged, so ``pi-memory learning undo JOB`` takes them back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace

from pi_memory.curated.entries import joined_length
from pi_memory.curated.messages import for_person
from pi_memory.curated.store import MemoryStore, Operation
from pi_memory.learning.wording import MODEL_ANSWER, store_refusal, unmatched


@dataclass
class Plan:
    """One target's batch as checked: the store operations, the writes they make, the steps naming no entry."""

    target: str
    batch: list[Operation]
    planned: list = field(default_factory=list)
    misses: list = field(default_factory=list)


def first_refusal(store: MemoryStore, target: str, plan: Plan, shown, check: Callable[[str, list[Operation]], object],
                  budget_left: Callable[[], int], author: str = MODEL_ANSWER) -> str | None:
    """Why the store would refuse ``plan`` (in a person's words, ending "nothing was written"), or ``None``.
    ``shown``: the store's :meth:`MemoryStore.read` of ``target`` the plan was made on; ``check(target, batch)``:
    the store's own content and scan checks (:meth:`MemoryStore.check`); ``budget_left()``: tokens left of the
    day's learning budget (a full store's advice); ``author``: what the writes came from (:func:`store_refusal`)."""
    name = store.name(target)
    if (refused := store.write_refused(target)) is not None:
        return f"{name}: {for_person(refused.error)}"
    if not shown.success:
        return f"{name}: {for_person(shown.error)}"
    if store.drift(target) is not None and shown.notice:
        return f"{shown.notice.rstrip()} So nothing was written."
    if plan.misses:
        return unmatched(name, plan.misses)
    if (result := check(target, plan.batch)) is not None:
        return store_refusal(store, target, result, plan.planned, plan.misses, budget_left(), author)
    before = store.entries(target)
    size, limit = joined_length(entries_after(before, plan.planned)), store.limit(target)
    grows = size > limit and size > joined_length(before)
    if grows and (store.enforce_limits or any(len(op.content or "") > limit for op in plan.batch)):
        over = SimpleNamespace(code="over_limit", findings=None, error="")
        return store_refusal(store, target, over, plan.planned, plan.misses, budget_left())
    return None


def entries_after(entries: list[str], writes: list) -> list[str]:
    """``entries`` with the planned ``writes`` (:func:`pi_memory.learning.runner.plan_writes`) made."""
    after = list(entries)
    for w in writes:
        if w.action == "add":
            after.append(w.after)
        elif w.before in after:
            if w.action == "remove":
                after.remove(w.before)
            else:
                after[after.index(w.before)] = w.after
    return after


def partial_message(store: MemoryStore, writes: list, refused_target: str, refusal: str, left: list[str],
                    job_id: int | None) -> str:
    """A job whose batch on ``refused_target`` was refused after others were written: what was written (``writes``),
    what not (the refused store and the ``left`` targets after it), why, and the undo."""
    written = list(dict.fromkeys(w.store for w in writes))
    made = sum(w.action != "dedupe" for w in writes)
    not_written = [store.name(t) for t in [refused_target, *left]]
    name = store.name(refused_target)
    why = refusal.replace("so nothing was written", f"so nothing was written to {name}").rstrip(". ")
    undo = f"; `pi-memory learning undo {job_id}` takes back what was written" if job_id else ""
    return (f"partly written: {made} write(s) to {_and(written)} were made, but nothing to {_and(not_written)}: "
            f"{why}{undo}")


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
