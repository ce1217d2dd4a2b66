"""Curated memory: MEMORY.md (the agent's notes) and USER.md (the user profile).

Public API::

    store = MemoryStore(dir, memory_char_limit=2200, user_char_limit=1375)
    store.load_from_disk()
    store.add("memory", "Project uses uv") -> MemoryResult
    build_snapshot(store) -> str            # frozen system-prompt block
"""

from pi_memory.curated.entries import DELIMITER, parse, serialise, split_plain_markdown
from pi_memory.curated.results import MAX_RESULT_BYTES, MemoryResult
from pi_memory.curated.snapshot import build_snapshot, snapshot_is_safe
from pi_memory.curated.store import TARGET_FILES, MemoryStore, Operation

__all__ = [
    "DELIMITER",
    "MAX_RESULT_BYTES",
    "TARGET_FILES",
    "MemoryResult",
    "MemoryStore",
    "Operation",
    "build_snapshot",
    "parse",
    "serialise",
    "snapshot_is_safe",
    "split_plain_markdown",
]
