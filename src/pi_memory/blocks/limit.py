"""A person changes a memory block's character limit (``pi-memory blocks limit KEY CHARS``, pi's ``/memory limit
KEY CHARS``): :func:`change_limit`.

Until this, a limit could only be changed by editing the file, and a limit edited past the blocks' budget
(:mod:`pi_memory.blocks.budget`) left the block out of every prompt. A change is refused, with nothing written,
when the new limit is

* not a whole number from 1 to :data:`~pi_memory.blocks.block.MAX_LIMIT` (``invalid_limit``);
* below the characters the block holds now (``below_text``): the prompt would cut it; shorten the text first;
* a raise that brings the limits of the blocks in effect together past ``blocksCharBudget`` (``over_budget``):
  once they fill up, some would be left out of the prompt. Lowering a limit is never refused for the budget
  (it is how a hand-edited limit past the budget is brought back).

The write is a block write like :meth:`~pi_memory.blocks.BlockStore.update`: the data root's write check first,
then the block's lock, the file re-read under it through :func:`~pi_memory.blocks.paths.open_block` (a link
swapped in is never written through), the checks again on what the file holds now, and an atomic publish. Only
the ``limit`` line of the frontmatter changes (added when there is none); other keys, and their comments, stay as
they were (a frontmatter where that line cannot be replaced alone is written back from its values). Block edits
keep no history; the message names the command that undoes the change (the old limit).
"""

from __future__ import annotations

import re

from pi_memory.blocks.block import MAX_LIMIT, Block, join_file, parse_block, split_file
from pi_memory.blocks.budget import SETTING
from pi_memory.blocks.paths import LinkSwapped, folder_escape, open_block
from pi_memory.blocks.store import BlockResult, BlockStore
from pi_memory.curated.files import StoreLockedError, atomic_write_text, locked
from pi_memory.curated.messages import not_written
from pi_memory.front_matter import FrontMatterError, FrontMatterRefused
from pi_memory.front_matter import load as load_front_matter
from pi_memory.storage import write_failure

_LIMIT_LINE = re.compile(r"limit[ \t]*:")


def change_limit(store: BlockStore, key: str, limit: object) -> BlockResult:
    """Set the limit of block ``key`` (the one in effect) to ``limit`` characters (module docstring)."""
    block = store.get(key) if isinstance(key, str) else None
    if block is None:
        return _unknown(store, key)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= MAX_LIMIT:
        return BlockResult(False, "invalid_limit", key, block=block, error=f"The limit must be a whole number from "
                           f"1 to {MAX_LIMIT:,} characters, not {limit!r}. Nothing was changed.")
    if (refused := _refusal(store, block, limit)) is not None:
        return refused
    if (problem := store._write_problem()) is not None:  # a person asked: what to do, no "retry"
        return BlockResult(False, "read_only", key, block=block, error=not_written(
            f"The limit of block {key!r} was not changed", problem, for_model=False))
    try:
        with locked(block.path, store.lock_timeout, store.lock_dir):
            return _change_locked(store, block, limit)
    except StoreLockedError as exc:
        return BlockResult(False, "locked", key, block=block, error=str(exc))
    except OSError as exc:
        if (problem := write_failure(exc, block.path, "folder")) is not None:
            return BlockResult(False, "read_only", key, block=block, error=f"The limit of block {key!r} was not "
                               f"changed ({block.path}): {problem.message[0].lower()}{problem.message[1:]}")
        return BlockResult(False, "io_error", key, block=block, error=f"Could not read or write {block.path} "
                           f"({type(exc).__name__}: {exc}). Nothing was changed. Check that the file is writable.")


def _unknown(store: BlockStore, key: object) -> BlockResult:
    """The refusal for a key no block file in effect has, for a person: a default block no file holds yet is
    named as such; a link or refused file keeps the store's words; otherwise the blocks there are."""
    refused = store._unknown(key)
    if refused.code != "unknown_block":
        return refused
    defaults = [b.key for b in store.default_preview() if b.default]
    if key in defaults:
        others = " and ".join(repr(k) for k in defaults if k != key)
        refused.error = (f"Block {key!r} has no file yet: the next session start creates it, with the default "
                         f"limit. Nothing was changed. Change its limit after that, or create it now with "
                         f"`pi-memory blocks create {key} --limit CHARS` (a session start then makes no default "
                         f"block: create {others} too if you want {'it' if ' and ' not in others else 'them'}).")
    else:
        known = ", ".join(refused.available) or ("none yet; a session start makes " + " and ".join(defaults)
                                                 if defaults else "none")
        refused.error = (f"There is no memory block {refused.block_key!r} (blocks: {known}). Nothing was changed. "
                         "See `pi-memory blocks list`.")
    return refused


def _refusal(store: BlockStore, block: Block, limit: int) -> BlockResult | None:
    """Why ``block`` may not get ``limit``: below its text, or a raise past the budget (module docstring)."""
    key = block.key
    if limit < block.chars:
        return BlockResult(False, "below_text", key, block=block, error=(
            f"Block {key!r} holds {block.chars:,} characters, more than a limit of {limit:,}: every prompt would "
            f"cut it there. Nothing was changed. Shorten its text first (edit {block.path}), or use a limit of at "
            f"least {block.chars:,}."))
    others = sum(b.limit for b in store.blocks() if b.key != key)
    if limit <= block.limit or others + limit <= store.budget:
        return None
    room = store.budget - others
    smaller = (f"use a limit of at most {room:,} (what the other blocks' limits leave), "
               if room >= max(block.chars, 1) and room > block.limit else "")
    return BlockResult(False, "over_budget", key, block=block, error=(
        f"A limit of {limit:,} characters for block {key!r} would bring the limits of the memory blocks together "
        f"to {others + limit:,}, over the {store.budget:,} characters all blocks may hold in one prompt "
        f"(\"{SETTING}\"): once they fill up, some would be left out of the prompt. Nothing was changed. To go on, "
        f"{smaller}lower other blocks' limits (`pi-memory blocks limit KEY CHARS`), or raise \"{SETTING}\" in the "
        "\"pi-memory\" settings (settings.json)."))


def with_limit(fm: str | None, limit: int) -> str | None:
    """The frontmatter text ``fm`` with ``limit`` as its limit: its ``limit:`` line replaced (or one added), the
    rest as it was; written back from its values when the line cannot be replaced alone; ``None`` when ``fm``
    cannot be read as a mapping (the caller refuses)."""
    if fm is None:
        return f"limit: {limit}"
    try:
        meta = load_front_matter(fm) or {}
    except FrontMatterError:
        return None
    if not isinstance(meta, dict):
        return None
    lines = fm.split("\n")
    found = [i for i, line in enumerate(lines) if _LIMIT_LINE.match(line)]
    if len(found) == 1:
        lines[found[0]] = f"limit: {limit}"
        candidate = "\n".join(lines)
    else:
        candidate = fm.rstrip("\r\n") + f"\nlimit: {limit}"
    try:
        after = load_front_matter(candidate) or {}
    except FrontMatterError:
        after = None
    if after == {**meta, "limit": limit}:
        return candidate
    import yaml

    return yaml.safe_dump({**meta, "limit": limit}, sort_keys=False, allow_unicode=True, width=10_000)


def _change_locked(store: BlockStore, block: Block, limit: int) -> BlockResult:
    key = block.key
    folder = store.project_dir if block.scope == "project" else store.global_dir
    assert folder is not None
    if folder_escape(block.scope, folder, store.project_root) is not None:  # made a link since it was read
        return store._unknown(key)
    try:
        target, raw = open_block(block.path, folder)
    except LinkSwapped:
        return store._unknown(key, link=True)
    if raw is None:
        raise FileNotFoundError(block.path)
    try:
        text = raw.decode("utf-8")
        fresh = parse_block(key, block.scope, block.path, text)
    except UnicodeDecodeError as exc:
        return BlockResult(False, "not_utf8", key, block=block, error=(
            f"{block.path} is not valid UTF-8 text (byte {exc.start}), so writing it back could damage it. Nothing "
            "was changed. Convert the file to UTF-8 first."))
    except FrontMatterRefused:  # edited so since it was read
        return store._unknown(key)
    if (refused := _refusal(store, fresh, limit)) is not None:  # what the file holds now
        return refused
    fm, _ = split_file(text)
    old = fresh.limit
    if limit == old and not any(p.startswith("limit ") for p in fresh.problems):
        return BlockResult(True, "unchanged", key, block=fresh, message=f"Block {key!r} already has a limit of "
                           f"{limit:,} characters ({fresh.usage}). Nothing was changed.")
    new_fm = with_limit(fm, limit)
    if new_fm is None:
        return BlockResult(False, "unreadable_frontmatter", key, block=fresh, error=(
            f"The frontmatter of {block.path} cannot be read ({'; '.join(fresh.problems) or 'not a mapping'}), so "
            "its limit cannot be changed without losing what it holds. Nothing was changed. Fix the frontmatter "
            "by hand (description: ..., limit: ...), then run this again."))
    atomic_write_text(target, join_file(new_fm, fresh.value), follow_links=False)
    fresh.limit = limit
    fresh.problems = [p for p in fresh.problems if not p.startswith("limit ")]
    return BlockResult(True, "ok", key, block=fresh, message=(
        f"Block {key!r} ({block.scope}): limit {old:,} -> {limit:,} characters (now {fresh.usage}). It counts from "
        f"the next prompt on. To undo: pi-memory blocks limit {key} {old}"))
