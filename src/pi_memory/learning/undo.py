"""Undo one job's writes: each write reversed, newest first, one all-or-nothing batch per store.

Refused, with the reason, when the job is unknown, was a dry run, was already undone, or when an entry it wrote
has changed since (the text it left is no longer in the store): undoing then would remove or overwrite
something the job did not write. The undo is itself a job in the log (kind ``undo``), so it can be undone.
"""

from __future__ import annotations

from pi_memory.learning import log as jlog
from pi_memory.learning.runner import JobContext, JobReport, JobStop, Learner, PlannedOp


def undo_job(learner: Learner, job_id: int, dry_run: bool = False) -> JobReport:
    job = jlog.get_job(learner.conn, job_id)
    if job is None:
        return JobReport("undo", "refused", f"there is no learning job {job_id}; `pi-memory learning log` lists them")
    if job["dryRun"]:
        return JobReport("undo", "refused", f"job {job_id} was a dry run and wrote nothing; there is nothing to undo")
    if job["undoneAt"]:
        return JobReport("undo", "refused", f"job {job_id} was already undone at {job['undoneAt']}")
    writes = jlog.job_writes(learner.conn, job_id)
    if not writes:
        return JobReport("undo", "refused", f"job {job_id} ({job['kind']}, {job['outcome']}) made no writes")

    def work(ctx: JobContext) -> list[PlannedOp]:
        ops: list[PlannedOp] = []
        for target in dict.fromkeys(w.target for w in writes):
            current = learner.store.read(target).entries or []
            for w in reversed([w for w in writes if w.target == target]):
                if w.after is not None and w.after not in current:
                    raise JobStop("refused", f"job {job_id} cannot be undone: its entry in {w.store} has changed "
                                  f"since (\"{_short(w.after)}\" is no longer there). Nothing was undone; edit the "
                                  "store by hand (`pi-memory replace` / `remove`), the old text is in the log.")
                if w.action == "add":
                    ops.append(PlannedOp(target=target, action="remove", old_text=w.after))
                elif w.action == "replace":
                    ops.append(PlannedOp(target=target, action="replace", old_text=w.after, content=w.before))
                elif w.before not in current:
                    ops.append(PlannedOp(target=target, action="add", content=w.before))
        return ops

    report = learner.run("undo", f"job {job_id}", work, dry_run=dry_run, needs_model=False)
    if report.outcome == "ok":
        jlog.mark_undone(learner.conn, job_id, report.job_id)
        report.message = f"undid job {job_id} ({job['kind']}): {len(report.writes)} write(s) reversed"
    return report


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
