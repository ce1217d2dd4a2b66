"""``/mem0`` (seed 004's command family) over the semantic service, as ``pi-memory semantic`` does:
``status``, ``search QUERY``, ``profile`` (every active memory), ``add TEXT``, ``update ID TEXT``, ``delete ID``,
``dedup [--apply]``. Text for a person; stored values are printed as plain text."""

from __future__ import annotations

from typing import Any

from pi_memory.reports import one_line, redacted_line

HELP = "Usage: /mem0 status | search QUERY | profile | add TEXT | update ID TEXT | delete ID | dedup [--apply]"


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
    if verb == "update":
        return _update(service, rest)
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


def _update(service: Any, rest: str) -> dict[str, Any]:
    from pi_memory.semantic.backend import MemoryChangedError, MemoryNotFoundError
    from pi_memory.semantic.service import RefusedError

    mid, _, text = rest.partition(" ")
    if not mid or not text.strip():
        return _reply([HELP], "warning")
    try:
        mem = service.update(mid, text.strip(), reason="updated with /mem0 update")
    except MemoryChangedError as exc:
        newer = f"; its newer version is {exc.superseded_by}" if exc.superseded_by else ""
        return _reply([f"Nothing changed: {mid} is {exc.status} already{newer}."], "warning")
    except MemoryNotFoundError:
        return _reply([f"No active memory {mid!r} in this scope (see /mem0 profile)."], "warning")
    except (RefusedError, ValueError) as exc:
        return _reply([f"Not stored: {exc}"], "warning")
    if mem.id == mid:
        return _reply([f"{mid} already says that: nothing changed."])
    said = redacted_line(text)
    return _reply([f"Replaced {mid} by {mem.id} (the old version is kept in its history).", *([said] if said else [])])
