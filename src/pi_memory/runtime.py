"""One place that assembles pi-memory for a host: settings -> curated store + search index + tools.

Hosts (the pi bridge, the MCP server, the CLI) call :func:`open_memory` and use what it returns; none of them
wires capabilities together on its own. The index is opened lazily (the first search, the first mirrored
write), so a host that only reads curated memory never touches SQLite. Every curated write is mirrored into
the index at once through the store's ``on_change`` hook; a failed mirror is logged and repaired by
``pi-memory sync-markdown`` (Markdown stays the source of truth).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path

from pi_memory.config import Settings, load_settings
from pi_memory.curated import MemoryStore
from pi_memory.tools import ToolSpec, create_memory_tools

log = logging.getLogger(__name__)


@dataclass
class Memory:
    """The assembled system for one host process (one agent session, one CLI call, one MCP server)."""

    settings: Settings
    store: MemoryStore
    cwd: Path
    _conn: sqlite3.Connection | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def project_root(self) -> Path | None:
        return self.store.project_root

    def index(self) -> sqlite3.Connection:
        """The index connection, opened (and migrated, repaired if corrupt) on first use."""
        with self._lock:
            if self._conn is None:
                from pi_memory.index import open_index

                self._conn = open_index(self.settings.data_dir)
            return self._conn

    def mirror(self, target: str, entries: list[str]) -> None:
        """Mirror one curated store into the index (the store's ``on_change`` hook)."""
        from pi_memory.index import sync_store

        scope = "project" if target == "project" else "global"
        project = self.store.project_id if target == "project" else None
        sync_store(self.index(), scope, project, target, entries)

    def tools(self) -> list[ToolSpec]:
        """Every tool this host serves: the four curated tools, then session_search and memory_search."""
        from pi_memory.tools.search import create_search_tools

        current = str(self.project_root) if self.project_root else None
        return create_memory_tools(self.store) + create_search_tools(self.index, current)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def open_memory(cwd: Path | str | None = None, override_dir: Path | None = None, mirror: bool = True) -> Memory:
    """Settings for ``cwd`` (default: the process's), the curated store for its project, lazily the index.

    Raises :class:`pi_memory.config.SettingsError` for unreadable or invalid settings.
    """
    where = Path(cwd) if cwd is not None else Path.cwd()
    settings = load_settings(where, override_dir=override_dir)
    for warning in settings.warnings:
        log.warning("%s", warning)
    memory = Memory(settings=settings, store=MemoryStore.from_settings(settings, cwd=where), cwd=where)
    if mirror:
        memory.store.on_change = memory.mirror
    memory.store.load_from_disk()
    return memory
