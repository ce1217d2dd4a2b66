"""What a model may see of a memory block: its value (:func:`shown_value`, :func:`prompt_value`) and its
description (:func:`shown_description`), scanned, redacted and with control characters escaped."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from pi_memory import safety
from pi_memory.curated.entries import printable
from pi_memory.shown_text import raw_prefix

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
    """:func:`shown_value` counted against the block's limit: a hand-edited value over it (writes never pass
    it) is cut there first, before a character of it is scanned, with a note saying how much is left out (the
    file's own ``limit`` is capped at :data:`MAX_LIMIT` on read). Only the part a prompt holds is scanned: a
    10 MB file costs what its first ``limit`` characters cost. The cut ends before a credential it would split
    (:func:`pi_memory.shown_text.raw_prefix`), so redacting the part hides all of it."""
    if block.chars <= block.limit:
        return shown_value(block)
    part = raw_prefix(block.value, block.limit)
    shown = _shown(block.key, str(block.path), part)
    if shown.startswith("[BLOCKED: "):
        return shown
    return (f"{shown}\n[... {block.chars - len(part):,} more characters not shown: the block is over its limit "
            f"of {block.limit:,}; shorten it (oldText + newText) or ask the user to.]")


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


