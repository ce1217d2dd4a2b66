"""Hand edits of the Markdown stores reach the mirror (:mod:`.mirror`) without a write through pi-memory.

Writes through the curated store mirror at once (its ``on_change``). A ``MEMORY.md`` or ``USER.md`` written or
edited by hand -- a documented way to seed a store -- was searchable only after the next such write or a
``pi-memory sync-markdown``: ``memory_search`` said no memories were stored while the file held entries.
:func:`sync_changed` mirrors each store whose file differs in size, modification or change time from what the
index mirrored last (recorded in ``meta``, key ``markdown_seen``: path -> ``[size, mtime_ns, ctime_ns]``,
``null`` for a missing file). A store that cannot be read, or is over the size bound of :mod:`.mirror` (1 MiB
or 10,000 entries: a 16 MiB file took 7 to 57 s to mirror at each change), is said once (a warning) and the
others are mirrored.
It stats a few files and usually does nothing else. Called where the index is opened for a host or a command
(:meth:`pi_memory.runtime.Memory.index`) and before each background index pass of a long-running host
(:mod:`pi_memory.session`), so an edit made while the MCP server or a pi session runs is found within one pass.
A store written by another process is mirrored again here at most once (each sync is idempotent: unchanged
entries keep their ``created`` and use counts).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from pathlib import Path

from pi_memory.index.db import meta_get, transaction
from pi_memory.index.mirror import SyncStats, markdown_stores, not_mirrored_text, sync_markdown

log = logging.getLogger(__name__)

SEEN_KEY = "markdown_seen"


def _signature(path: Path) -> list[int] | None:
    """``[size, mtime, ctime]`` (a chmod that makes an unreadable file readable again changes its ctime only),
    ``None`` when missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def sync_changed(conn: sqlite3.Connection, data_dir: Path | str) -> dict[str, SyncStats]:
    """Mirror the stores under ``data_dir`` whose file changed since the last mirror (module docstring);
    returns the stats of those synced (``{}``: nothing changed). The caller's connection must be writable."""
    stores = markdown_stores(data_dir)
    now = {str(path): _signature(path) for _scope, _project, _target, path in stores}
    try:
        seen = json.loads(meta_get(conn, SEEN_KEY) or "{}")
    except ValueError:  # a damaged record: mirror everything once
        seen = {}
    changed = [s for s in stores if str(s[3]) not in seen or seen[str(s[3])] != now[str(s[3])]]
    gone = set(seen) - set(now)  # a project folder removed: sync_markdown of every store drops its rows
    if not changed and not gone:
        return {}
    out = sync_markdown(conn, data_dir, None if gone else changed)
    with transaction(conn):
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (SEEN_KEY, json.dumps(now)))
    for path, stats in out.items():  # said once per change of the file: the other stores are mirrored anyway
        if stats.unreadable:
            log.warning("%s cannot be read (%s), so memory_search does not see its hand edits; fix the file's "
                        "permissions or type (pi-memory sync-markdown tries again)", path, stats.unreadable)
        elif stats.too_large:
            log.warning("%s", not_mirrored_text(path, stats.too_large))
    synced = {p: s for p, s in out.items() if s.added or s.removed or s.updated}
    if synced:
        log.info("mirrored Markdown stores changed outside pi-memory: %s", ", ".join(sorted(synced)))
    return out


def note_mirrored(conn: sqlite3.Connection, data_dir: Path | str, path: Path | str) -> None:
    """Record the store file ``path`` as mirrored as it is now (a write through pi-memory has just mirrored its
    entries), so the next open does not mirror it again, nor say it could not when the index is busy then. Only
    a file :func:`sync_changed` watches is recorded (another key would read as a store that went)."""
    path = str(path)
    if path not in {str(p) for _scope, _project, _target, p in markdown_stores(data_dir)}:
        return
    with transaction(conn):
        try:
            seen = json.loads(meta_get(conn, SEEN_KEY) or "{}")
        except ValueError:  # a damaged record: the next open mirrors everything once
            return
        if not isinstance(seen, dict):
            return
        seen[path] = _signature(Path(path))
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (SEEN_KEY, json.dumps(seen)))
