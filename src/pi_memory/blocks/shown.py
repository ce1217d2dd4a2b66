"""What a model may see of a memory block: its value (:func:`shown_value`, :func:`prompt_value`) and its
description (:func:`shown_description`), scanned, redacted and with control characters escaped."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from pi_memory import safety
from pi_memory.curated.entries import printable

if TYPE_CHECKING:
    from pi_memory.blocks.block import Block

MAX_DESCRIPTION = 200  # characters of a description (it goes into every prompt, like the block's text)


def shown_value(block: Block) -> str:
    """What a model may see of a block: a blocked marker for a hostile value, else the value with secrets
    redacted and control characters (ESC, NUL, other C0/C1 but tab and newline) shown as ``\\xNN`` escapes,
    as ``pi-memory read`` shows them, so a hand-edited escape sequence cannot hide text. Scans are cached by
    text: a block unchanged since the last run costs a dictionary lookup."""
    return _shown(block.key, str(block.path), block.value)


def prompt_value(block: Block) -> str:
    """:func:`shown_value` counted against the block's limit: a hand-edited value over it is cut there, with
    a note saying how much is left out (the file's own ``limit`` is capped at :data:`MAX_LIMIT` on read)."""
    shown = shown_value(block)
    if block.chars <= block.limit or shown.startswith("[BLOCKED: "):
        return shown
    return (f"{shown[:block.limit]}\n[... {block.chars - block.limit:,} more characters not shown: the block is "
            f"over its limit of {block.limit:,}; shorten it (oldText + newText) or ask the user to.]")


def shown_description(block: Block) -> str:
    """What a prompt holds of a block's description: ``""`` for none, a withheld note for a hostile one, else
    redacted with control characters escaped, cut at :data:`MAX_DESCRIPTION` characters with ``…`` (a
    hand-written file's description has no other bound)."""
    return _description(block.description) if block.description else ""


@functools.lru_cache(maxsize=256)
def _description(text: str) -> str:
    if safety.scan_threats(text):
        return "[description withheld: it matched a threat pattern; the user can fix it in the file]"
    shown = text if len(text) <= MAX_DESCRIPTION else text[:MAX_DESCRIPTION] + "…"
    return printable(safety.redact(shown))


@functools.lru_cache(maxsize=256)
def _shown(key: str, path: str, value: str) -> str:
    threats = safety.scan_threats(value)
    if threats:
        ids = list(dict.fromkeys(f.id for f in threats))
        return (f"[BLOCKED: memory block {key!r} contains threat pattern(s): {', '.join(ids)}. It was kept out "
                f"of the prompt; the user can fix it in {path}.]")
    return printable(safety.redact(value))


