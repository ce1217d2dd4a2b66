"""What a person is shown of a memory block (``blocks show``/``list``, ``insights``, the inspector's Stores
page), kept apart from what a model is shown (:mod:`pi_memory.blocks.shown`).

A block file edited by hand can hold anything, ten megabytes included. A person is shown its value up to the
larger of the block's limit and :data:`SHOWN_CHARS` (:func:`shown_limit`): a block within its limit is shown
whole; past that only a prefix is redacted, escaped and shown (:func:`pi_memory.shown_text.cut`), with a note
giving its size and the file that holds the rest. Nothing past the prefix is scanned or printed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_memory.blocks.shown import MAX_DESCRIPTION
from pi_memory.shown_text import cut, shown

if TYPE_CHECKING:
    from pi_memory.blocks.block import Block

SHOWN_CHARS = 20_000  # characters of a block's value shown past its limit (a skill body's limit: one bound)


def shown_limit(block: Block) -> int:
    """How much of ``block``'s value a person is shown: its limit, or :data:`SHOWN_CHARS` when that is larger."""
    return max(block.limit, SHOWN_CHARS)


def for_person(block: Block) -> dict[str, Any]:
    """``block.to_dict()`` for a person: ``value`` and ``description`` shown (redacted, control characters
    escaped, cut at :func:`shown_limit` / :data:`MAX_DESCRIPTION`), ``cut`` the notes of what was left out
    (only when something was)."""
    data = block.to_dict(with_value=False)
    where = str(block.path)
    _, data["value"], value_cut = cut(block.value, shown_limit(block), "its value", where)
    _, data["description"], description_cut = cut(block.description, MAX_DESCRIPTION, "its description", where)
    if notes := [n for n in (value_cut, description_cut) if n]:
        data["cut"] = notes
    if block.problems:
        data["problems"] = [shown(p, SHOWN_CHARS) for p in block.problems]
    return data
