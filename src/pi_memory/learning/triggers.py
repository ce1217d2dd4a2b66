"""The learning triggers of one agent session: counters, correction capture, review, flush, the dream gate.

:class:`SessionLearning` is driven by :class:`pi_memory.session.AgentSession` and queues every job on the
session's single background worker (``submit``), so no trigger ever delays the agent. ``learner()`` is called
on the worker thread and returns the worker's :class:`Learner` (its own index connection and store).

* After each run: count the turn, its tool calls and the user message; a detected correction is saved at once
  by rule (at most one save per 3 turns), then refined by a model when one is named; a review fires when turns
  >= ``nudgeInterval`` or tool calls >= ``nudgeToolCalls``, with at least 3 user messages and no review
  running; both counters then reset.
* ``flush(reason)`` (compaction, shutdown): a flush job when at least ``flushMinTurns`` user turns came since
  the last review or flush.
* ``start()``: the sessions of this project whose flush at their end did not finish (:mod:`.pending`), then the
  dream gate, on the worker (a session start never waits for them).

The mark of what was reviewed (``reviewed``: messages of the session file a review or flush has read) moves only
when the review ran: its model answered (``ok``, ``nothing``, ``dry_run``, ``partial``). A review that did not
run (``budget``, ``timeout``, a model server that cannot be reached: ``error``, a reply never usable:
``invalid_output``) leaves it, so the next review or flush reads those messages again. A review whose writes a
store refused (``refused``: the threat or secret scanner, a full store) leaves it once: the next one reads them
again, and a second refusal of the same messages moves it, so one hostile message cannot keep every later review
re-reading it (:func:`pi_memory.learning.review.next_mark`).

A long backlog (a session reviewed for the first time, reviews refused for a while) is read oldest first in parts
that each fit the job budget: one trigger runs at most :data:`BACKLOG_PARTS` review jobs one after the other, the
mark moving over each part read, and what is left waits for the next review or flush; each job's message says
which messages it read and what happens to the rest. A shutdown flush keeps its mark in the index while it runs
(:mod:`.pending`), so what it could not review is reviewed by the next session of the project. Every other review
or flush keeps its mark there while it runs too, holding the session file's lock: one killed before it finished
(a host hook's job, ``kill -9``) is reviewed again by the session's next trigger (:meth:`SessionLearning.resume`)
or the next session of the project (:meth:`SessionLearning.start`), from that mark.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the jobs' modules (runner, prompts, pydantic models) load on the worker, when a job runs:
    from pi_memory.learning.corrections import CorrectionRules  # and the correction rules at the first turn
    from pi_memory.learning.prompts import Turn  # a hook process opening a session never pays for them
    from pi_memory.learning.runner import JobReport, Learner
from pi_memory.learning.settings import LearningSettings

log = logging.getLogger(__name__)
CORRECTION_EVERY_TURNS = 3
MIN_USER_MESSAGES = 3
BACKLOG_PARTS = 3  # review jobs one trigger runs over a long backlog, oldest part first
LOCK_WAIT_S = 60.0  # a review or flush waits this long for another process's job of the same session file
NEXT_PART = "are read by the next part of this review, at once"
AFTER_REVIEW = "wait for the next review or flush"
AFTER_SHUTDOWN = "are kept for the next session of this project, which reviews them (the mark is kept in the index)"


class SessionLearning:
    def __init__(self, settings: LearningSettings, learner: Callable[[], Learner | None],
                 submit: Callable[[Callable[[], object], str], None], model_status: tuple[bool, str],
                 data_dir: Path, session_id: str | None = None):
        self.settings = settings
        self._learner = learner
        self._submit = submit
        self.model_named, self.model_status = model_status
        self.data_dir = data_dir
        self.session_id = session_id
        self._rules: CorrectionRules | None = None  # built at the first turn (:attr:`rules`)
        self.turn = 0
        self.turns = 0  # since the last review
        self.tool_calls = 0  # since the last review
        self.user_messages = 0  # since the last review
        self.since_flush = 0  # user turns since the last review or flush
        self.last_correction_turn = -CORRECTION_EVERY_TURNS
        self.reviewed = 0  # messages of the session file already reviewed or flushed (the module docstring)
        self.refused_from = -1  # the mark a review refused by a store started from (-1: none)
        self.review_running = False
        self.reports: list[dict] = []
        self.pending_flushes = 0  # sessions of this project an earlier end left unreviewed (as the worker last saw)
        self._carried: dict[str, int] = {}  # session file -> its mark as an earlier session's flush left it
        self.budget: dict | None = None  # spent today, left, when it resets, the latest budget refusal
        self._lock = threading.Lock()

    @property
    def rules(self) -> CorrectionRules:
        """The correction rules, compiled at first use and their problems logged then: compiling them is about
        70 ms, which a session that only recalls (a host's prompt hook, a new process per prompt) never pays."""
        if self._rules is None:
            from pi_memory.learning.corrections import CorrectionRules

            s = self.settings
            self._rules = CorrectionRules.from_lists(s.correction_strong_patterns, s.correction_weak_patterns,
                                                     s.correction_negative_patterns, s.correction_directive_words)
            for problem in self._rules.problems:  # reported once
                log.warning("%s", problem)
        return self._rules

    # ------------------------------------------------------------- triggers
    def add_tool_calls(self, count: int) -> None:
        """Tool calls a host reports apart from :meth:`after_run` (the pi extension, before the run ends)."""
        with self._lock:
            self.tool_calls += max(0, int(count))

    def after_run(self, session_file: str | None, user_text: str, tool_calls: int = 0) -> None:
        with self._lock:
            self.turn += 1
            self.turns += 1
            self.tool_calls += max(0, int(tool_calls or 0))
            self.user_messages += 1 if user_text.strip() else 0
            self.since_flush += 1
        if self.settings.correction_detection and user_text.strip():
            found = self.rules.detect(user_text)
            if found.correction and self.turn - self.last_correction_turn >= CORRECTION_EVERY_TURNS:
                self.last_correction_turn = self.turn
                self._submit(lambda: self._correction(found, session_file), "learning: correction")
        if self.review_due() and session_file:
            with self._lock:
                self.review_running = True
                self.turns = self.tool_calls = self.user_messages = self.since_flush = 0
            self._submit(lambda: self._review(session_file, "review", f"{self.settings.nudge_interval} turns or "
                                              f"{self.settings.nudge_tool_calls} tool calls"), "learning: review")

    def review_due(self) -> bool:
        s = self.settings
        if not (s.review_enabled and self.model_named) or self.review_running:
            return False
        enough = self.turns >= s.nudge_interval or self.tool_calls >= s.nudge_tool_calls
        return enough and self.user_messages >= MIN_USER_MESSAGES

    def flush(self, reason: str, session_file: str | None) -> dict:
        """Queue a flush job when due; returns ``{"queued": bool, "reason": str}`` at once."""
        if not self.model_named:
            return {"queued": False, "reason": f"flush is off: {self.model_status}"}
        if not session_file:
            return {"queued": False, "reason": "no session file to read"}
        if self.since_flush < self.settings.flush_min_turns:
            return {"queued": False, "reason": f"{self.since_flush} user turn(s) since the last review or flush "
                                               f"(flushMinTurns = {self.settings.flush_min_turns})"}
        with self._lock:
            self.since_flush = 0
        self._submit(lambda: self._review(session_file, "flush", reason, keep=reason == "shutdown"),
                     f"learning: flush ({reason})")
        return {"queued": True, "reason": reason}

    def start(self) -> None:
        """Review what earlier sessions' end left unreviewed, then check the dream gate, on the worker (the
        session start never waits for them)."""
        self.pick_up()
        if self.model_named and self.settings.dreaming.enabled is not False:
            self._submit(self._dream, "learning: dream gate")

    def pick_up(self) -> None:
        """Queue the review of what earlier sessions' end left unreviewed (:mod:`.pending`) on the worker: at a
        session's start, or a host hook session's first turn (its start has no time for it)."""
        if self.model_named:
            self._submit(self._pending, "learning: flushes left by earlier sessions")

    def resume(self, session_file: str | None) -> None:
        """The next trigger of a session whose review or flush was killed before it finished (a host hook's job,
        a new process each turn): queue a review from the mark that job left in the index (:mod:`.pending`), when
        it left one and no review of this session is running."""
        if self.model_named and session_file and not self.review_running:
            self._submit(lambda: self._resume(session_file), "learning: a review that was stopped")

    # ------------------------------------------------------------- on the worker
    def _resume(self, session_file: str) -> None:
        learner = self._learner()
        if learner is None or self.review_running:
            return
        from pi_memory.learning import pending

        left = pending.get(learner.conn, session_file)
        if left is None or left.reason == "shutdown":  # a shutdown's row: the next session start reviews it
            return
        self.review_running = True
        self._review(session_file, "review", f"left unfinished by a {left.reason} that was stopped")

    def _keep(self, report: JobReport) -> JobReport:
        learner = self._learner()
        if learner is not None:  # on the worker: the budget as the last job left it (status reads it anywhere)
            self.budget = learner.budget_status()
        self.reports.append(report.to_dict())
        del self.reports[:-20]
        if report.outcome not in ("ok", "nothing", "dry_run", "off", "closed", "locked"):
            log.warning("learning %s: %s: %s", report.kind, report.outcome, report.message)
        return report

    def _correction(self, found, session_file: str | None) -> None:
        learner = self._learner()
        if learner is None:
            return
        from pi_memory.learning.review import refine_correction, save_correction

        saved = self._keep(save_correction(learner, found, session_id=self.session_id))
        added = next((w.after for w in saved.writes if w.action == "add"), None)  # not a merged copy's write
        if saved.outcome == "ok" and added and self.model_named and session_file:
            _, turns, _ = _read(session_file)
            self._keep(refine_correction(learner, added, turns, session_id=self.session_id))

    def _review(self, session_file: str, kind: str, trigger: str, keep: bool = False) -> None:
        """A review or flush of the session since the mark, oldest first in parts, holding the file's lock
        (:func:`pending.lock`; another process reviewing it: waited for :data:`LOCK_WAIT_S`, then skipped, the mark
        left). Its mark is kept in the index while it runs (:mod:`.pending`), so a job killed before it finished
        is picked up again; ``keep`` (a shutdown flush): also after it, until the session is reviewed to its end.
        A row an earlier job of this file left (killed, or a shutdown flush's) moves the start to its mark."""
        try:
            learner = self._learner()
            if learner is None:
                return
            from pi_memory.learning import pending

            held = pending.take(self.data_dir, session_file, LOCK_WAIT_S)
            if held is None:
                log.warning("learning %s: another process is reviewing %s; the messages since the mark wait for the "
                            "next review or flush", kind, session_file)
                return
            try:
                self._locked_review(learner, session_file, kind, trigger, keep)
            finally:
                held.release()
        finally:
            if kind == "review":
                self.review_running = False

    def _locked_review(self, learner: Learner, session_file: str, kind: str, trigger: str, keep: bool) -> None:
        from pi_memory.learning import pending

        sid, turns, _ = _read(session_file)
        start = self.reviewed if self.reviewed <= len(turns) else 0  # a shorter file: another one, from its start
        carried = self._carried.get(session_file, 0)  # this file's mark as an earlier session's flush left it
        start = carried if start < carried <= len(turns) else start
        refused_from = self.refused_from if start == self.reviewed else -1
        left = pending.get(learner.conn, session_file)  # a job of this file that did not finish, or a shutdown's
        if left is not None and start < left.reviewed <= len(turns):
            start, refused_from = left.reviewed, left.refused_from
        keep = keep or (left is not None and left.reason == "shutdown")
        sid = self.session_id or sid
        pending.record(learner.conn, session_file, learner.project, sid, start, refused_from,
                       trigger if keep or kind == "flush" else kind)
        self.reviewed, self.refused_from, last = self._backlog(learner, turns, start, refused_from, kind,
                                                               trigger, sid, AFTER_SHUTDOWN if keep else
                                                               AFTER_REVIEW)
        if keep:
            self._kept(learner, session_file, sid, len(turns), self.reviewed, self.refused_from, trigger, last)
        else:  # this session reads what is left itself, at its next review or flush
            pending.clear(learner.conn, session_file)

    def _backlog(self, learner: Learner, turns: list[Turn], start: int, refused_from: int, kind: str, trigger: str,
                 sid: str | None, then: str) -> tuple[int, int, JobReport | None]:
        """Review ``turns[start:]`` oldest first, at most :data:`BACKLOG_PARTS` jobs, each going on only after the
        one before ran; ``(mark, refused_from, the last job's report)``."""
        from pi_memory.learning.review import next_mark, review_session

        reviewed, report = start, None
        for part in range(1, BACKLOG_PARTS + 1):
            said = trigger if part == 1 else f"{trigger}; part {part} of a long backlog"
            report = self._keep(review_session(learner, turns[start:], kind=kind, trigger=said, session_id=sid,
                                               offset=start, then=NEXT_PART if part < BACKLOG_PARTS else then))
            end = start + report.read
            reviewed, refused_from = next_mark(report.outcome, start, end, reviewed, refused_from)
            if reviewed != end or not report.read or end >= len(turns):
                break
            start = end
        return reviewed, refused_from, report

    def _kept(self, learner: Learner, session_file: str, sid: str | None, total: int, reviewed: int,
              refused_from: int, trigger: str, last: JobReport | None) -> None:
        """After a kept flush: its row removed once the session is reviewed to its end, else its mark moved."""
        from pi_memory.learning import pending

        if reviewed >= total:
            pending.clear(learner.conn, session_file)
        else:
            pending.record(learner.conn, session_file, learner.project, sid, reviewed, refused_from, trigger,
                           last.outcome if last else None, last.message if last else None)
            log.warning("learning: %d message(s) of %s not reviewed yet; the next session of this project reviews "
                        "them", total - reviewed, session_file)
        self.pending_flushes = pending.count(learner.conn, learner.project)

    def _pending(self) -> None:
        """Review the sessions of this project a flush at their end, or a job killed before it finished, left
        unreviewed (:mod:`.pending`); a row whose lock another process holds (its job is running) is left alone."""
        learner = self._learner()
        if learner is None:
            return
        from pi_memory.learning import pending

        done = 0
        for left in pending.waiting(learner.conn, learner.project, pending.PICKUP_FILES * 4):
            if done >= pending.PICKUP_FILES:
                break
            held = pending.take(self.data_dir, left.session_file)
            if held is None:
                continue
            try:
                done += 1
                if not self._pick(learner, pending.get(learner.conn, left.session_file)):
                    break
            finally:
                held.release()
        self.pending_flushes = pending.count(learner.conn, learner.project)

    def _pick(self, learner: Learner, left) -> bool:
        """Review what ``left`` (a row of :mod:`.pending`, read again under its lock) left; whether it was reviewed
        to its end (else the next start tries again)."""
        from pi_memory.learning import pending

        if left is None:  # reviewed meanwhile
            return True
        if not Path(left.session_file).is_file():
            pending.clear(learner.conn, left.session_file)
            log.warning("learning: %s is gone, so the messages its session's end left unreviewed (from message "
                        "%d) cannot be reviewed", left.session_file, left.reviewed + 1)
            return True
        _sid, turns, _ = _read(left.session_file)
        start = left.reviewed if left.reviewed <= len(turns) else 0
        trigger = f"left by an earlier session's {left.reason} ({left.outcome or 'not finished'})"
        reviewed, refused_from, last = self._backlog(learner, turns, start, left.refused_from, "flush", trigger,
                                                     left.session_id, AFTER_SHUTDOWN)
        self._carried[left.session_file] = reviewed
        self._kept(learner, left.session_file, left.session_id, len(turns), reviewed, refused_from,
                   left.reason, last)
        return reviewed >= len(turns)  # refused again (a budget, no answer): the next start tries again

    def _dream(self) -> None:
        from pi_memory.learning.dream import dream

        learner = self._learner()
        if learner is not None:
            self._keep(dream(learner, self.data_dir, model_named=self.model_named))

    def status(self) -> dict:
        return {"model": self.model_status, "flushCompactTimeoutMs": self.settings.flush_compact_timeout_ms,
                "turnsSinceReview": self.turns, "toolCallsSinceReview": self.tool_calls,
                "userTurnsSinceFlush": self.since_flush, "reviewRunning": self.review_running,
                "pendingFlushes": self.pending_flushes,
                "ruleProblems": list(self.rules.problems), "jobs": list(self.reports), "budget": self.budget}


def _read(session_file: str) -> tuple[str | None, list[Turn], int]:
    from pi_memory.learning.prompts import read_turns

    try:
        return read_turns(session_file)
    except (OSError, ValueError) as exc:
        log.warning("learning: cannot read %s: %s", session_file, exc)
        return None, [], 0
