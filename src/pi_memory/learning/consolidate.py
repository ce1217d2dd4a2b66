"""Consolidation: one model job that shrinks a full store (merge related entries, drop superseded ones), run by
hand (``pi-memory consolidate``, pi's ``/memory-consolidate``) or by the overflow strategy ``auto-consolidate``
(:mod:`pi_memory.learning.overflow`). The job must strictly shrink the store; a store of fewer than two entries
ends "nothing" without a model call. Run by an overflow, the job also makes the add that overflowed, in the same
batch, when it then fits: its undo then gives back the store as it was before that add.

A consolidation keeps the store's facts. The model's answer is refused, with nothing written, when it would
leave the store empty, or would remove more than half of its entries (:data:`MAX_DROPPED_SHARE`) without writing
any merged text (no replace, no add): that is a deletion, which a person makes by hand (``pi-memory remove``).
"""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout

from pi_memory.curated.entries import joined_length
from pi_memory.curated.sanitise import sanitise_entry
from pi_memory.curated.store import MemoryStore
from pi_memory.learning.precheck import entries_after
from pi_memory.learning.prompts import LearnReply, stores_block, to_planned
from pi_memory.learning.runner import JobContext, JobReport, JobStop, Learner, PlannedOp, plan_writes
from pi_memory.learning.wording import unmatched

MAX_DROPPED_SHARE = 0.5  # of a store's entries a consolidation may remove without writing any merged text
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
                usage: dict[str, tuple[int, str | None]] | None = None, lock_wait: float = LOCK_WAIT_S,
                then_add: str | None = None) -> JobReport:
    """Consolidate ``target`` now (one job, under the per-target lock). ``usage``: entry -> (hits, last used).
    ``then_add``: an entry to add after the consolidation, in the same batch, when it then fits."""
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
        return learner.run("consolidate", trigger, lambda ctx: _work(ctx, learner, target, usage or {}, then_add),
                           dry_run=dry_run)
    finally:
        lock.release()


def _work(ctx: JobContext, learner: Learner, target: str, usage: dict, then_add: str | None) -> list[PlannedOp]:
    store = learner.store
    block, ids = stores_block(store, (target,))
    before = store.entries(target)
    name = store.name(target)  # an entry is shown as the store block shows it: redacted, hostile ones blocked
    signals = "\n".join(f"- hits {usage[e][0]}, last used {usage[e][1] or 'never'}: {sanitise_entry(name, e)[:80]}"
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
    after, writes = _after(store, target, ops)
    if (refusal := _deletion(name, target, before, after, writes)) is not None:
        raise JobStop("refused", refusal)
    if joined_length(after) >= joined_length(before):
        raise JobStop("no_shrink", f"the model's operations would not shrink {store.name(target)} "
                      f"({joined_length(before):,} -> {joined_length(after):,} chars); nothing was written")
    ctx.note = f"{store.name(target)}: {joined_length(before):,} -> {joined_length(after):,} chars"
    if then_add and then_add not in after and joined_length([*after, then_add]) <= store.limit(target):
        ops.append(PlannedOp(target=target, action="add", content=then_add))
        ctx.note += ", then the new entry added"
    return ops


def _after(store: MemoryStore, target: str, ops: list[PlannedOp]) -> tuple[list[str], list]:
    """The entries after ``ops`` and the writes that make them."""
    misses: list = []
    writes = plan_writes(store, target, ops, misses)
    if misses:  # the store would refuse the batch: say which step, not "would not shrink"
        raise JobStop("invalid_output", unmatched(store.name(target), misses))
    return entries_after(store.entries(target), writes), writes


def _deletion(name: str, target: str, before: list[str], after: list[str], writes: list) -> str | None:
    """Why the model's answer is a deletion rather than a consolidation (``None``: it is not): it empties the
    store, or removes more than :data:`MAX_DROPPED_SHARE` of its entries without writing merged text."""
    by_hand = f"`pi-memory remove {target} TEXT` deletes an entry by hand"
    if not after:
        return (f"the model's answer would remove all {len(before)} entries of {name}, so nothing was written: a "
                f"consolidation merges and prunes, it never empties a store ({by_hand})")
    dropped = sum(e not in after for e in before)
    merged = any(w.action in ("add", "replace") for w in writes)
    if not merged and dropped > len(before) * MAX_DROPPED_SHARE:
        return (f"the model's answer would remove {dropped} of the {len(before)} entries of {name} without merging "
                f"them into another (no replace, no add), so nothing was written: a consolidation drops at most half "
                f"of a store's entries unless it merges them ({by_hand})")
    return None


def usage_signals(learner: Learner, target: str) -> dict[str, tuple[int, str | None]]:
    """entry -> (hit count, last used) of the entries of ``target`` (this project's, for ``project``), from the
    index's memories mirror; ``{}`` when it has none. The mirror keeps an entry with its credentials redacted
    (:func:`pi_memory.index.mirror.mirror_content`), so an entry is looked up in that form, not as written."""
    from pi_memory.index.mirror import mirror_content

    store = learner.store
    project = store.project_id if target == "project" else None
    try:
        rows = learner.conn.execute(
            "SELECT content, hit_count, last_used FROM memories WHERE target = ? AND source = 'markdown' AND "
            "ifnull(project, '') = ifnull(?, '')", (target, project)).fetchall()
    except Exception:  # noqa: BLE001 - signals are tie-breakers only
        return {}
    found = {r[0]: (int(r[1] or 0), r[2]) for r in rows}
    entries = store.entries(target) if target in store.targets else []
    return {e: found[key] for e in entries if (key := mirror_content(e)) in found}
