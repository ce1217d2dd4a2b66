"""``updateMemory``: the memory-block tool (seed 003's name and arguments: ``blockKey``, ``oldText``, ``newText``).

Only existing blocks can be changed; ``oldText`` given replaces its one occurrence, left out appends. Results
are :meth:`pi_memory.blocks.BlockResult.to_dict` dicts (``currentValue`` sanitised on a refusal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from pi_memory.blocks import BlockStore
    from pi_memory.tools import ToolSpec


class UpdateMemoryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    block_key: str = Field(alias="blockKey", description="The block to change, e.g. 'user' or 'agent' (one of "
                           "the blocks listed in <memory-blocks>).")
    old_text: str | None = Field(default=None, alias="oldText", description="Text found exactly once in the "
                                 "block, to replace with newText. Leave it out to append newText instead.")
    new_text: str = Field(alias="newText", description="The replacement text, or the text to append when "
                          "oldText is left out. An empty newText with oldText deletes that text.")


def create_block_tools(store: BlockStore) -> list[ToolSpec]:
    from pi_memory.tools import ToolSpec

    def on_invalid(error: str, arguments: dict) -> dict:
        return {"success": False, "code": "invalid_arguments", "error": error,
                "availableBlocks": [b.key for b in store.blocks()]}

    return [ToolSpec(
        name="updateMemory",
        label="Memory: update block",
        description="Change one of your memory blocks (shown in <memory-blocks> of the system prompt, from the "
        "next run on). Replace text found exactly once (oldText -> newText) or append newText. Each block has a "
        "character limit: when a change would pass it the call fails; shorten or replace stale text first. "
        "Keep blocks to durable facts; never save secrets.",
        args_model=UpdateMemoryArgs,
        handler=lambda a: store.update(a.block_key, a.new_text, a.old_text).to_dict(),
        destructive=True,
        on_invalid=on_invalid,
    )]
