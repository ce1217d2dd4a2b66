"""The ``skill_manage`` tool: the agent saves and maintains reusable procedures (:mod:`pi_memory.skills`).

One action-dispatched tool, as in the seed (pi-hermes-memory), with its argument names (snake_case:
``skill_id``, ``when_to_use``, ``procedure_steps``, ``pitfalls``, ``verification_steps``), so prompts written
for it keep working. Structured fields are rendered into the four sections; raw ``content`` (Markdown, or a
whole ``SKILL.md`` whose frontmatter is then read) is accepted too. ``scope`` is required on create.

What a model sees of a skill is sanitised: a skill whose text matches the threat scanner (a hand-edited file)
is shown as a blocked marker, and credentials in it are redacted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from pi_memory import safety
from pi_memory.skills import document as fmt

if TYPE_CHECKING:
    from pi_memory.skills import SkillStore
    from pi_memory.tools import ToolSpec

Steps = str | list[str] | None


class SkillManageArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["create", "view", "patch", "update", "edit", "delete", "move"] = Field(
        description="create a new skill; view one (skill_id) or list all (no skill_id); patch one section; "
        "update the description and/or the whole body ('edit' is the same); delete; move between global and "
        "project.")
    skill_id: str | None = Field(default=None, description="The skill, e.g. 'global:deploy-staging' or "
                                 "'project:run-migrations' (a bare slug works when only one scope has it).")
    name: str | None = Field(default=None, description="create: a short name (at most 64 characters), e.g. "
                             "'debug flaky pytest'. Other actions: accepted in place of skill_id.")
    description: str | None = Field(
        default=None, description="create/update: what the procedure does and when to use it, with the words "
        "a user would type (symptoms, error strings, tool names); skills are chosen by this text alone.")
    scope: Literal["global", "project"] | None = Field(
        default=None, description="create (required): 'global' for a procedure that works anywhere, 'project' "
        "for one tied to this repository's paths, scripts, deploy steps or conventions. move: the destination.")
    when_to_use: str | None = Field(default=None, description="When the procedure applies (and when not).")
    procedure_steps: Steps = Field(default=None, description="The steps, in order.")
    pitfalls: Steps = Field(default=None, description="Mistakes to avoid.")
    verification_steps: Steps = Field(default=None, description="How to check it worked.")
    content: str | list[str] | None = Field(
        default=None, description="create/update: the whole Markdown body instead of the structured fields. "
        "patch: the new text of the section.")
    section: Literal["when_to_use", "procedure", "pitfalls", "verification"] | None = Field(
        default=None, description="patch: which section to replace.")


DESCRIPTION = (
    "Save and maintain reusable procedures (skills): HOW to do something that took several steps to work out "
    "(debugging a class of error, a deploy, a migration), so a future session can follow it. Save one after a "
    "task that needed real trial and error, not for trivia. Prefer structured fields (when_to_use, "
    "procedure_steps, pitfalls, verification_steps). Improve an existing skill (patch/update) rather than "
    "creating a near-copy. Never put secrets in a skill."
)


def _body(args: SkillManageArgs) -> str | None:
    structured = {"when_to_use": args.when_to_use, "procedure": args.procedure_steps,
                  "pitfalls": args.pitfalls, "verification": args.verification_steps}
    if any(v not in (None, "", []) for v in structured.values()):
        return fmt.render_body(**structured)
    if args.content in (None, "", []):
        return None
    return args.content if isinstance(args.content, str) else "\n".join(args.content)


def _raw_document(body: str | None) -> fmt.SkillDoc | None:
    """A whole ``SKILL.md`` passed as content (it starts with frontmatter), else ``None``."""
    if body and body.lstrip().startswith("---"):
        try:
            return fmt.parse(body.lstrip())
        except fmt.SkillFormatError:
            return None
    return None


MAX_LISTED = 100  # skills in one 'view' listing
MAX_CONTENT = fmt.MAX_BODY  # characters of one skill's body in a result: what a skill may hold


def _model_view(result: dict) -> dict:
    """Blocked marker for a hostile skill, redacted credentials otherwise (the model's view of a skill); a
    listing keeps the first :data:`MAX_LISTED` skills and a body its first :data:`MAX_CONTENT` characters (a
    hand-edited file past the limit), with ``truncated`` / ``total`` (and a ``note`` for a body) saying so, so
    one call cannot flood the context."""
    if result.get("success") and "skills" in result and len(result["skills"]) > MAX_LISTED:
        result = {**result, "skills": result["skills"][:MAX_LISTED], "truncated": True, "total": result["count"]}
    if not result.get("success") or "content" not in result:
        return result
    if len(result["content"]) > MAX_CONTENT:
        total = len(result["content"])
        result = {**result, "content": result["content"][:MAX_CONTENT], "truncated": True, "total": total,
                  "sections": {}, "note": f"Only the first {MAX_CONTENT:,} of the body's {total:,} characters are "
                  f"shown: the file was edited past the {MAX_CONTENT:,}-character limit of a skill body. To fix "
                  "it, save a shorter body with action 'update' (or ask the user to shorten the file)."}
    text = result["content"]
    threats = safety.scan_threats(text)
    if threats:
        marker = safety.blocked_marker(f"skill {result['skill']['id']}", sorted({f.id for f in threats}))
        return {**result, "content": marker, "sections": {}, "blocked": True}
    return {**result, "content": safety.redact(text),
            "sections": {k: safety.redact(v) for k, v in result.get("sections", {}).items()}}


def create_skill_tools(store: SkillStore) -> list[ToolSpec]:
    """``[skill_manage]`` bound to ``store``."""
    from pi_memory.tools import ToolSpec

    def need_id(args: SkillManageArgs) -> dict | None:
        if not args.skill_id:
            return {"success": False, "code": "invalid_arguments",
                    "error": f"Action '{args.action}' needs skill_id (see action 'view' for the list)."}
        return None

    def handle(args: SkillManageArgs) -> dict:
        body = _body(args)
        if args.action != "create" and not args.skill_id and args.name:
            # "view the skill named X": a model often names the skill instead of giving its id
            args = args.model_copy(update={"skill_id": args.name})
        if args.action == "create":
            raw = _raw_document(body)
            if raw is not None:
                return store.create(args.name or raw.name, args.description or raw.description, args.scope,
                                    raw.body)
            return store.create(args.name or "", args.description or "", args.scope, body or "")
        if args.action == "view":
            return _model_view(store.view(args.skill_id))
        missing = need_id(args)
        if missing:
            return missing
        if args.action == "patch":
            if not args.section:
                return {"success": False, "code": "invalid_arguments",
                        "error": "patch needs section (when_to_use, procedure, pitfalls or verification) and "
                        "content (its new text)."}
            structured = {"when_to_use": args.when_to_use, "procedure": args.procedure_steps,
                          "pitfalls": args.pitfalls, "verification": args.verification_steps}
            text = args.content if args.content not in (None, "", []) else structured[args.section]
            return store.patch(args.skill_id, args.section, text or "")
        if args.action in ("update", "edit"):
            raw = _raw_document(body)
            if raw is not None:
                return store.update(args.skill_id, args.description or raw.description, raw.body)
            return store.update(args.skill_id, args.description, body)
        if args.action == "delete":
            return store.delete(args.skill_id)
        if not args.scope:
            return {"success": False, "code": "invalid_arguments",
                    "error": "move needs scope: the destination, 'global' or 'project'."}
        return store.move(args.skill_id, args.scope)

    return [
        ToolSpec(
            name="skill_manage",
            label="Skills: manage",
            description=DESCRIPTION,
            args_model=SkillManageArgs,
            handler=handle,
            destructive=True,
        )
    ]
