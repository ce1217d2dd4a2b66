"""How many characters of memory blocks one prompt holds: the overall budget (``blocksCharBudget``, default
:data:`DEFAULT_BUDGET`) and which blocks fit in it.

Each block has a limit of its own (at most :data:`~pi_memory.blocks.block.MAX_LIMIT`), but nothing bounded them
together: 60 global blocks filled to 94,000 characters each put 5.6 million characters into every pi run, and the
session-start hook of Claude Code ran out of time and gave the session nothing. So the blocks' values in a prompt
(each counted up to its limit, as the prompt cuts it: :func:`prompt_chars`) together stay within the budget.

:func:`fit` takes the blocks in their own order (the project's first, then the global ones, each folder by key:
:meth:`pi_memory.blocks.BlockStore.blocks`) and keeps each one whole when it fits in what is left; one that does
not is left out whole (never cut: a block cut in the middle reads as the whole of it), and a later, smaller block
may still fit. What was left out is said twice: :func:`model_note` inside the fenced blocks (the model reads it,
and can still find their text with ``memory_search``), :func:`person_warning` for ``blocks list``, ``status``,
``preview-context`` and pi's ``/memory``; :func:`left_out_reason` beside each left-out block on the inspector's Stores
page. A new block whose limit alone passes the budget is refused
(:meth:`~pi_memory.blocks.BlockStore.create`): it could never be shown whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pi_memory.config import DEFAULT_BLOCKS_CHAR_BUDGET

if TYPE_CHECKING:
    from pi_memory.blocks.block import Block

DEFAULT_BUDGET = DEFAULT_BLOCKS_CHAR_BUDGET  # characters of all blocks' values in one prompt (100,000: what one
# block may hold at most); the setting is read at the composition root and handed to the BlockStore
SETTING = "blocksCharBudget"
NAMED = 20  # left-out blocks named in a note; the rest counted


def prompt_chars(block: Block) -> int:
    """The characters of ``block``'s value a prompt holds: all of it, or its limit when it is over (cut there)."""
    return min(block.chars, block.limit)


@dataclass(frozen=True)
class Fitted:
    """The blocks a prompt shows (``shown``, in order) and those left out (``left_out``), against ``budget``;
    ``used``: the characters the shown ones hold."""

    budget: int
    shown: list[Block] = field(default_factory=list)
    left_out: list[Block] = field(default_factory=list)
    used: int = 0

    def to_dict(self) -> dict:
        return {"budget": self.budget, "used": self.used, "shown": [b.key for b in self.shown],
                "leftOut": [{"key": b.key, "scope": b.scope, "chars": prompt_chars(b)} for b in self.left_out]}


def fit(blocks: list[Block], budget: int) -> Fitted:
    """The blocks of ``blocks`` (in order) that fit in ``budget`` characters together (module docstring)."""
    shown: list[Block] = []
    left_out: list[Block] = []
    used = 0
    for block in blocks:
        size = prompt_chars(block)
        if used + size <= budget:
            shown.append(block)
            used += size
        else:
            left_out.append(block)
    return Fitted(budget, shown, left_out, used)


def _named(blocks: list[Block]) -> str:
    names = ", ".join(f"{b.key} ({prompt_chars(b):,} chars)" for b in blocks[:NAMED])
    return names + (f" and {len(blocks) - NAMED} more" if len(blocks) > NAMED else "")


def model_note(fitted: Fitted) -> str:
    """The line the fenced blocks end with when some were left out (``""`` when none was)."""
    if not fitted.left_out:
        return ""
    return (f"[!] {len(fitted.left_out)} memory block(s) are NOT shown here: together the blocks pass the "
            f"{fitted.budget:,}-character budget for memory blocks in this prompt. Left out: "
            f"{_named(fitted.left_out)}. memory_search with target \"block\" still finds their text. Tell the user, "
            f"so they can shorten or delete blocks, or raise {SETTING}.")


def person_warning(fitted: Fitted) -> str:
    """What a person reads when some blocks were left out of the prompt (``""`` when none was)."""
    if not fitted.left_out:
        return ""
    return (f"{len(fitted.left_out)} memory block(s) are left out of every prompt: the blocks together pass the "
            f"budget of {fitted.budget:,} characters for memory blocks (the {len(fitted.shown)} shown hold "
            f"{fitted.used:,}). Left out: {_named(fitted.left_out)}. Shorten or delete blocks, or raise "
            f"\"{SETTING}\" in the \"pi-memory\" settings (settings.json).")


def left_out_reason(block: Block, fitted: Fitted) -> str:
    """Why ``block``, one of ``fitted.left_out``, is not in the prompt, for a person (the inspector's Stores page)."""
    return (f"Left out of every prompt: with its {prompt_chars(block):,} characters the memory blocks would pass "
            f"their budget of {fitted.budget:,} characters (\"{SETTING}\"), and the {len(fitted.shown)} shown hold "
            f"{fitted.used:,}. The model does not see it, though memory_search still finds its text. Shorten or "
            f"delete blocks, or raise \"{SETTING}\" in the \"pi-memory\" settings (settings.json).")


def over_budget_error(limit: int, budget: int) -> str:
    """Why a new block with ``limit`` is refused: alone, it passes the budget."""
    return (f"A limit of {limit:,} characters is over the {budget:,} that all memory blocks together may hold in a "
            f"prompt (\"{SETTING}\"), so the block could never be shown whole. Nothing was created. Use a limit of "
            f"at most {budget:,}, or raise \"{SETTING}\" in the \"pi-memory\" settings (settings.json).")
