"""Dreaming: a gated, locked background pass over the sessions indexed since the last dream that consolidates
durable facts into the stores, in the seed's four phases (orient, gather, consolidate, prune) and one model call.

* Gate (state in the index, ``learning_gate``, one row per scope): ``dreaming.enabled`` (default: on when a model
  is named), at least ``minHoursSinceLastRun`` (24) hours since the last dream and ``minTurnsSinceLastRun`` (5)
  user turns indexed since it. ``force`` skips the gate, never the lock or the budget.
* Lock: ``<data root>/.locks/dream.lock``, taken without waiting: however many pi, MCP or Claude Code processes
  start together, one dreams and the others skip (the gate is read again under the lock, so a process that gets
  the lock after a dream finished finds the gate closed).
* Input: the user and assistant messages indexed since the last dream (message ids above the gate's mark) on
  active branches, from every project for the global stores (the project's sessions when ``project_only``), the
  newest ``dreaming.maxSessions`` (32) sessions, each its newest messages, within the job budget. What did not fit
  is not input; leaving it out never removes a fact.
* One call: the prompt holds the current stores (orient) and the recent sessions; the model gathers durable
  facts, preferences, corrections and lessons, returns operations that consolidate them, and prunes entries the
  sessions show to be superseded. The gate moves forward after every dream that reached the model and wrote or
  had nothing to write (ok, nothing), not after a budget refusal or an error, so those are retried at the next
  start. A dream whose writes were refused (a full store, a hostile or unmatched operation: nothing written, see
  :mod:`.precheck`) restarts the clock but leaves its messages unread, and says so: the next dream, or `pi-memory
  dream --force` once the store has room, reads them again. A dream that found no
  new message to read (``--force`` with nothing indexed since) makes no call and leaves the hours alone: it only
  marks the messages it looked past as seen.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from pi_memory.index.db import now_iso
from pi_memory.learning import log as jlog
from pi_memory.learning.prompts import ROUTING, ask_ops, shown_message, stores_block
from pi_memory.learning.runner import JobContext, JobReport, Learner, PlannedOp, estimate_tokens
from pi_memory.private_files import make_private_folder

DREAM_REPLY_TOKENS = 2_000
PER_SESSION_MESSAGES = 12
SYSTEM = (
    "You are the memory consolidation pass (a \"dream\") of a coding agent, run between sessions. Work in four "
    "phases. 1 Orient: read the current stores. 2 Gather: from the recent sessions, collect durable facts, user "
    "preferences, corrections and lessons. 3 Consolidate: add what is new, merge it into related entries rather "
    "than adding near-duplicates. 4 Prune: remove or rewrite entries the sessions show to be superseded or stale. "
    + ROUTING + " Keep the stores short; return all operations in one reply."
)


def gate_name(project: str | None) -> str:
    return f"dream:project:{project}" if project else "dream:global"


def gate_check(learner: Learner, model_named: bool, project_only: bool = False) -> tuple[bool, str, int]:
    """``(open, why, newest message id)`` for the dream gate of this learner's scope."""
    d = learner.settings.dreaming
    enabled = d.enabled if d.enabled is not None else model_named
    newest = _newest_id(learner)
    if not enabled:
        why = "dreaming.enabled is false" if d.enabled is False else "no model is named (pi-memory.llm)"
        return False, f"dreaming is off: {why}", newest
    last_at, last_id = jlog.gate_state(learner.conn, gate_name(learner.project if project_only else None))
    if last_at:
        hours = (datetime.now(UTC) - datetime.fromisoformat(last_at.replace("Z", "+00:00"))).total_seconds() / 3600
        if hours < d.min_hours_since_last_run:
            return False, (f"the last dream was {hours:.1f} h ago (dreaming.minHoursSinceLastRun = "
                           f"{d.min_hours_since_last_run:g})"), newest
    turns = _user_turns_since(learner, last_id, project_only)
    if turns < d.min_turns_since_last_run:
        hint = ("; a dream reads only indexed sessions: `pi-memory index-sessions` indexes the agents' transcripts "
                "(`pi-memory index-sessions PATH` for ones kept elsewhere)" if turns == 0 else "")
        return False, (f"{turns} user turn(s) indexed since the last dream (dreaming.minTurnsSinceLastRun = "
                       f"{d.min_turns_since_last_run}){hint}"), newest
    return True, f"{turns} user turn(s) since the last dream", newest


def _scope_sql(learner: Learner, project_only: bool) -> tuple[str, list]:
    if project_only and learner.project:
        return " AND s.project_id = ?", [learner.project]
    return "", []


def _newest_id(learner: Learner) -> int:
    row = learner.conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()
    return int(row[0])


def _user_turns_since(learner: Learner, after_id: int, project_only: bool) -> int:
    extra, args = _scope_sql(learner, project_only)
    row = learner.conn.execute(
        "SELECT count(*) FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id > ? AND m.role = 'user'"
        f" AND m.kind = 'message' AND m.branch = 'active'{extra}", [after_id, *args]).fetchone()
    return int(row[0])


def recent_sessions(learner: Learner, after_id: int, char_cap: int, project_only: bool = False
                    ) -> tuple[str, list[str], list[str]]:
    """The recent sessions as text (newest sessions first, each oldest message first), their keys and the
    message ids read."""
    extra, args = _scope_sql(learner, project_only)
    sessions = learner.conn.execute(
        "SELECT s.id, s.session_key, coalesce(s.project_name, ''), max(m.id) AS last FROM messages m JOIN sessions s"
        f" ON s.id = m.session_id WHERE m.id > ? AND m.kind = 'message' AND m.branch = 'active'{extra}"
        " GROUP BY s.id ORDER BY last DESC LIMIT ?", [after_id, *args, learner.settings.dreaming.max_sessions],
    ).fetchall()
    parts, keys, ids, size = [], [], [], 0
    for sid, key, project, _ in sessions:
        rows = learner.conn.execute(
            "SELECT id, role, text FROM messages WHERE session_id = ? AND id > ? AND kind = 'message' AND branch ="
            " 'active' AND role IN ('user', 'assistant') ORDER BY id DESC LIMIT ?", (sid, after_id, PER_SESSION_MESSAGES),
        ).fetchall()
        rows.reverse()  # oldest first; each message redacted as review shows one (the index stored it redacted,
        # but a migration to newer patterns may still be under way), with the message before as context
        lines = [f"{role.upper()}: {shown_message(text, 800, rows[i - 1][2] if i else '')}"
                 for i, (_, role, text) in enumerate(rows)]
        block = f"## Session {key}" + (f" (project {project})" if project else "") + "\n" + "\n".join(lines)
        if size + len(block) > char_cap:
            if parts:
                break
            block = block[:char_cap]
        parts.append(block)
        keys.append(key)
        ids += [f"message:{r[0]}" for r in rows]
        size += len(block)
    return "\n\n".join(parts), keys, ids


def dream(learner: Learner, data_dir: Path, *, model_named: bool, force: bool = False, dry_run: bool | None = None,
          trigger: str = "session start", project_only: bool = False) -> JobReport:
    """Run the dream when the gate is open (or ``force``) and the lock is free."""
    lock = FileLock(Path(data_dir) / ".locks" / "dream.lock", timeout=0)
    make_private_folder(Path(data_dir, ".locks"))  # private, as the rest of the data root
    try:
        lock.acquire()
    except Timeout:
        return JobReport("dream", "locked", "another process is dreaming on this data root")
    try:
        is_open, why, newest = gate_check(learner, model_named, project_only)
        if not is_open and not (force and model_named):
            return JobReport("dream", "closed", f"not dreaming: {why}")
        name = gate_name(learner.project if project_only else None)
        last_at, last_id = jlog.gate_state(learner.conn, name)

        def work(ctx: JobContext) -> list[PlannedOp]:
            stores, entry_ids = stores_block(learner.store)
            budget = learner.settings.jobs.job_token_budget
            cap = max(2_000, (budget - DREAM_REPLY_TOKENS - 600 - estimate_tokens(SYSTEM, stores)) * 4 * 4 // 5)
            text, keys, message_ids = recent_sessions(learner, last_id, cap, project_only)
            ctx.read(keys, entry_ids + message_ids)
            if not text:
                ctx.note = ("no new session messages since the last dream" if last_at else
                            "no session messages to read yet (run `pi-memory index-sessions` to index past sessions)")
                return []
            ctx.if_refused = (f"The {len(keys)} session(s) it read stay unread: the next dream reads them again, "
                              "and `pi-memory dream --force` does so now")
            prompt = f"# Current memory (orient)\n\n{stores}\n\n# Recent sessions (gather)\n\n{text}"
            if "project" in learner.store.targets:
                prompt += (f"\n\nThe project store belongs to project {learner.store.project_name}: put there only "
                           "facts from that project's sessions; facts of other projects go to memory or nowhere.")
            return ask_ops(ctx, learner.store, prompt, SYSTEM, DREAM_REPLY_TOKENS, "nothing to consolidate")

        report = learner.run("dream", trigger + (" (forced)" if force and not is_open else ""), work,
                             dry_run=dry_run, model_kind="dream")
        if report.outcome in ("ok", "nothing") and not report.dry_run:
            # Only a dream that reached the model restarts the clock; one that found nothing to read (no call)
            # marks the messages seen, so the next dream still waits for new turns but not for the hours.
            jlog.set_gate(learner.conn, name, now_iso() if report.calls else last_at, newest)
        elif report.outcome in ("refused", "partial") and not report.dry_run:
            # The clock restarts (a refusal is not retried at every start), the messages stay unread: the next
            # dream, or `dream --force` once the store has room, reads them again.
            jlog.set_gate(learner.conn, name, now_iso(), last_id)
        return report
    finally:
        lock.release()
