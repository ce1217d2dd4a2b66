"""``pi-memory semantic status``, ``recall``, ``search``, ``list`` and ``history`` (the commands that only read)
on an index another process holds (an indexing pass, a rebuild) while semantic memory's tables must still be set
up: they waited the index connection's 10 s busy timeout, then stopped with "locked". They now wait at most
:data:`pi_memory.runtime.SEMANTIC_WAIT_S`, print one warning line (:data:`HELD_WARNING`) and answer from the index
opened for reading only: what is there is read, and semantic memory never set up in this index reads as empty
(:func:`pi_memory.index.read_only.check_schema`). When its tables exist but need a step of this version, reading
must wait too: a clear refusal (:data:`HELD_REFUSAL`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from pi_memory.cli.app import err, fail

HELD_WARNING = ("warning: the search index is busy: another pi-memory process is writing to it (an indexing pass or "
                "a rebuild), so semantic memory could not set up its tables; this shows what can be read now (no "
                "semantic memories yet). Run the command again once that process has finished.")
HELD_REFUSAL = ("The search index is busy: another pi-memory process is writing to it (an indexing pass or a "
                "rebuild), and semantic memory must update its tables before it can be read. Run the command again "
                "once that process has finished.")


def open_or_read_held(open_semantic: Callable[..., Any], data_dir: Path, settings: Any, cwd: Path, **kwargs: Any):
    """``open_semantic(settings, cwd, ...)`` waiting at most ``SEMANTIC_WAIT_S`` for another process's lock; when
    it is held longer, the service over the index opened for reading only, after one warning line."""
    from pi_memory.index import index_path
    from pi_memory.index.read_only import open_while_held
    from pi_memory.runtime import SEMANTIC_WAIT_S
    from pi_memory.storage import ReadOnlyDataError, StorageProblem, describe, is_locked

    common = {"background_reembed": False, "warm": False, **kwargs}
    try:
        return open_semantic(settings, cwd, data_dir=data_dir, migrate_wait=SEMANTIC_WAIT_S, **common)
    except Exception as exc:
        if not is_locked(exc) or settings.backend.type != "embedded":
            raise
    what, todo = describe("locked", data_dir, "")
    problem = StorageProblem("locked", data_dir, f"{what} {todo}")
    conn = open_while_held(index_path(data_dir), problem, SEMANTIC_WAIT_S)
    try:
        service = open_semantic(settings, cwd, data_dir=data_dir, conn=conn, **common)
    except ReadOnlyDataError as exc:  # tables of an older version: a step must be applied before reading
        conn.close()
        raise fail(HELD_REFUSAL, 1) from exc
    err.print(HELD_WARNING, markup=False, soft_wrap=True)
    service.index_busy = True  # `semantic status --json` says so (indexBusy)
    # closed with the command: SQLite shares a file's -shm mapping within a process, and this one is read-only
    # (a later connection of the same process, once the index is free, could not write through it)
    click_context = click.get_current_context(silent=True)
    if click_context is not None:
        click_context.call_on_close(conn.close)
    return service
