"""``pi-memory learning log|undo|detect``, ``review``, ``consolidate``, ``dream``: thin commands over
:mod:`pi_memory.learning`.

Exit codes, as the rest of the CLI: 0 the job ran (also "nothing to save", a dry run, a closed dream gate); 1 it
was refused or failed (budget, invalid output, no model, locked, undo refused); 2 usage error. ``--json`` prints
the job report (``{"success", "jobId", "kind", "outcome", "message", "dryRun", "writes", "duplicatesMerged",
...}``: ``duplicatesMerged`` counts the copies of exact duplicates the writes merged, or a dry run would).
"""

from __future__ import annotations

import enum
import re
from pathlib import Path
from typing import Annotated

import typer

from pi_memory import safety
from pi_memory.bounds import row_number
from pi_memory.cli.app import DirOpt, JsonOpt, Target, app, emit_json, err, fail, open_mem, out, state
from pi_memory.curated.entries import printable
from pi_memory.learning.wording import calls_said
from pi_memory.shown_text import shown as person_text  # redacted, control and bidi characters escaped

learning_app = typer.Typer(help="The learning log: what background jobs wrote, and undo.", no_args_is_help=True)
app.add_typer(learning_app, name="learning")
DryOpt = Annotated[bool, typer.Option("--dry-run", help="Run the model and report the writes, without writing.")]
UndoDryOpt = Annotated[bool, typer.Option("--dry-run", help="Report the writes the undo would make, without "
                                          "writing (no model is involved).")]
QUIET_OUTCOMES = ("ok", "nothing", "dry_run", "closed")


class JobKind(enum.StrEnum):
    review = "review"
    flush = "flush"
    correction = "correction"
    refine = "refine"
    consolidate = "consolidate"
    dream = "dream"
    undo = "undo"


MAX_LOG_LIMIT = 10_000  # a larger --limit is taken as this


def _learner(dir_: Path | None, command: str, log_only: bool = False, cwd: str | None = None):
    """The learner of a command. ``log_only`` (``learning log`` / ``undo``: no model, no budget): also when the
    learning settings are invalid, whose warning the open printed once. Any other command refuses then.
    ``cwd``: the folder whose project store it writes (default: the current folder's)."""
    memory = open_mem(dir_)
    learner = memory.learner(log_only=log_only, cwd=cwd)
    if learner is None:
        raise fail(memory.learning_status if state.json else f"{command} did not run: it needs valid learning "
                   "settings (see the warning above).", 2)
    return memory, learner


def _finish(report, as_json: bool, extra: dict | None = None) -> None:
    ok = report.outcome in QUIET_OUTCOMES
    if as_json or state.json:
        data = report.to_dict()
        data["success"] = ok
        emit_json({**data, **(extra or {})})
        raise typer.Exit(0 if ok else 1)
    head = f"{report.kind}: {report.outcome}" + (f" (job {report.job_id})" if report.job_id else "")
    # "consolidate is off: ..." says its kind already: printed alone, not after "consolidate: off:"
    said = report.message.startswith(f"{report.kind} ") and not report.job_id
    shown = printable(report.message)  # it may quote a model's note (escaped when logged; once more is a no-op)
    (out if ok else err).print(shown if said else f"{head}: {shown}", markup=False)
    for w in report.writes:
        _print_write(w.to_dict(), "would " if report.dry_run else "")
    if report.calls and report.input_tokens + report.output_tokens:
        out.print(f"model calls: {report.calls}, tokens: {report.input_tokens:,} in / {report.output_tokens:,} out",
                  markup=False)
    elif report.calls:  # "tokens: 0 in / 0 out" read as "it ran and cost nothing"
        (out if ok else err).print(f"model calls: {report.calls} tried, none reached the model, so no tokens were "
                                   "spent", markup=False)
    raise typer.Exit(0 if ok else 1)


def _print_write(w: dict, prefix: str = "") -> None:
    # As Write.to_dict shows them: redacted, a hostile entry as its blocked marker (in a person's words here); a
    # hand-edited entry may still hold control characters: shown as \xNN, never run.
    before, after = (printable(_blocked_for_person(w[k] or "")) for k in ("before", "after"))
    if w["action"] == "add":
        out.print(f"  {prefix}add to {w['store']}: {after}", markup=False)
    elif w["action"] == "remove":
        out.print(f"  {prefix}remove from {w['store']}: {before}", markup=False)
    elif w["action"] == "dedupe":  # a hand-made file held this text twice: the write kept one copy
        out.print(f"  {prefix}merge an exact duplicate in {w['store']} (the first copy is kept): {before}",
                  markup=False)
    else:
        out.print(f"  {prefix}replace in {w['store']}: {before}\n    -> {after}", markup=False)


_MARKER = re.compile(r"^\[BLOCKED: .*?threat pattern\(s\): (?P<ids>[\w, ]+)\..* Ref (?P<ref>[0-9a-f]{8})\.\]$", re.DOTALL)


def _blocked_for_person(text: str) -> str:
    """A write's entry that a blocked marker stands for (its words are a model's), in a person's words."""
    m = _MARKER.match(text)
    return f"[blocked: an entry matching threat pattern(s) {m['ids']}, not shown; Ref {m['ref']}]" if m else text


@learning_app.command("log")
def log_cmd(limit: Annotated[int, typer.Option(
                "--limit", help=f"Newest jobs to show, 1 or more (at most {MAX_LOG_LIMIT:,}).")] = 20,
            kind: Annotated[JobKind | None, typer.Option("--kind", help="Only jobs of this kind.")] = None,
            dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """List the background jobs, newest first: kind, trigger, tokens, outcome and each write."""
    from pi_memory.learning import list_jobs

    if limit < 1:
        raise fail(f"--limit is the number of newest jobs to show, so it must be 1 or more; {limit} shows none. "
                   "Leave it out to show the newest 20.", 2)
    limit = min(limit, MAX_LOG_LIMIT)
    memory, learner = _learner(dir, "learning log", log_only=True)
    jobs = list_jobs(learner.conn, limit=limit, kind=kind.value if kind else None)
    if memory.learning is None:  # invalid settings: no job runs, whatever model is named
        model, status = None, memory.learning_status
    else:
        model, status = memory.learning_model("review")
    if model is not None:
        model.close()
    budget = learner.budget_status() if memory.learning is not None else None
    if json_ or state.json:
        emit_json({"success": True, "jobs": jobs, "budget": budget, "model": status})
        return
    if memory.learning is None:
        out.print("Learning jobs are off: the learning settings are invalid (see the warning above).", markup=False)
    else:
        out.print(status if model is not None else f"Model-driven jobs are off: {status}", markup=False)
    if not jobs:
        out.print(f"No {kind.value} jobs yet." if kind else "No learning jobs yet.", markup=False)
    for job in jobs:
        flags = " (dry run)" if job["dryRun"] else ""
        flags += " (undone)" if job["undoneAt"] else ""
        out.print(f"#{job['id']} {job['startedAt']} {job['kind']} [{job['trigger']}] {job['outcome']}{flags}: "
                  f"{printable(job['detail'] or '')}", markup=False)  # an older row: escaped when logged, not for U+202E
        if job["calls"]:
            cost = f", ${job['costUsd']:.4f}" if job["costUsd"] is not None else ""
            out.print(f"  {job['model']}: {calls_said(job['calls'], job['inputTokens'], job['outputTokens'])}"
                      f"{cost}, {job['durationMs'] or 0:.0f} ms", markup=False)
        for w in job["writes"]:
            _print_write(w)
    if budget is None:
        from pi_memory.learning.log import spent_today

        out.print(f"Today: {spent_today(learner.conn):,} tokens spent.", markup=False)
        return
    b = budget
    from pi_memory.learning.log import held_words

    held = (f", {b['spentToday'] - b['reservedToday']:,} spent and {held_words(b['reservedToday'], b['reservingJobs'])}"
            if b["reservedToday"] else "")
    out.print(f"Today: {b['spentToday']:,} of {b['dailyTokenBudget']:,} tokens{held} (resets {b['resetsAt']}); "
              f"per job at most {b['jobTokenBudget']:,}.", markup=False)


@learning_app.command("undo")
def undo_cmd(job_id: int, dir: DirOpt = None, json_: JsonOpt = False, dry_run: UndoDryOpt = False) -> None:
    """Revert one job's writes (refused when its entries have changed since)."""
    from pi_memory.learning import undo_job

    _, learner = _learner(dir, "learning undo", log_only=True)
    if row_number(job_id) is None:  # past SQLite's range (its query would overflow): no such job, as any unknown id
        from pi_memory.learning.runner import JobReport

        _finish(JobReport("undo", "refused", f"there is no learning job {job_id}; `pi-memory learning log` lists "
                          "them"), json_)
    _finish(undo_job(learner, job_id, dry_run=dry_run), json_)


@learning_app.command("detect")
def detect_cmd(text: str, dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Would TEXT be captured as a correction? Prints the rule and the FAILURES.md entry a session would save
    (credentials redacted, as the capture saves it)."""
    from pi_memory.learning.corrections import CorrectionRules, capture

    memory = open_mem(dir)
    s = memory.learning
    rules = CorrectionRules.from_lists(*(getattr(s, f"correction_{k}", None) for k in
                                         ("strong_patterns", "weak_patterns", "negative_patterns", "directive_words")))
    project = memory.store.project_name if "project" in memory.store.targets else None
    found = capture(rules, text, project)  # the capture's own decision (learning/corrections.py)
    det, finding = found.detection, found.refused
    off = ("the learning settings are invalid" if s is None else
           "correctionDetection is false in the settings" if not s.correction_detection else None)
    refused = ({"code": "secret" if finding.category == safety.SECRET else "threat", "finding": finding.id}
               if finding else {"code": "invalid_content", "finding": "control_characters"} if found.control else None)
    directive = safety.redact(det.directive) if det.directive else det.directive
    if json_ or state.json:
        emit_json({**det.to_dict(), "directive": directive, "entry": None if off or refused else found.entry,
                   "redacted": list(found.redacted), "refused": refused, "captureOff": off,
                   "problems": rules.problems})
        return
    for problem in rules.problems:
        err.print(f"warning: {problem}", markup=False)
    cleaned = f" (credential {', '.join(found.redacted)} redacted)" if found.redacted else ""
    if det.correction and off:
        out.print(f"correction (rule {det.rule}), but correction capture is off ({off}), so nothing is saved",
                  markup=False)
    elif det.correction and refused is not None:
        why = ("it holds control characters (terminal escape codes or similar)" if finding is None else
               f"it holds a credential ({finding.id})" if refused["code"] == "secret"
               else f"it matches the threat pattern {finding.id} ({finding.category})")
        out.print(f"correction (rule {det.rule}), but not saved: {why}, so FAILURES.md would refuse it: "
                  f"{person_text(found.entry or '')}", markup=False)
    elif det.correction:
        out.print(f"correction (rule {det.rule}); saves to FAILURES.md{cleaned}: {person_text(found.entry or '')}",
                  markup=False)
    elif det.rule in UNUSABLE:
        out.print(f"not saved: {UNUSABLE[det.rule]}", markup=False)
    else:
        out.print("not a correction" + (f" (suppressed by {det.rule})" if det.rule else ""), markup=False)


UNUSABLE = {  # a correction the rules found but do not save (corrections.unusable), in words
    "vague": "it reads as a correction, but names nothing a later session could act on without this conversation",
    "credential": "it reads as a correction, but it holds a credential, and a lesson holding one is not saved (the "
                  "store keeps no secrets, and a redacted one teaches nothing)",
}


@app.command("review")
def review_cmd(session_file: Path, dir: DirOpt = None, json_: JsonOpt = False, dry_run: DryOpt = False,
               from_: Annotated[int, typer.Option("--from", min=1, help="The message to start at (1: the first). A "
                                                  "transcript too long for one job is read from here, oldest first, "
                                                  "as far as learning.jobTokenBudget allows; the answer names the "
                                                  "next --from.")] = 1) -> None:
    """Run one background review over a session file now (pi, Claude Code or Codex JSONL).

    Project facts go to the project of the folder the session ran in (as its transcript records it, the folder
    the session index files it under), not to the current folder's; a transcript that does not say is reviewed
    for the current folder's project, and the command says so. The messages are read oldest first; what does
    not fit one job is named, with the --from that reads it."""
    from pi_memory.learning import review_session
    from pi_memory.learning.prompts import read_session_turns

    if (problem := _transcript_problem(session_file)) is not None:
        raise fail(f"{session_file} {problem}; pass the path of a session transcript (.jsonl) of pi, Claude Code "
                   "or Codex.", 2)
    try:
        sid, turns, _, cwd = read_session_turns(session_file)
    except (OSError, ValueError) as exc:
        open_mem(dir)  # the settings' own errors first, as every command gives them
        raise fail(f"Cannot read {session_file} as a session transcript: {_read_problem(exc, session_file)}.",
                   2) from exc
    memory, learner = _learner(dir, "review", cwd=cwd)
    where = _review_project(memory, learner, session_file, cwd)
    if where["said"] and not (json_ or state.json):
        (out if cwd else err).print(where["said"], markup=False)
    start = min(from_ - 1, len(turns))
    then = f"were not read: `pi-memory review {session_file} --from {{next}}` reads them"  # {next}: filled in
    report = review_session(learner, turns[start:], trigger="manual", session_id=sid, dry_run=dry_run or None,
                            offset=start, then=then)
    extra = {"project": {k: where[k] for k in ("name", "cwd", "from")}, "projectNote": where["said"]}
    if report.messages is not None and report.messages["to"] < report.messages["of"]:
        extra["nextFrom"] = report.messages["to"] + 1
    _finish(report, json_, extra)


def _review_project(memory, learner, path: Path, cwd: str | None) -> dict:
    """Whose project a review of ``path`` writes: ``name`` (``None``: no project store), ``cwd``, ``from``
    (``"session"`` | ``"current folder"``), and ``said``: a sentence when it is not the current folder's project
    or when the transcript does not say where the session ran."""
    store = learner.store
    name = store.project_name if "project" in store.targets else None
    if cwd is None:
        goes = f"go to this folder's project ({name})" if name else "are not saved (this folder is in no project)"
        return {"name": name, "cwd": str(memory.cwd), "from": "current folder",
                "said": f"note: {path} does not say which folder the session ran in, so its project facts {goes}."}
    differs = store.project_id != memory.store.project_id
    said = f"project facts go to project {name}, where the session ran ({cwd})." if differs and name else None
    return {"name": name, "cwd": cwd, "from": "session", "said": said}


def _transcript_problem(path: Path) -> str | None:
    """What keeps ``path`` from being a transcript before it is read (``None``: a file with something in it)."""
    if not path.exists():
        return "does not exist" + (" (a broken link)" if path.is_symlink() else "")
    if path.is_dir():
        return "is a folder, not a file"
    if not path.is_file():
        return "is not a regular file"
    try:
        with path.open("rb") as fh:
            head = fh.read(65_536)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if not head.strip():
        return "is empty" if not head else "holds only blank lines, no session records"
    return None


def _read_problem(exc: Exception, path: Path) -> str:
    """A reader's refusal of ``path`` in words about the file (the format's name, not the reader's)."""
    from pi_memory.index.readers import UnknownSessionFormat

    if isinstance(exc, UnknownSessionFormat):
        if not _has_json_record(path):
            return "none of its lines is a JSON record, so it is no JSONL transcript"
        return ("its records are JSON, but not of a session format pi-memory reads (pi, Claude Code, Codex), and its "
                "folder does not say which agent wrote it")
    return str(exc)


def _has_json_record(path: Path, limit: int = 1 << 20) -> bool:
    """Whether a line in the first ``limit`` bytes of ``path`` is a JSON object."""
    import json

    with path.open("rb") as fh:
        head = fh.read(limit)
    for line in head.splitlines():
        try:
            if isinstance(json.loads(line), dict):
                return True
        except ValueError:
            continue
    return False


@app.command("consolidate")
def consolidate_cmd(target: Target, dir: DirOpt = None, json_: JsonOpt = False, dry_run: DryOpt = False) -> None:
    """Shrink a store now: merge related entries and drop superseded ones (one model job, undoable)."""
    from pi_memory.learning.consolidate import consolidate, usage_signals

    _, learner = _learner(dir, "consolidate")
    report = consolidate(learner, target.value, dry_run=dry_run or None, usage=usage_signals(learner, target.value))
    _finish(report, json_)


@app.command("dream")
def dream_cmd(dir: DirOpt = None, json_: JsonOpt = False, dry_run: DryOpt = False,
              force: Annotated[bool, typer.Option("--force", help="Skip the gate (never the lock or the budget).")]
              = False) -> None:
    """Consolidate what recent sessions taught into the stores now, if the dream gate is open (or --force).

    Exits 0 when it ran, had nothing to do, or the gate is closed for now (too soon since the last dream); 1 when
    dreaming is off (no model, or dreaming.enabled false), as `consolidate` does when it is off."""
    from pi_memory.index import index_paths
    from pi_memory.learning.dream import dream

    memory, learner = _learner(dir, "dream")
    index_paths(learner.conn, None, max_files=200)  # the dream reads the session index: bring it up to date
    model, status = memory.learning_model("dream")
    if model is not None:
        model.close()
    report = dream(learner, memory.settings.data_dir, model_named=model is not None, force=force,
                   dry_run=dry_run or None, trigger="manual")
    dreaming = learner.settings.dreaming
    on = dreaming.enabled if dreaming.enabled is not None else model is not None
    if report.outcome == "closed" and (force or not on):
        why = status if model is None else "dreaming.enabled is false"
        report.outcome, report.message = "off", f"dream is off: {why}"
    _finish(report, json_)
