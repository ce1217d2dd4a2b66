"""One runner for every model-driven background job: budgets, call cap, timeout, dry run, the learning log.

A job is a function ``work(ctx) -> list[PlannedOp]``: it reads what it needs, asks the model through
:meth:`JobContext.ask` (JSON validated by a pydantic schema) and returns the store operations it wants. The
runner then applies them through the curated store API (:meth:`MemoryStore.apply`: one all-or-nothing batch per
target, the threat and secret scanners, the lock, the drift guard) or, in a dry run, only reports them. A job is
all or nothing across its stores too: every batch is checked before the first is written (:mod:`.precheck`), so a
refused job wrote nothing; only a refusal no check could foresee leaves a ``partial`` job, said as such. Every
job leaves a row in the learning log with its writes as before/after pairs (:mod:`.log`), and for a store file it
wrote that was not in the store's format, that file's layout (so its undo gives back the exact bytes).

A dry run reports what the real run would: its writes, and the copies of exact duplicates a hand-made store holds,
which the real write merges (``dedupe`` writes, "N exact duplicate entries would be merged", ``duplicatesMerged``).

Guards, in the order they apply:

* no model named -> a model-driven job does not start (``outcome = "off"``, nothing logged);
* the job's estimate (prompt characters / 4 + the reply cap) must fit ``learning.jobTokenBudget`` and what is
  left of ``learning.dailyTokenBudget`` today (every process on the data root); otherwise ``budget``. A call
  then counts the provider's reported usage, but never less than the runner's own count of what it sent and
  received (prompt characters / 4 in, reply characters / 4 out): a reply without usage, with ``null``,
  negative or fractional counts, or with too small ones counts that much, never 0 and never less. Nor more
  than the call can have cost: input at most one token per byte sent (:func:`pi_memory.llm.base.believable_usage`),
  output at most the call's ``max_tokens`` (a reply longer than that, from a server that ignored it, too), and
  the job's calls together at most ``learning.jobTokenBudget``. A figure not believed is said in the job's
  message and log (``token count: ...``), so one bad reply never uses up the day;
* a runaway reply (more than :data:`MAX_JOB_OPERATIONS` operations, or more than :data:`CHARS_PER_REPLY_TOKEN`
  characters per token of the call's ``max_tokens``) ends the job ``invalid_output`` before any of it is applied
  or sent back, with nothing written;
* at most ``learning.maxCallsPerJob`` (3) model calls per job: a reply that does not validate is sent back with
  the problem, and after the last call the job ends ``invalid_output`` with nothing written;
* ``learning.jobTimeoutSeconds`` (120) for the whole job, checked before each call;
* the job's model makes one request per call (``max_retries = 0``): quota, auth and connection errors end the job
  (``error``) and are never retried; the next trigger tries again.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from pi_memory.curated.edits import Batch
from pi_memory.curated.entries import slot
from pi_memory.curated.give_back import GiveBack
from pi_memory.curated.layout import Published, Restore
from pi_memory.curated.store import MemoryStore, Operation
from pi_memory.learning import log as jlog
from pi_memory.learning.precheck import Plan, first_refusal, partial_message
from pi_memory.learning.settings import LearningSettings
from pi_memory.learning.wording import (
    MODEL_ANSWER,
    NOT_CALLED,
    duplicates,
    runaway_reply,
    store_refusal,
    unusable_reply,
)
from pi_memory.llm import ChatModel, LLMError, LLMTimeoutError, MalformedReplyError, Usage

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
WRITABLE_TARGETS = ("memory", "user", "project", "failure")  # never STANDING.md, never a path
# A reply's bounds: a dream's 2,000-token reply holds at most ~110 operations (the shortest is ~18 tokens), and
# no tokenizer averages 16 characters a token; past either, the model ran away (a loop, a server ignoring
# max_tokens: 1.19 MB with 20,000 operations took 36.7 s to apply, then filled the store).
MAX_JOB_OPERATIONS = 200
CHARS_PER_REPLY_TOKEN = 16


class PlannedOp(BaseModel):
    """One operation a job wants: over the targets ``memory``, ``user``, ``project``, ``failure``."""

    target: Literal["memory", "user", "project", "failure"]
    action: Literal["add", "replace", "remove"]
    content: str | None = Field(None, description="add: the new entry; replace: the entry that replaces it")
    old_text: str | None = Field(None, alias="oldText", description="replace/remove: a unique piece of the entry")

    model_config = {"populate_by_name": True}


class PlacedOp(PlannedOp):
    """An add that goes to a place (:class:`pi_memory.curated.operations.Place`): a learning undo puts an entry
    back where it stood. Not part of any schema a model is shown."""

    place: dict | None = None


class JobStop(Exception):
    """Ends a job early with an outcome (budget, invalid_output, timeout, error)."""

    def __init__(self, outcome: str, message: str):
        super().__init__(message)
        self.outcome = outcome
        self.message = message


@dataclass
class JobReport:
    """What a job did. ``message`` is for a person (CLI, pi notification); ``to_dict`` is the JSON form."""

    kind: str
    outcome: str
    message: str
    job_id: int | None = None
    writes: list[jlog.Write] = field(default_factory=list)
    dry_run: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cost_usd: float | None = None
    duration_ms: float = 0.0
    store_results: list[dict] = field(default_factory=list)
    published: dict[str, Published] = field(default_factory=dict)  # target -> what its file store's write did
    read: int = 0  # a review or flush: messages of the turns it was given that it read or left by setting
    messages: dict | None = None  # a review or flush of part of a backlog: {"from", "to", "of", "skipped"}

    @property
    def duplicates_merged(self) -> int:
        """Copies of exact duplicates the job's writes merged (a dry run: would merge)."""
        return sum(w.action == "dedupe" for w in self.writes)

    @property
    def ok(self) -> bool:
        return self.outcome in ("ok", "nothing", "dry_run")

    def to_dict(self) -> dict:
        return {"success": self.ok, "jobId": self.job_id, "kind": self.kind, "outcome": self.outcome,
                "message": self.message, "dryRun": self.dry_run, "writes": [w.to_dict() for w in self.writes],
                "duplicatesMerged": self.duplicates_merged,
                "inputTokens": self.input_tokens, "outputTokens": self.output_tokens, "calls": self.calls,
                "costUsd": self.cost_usd, "durationMs": round(self.duration_ms, 1),
                **({"messages": self.messages} if self.messages is not None else {})}


def estimate_tokens(*texts: str) -> int:
    """A provider-neutral upper estimate of prompt tokens: 1 token per 4 characters, rounded up."""
    return math.ceil(sum(len(t) for t in texts) / 4)


class JobContext:
    """Handed to a job's ``work``: the model calls (budgeted, capped) and the provenance it records."""

    def __init__(self, learner: Learner, job_id: int, model: ChatModel | None, deadline: float, kind: str = ""):
        self.learner = learner
        self.kind = kind
        self.job_id = job_id
        self.model = model
        self.deadline = deadline
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd: float | None = None
        self.session_ids: list[str] = []
        self.entry_ids: list[str] = []
        self.note: str | None = None  # a job's own summary (e.g. "nothing to save")
        self.if_refused: str | None = None  # said after the message of a job refused or partly written
        self.after: str | None = None  # said after the message of a job that read what it was given (what it read)
        self.arrange: dict[str, Callable] = {}  # target -> the layout its file gets after the batch (undo's copies)
        self.restore: dict[str, Restore] = {}  # target -> the bytes its file gets back when it may (an undo's)
        self.give_back: dict[str, GiveBack] = {}  # target -> the texts an undo writes back unrefused for controls
        self.published: dict[str, Published] = {}  # target -> what its file store's write replaced and wrote
        self.doubts: list[str] = []  # token figures not believed (a server's, a reply past max_tokens), in words
        self.author = MODEL_ANSWER  # what the job's writes came from, as a refusal names it (no model: the job's)

    @property
    def settings(self) -> LearningSettings:
        return self.learner.settings

    def read(self, session_ids: list[str] = (), entry_ids: list[str] = ()) -> None:
        """Record provenance: the sessions and entries this job read."""
        self.session_ids += [s for s in session_ids if s and s not in self.session_ids]
        self.entry_ids += [e for e in entry_ids if e]

    def ask(self, prompt: str, schema: type[T], *, system: str, max_tokens: int) -> T:
        """One answer validated by ``schema``, within the call cap and both budgets; raises :class:`JobStop`."""
        if self.model is None:
            raise JobStop("off", "no model is configured for learning jobs")
        jobs = self.settings.jobs
        convo: list[dict] = [{"role": "user", "content": prompt}]
        problem, last = "", ""
        while True:
            if self.calls >= jobs.max_calls_per_job:
                raise JobStop("invalid_output", unusable_reply(self.calls, jobs.max_calls_per_job, schema,
                                                               problem, last))
            if time.monotonic() > self.deadline:
                raise JobStop("timeout", f"the job ran past learning.jobTimeoutSeconds = {jobs.job_timeout_seconds:g} "
                              "(raise it to give jobs more time)")
            estimate = estimate_tokens(system, *(m["content"] for m in convo)) + 600 + max_tokens
            spent = self.input_tokens + self.output_tokens
            if spent + estimate > jobs.job_token_budget:
                raise JobStop("budget", job_budget_refusal(jobs.job_token_budget, spent, estimate, self.kind))
            self.learner.reserve(self.job_id, estimate)
            sent = estimate_tokens(system, *(m["content"] for m in convo))
            used: tuple[int, int, float | None] = (0, 0, None)
            try:
                value, completion = self.model.complete_json(convo, schema, system=system, max_tokens=max_tokens,
                                                             retries=0)
                u = completion.usage
                # Never less than what was measurably sent and received: a provider reporting no usage, or too
                # little, must not let a budget be crossed (the llm layer reads an invalid count as 0, and keeps
                # one the request cannot have cost at what it can).
                self.doubts += completion.doubts
                used = (max(u.input_tokens, sent), max(u.output_tokens, self._reply_tokens(len(completion.text),
                                                                                           max_tokens)), u.cost_usd)
                operations = getattr(value, "operations", None)
                count = len(operations) if isinstance(operations, list) else 0
                if count > MAX_JOB_OPERATIONS or len(completion.text) > max_tokens * CHARS_PER_REPLY_TOKEN:
                    raise JobStop("invalid_output", runaway_reply(len(completion.text), count, max_tokens,
                                                                  MAX_JOB_OPERATIONS, CHARS_PER_REPLY_TOKEN))
                return value
            except MalformedReplyError as exc:
                # A rejected reply was billed too: counted as a used one is (its text is kept cut at 2,000
                # characters, its length whole).
                problem, last = exc.last_error, exc.last_text
                u = exc.usage or Usage()
                self.doubts += exc.doubts
                used = (max(u.input_tokens, sent), max(u.output_tokens, self._reply_tokens(exc.reply_chars, max_tokens)),
                        u.cost_usd)
                convo += [{"role": "assistant", "content": exc.last_text or "(empty)"},
                          {"role": "user", "content": f"Your previous reply could not be used: {problem}. Reply "
                                                      "again with only one JSON object that validates."}]
            except LLMError as exc:
                if isinstance(exc, LLMTimeoutError):  # the server had the prompt and may bill it: counted as sent
                    used = (sent, 0, None)
                raise JobStop("error", f"the model call failed: {exc}") from exc
            finally:
                self.calls += 1
                self._settle(estimate, *used)

    def _reply_tokens(self, chars: int, max_tokens: int) -> int:
        """The runner's own count of a reply of ``chars`` characters, at most the ``max_tokens`` the call asked
        for. A reply a little over by the estimate is the estimate's error; one over twice is a server that ignored
        max_tokens, and said."""
        tokens = math.ceil(chars / 4)
        if tokens <= max_tokens:
            return tokens
        if tokens > 2 * max_tokens:
            self.doubts.append(f"the reply was {chars:,} characters (about {tokens:,} tokens), far more than the "
                               f"{max_tokens:,} tokens the request allowed: the server ignored max_tokens; counted "
                               f"{max_tokens:,}")
        return max_tokens

    def _settle(self, reserved: int, inp: int, out: int, cost: float | None) -> None:
        budget = self.settings.jobs.job_token_budget
        room = max(0, budget - self.input_tokens - self.output_tokens)
        if inp + out > room:  # a job never counts past its budget, whatever one call is said to have cost
            self.doubts.append(f"the call was counted {inp + out:,} tokens, more than the {room:,} left of the job's "
                               f"budget (learning.jobTokenBudget = {budget:,}); counted {room:,}")
            out = min(out, room)
            inp = room - out
        self.input_tokens += inp
        self.output_tokens += out
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost
        self.learner.settle(self.job_id, reserved, inp, out, cost)


def doubts_said(doubts: list[str]) -> str:
    """The token figures a job did not believe, each kind once (its first call's words) with how many more calls
    had it, so a job of three such calls says it in one sentence, not three."""
    kinds: dict[str, list[str]] = {}
    for said in doubts:
        kinds.setdefault(re.sub(r"\d[\d,]*", "#", said), []).append(said)
    return "; ".join(said[0] + (f" (likewise on {len(said) - 1} more call(s))" if len(said) > 1 else "")
                     for said in kinds.values())


def job_budget_refusal(budget: int, spent: int, estimate: int, kind: str) -> str:
    """Why the next call of a job of ``kind`` does not fit ``learning.jobTokenBudget``, for a person."""
    if not spent:
        return (f"its first call needs about {estimate:,} tokens, more than the job budget allows "
                f"(learning.jobTokenBudget = {budget:,} tokens, for each job); {job_budget_advice(kind)}")
    return (f"the job budget (learning.jobTokenBudget = {budget:,} tokens) would be exceeded: {spent:,} spent, the "
            f"next call needs about {estimate:,}; it applies to each job ({job_budget_advice(kind)})")


def job_budget_advice(kind: str) -> str:
    """What makes a job of ``kind`` fit ``learning.jobTokenBudget``, for a person."""
    if kind in ("review", "flush"):
        return "raise it, or lower reviewRecentMessages so a review reads fewer messages"
    if kind == "consolidate":
        return ("raise it: a consolidation sends the whole store, so a store this large needs a larger job budget; "
                "or shorten the store by hand with `pi-memory remove`")
    if kind == "dream":
        return "raise it, or lower dreaming.maxSessions so a dream reads fewer sessions"
    return "raise it"


ModelFactory = Callable[[str], tuple[ChatModel | None, str]]


class Learner:
    """The learning capability of one host process: settings, the log connection, the store, the model.

    ``conn``: an index connection (used on one thread: the session's worker, or the CLI). ``store``: a
    :class:`MemoryStore` of its own (its per-turn failure counter is not the agent's). ``models(kind)``:
    ``(model or None, status)`` for a job kind (dreaming may name another model). ``project``: the project id.
    """

    def __init__(self, settings: LearningSettings, conn, store: MemoryStore, models: ModelFactory,
                 project: str | None = None, clock: Callable[[], float] = time.monotonic,
                 on_write: Callable[[str, list[str]], None] | None = None):
        self.settings = settings
        self.conn = jlog.open_log(conn)
        self.store = store
        self.models = models
        self.project = project
        self.clock = clock
        self.last_refusal: str | None = None  # the latest budget refusal, for status
        self.on_write = on_write  # (target, new entry texts) after a batch is written: the agent's store learns them

    # ----------------------------------------------------------- budgets
    def reserve(self, job_id: int, tokens: int) -> None:
        try:
            jlog.reserve(self.conn, job_id, tokens, self.settings.jobs.daily_token_budget)
        except jlog.BudgetExceeded as exc:
            raise JobStop("budget", exc.message) from exc

    def settle(self, job_id: int, reserved: int, inp: int, out: int, cost: float | None) -> None:
        jlog.settle(self.conn, job_id, reserved, inp, out, cost)

    def budget_left(self) -> int:
        """Tokens left of today's budget (what running jobs hold counted as spent)."""
        return max(0, self.settings.jobs.daily_token_budget - jlog.spent_today(self.conn))

    def budget_status(self) -> dict:
        spent = jlog.spent_today(self.conn)
        held, holders = jlog.held_today(self.conn)
        jobs = self.settings.jobs
        return {"jobTokenBudget": jobs.job_token_budget, "dailyTokenBudget": jobs.daily_token_budget,
                "spentToday": spent, "reservedToday": held, "reservingJobs": holders,
                "leftToday": max(0, jobs.daily_token_budget - spent),
                "resetsAt": jlog.next_reset(), "lastRefusal": self.last_refusal}

    # -------------------------------------------------------------- run
    def run(self, kind: str, trigger: str, work: Callable[[JobContext], list[PlannedOp]], *,
            dry_run: bool | None = None, needs_model: bool = True, model_kind: str | None = None) -> JobReport:
        """Run one job now (on the calling thread) and log it. Never raises for job failures."""
        dry = self.settings.jobs.dry_run if dry_run is None else dry_run
        model, status = self.models(model_kind or kind) if needs_model else (None, "")
        if needs_model and model is None:
            return JobReport(kind, "off", f"{kind} is off: {status}", dry_run=dry)
        started = time.perf_counter()
        job_id = jlog.start_job(self.conn, kind, trigger, project=self.project, dry_run=dry,
                                model=model.model if model is not None else None)
        ctx = JobContext(self, job_id, model, self.clock() + self.settings.jobs.job_timeout_seconds, kind)
        self.store.begin_turn()
        writes: list[jlog.Write] = []
        results: list[dict] = []
        try:
            ops = work(ctx)
            writes, results, outcome, message = self.apply(ops, dry, ctx)
            note = jlog.clean_note(ctx.note)  # a model's words: one line, redacted, escaped, capped
            if not ops:
                outcome, message = "nothing", note or "nothing to save"
            elif note and outcome in ("ok", "dry_run"):
                message = f"{note}; {message}"
        except JobStop as stop:
            outcome, message = stop.outcome, stop.message
            if ctx.calls == 0 and outcome in ("budget", "timeout"):  # "0 tokens" would read as "it ran for free"
                message = f"{NOT_CALLED}: {message}"
            if stop.outcome == "budget":
                self.last_refusal = f"{kind} not run: {stop.message}"
        except Exception as exc:  # a job bug must not take the session down; it is logged with the reason
            log.exception("learning job %s failed", kind)
            outcome, message = "error", f"{type(exc).__name__}: {exc}"
        if ctx.if_refused and outcome in ("refused", "partial"):
            message = f"{message.rstrip('.')}. {ctx.if_refused}"
        if ctx.after and outcome in ("ok", "nothing", "dry_run", "partial", "refused"):
            message = f"{message.rstrip('.')}; {ctx.after}"
        if ctx.doubts:  # a count not believed is said where the job's tokens are shown
            message = f"{message}; token count: {doubts_said(ctx.doubts)}"
        duration = (time.perf_counter() - started) * 1000
        # What is logged and shown never carries a credential or a raw control character, whoever wrote it.
        message, writes = jlog.clean(message), [w.redacted() for w in writes]
        jlog.finish_job(self.conn, job_id, outcome=outcome, detail=message, duration_ms=duration, writes=writes,
                        session_ids=ctx.session_ids, entry_ids=ctx.entry_ids)
        jlog.record_places(self.conn, job_id, writes)
        jlog.record_layouts(self.conn, job_id, ctx.published)
        return JobReport(kind, outcome, message, job_id, writes, dry, ctx.input_tokens, ctx.output_tokens, ctx.calls,
                         ctx.cost_usd, duration, results, dict(ctx.published))

    def apply(self, ops: list[PlannedOp], dry: bool, ctx: JobContext | None = None,
              ) -> tuple[list[jlog.Write], list[dict], str, str]:
        """Apply ``ops`` (one batch per target, in first-seen order, every batch checked before the first is
        written: :mod:`.precheck`) or, ``dry``, only compute their writes (and the copies of exact duplicates the
        write would merge). From ``ctx``: ``arrange[target]``, the layout of the
        entries after the batch, and ``restore[target]``, the bytes to give back (:meth:`MemoryStore.apply`); what
        each file store's write did goes to ``ctx.published``."""
        arrange, restore, given = (ctx.arrange, ctx.restore, ctx.give_back) if ctx is not None else ({}, {}, {})
        author = ctx.author if ctx is not None else MODEL_ANSWER
        writes: list[jlog.Write] = []
        results: list[dict] = []
        by_target: dict[str, list[PlannedOp]] = {}
        for op in ops:
            by_target.setdefault(op.target, []).append(op)
        plans: list[Plan] = []
        for target, group in by_target.items():  # every store's batch checked before any is written
            if target not in self.store.targets:
                return writes, results, "refused", (f"the {target} store is not available here (no project), so "
                                                    "nothing was written")
            shown = self.store.read(target)
            plan = Plan(target, [Operation(action=o.action, content=o.content, old_text=o.old_text,
                                           place=getattr(o, "place", None)) for o in group])
            plan.planned = plan_writes(self.store, target, group, plan.misses)
            if (refusal := first_refusal(self.store, target, plan, shown,
                                         lambda t, b: self.store.check(t, b, given.get(t)),
                                         self.budget_left, author)) is not None:
                return writes, results, "refused", ("dry run: would be refused: " if dry else "") + refusal
            plans.append(plan)
        for n, plan in enumerate(plans):
            target, planned = plan.target, plan.planned
            if dry:  # what the real write would do, nothing written
                if any(w.before != w.after for w in planned):  # a write that changes the store merges its copies
                    writes += _copies(self.store, target)
                writes += planned
                continue
            result = self.store.apply(target, plan.batch, arrange=arrange.get(target), restore=restore.get(target),
                                      give_back=given.get(target))
            results.append(result.to_dict())
            if ctx is not None and result.published is not None:
                ctx.published[target] = result.published
            if not result.success:  # what no check could see before (a file changed in the moment, a team server)
                refusal = store_refusal(self.store, target, result, planned, plan.misses, self.budget_left(), author)
                if not writes:
                    return writes, results, "refused", refusal
                return writes, results, "partial", partial_message(
                    self.store, writes, target, refusal, [p.target for p in plans[n + 1:]],
                    ctx.job_id if ctx is not None else None)
            # the copies of exact duplicates the write merged come first: they went as the store was read
            writes += [jlog.Write(target, self.store.name(target), "dedupe", c.text, None, c.place())
                       for c in result.merged_copies] + planned
            if self.on_write is not None:
                self.on_write(target, [w.after for w in planned if w.after])
        merged = sum(w.action == "dedupe" for w in writes)
        if dry:
            return writes, results, "dry_run", f"dry run: {len(writes) - merged} write(s) not made" + (
                f", {duplicates(merged)} would be merged" if merged else "")
        return writes, results, "ok", f"{len(writes) - merged} write(s)" + (
            f", {duplicates(merged)} merged" if merged else "")


def _copies(store: MemoryStore, target: str) -> list[jlog.Write]:
    """The ``dedupe`` writes of the copies of exact duplicates the store's file holds (as a real write logs them)."""
    return [jlog.Write(target, store.name(target), "dedupe", c.text, None, c.place()) for c in store.copies(target)]


def plan_writes(store: MemoryStore, target: str, ops: list[PlannedOp],
                unmatched: list[tuple[PlannedOp, int, int]] | None = None) -> list[jlog.Write]:
    """The before/after pairs ``ops`` make on the store's current entries (the store's own rules, :mod:`pi_memory.
    curated.edits`: each ``oldText`` names an entry as the model saw it, a duplicate add is skipped, a replace onto
    an existing entry merges). Invalid steps are left for the store to refuse; each is put in ``unmatched`` as
    ``(op, entries its oldText is in, the earlier step that changed that entry or 0)``. A remove keeps where the
    entry stood; an add with a place (:class:`PlacedOp`) goes there."""
    name = store.name(target)
    batch = Batch.of(store.entries(target))
    work = batch.work
    out: list[jlog.Write] = []
    for number, op in enumerate(ops, 1):
        content = (op.content or "").replace("\r\n", "\n").strip()
        old = (op.old_text or "").strip()
        if op.action == "add":
            if content and content not in work:
                batch.insert(slot(work, getattr(op, "place", None)), content)
                out.append(jlog.Write(target, name, "add", None, content))
            continue
        kind, found = batch.find(name, old) if old else ("none", [])
        if kind != "ok":
            if unmatched is not None:
                if kind == "conflict":
                    unmatched.append((op, 1, batch.changed[found]))
                else:
                    unmatched.append((op, len(set(found)), 0))
            continue
        i = found
        before = work[i]
        if op.action == "remove" or (content in work and work.index(content) != i):
            place = {"index": i, "after": work[i - 1] if i else None, "before": work[i + 1] if i + 1 < len(work)
                     else None}
            batch.remove(i, number)
            out.append(jlog.Write(target, name, "remove", before, None, place))
        else:
            batch.replace(i, content, number)
            out.append(jlog.Write(target, name, "replace", before, content))
    return out
