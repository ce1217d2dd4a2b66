"""``/mem0`` (seed 004's command family) over the semantic service, as ``pi-memory semantic`` does:
``status``, ``search QUERY``, ``profile`` (every active memory), ``add TEXT``, ``delete ID``,
``dedup [--apply]``. Text for a person; stored values are printed as plain text."""

from __future__ import annotations

from typing import Any

from pi_memory.reports import one_line, redacted_line

HELP = "Usage: /mem0 status | search QUERY | profile | add TEXT | delete ID | dedup [--apply]"


def _reply(lines: list[str], level: str = "info") -> dict[str, Any]:
    return {"text": "\n".join(lines), "level": level}


def _line(mem: Any, score: float | None = None) -> str:
    extra = f"  (score {score:.3f})" if score is not None else ""
    return f"{mem.id}  {mem.date}{extra}\n  {one_line(mem.text, 200)}"


def mem0(memory: Any, args: str) -> dict[str, Any]:
    verb, _, rest = args.strip().partition(" ")
    rest = rest.strip()
    service = memory.semantic()
    if service is None:
        return _reply([f"Semantic memory is not available: {memory.semantic_status}"], "warning")
    try:
        return _run(service, verb.lower() or "status", rest)
    except Exception as exc:  # a backend error is shown to the user, not raised into pi
        return _reply([f"/mem0 {verb} failed: {exc or type(exc).__name__}"], "error")  # a person's words


def _run(service: Any, verb: str, rest: str) -> dict[str, Any]:
    from pi_memory.semantic.service import RefusedError

    if verb == "status":
        return _reply(service.status().splitlines())
    if verb == "search":
        if not rest:
            return _reply([HELP], "warning")
        hits = service.search(rest)
        return _reply([_line(h.memory, h.score) for h in hits] or [f"No memory matches {rest!r}."])
    if verb in ("profile", "list"):
        mems = service.list(limit=1000)
        return _reply([f"{len(mems)} memories in this scope:", *(_line(m) for m in mems)] if mems
                      else ["No memories stored in this scope yet."])
    if verb == "add":
        if not rest:
            return _reply([HELP], "warning")
        try:
            mem, created = service.add(rest, source={"kind": "pi-command"})
        except (RefusedError, ValueError) as exc:
            return _reply([f"Not stored: {exc}"], "warning")
        said = redacted_line(rest)  # stored redacted, as `pi-memory semantic add` says too
        return _reply([("Stored " if created else "Already stored as ") + mem.id, *([said] if said else [])])
    if verb == "delete":
        if not rest:
            return _reply([HELP], "warning")
        if not service.delete(rest, reason="deleted with /mem0 delete"):
            return _reply([f"No active memory {rest!r} in this scope (see /mem0 profile)."], "warning")
        return _reply([f"Deleted {rest} (history kept)."])
    if verb == "dedup":
        apply = rest == "--apply"
        report = service.dedup(apply=apply)
        lines = [f"{len(g.ids)}× {one_line(g.text, 120)} — " + (f"left alone: {g.problem}" if g.problem
                                                               else f"keep {g.keep}") for g in report.groups]
        done = f", {report.removed} removed" if report.applied else " (preview: /mem0 dedup --apply removes them)"
        lines.append(f"{report.total} memories, {report.duplicates_found} duplicate(s){done}; "
                     f"{report.ambiguous} ambiguous group(s).")
        if report.refused:
            lines.append(f"refused: {report.refused}")
        return _reply(lines, "warning" if report.refused or report.failures else "info")
    return _reply([f"Unknown /mem0 action {verb!r}.", HELP], "warning")
