"""Background review and flush (a model reads the session and saves what it taught), and correction capture
(a rule-based save without a model, then an optional model refinement).

Review and flush are the same job with a different trigger: ``review`` fires every ``nudgeInterval`` turns or
``nudgeToolCalls`` tool calls, ``flush`` before a compaction and at shutdown. Each reads the session since the
last review or flush (``reviewRecentMessages`` newest messages when above 0: the older ones are left unread, and
the job's message says so) and returns operations over ``memory`` / ``user`` / ``project`` / ``failure``.

A long backlog is read oldest first, as many messages as fit the job budget (:func:`review_session`; its report's
``read`` says how many, ``messages`` which), so what does not fit is the newer part, which the next job reads: the
mark of what was reviewed moves only over what a job read (:mod:`.triggers`), and nothing is skipped in silence.
:func:`next_mark` is that rule; the job's message names the messages it read and what happens to the rest.
"""

from __future__ import annotations

from pi_memory.curated.sanitise import sanitise_entry
from pi_memory.learning.corrections import Detection, correction_entry
from pi_memory.learning.prompts import (
    ROUTING,
    LearnReply,
    Turn,
    ask_ops,
    stores_block,
    to_planned,
    transcript,
    transcript_cap,
)
from pi_memory.learning.runner import JobContext, JobReport, Learner, PlannedOp

REVIEW_REPLY_TOKENS = 1_200
REFINE_REPLY_TOKENS = 400
REFINE_MESSAGES = 6

REVIEW_SYSTEM = (
    "You maintain the long-term memory of a coding agent. Read the conversation below and decide what, if "
    "anything, is worth remembering in later sessions. " + ROUTING + " Return operations over the stores."
)
FLUSH_SYSTEM = (
    "The conversation below is about to be compacted or the session is ending; anything not saved now is "
    "forgotten. " + REVIEW_SYSTEM
)
REFINE_SYSTEM = (
    "The user just corrected a coding agent. A rule saved the correction as the failure entry quoted below. "
    "Using the last messages, replace it with one better entry: the lesson in the user's terms (what to do "
    "instead, and when), as a failure-target entry of category \"correction\". If the saved entry is already "
    "right, return no operations. If the lesson is about the user rather than the task, you may also add it to "
    "\"user\"."
)


REVIEWED_OUTCOMES = ("ok", "nothing", "dry_run", "partial")  # the review ran: what it read counts as reviewed
NEXT_REVIEW = "are read by the next review or flush"


def review_session(learner: Learner, turns: list[Turn], *, kind: str = "review", trigger: str,
                   session_id: str | None, dry_run: bool | None = None, offset: int = 0,
                   then: str = NEXT_REVIEW) -> JobReport:
    """One review (``kind="review"``) or flush (``kind="flush"``) over ``turns`` (the session since the last), read
    oldest first as far as the job budget allows. ``offset``: how many messages of the session come before
    ``turns`` (for the message's numbers); ``then``: what happens to the messages left after the part read, as
    the message says it ("the 80 after them <then>"; ``{next}`` in it: the number of the first of them). The report's ``read``: how many of ``turns`` it read or
    left by ``reviewRecentMessages``, so the mark moves over those only."""
    recent = learner.settings.review_recent_messages
    skipped = max(0, len(turns) - recent) if recent else 0
    turns = turns[skipped:]
    system = FLUSH_SYSTEM if kind == "flush" else REVIEW_SYSTEM
    read = 0

    def work(ctx: JobContext) -> list[PlannedOp]:
        nonlocal read
        stores, ids = stores_block(learner.store)
        cap = transcript_cap(learner.settings.jobs.job_token_budget, REVIEW_REPLY_TOKENS, len(system) + len(stores))
        text, shown = transcript(turns, cap, oldest_first=True)
        read = len(shown)
        ctx.read([session_id] if session_id else [], ids + [t.entry_id for t in shown if t.entry_id])
        if not shown:
            ctx.note = "the session has no messages to review"
            return []
        ctx.after = reading_note(offset + skipped, read, offset + skipped + len(turns), skipped, recent, then)
        prompt = f"# Current memory\n\n{stores}\n\n# Conversation\n\n{text}"
        return ask_ops(ctx, learner.store, prompt, system, REVIEW_REPLY_TOKENS, "nothing to save")

    report = learner.run(kind, trigger, work, dry_run=dry_run)
    report.read = skipped + read if read else 0
    if read and (skipped or read < len(turns)):
        first = offset + skipped + 1
        report.messages = {"from": first, "to": first + read - 1, "of": offset + skipped + len(turns),
                           "skipped": skipped}
    return report


def reading_note(before: int, read: int, total: int, skipped: int, recent: int, then: str) -> str | None:
    """What a review read of a session, for a person, when it did not read all of it: ``before`` messages came
    before the part it read (``skipped`` of them left by ``reviewRecentMessages``), ``total`` in all."""
    said = []
    if skipped:
        said.append(f"the {skipped} older message(s) before the newest {recent} were not read "
                    f"(reviewRecentMessages = {recent}; 0 reads them all)")
    left = total - before - read
    if left:
        said.append(f"read messages {before + 1}-{before + read} of {total} (oldest first, as many as fit "
                    f"learning.jobTokenBudget); the {left} after them {then.replace('{next}', str(before + read + 1))}")
    return "; ".join(said) or None


def next_mark(outcome: str, start: int, end: int, reviewed: int, refused_from: int) -> tuple[int, int]:
    """``(reviewed, refused_from)`` after a review of messages ``start:end`` ended ``outcome``: moved to ``end``
    when it ran (:data:`REVIEWED_OUTCOMES`), or when a store refused the same messages' writes a second time; a
    first refusal remembers where it started and leaves the mark."""
    if outcome == "refused" and refused_from != start:
        return reviewed, start
    if outcome in REVIEWED_OUTCOMES or outcome == "refused":
        return end, -1
    return reviewed, refused_from


def save_correction(learner: Learner, detection: Detection, *, session_id: str | None,
                    dry_run: bool | None = None) -> JobReport:
    """The rule-based save: a ``[correction]`` failure entry holding the directive. No model involved."""
    project = learner.store.project_name if "project" in learner.store.targets else None
    entry, _ = correction_entry(detection.directive or "", project)  # what `pi-memory learning detect` previews

    def work(ctx: JobContext) -> list[PlannedOp]:
        ctx.read([session_id] if session_id else [])
        ctx.author = "the correction the rules caught"  # no model wrote it: a refusal must not say one did
        return [PlannedOp(target="failure", action="add", content=entry)]

    return learner.run("correction", f"rule {detection.rule}", work, dry_run=dry_run, needs_model=False)


def refine_correction(learner: Learner, saved: str, turns: list[Turn], *, session_id: str | None,
                      dry_run: bool | None = None) -> JobReport:
    """With a model: replace the rule-based entry ``saved`` with a better one, from the last 6 messages."""

    def work(ctx: JobContext) -> list[PlannedOp]:
        text, shown = transcript(turns[-REFINE_MESSAGES:], 8_000)
        ctx.read([session_id] if session_id else [], [t.entry_id for t in shown if t.entry_id])
        entry = sanitise_entry(learner.store.name("failure"), saved)
        prompt = f"# Saved entry (failure store)\n\n{entry}\n\n# Last messages\n\n{text}"
        reply = ctx.ask(prompt, LearnReply, system=REFINE_SYSTEM, max_tokens=REFINE_REPLY_TOKENS)
        ops = to_planned(reply.operations, learner.store)
        for op in ops:  # a new failure entry takes the saved one's place
            if op.target == "failure" and op.action == "add":
                op.action, op.old_text = "replace", saved
        ctx.note = reply.note or (None if ops else "the saved correction was kept as it is")
        return ops

    return learner.run("refine", "correction saved", work, dry_run=dry_run)
