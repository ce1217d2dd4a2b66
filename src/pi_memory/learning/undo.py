"""Undo one job's writes: each write reversed, newest first, one all-or-nothing batch per store, every entry put
back where it stood.

Where: a replaced entry gets its old text in its place; an entry the job removed (or merged into another) comes
back after the entry that stood before it, else before the entry that stood after it, else at its old index
(the log keeps all three: ``learning_writes.place``). The store places it (an add with a ``place``, decided under
its lock), so a team server's project store gets it where it stood as a local file does; a team server too old to
place an entry adds it at the end, and the undo's message says so. When nothing else changed the store since the
job, the file is as it was before the job, byte for byte; when other entries changed meanwhile, each entry still
lands next to a neighbour it had.

Byte for byte also for a file the store did not write: a hand-made MEMORY.md or USER.md with CRLF line endings, a
byte-order mark, blank lines or spaces between entries is normalised by the job's write. The job logs that file's
layout (:class:`pi_memory.curated.layout.Layout`: no entry text) and the SHA-256 of what its write left; the undo
asks the store to write the old bytes back (:class:`~pi_memory.curated.layout.Restore`), which it does under its lock
when the file still holds exactly what the job left and the entries come back as they were. When the file changed
since (or an entry comes back otherwise, say redacted), the undo is made as before, in the store's format, and its
message says the file's own layout was not given back. A job logged before places were kept (pi-memory before
``learning_003_write_place``) gets its removed entries back at the end of the store.

Exact duplicates: a hand-made file holding an entry twice has the copies merged by the job's write (the store
says so); each copy merged is logged (action ``dedupe``, with where it stood) and the undo gives it back, last, in
the order the copies stood: at its old index when the entry before it is there again (so the file is as it was,
copies included), else next to an old neighbour. A copy whose entry is gone since is not given back (a lone copy
would bring back what someone removed), and the undo's message says so.

Old texts the content check refuses (a hand-edited entry holding control characters, or nothing but U+FFFD): the
undo gives them back through :class:`~pi_memory.curated.give_back.GiveBack`, which lifts that one check for the
``before`` texts of this job's own logged writes, on this undo's write only (see that module for why nothing else
can ask for it). The threat and secret scans still apply. A credential is not given back: the log keeps every
write redacted, and the undo redacts the old texts again (a pattern learned since the job), so such an entry comes
back redacted (for a hand-made file the message says its own bytes were not given back); an old text that trips the
threat scanner is refused as it is for every writer, and the undo with it (nothing changed).

Refused, with the reason and what to do, before anything is logged (so retrying adds no job): the job is unknown,
was a dry run, was already undone, wrote to a store that is not here (another project's); an entry it wrote has
changed since (the text it left is gone: undoing would drop or overwrite what someone else wrote); the store would
go over its limit; an old text it would give back trips the threat scanner (:func:`_scanned`). The undo is itself a
job in the log (kind ``undo``), so it can be undone: the job it took back is then in effect again
(``log.mark_in_effect``: not shown undone, and it can be undone again).
"""

from __future__ import annotations

import re
from dataclasses import replace

from pi_memory.curated.entries import dedupe, joined_length, slot
from pi_memory.curated.give_back import GiveBack
from pi_memory.learning import log as jlog
from pi_memory.learning.runner import JobContext, JobReport, JobStop, Learner, PlacedOp, PlannedOp
from pi_memory.learning.wording import duplicates
from pi_memory.safety import check_write, redact


class _Changed(Exception):
    """A text the job left is no longer in the store (or is no longer told apart from another entry)."""

    def __init__(self, text: str, shared: bool = False):
        super().__init__(text)
        self.text, self.shared = text, shared


def undo_job(learner: Learner, job_id: int, dry_run: bool = False) -> JobReport:
    job = jlog.get_job(learner.conn, job_id)
    if job is None:
        return _refused(f"there is no learning job {job_id}; `pi-memory learning log` lists them")
    if job["dryRun"]:
        return _refused(f"job {job_id} was a dry run and wrote nothing; there is nothing to undo")
    if job["undoneAt"]:
        return _refused(f"job {job_id} was already undone at {job['undoneAt']}")
    places = jlog.write_places(learner.conn, job_id)
    writes = [_old_text_redacted(replace(w, place=p))
              for w, p in zip(jlog.job_writes(learner.conn, job_id), places, strict=True)]
    if not writes:
        return _refused(f"job {job_id} ({job['kind']}, {job['outcome']}) made no writes")
    store = learner.store
    groups: dict[str, list[jlog.Write]] = {}
    for w in writes:
        groups.setdefault(w.target, []).append(w)
    for target, group in groups.items():
        if target not in store.targets or store.name(target) != group[0].store:
            return _refused(f"job {job_id} wrote to {group[0].store}, which is not a store of this folder; run "
                            f"`pi-memory learning undo {job_id}` inside the project it was made in")
        current = store.read(target).entries or []
        try:
            after, back = reverse(current, group)
        except _Changed as changed:
            return _refused(_changed(job_id, group[0].store, target, changed))
        if (scanned := _scanned(job_id, group[0].store, back)) is not None:
            return _refused(scanned)
        size, limit = joined_length(dedupe(after)), store.limit(target)  # a file's copies are read as one
        if store.enforce_limits and size > limit and size > joined_length(current):
            from pi_memory.curated.store import LIMIT_SETTINGS

            return _refused(f"job {job_id} cannot be undone now: {store.name(target)} would hold {size:,} of its "
                            f"{limit:,} characters afterwards. Nothing was changed. Make room first (`pi-memory "
                            f"remove {target} TEXT`, or `pi-memory consolidate {target}`), or raise "
                            f"{LIMIT_SETTINGS[target]} in settings, then run `pi-memory learning undo {job_id}` again")

    given: dict[str, int] = {}  # target -> copies of exact duplicates given back (arranged under the lock)

    def work(ctx: JobContext) -> list[PlannedOp]:
        ops: list[PlannedOp] = []
        for target, group in groups.items():
            try:
                ops += reverse(store.read(target).entries or [], group)[1]
            except _Changed as changed:  # changed in the moment since the check above
                raise JobStop("refused", _changed(job_id, group[0].store, target, changed)) from None
            if copies := [w for w in group if w.action == "dedupe"]:
                ctx.arrange[target] = lambda entries, t=target, c=copies: _arrange(entries, c, given, t)
            if (kept := jlog.file_layout(learner.conn, job_id, target)) is not None:
                ctx.restore[target] = kept
            ctx.give_back[target] = GiveBack(frozenset(w.before for w in group
                                                       if w.action in ("remove", "replace") and w.before))
        return ops

    report = learner.run("undo", f"job {job_id}", work, dry_run=dry_run, needs_model=False)
    if report.outcome == "ok":
        jlog.mark_undone(learner.conn, job_id, report.job_id)
        undid = re.fullmatch(r"job (\d+)", job.get("trigger") or "") if job["kind"] == "undo" else None
        if undid is not None:  # an undo undone: the job it took back is in effect again
            jlog.mark_in_effect(learner.conn, int(undid.group(1)), job_id, report.job_id)
        report.message = _said(job_id, job["kind"], report, sum(w.action == "dedupe" for w in writes),
                               sum(given.values()), {t: store.name(t) for t in groups})
    return report


def _scanned(job_id: int, store: str, ops: list[PlannedOp]) -> str | None:
    """Why an old text the undo would write back is refused by the threat or secret scan, for a person, or
    ``None``. Said before anything is logged (the store's own refusal speaks of a model's answer)."""
    for op in ops:
        if op.content and (finding := check_write(op.content)) is not None:
            secret = finding.category == "secret"
            what, shown = ("a credential", "redacted") if secret else ("a threat pattern", "as its blocked marker")
            return (f"job {job_id} cannot be undone: an entry it took out of {store} matches {what} ({finding.id}), "
                    "which pi-memory does not write for anyone, so it cannot be given back. Nothing was changed; "
                    f"`pi-memory learning log` shows the entry {shown}")
    return None


def _old_text_redacted(w: jlog.Write) -> jlog.Write:
    """``w`` with the old text a reversal writes back redacted with the patterns known now (the log redacted it
    with those known when the job ran): an undo never writes a credential back."""
    if w.action in ("remove", "replace") and w.before:
        return replace(w, before=redact(w.before))
    return w


def _said(job_id: int, kind: str, report: JobReport, copies: int, given: int, names: dict[str, str]) -> str:
    """What an undo did, for a person: the writes reversed, the copies of exact duplicates given back (or not),
    any it merged itself, a file whose own layout was not given back, and a store's notice (a team server that
    could not place an entry). ``names``: target -> store name."""
    merged = sum(w.action == "dedupe" for w in report.writes)  # copies hand-added since, merged by this write
    text = f"undid job {job_id} ({kind}): {len(report.writes) - merged} write(s) reversed"
    if given:
        text += f", {duplicates(given)} given back"
    if copies > given:
        gone = "the entry it repeated is" if copies - given == 1 else "the entries they repeated are"
        text += f", {duplicates(copies - given)} not given back ({gone} no longer there)"
    if merged:
        text += f", {duplicates(merged)} merged"
    notices = [r["notice"] for r in report.store_results if r.get("notice")]
    layouts = [_layout_kept(names[t], p.restored) for t, p in report.published.items()
               if p.restored in ("changed", "entries")]
    return "; ".join([text, *layouts, *notices])


def _layout_kept(name: str, why: str) -> str:
    """An undo that could not give a hand-made file its own bytes back (:meth:`Restore.attempt`'s ``why``)."""
    reason = ("it changed after the job" if why == "changed" else
              "its entries do not come back exactly as they were (an entry holding a credential comes back redacted)")
    return (f"{name} keeps the store's format: its own line endings, byte-order mark and blank lines were not "
            f"given back because {reason}")


def reverse(entries: list[str], writes: list[jlog.Write]) -> tuple[list[str], list[PlannedOp]]:
    """``entries`` with ``writes`` (one store's, in the order made) reversed, newest first, the copies of exact
    duplicates the job merged given back last, and the store operations that do it (the store's own rules: a
    replace onto an entry that is there merges, an add of an entry that is there is skipped, an add with a place
    goes there; copies are no operation: :func:`_arrange`). Raises :class:`_Changed` when a text a write left is
    gone."""
    work, ops = list(entries), []
    for w in reversed(writes):
        if w.action in ("add", "replace"):
            _need(work, w.after)
            i = work.index(w.after)
            if w.action == "add":
                del work[i]
                ops.append(PlannedOp(target=w.target, action="remove", old_text=w.after))
                continue
            if w.before in work and work.index(w.before) != i:
                del work[i]
            else:
                work[i] = w.before
            ops.append(PlannedOp(target=w.target, action="replace", old_text=w.after, content=w.before))
        elif w.action == "remove" and w.before not in work:
            work.insert(slot(work, w.place), w.before)
            ops.append(PlacedOp(target=w.target, action="add", content=w.before, place=w.place))
    return _with_copies(work, [w for w in writes if w.action == "dedupe"])[0], ops


def _need(work: list[str], text: str) -> None:
    if text not in work:
        raise _Changed(text)
    if sum(text in e for e in work) > 1:  # the store finds an entry by a piece of it: this one must be unique
        raise _Changed(text, shared=True)


def _same(entry: str, logged: str | None) -> bool:
    """Whether ``entry`` is the one the log keeps as ``logged`` (redacted when it holds a credential)."""
    return logged is not None and (entry == logged or redact(entry) == logged)


def _with_copies(entries: list[str], copies: list[jlog.Write]) -> tuple[list[str], int]:
    """``entries`` with the copies of exact duplicates a job's write merged given back in the order they stood,
    and how many: at the old index when the entry before it there is the same again, else next to an old
    neighbour. A copy is of the entry in the store (a credential it holds is not taken from the log); one whose
    entry is gone is not given back."""
    layout, given = list(entries), 0
    for w in sorted(copies, key=lambda w: int((w.place or {}).get("index") or 0)):
        twin = w.before if w.before in layout else next((e for e in layout if _same(e, w.before)), None)
        if twin is None:
            continue
        place = w.place or {}
        i = place.get("index")
        exact = isinstance(i, int) and 0 < i <= len(layout) and _same(layout[i - 1], place.get("after"))
        layout.insert(i if exact else slot(layout, place), twin)
        given += 1
    return layout, given


def _arrange(entries: list[str], copies: list[jlog.Write], given: dict[str, int], target: str) -> list[str]:
    """The layout the store writes (under its lock, after the batch): ``entries`` with the copies given back."""
    layout, given[target] = _with_copies(entries, copies)
    return layout


def _changed(job_id: int, store: str, target: str, changed: _Changed) -> str:
    what = (f"\"{_short(changed.text)}\" is now also part of another entry, so it cannot be told apart"
            if changed.shared else f"\"{_short(changed.text)}\", which it wrote, is no longer there")
    return (f"job {job_id} cannot be undone: {store} has changed since ({what}). Nothing was changed; edit the "
            f"store by hand instead (`pi-memory replace {target} ...` / `pi-memory remove {target} ...`): "
            "`pi-memory learning log` shows the old text")


def _refused(message: str) -> JobReport:
    return JobReport("undo", "refused", message)


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
