"""Capture and recall outcomes as the index keeps them for every process (:mod:`pi_memory.index.outcomes`).

:func:`record_capture` turns a :class:`~pi_memory.semantic.models.CaptureReport` into running totals under job
``capture`` (``runs``, ``ok`` / ``error`` / ``skipped``, ``skipped:<rule>``, ``modelCalls``, ``inputTokens``,
``outputTokens``, ``facts``, ``ADD`` / ``UPDATE`` / ``DELETE`` / ``NOOP``, ``refusedDecisions``, ``blockedFacts``,
``droppedFacts``, ``partlyRead``, ``unreadChars``, ``errors``) and, unless the turn was skipped, one outcome row
whose message is the first error, else the refusals and what was left unread. A failed recall is recorded
under job ``recall`` (successful recalls are not: one write per prompt would cost more than it tells).

:func:`summary` reads them back for ``pi-memory semantic status`` and the pi status line (:func:`latest_error`).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from pi_memory.index import outcomes as store
from pi_memory.semantic.models import CaptureReport

CAPTURE, RECALL = "capture", "recall"


def capture_counts(report: CaptureReport) -> dict[str, int]:
    counts = {"runs": 1, report.status: 1, "modelCalls": report.model_calls, "inputTokens": report.input_tokens,
              "outputTokens": report.output_tokens, "facts": len(report.facts),
              "refusedDecisions": report.refused_decisions, "blockedFacts": report.blocked_facts,
              "droppedFacts": report.dropped_facts, "unreadChars": report.unread_chars,
              "partlyRead": int(report.unread_chars > 0), "errors": len(report.errors)}
    for event in ("ADD", "UPDATE", "DELETE", "NOOP"):
        counts[event] = report.count(event)
    if report.status == "skipped":
        counts[f"skipped:{report.skip_rule or 'other'}"] = 1
    return counts


def record_capture(conn: sqlite3.Connection, report: CaptureReport, project_id: str | None = None) -> bool:
    """Add ``report`` to the index's capture totals and outcomes (module docstring)."""
    outcome = None if report.status == "skipped" else report.status
    message = report.errors[0] if report.errors else "; ".join([*report.refusals, report.message]).strip("; ")
    data = {k: v for k, v in report.to_public().items()
            if k in ("modelCalls", "inputTokens", "outputTokens", "refusedDecisions", "unreadChars", "turnChars",
                     "windows", "windowsRead", "errors")}
    return store.record(conn, CAPTURE, outcome, counts=capture_counts(report), message=message[:2000], data=data,
                        project_id=project_id)


def record_recall_error(conn: sqlite3.Connection, error: str, project_id: str | None = None) -> bool:
    return store.record(conn, RECALL, "error", counts={"errors": 1}, message=error[:2000], project_id=project_id)


def latest_error(conn: sqlite3.Connection, since: str | None = None) -> store.Outcome | None:
    """The newest capture or recall error (at or after ``since``), or ``None``."""
    found = [o for job in (CAPTURE, RECALL) for o in store.latest(conn, job, "error", since=since)]
    return max(found, key=lambda o: o.at) if found else None


def summary(conn: sqlite3.Connection) -> dict[str, Any]:
    """``{"capture": totals, "recall": totals, "latestError": outcome | None, "latestPartlyRead": outcome |
    None}`` (outcomes as :meth:`~pi_memory.index.outcomes.Outcome.to_public`)."""
    error = latest_error(conn)
    partly = next((o for o in store.latest(conn, CAPTURE, limit=50) if (o.data or {}).get("unreadChars")), None)
    return {"capture": store.counts(conn, CAPTURE), "recall": store.counts(conn, RECALL),
            "latestError": error.to_public() if error else None,
            "latestPartlyRead": partly.to_public() if partly else None}


def status_lines(info: dict[str, Any]) -> list[str]:
    """Lines for people from :func:`summary`."""
    c, lines = info.get("capture") or {}, []
    if c:
        rules = ", ".join(f"{v} {k.split(':', 1)[1]}" for k, v in sorted(c.items()) if k.startswith("skipped:"))
        lines.append(f"capture in every process: {c.get('runs', 0)} turn(s): {c.get('ok', 0)} ok, "
                     f"{c.get('error', 0)} failed, {c.get('skipped', 0)} skipped before any model call"
                     + (f" ({rules})" if rules else "")
                     + f"; {c.get('modelCalls', 0)} model call(s), {c.get('inputTokens', 0):,} input tokens")
        lines.append(f"  facts: {c.get('ADD', 0)} added, {c.get('UPDATE', 0)} updated, {c.get('DELETE', 0)} "
                     f"superseded, {c.get('NOOP', 0)} already known; {c.get('refusedDecisions', 0)} UPDATE/DELETE "
                     f"refused (old memory kept); {c.get('blockedFacts', 0)} blocked by the threat scanner")
        if c.get("partlyRead"):
            lines.append(f"  {c['partlyRead']} long turn(s) not read to the end: {c.get('unreadChars', 0):,} "
                         "characters left unread (raise captureMaxInputTokens to read more)")
    r = info.get("recall") or {}
    if r.get("errors"):
        lines.append(f"recall failures in every process: {r['errors']}")
    partly = info.get("latestPartlyRead")
    if partly:
        lines.append(f"  latest partly read turn ({partly['at']}): {partly['message']}")
    error = info.get("latestError")
    if error:
        lines.append(f"latest {error['job']} error ({error['at']}): {error['message']}")
    return lines
