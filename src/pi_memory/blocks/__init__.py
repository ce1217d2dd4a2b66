"""Memory blocks (seed 003, Letta-style): ``.pi/memory-blocks/<key>.md`` of the project and
``<data root>/blocks/<key>.md`` (global), each with a ``description`` and a character ``limit``.

Public API::

    store = BlockStore.from_settings(settings, project_root, project_trusted)  # the caller decides the trust
    store.blocks() -> list[Block]            # in effect (a project block hides a global one with its key)
    store.withheld() -> list[Path]           # an untrusted project's block files, which are not read
    store.skipped() -> list[Skipped]         # block files (or a project folder) that are links leading out of
                                             # their folder, or hard links: never read or written; .message
                                             # for a person
    store.update("user", "Prefers tabs", old_text=None) -> BlockResult   # the updateMemory tool
    store.create("decisions", "Architecture decisions", limit=4000, scope="project")
    store.ensure_defaults()                  # 'user' and 'agent' when no block exists
    change_limit(store, "user", 4000) -> BlockResult   # a person changes a limit (blocks limit, /memory limit)
    shown_value(block)                       # what a model may see (blocked marker / secrets redacted /
                                             # control characters escaped)
    prompt_value(block)                      # shown_value of the part within the block's limit (what a
                                             # prompt holds; nothing past the limit is scanned)
    person.for_person(block)                 # what a person is shown (blocks show/list, insights)
    shown_description(block)                 # the description a prompt holds (cut at MAX_DESCRIPTION, 200)
"""

from pi_memory.blocks.block import DEFAULT_LIMIT, MAX_LIMIT, Block, parse_block
from pi_memory.blocks.limit import change_limit
from pi_memory.blocks.paths import Skipped
from pi_memory.blocks.shown import MAX_DESCRIPTION, prompt_value, shown_description, shown_value
from pi_memory.blocks.store import (
    DEFAULTS,
    GLOBAL_FOLDER,
    PROJECT_FOLDER,
    BlockResult,
    BlockStore,
)

__all__ = ["DEFAULTS", "DEFAULT_LIMIT", "GLOBAL_FOLDER", "MAX_DESCRIPTION", "MAX_LIMIT", "PROJECT_FOLDER", "Block", "BlockResult", "BlockStore",
           "Skipped", "change_limit", "parse_block", "prompt_value", "shown_description", "shown_value"]
