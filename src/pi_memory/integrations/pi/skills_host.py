"""The bridge's ``skills`` method: what the pi extension's skills code (``extension/skills.ts``) asks for.

``{action: "paths"}`` -> ``{paths}``: skill folders for pi's ``resources_discover`` (global and the current
project's; hostile or already-visible ones left out, :meth:`SkillStore.discoverable`), then the shipped ones
(``learn-memory-tool``) unless the user has a skill of that name.
``{action: "list"}`` -> ``{skills, project, folders}`` for the ``/memory-skills`` manager (shown as ``skills list``
shows them: credentials redacted, control characters escaped, a description past 1,024 characters cut).
``{action: "move", ids, to}`` / ``{action: "delete", ids}`` -> ``{results: [{id, success, message|error}]}``,
one per id (a batch with partial success: a conflicting skill stays where it is and is reported).
``{action: "nudge", toolNames}`` -> ``{text}``: the once-per-session question after a complex run, or null.
``{action: "nudge_rule"}`` -> ``{minToolCalls, minDistinctTools, template}``: the same rule, for the extension
to apply synchronously at ``agent_end`` (``{calls}`` and ``{tools}`` in the template are the run's figures).
"""

from __future__ import annotations

from typing import Any

from pi_memory.skills import SkillStore, complex_run_nudge
from pi_memory.skills.nudge import MIN_DISTINCT_TOOLS, MIN_TOOL_CALLS, NUDGE_TEXT
from pi_memory.skills.person import result_for_person


def _ids(ids: Any) -> list[str]:
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ValueError("'ids' must be a list of skill ids")
    return ids


def _outcome(skill_id: str, result: dict) -> dict:
    result = result_for_person(result)  # the /memory-skills manager shows it to a person, not to a model
    out = {"id": skill_id, "success": bool(result.get("success"))}
    out["message" if out["success"] else "error"] = result.get("message") or result.get("error")
    return out


def handle(store: SkillStore, action: Any, params: dict[str, Any]) -> dict[str, Any]:
    if action == "paths":
        return {"paths": [str(p) for p in store.discoverable() + store.builtin_discoverable()]}
    if action == "list":
        from pi_memory.shown_text import shown_value
        from pi_memory.skills.document import MAX_DESCRIPTION

        return {"skills": [shown_value(s.summary(), MAX_DESCRIPTION) for s in store.skills()], "project": store.project_name,
                "folders": {k: str(v) for k, v in store.roots.items()}}
    if action == "move":
        to = params.get("to")
        return {"results": [_outcome(i, store.move(i, to)) for i in _ids(params.get("ids"))]}
    if action == "delete":
        return {"results": [_outcome(i, store.delete(i)) for i in _ids(params.get("ids"))]}
    if action == "nudge":
        names = params.get("toolNames")
        names = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
        return {"text": complex_run_nudge(names)}
    if action == "nudge_rule":
        return {"minToolCalls": MIN_TOOL_CALLS, "minDistinctTools": MIN_DISTINCT_TOOLS, "template": NUDGE_TEXT}
    raise ValueError(f"unknown skills action {action!r}; use paths, list, move, delete, nudge or nudge_rule")
