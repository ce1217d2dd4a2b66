"""One memory block file: :class:`Block` and its file format (YAML frontmatter with ``description`` and
``limit``, then the value), read by :func:`parse_block` and written back by :func:`join_file` with the
frontmatter text as it was (see :mod:`pi_memory.blocks.store`). The frontmatter is read by the one safe loader
(:mod:`pi_memory.front_matter`): YAML aliases, or a frontmatter past its length, make :func:`parse_block` raise
:class:`~pi_memory.front_matter.FrontMatterRefused` (the store skips that file and says so); YAML that cannot be
read, a ``description`` that is not plain text or a ``limit`` out of range are problems of the block, whose
defaults are used instead."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from pi_memory.curated.entries import usage
from pi_memory.front_matter import FrontMatterError, FrontMatterRefused, kind, not_plain_text
from pi_memory.front_matter import load as load_front_matter
from pi_memory.front_matter import split as split_front_matter

DEFAULT_LIMIT = 2000
MAX_LIMIT = 100_000
_FENCE = "---"


@dataclass
class Block:
    key: str
    scope: str  # "project" | "global"
    path: Path
    description: str = ""
    limit: int = DEFAULT_LIMIT
    value: str = ""
    problems: list[str] = field(default_factory=list)  # frontmatter problems found on load
    shadowed: bool = False  # a project block with the same key hides this global one
    default: bool = False  # a default block no file holds yet: a session start creates it (default_preview)

    @property
    def chars(self) -> int:
        return len(self.value)

    @property
    def usage(self) -> str:
        return usage(self.chars, self.limit)

    def to_dict(self, with_value: bool = True) -> dict:
        data = {"key": self.key, "scope": self.scope, "file": str(self.path), "description": self.description,
                "limit": self.limit, "chars": self.chars, "usage": self.usage}
        if with_value:
            data["value"] = self.value
        if self.problems:
            data["problems"] = list(self.problems)
        if self.shadowed:
            data["shadowed"] = True
        if self.default:
            data["default"] = True
        return data


def split_file(text: str) -> tuple[str | None, str]:
    """``(frontmatter text or None, body)`` of a block file (:func:`pi_memory.front_matter.split`)."""
    return split_front_matter(text)


def join_file(fm: str | None, value: str) -> str:
    head = f"---\n{fm.strip(chr(10))}\n---\n\n" if fm is not None else ""
    return head + (value + "\n" if value else "")


def parse_block(key: str, scope: str, path: Path, text: str) -> Block:
    fm, body = split_file(text)
    block = Block(key, scope, path, value=body.strip("\r\n").replace("\r\n", "\n"))
    if fm is None:
        return block
    meta = _frontmatter(fm)
    if isinstance(meta, FrontMatterRefused):
        raise FrontMatterRefused(str(meta))  # a new one: the cached one would collect every raise's traceback
    if isinstance(meta, FrontMatterError):
        block.problems.append(f"{str(meta).removeprefix('its ')}; defaults used")
        return block
    if not isinstance(meta, dict):
        block.problems.append("frontmatter is not a mapping; defaults used")
        return block
    description = meta.get("description")
    if isinstance(description, list | dict):  # its repr is no description (and may be huge)
        block.problems.append(f"{not_plain_text('description', description)}; no description used (write it as "
                              "one line of text)")
    elif description is not None:
        block.description = " ".join(str(description).split())
    limit = meta.get("limit")
    if limit is not None:
        if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit <= MAX_LIMIT:
            block.limit = limit
        else:
            shown = kind(limit) if isinstance(limit, list | dict) else repr(limit)
            block.problems.append(f"limit {shown} is not a whole number from 1 to {MAX_LIMIT:,}; the default "
                                  f"limit {DEFAULT_LIMIT:,} is used instead")
    return block


@functools.lru_cache(maxsize=256)
def _frontmatter(fm: str) -> object:
    """The parsed frontmatter (cached by its text: a block is read every run), or the
    :class:`~pi_memory.front_matter.FrontMatterError` it gives (cached too: a refused file is met at every run)."""
    try:
        return load_front_matter(fm) or {}
    except FrontMatterError as exc:
        return exc
