"""The four curated-memory tools: ``memory_add``, ``memory_replace``, ``memory_remove``, ``memory_read``.

Names and camelCase parameters follow the seed extension (``target``, ``content``, ``oldText``,
``newContent``) so prompts written for it keep working. Results are :class:`MemoryResult` dicts; entries a
model sees are sanitised (blocked markers, redacted secrets).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from pi_memory.curated.results import MemoryResult
from pi_memory.curated.store import FailureCategory

if TYPE_CHECKING:
    from pi_memory.curated import MemoryStore
    from pi_memory.tools import ToolSpec

TargetField = Field(
    description="'memory': your own notes that apply everywhere (environment, tools, habits); 'user': facts about "
    "the user (preferences, role, how they like to work); 'project': notes about the current repository; "
    "'failure': a lesson from a mistake or a correction (give a category)."
)
Target = Literal["memory", "user", "project", "failure"]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class AddArgs(_Args):
    target: Target = TargetField
    content: str = Field(description="The entry to save: one self-contained fact, short and specific.")
    category: FailureCategory | None = Field(
        default=None, description="Only for target 'failure': what kind of lesson this is (default 'failure')."
    )
    failure_reason: str | None = Field(
        default=None, alias="failureReason", description="Only for target 'failure': what went wrong, briefly."
    )


class ReplaceArgs(_Args):
    target: Target = TargetField
    old_text: str = Field(alias="oldText", description="A short piece of text found in exactly one existing entry.")
    new_content: str = Field(alias="newContent", description="The full new text of that entry (it replaces the whole entry).")


class RemoveArgs(_Args):
    target: Target = TargetField
    old_text: str = Field(alias="oldText", description="A short piece of text found in exactly one existing entry.")


class ReadArgs(_Args):
    target: Target = TargetField


GUIDE = (
    "Curated memory persists across sessions and is shown to you at the start of each session. Save what will "
    "matter later: the user's preferences and corrections first, then stable facts about their environment and "
    "conventions. Skip trivia, task progress and anything easy to look up again. Never save secrets."
)


GUIDE_POLICY = (
    "Curated memory persists across sessions; it is not shown in your prompt, so find it with memory_search. Save "
    "what will matter later: the user's preferences and corrections first, then stable facts about their "
    "environment and conventions. Skip trivia, task progress and anything easy to look up again. Never save secrets."
)


def create_memory_tools(store: MemoryStore, injected: bool = True) -> list[ToolSpec]:
    """The four tools bound to ``store``. ``injected=False`` (policy mode): the descriptions say memory is
    searched, not shown in the prompt."""
    from pi_memory.tools import ToolSpec

    guide = GUIDE if injected else GUIDE_POLICY

    def on_invalid(error: str, arguments: dict) -> dict:
        target = arguments.get("target")
        return store.refuse_invalid(target if target in store.targets else "memory", error, arguments).to_dict()

    def add(a: AddArgs) -> dict:
        if a.target == "failure":
            return store.add_failure(a.content, a.category or "failure", a.failure_reason).to_dict()
        if a.category or a.failure_reason:
            return store.refuse_invalid(
                a.target if a.target in store.targets else "memory",
                "category and failureReason apply only to target 'failure'. Drop them, or use target 'failure'.",
                a.model_dump(by_alias=True, exclude_none=True),
            ).to_dict()
        return store.add(a.target, a.content).to_dict()

    return [
        ToolSpec(
            name="memory_add",
            label="Memory: add",
            description=f"Add one entry to persistent memory. {guide} An exact duplicate is accepted without a "
            "second copy. When the store is full the call fails and lists the entries: merge or remove some, then retry.",
            args_model=AddArgs,
            handler=add,
            result_model=MemoryResult,
            idempotent=True,
            on_invalid=on_invalid,
        ),
        ToolSpec(
            name="memory_replace",
            label="Memory: replace",
            description="Replace one whole entry of persistent memory, found by a short unique piece of its text "
            "(oldText), with newContent. Use it to correct or merge entries.",
            args_model=ReplaceArgs,
            handler=lambda a: store.replace(a.target, a.old_text, a.new_content).to_dict(),
            result_model=MemoryResult,
            destructive=True,
            on_invalid=on_invalid,
        ),
        ToolSpec(
            name="memory_remove",
            label="Memory: remove",
            description="Delete one entry of persistent memory, found by a short unique piece of its text (oldText).",
            args_model=RemoveArgs,
            handler=lambda a: store.remove(a.target, a.old_text).to_dict(),
            result_model=MemoryResult,
            destructive=True,
            on_invalid=on_invalid,
        ),
        ToolSpec(
            name="memory_read",
            label="Memory: read",
            description="List the current entries of one persistent memory store with their count and usage. "
            "Shows writes made in this session, which the memory block of the system prompt does not.",
            args_model=ReadArgs,
            handler=lambda a: store.read(a.target, sanitised=True).to_dict(),
            result_model=MemoryResult,
            read_only=True,
            idempotent=True,
            on_invalid=on_invalid,
        ),
    ]
