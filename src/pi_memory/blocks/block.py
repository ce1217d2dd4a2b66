"""One memory block file: :class:`Block` and its file format (YAML frontmatter with ``description`` and
``limit``, then the value), read by :func:`parse_block` and written back by :func:`join_file` with the
frontmatter text as it was (see :mod:`pi_memory.blocks.store`)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from pi_memory.curated.entries import usage

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
    """``(frontmatter text or None, body)`` of a block file (python-frontmatter's YAML handler, imported only
    for a file that starts with a ``---`` line: the host hooks read blocks on a tight time budget)."""
    text = text.lstrip("\ufeff")
    if text.startswith(_FENCE):
        import frontmatter

        handler = frontmatter.YAMLHandler()
        if handler.detect(text):
            try:
                fm, body = handler.split(text)
                return fm, body
            except ValueError:
                pass
    return None, text


def join_file(fm: str | None, value: str) -> str:
    head = f"---\n{fm.strip(chr(10))}\n---\n\n" if fm is not None else ""
    return head + (value + "\n" if value else "")


def parse_block(key: str, scope: str, path: Path, text: str) -> Block:
    fm, body = split_file(text)
    block = Block(key, scope, path, value=body.strip("\r\n").replace("\r\n", "\n"))
    if fm is None:
        return block
    meta = _frontmatter(fm)
    if isinstance(meta, str):
        block.problems.append(f"frontmatter is not valid YAML ({meta}); defaults used")
        return block
    if not isinstance(meta, dict):
        block.problems.append("frontmatter is not a mapping; defaults used")
        return block
    description = meta.get("description")
    if description is not None:
        block.description = " ".join(str(description).split())
    limit = meta.get("limit")
    if limit is not None:
        if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit <= MAX_LIMIT:
            block.limit = limit
        else:
            block.problems.append(f"limit {limit!r} is not a whole number from 1 to {MAX_LIMIT:,}; the default "
                                  f"limit {DEFAULT_LIMIT:,} is used instead")
    return block


@functools.lru_cache(maxsize=256)
def _frontmatter(fm: str) -> object:
    """The parsed frontmatter (cached by its text: a block is read every run), or the parser's first error
    line as a string. libyaml's safe loader when present."""
    import yaml

    try:
        return yaml.load(fm, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}  # noqa: S506 - safe
    except yaml.YAMLError as exc:
        return str(exc).splitlines()[0]
