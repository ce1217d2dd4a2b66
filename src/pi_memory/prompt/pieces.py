"""The run parts (memory blocks, standing instructions) in pieces of a bounded length, for a host that keeps one
injected text whole only up to a cap (Claude Code: ``integrations.hooks.protocol.CLAUDE_CONTEXT_CAP``; a longer
one reaches the model as a short preview and a file path).

The decision: the run parts are **split, not cut**. Nothing is dropped, since there is no tool that would give the
model the rest of a block, and the user chose each block's limit. (Which blocks are in the run parts at all is the
overall budget's decision, ``blocksCharBudget``, :mod:`pi_memory.blocks.budget`: the note naming those left out
comes after the last block, in the last blocks piece.) The pieces arrive in the order of the run parts
(the blocks in their order, then the standing instructions), each whole in a reminder of its own (the hooks send
the first beside the snapshot when it fits, the rest with the first prompts: ``integrations.hooks.handlers``).
Each piece is a complete fence of its own (``<memory-blocks>`` with the preamble, or ``<standing-instructions>``)
and its first line says which part of how many it is, so the model knows more follows and that together they are
the whole. Whole blocks go together while they fit; a block longer than a piece is cut at line ends (a line longer
than a piece at the length left), and each later part of it is headed ``## <key> (continued)``. When the run
parts fit in one piece, that one piece is exactly the joined text, unmarked.
"""

from __future__ import annotations

from collections.abc import Callable

from pi_memory.blocks import Block
from pi_memory.prompt.render import block_sections, blocks_fence, blocks_text

MARKER = ("[Part {i} of {n} of your memory blocks and standing instructions: too long for one message here, they "
          "come whole in messages of their own, in order, with the next prompts. Together the parts are the whole.]")
STANDING_OPEN = "<standing-instructions>\n"
MIN_START = 1_000  # a block longer than a piece starts in the piece before when at least this much room is left


def run_pieces(blocks: list[Block], standing: str, limit: int,
               length: Callable[[str], int] = len, note: str = "") -> tuple[str, list[str]]:
    """``(the run text, its pieces)``: the run text is ``blocks_text(blocks, note)`` and ``standing`` joined by a
    blank line (what a host without a cap gets), the pieces the same in texts of at most ``limit`` (measured by
    ``length``): none when there is nothing, one unmarked piece (the run text) when it fits. ``note``: the line
    naming the blocks the budget left out, after the last block."""
    joined = "\n\n".join(t for t in (blocks_text(blocks, note), standing) if t)
    if not joined:
        return "", []
    if length(joined) <= limit:
        return joined, [joined]
    marker_room = length(MARKER.format(i=999, n=999)) + 1
    room = limit - length(blocks_fence([""])) - marker_room  # for the sections of one piece
    groups = _groups(blocks, room, length, note)

    def marked(n: int) -> list[str]:
        return [blocks_fence(group, MARKER.format(i=i, n=n)) for i, group in enumerate(groups, 1)]

    pieces = marked(len(groups))
    if not standing:
        return joined, pieces
    if pieces and length(f"{pieces[-1]}\n\n{standing}") <= limit:  # beside the last blocks: that part's line says it
        return joined, [*pieces[:-1], f"{pieces[-1]}\n\n{standing}"]
    n = len(groups) + 1
    return joined, [*marked(n), standing.replace(STANDING_OPEN, f"{STANDING_OPEN}{MARKER.format(i=n, n=n)}\n", 1)]


class _Filler:
    """Sections (a heading, a line break, the value) put into groups of at most ``room`` (the blank lines
    between them counted)."""

    def __init__(self, room: int, length: Callable[[str], int]) -> None:
        self.room, self.length = room, length
        self.groups: list[list[str]] = [[]]
        self.used = 0

    def left(self) -> int:
        return self.room - self.used - (2 if self.groups[-1] else 0)

    def add(self, section: str) -> None:
        self.used = self.room - self.left() + self.length(section)
        self.groups[-1].append(section)

    def next_group(self) -> None:
        if self.groups[-1]:
            self.groups.append([])
            self.used = 0


def _groups(blocks: list[Block], room: int, length: Callable[[str], int], note: str = "") -> list[list[str]]:
    """The blocks' sections in groups (one group, one piece). A block that fits in a piece is never cut: it goes
    whole into the current group, or starts the next. A longer one starts in the current group when a good part
    of it is left (:data:`MIN_START`) and goes on in the next ones, cut at line ends, each later part headed
    ``## <key> (continued)``."""
    fill = _Filler(room, length)
    for key, head, value in block_sections(blocks):
        whole = f"{head}\n{value}"
        if length(whole) <= room:
            if length(whole) > fill.left():
                fill.next_group()
            fill.add(whole)
            continue
        if fill.left() < MIN_START:
            fill.next_group()
        continued = f"## {key} (continued)"
        heading, chunk = head, ""
        for line in _lines(value, max(room - max(length(head), length(continued)) - 1, 100), length):
            candidate = f"{chunk}\n{line}" if chunk else line
            if length(f"{heading}\n{candidate}") > fill.left():
                if chunk:
                    fill.add(f"{heading}\n{chunk}")
                    heading = continued
                fill.next_group()
                candidate = line
            chunk = candidate
        fill.add(f"{heading}\n{chunk}")
    if note:  # a few hundred characters: after the last block, in a piece of its own when that one is full
        if length(note) > fill.left():
            fill.next_group()
        fill.add(note)
    return [group for group in fill.groups if group]


def _lines(value: str, room: int, length: Callable[[str], int]) -> list[str]:
    """The lines of ``value``, a line longer than ``room`` cut into slices that fit."""
    out = []
    for line in value.split("\n"):
        while length(line) > room:
            cut = room
            while cut > 1 and length(line[:cut]) > room:  # characters counted twice by ``length`` (UTF-16)
                cut -= max(1, (length(line[:cut]) - room + 1) // 2)
            out.append(line[:cut])
            line = line[cut:]
        out.append(line)
    return out
