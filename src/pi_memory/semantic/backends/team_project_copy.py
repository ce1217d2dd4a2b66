"""The shared project stores in ``serve export`` / ``serve import`` (:mod:`.team_projects`: one row per project).

``serve export`` writes, after the memories, one JSON line per project store (:func:`project_store_rows`)::

    {"project_store": "acme-api", "target": "project", "entries": ["…", "…"], "version": 7,
     "updated_at": "2026-…", "updated_by": "alice"}

``serve import`` reads such a line (:func:`copy_project_store`) under the rules of the server's own writes, as
it reads a memory under an add's: the store is built by :class:`~.team_projects.TeamProjectStore` (the curated
store's rules inherited, not copied), one add per entry, each in a savepoint of the import's one transaction.
So an entry the store refuses -- a credential or an injection (``secret``, ``threat``), a control character, more
than the server's ``projectCharLimit`` once added (``over_limit``) -- is left out and counted by its code, and
the entries before and after it are copied; an exact duplicate entry is stored once.

Decisions:

* A project store already on the target server is **left as it is** (counted as already there), whatever it
  holds: the team edits it there, and merging two lists of entries would need a person to choose. An import
  that runs again copies nothing twice.
* The copied store's ``version`` is the exported one when every entry was copied, else one more, so a client
  that remembers the old server's version is refused (409, read again) rather than writing over a store that
  differs from what it read.
* A project name that is not a plain name, or looks like a credential, refuses the whole store (as a request
  naming it is a 400).
"""

from __future__ import annotations

import contextlib
from typing import Any

from pi_memory.curated import Operation
from pi_memory.semantic.backends.team_projects import TARGET, TeamProjectStore, project_problem
from pi_memory.semantic.models import now_iso

KEY = "project_store"


def project_store_rows(conn: Any) -> list[dict[str, Any]]:
    """Every shared project store as the line ``serve export`` writes for it, by name."""
    rows = conn.execute("SELECT project_id, target, entries, version, updated_at, updated_by FROM project_stores "
                        "ORDER BY project_id, target").fetchall()
    return [{KEY: r[0], "target": r[1], "entries": list(r[2] or []), "version": int(r[3]), "updated_at": r[4],
             "updated_by": r[5]} for r in rows]


def is_project_store(row: Any) -> bool:
    return isinstance(row, dict) and KEY in row


class _Within:
    """The import's connection as the pool a :class:`TeamProjectStore` reads and writes through: each use is a
    savepoint, so a refused add leaves nothing and the import stays one transaction."""

    timeout = 5.0

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    @contextlib.contextmanager
    def connection(self, timeout: float | None = None):
        with self.conn.transaction():
            yield self.conn


def shape_problem(row: dict[str, Any]) -> str | None:
    """What is wrong with a project-store line, in words, or ``None``."""
    if not isinstance(row[KEY], str):
        return f"its {KEY!r} is not a string"
    if row.get("target", TARGET) != TARGET:
        return f"its target {row.get('target')!r} is not {TARGET!r}"
    entries = row.get("entries")
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        return "its 'entries' is not a list of strings"
    version = row.get("version", 0)
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        return "its 'version' is not a whole number from 0"
    return None


def copy_project_store(conn: Any, row: dict[str, Any], char_limit: int, report: Any) -> None:
    """Copy one project-store line (already shape-checked) into the team database on ``conn`` (the import's
    transaction); ``report`` (an :class:`~.team_import.ImportReport`) counts what happened."""
    name = row[KEY]
    problem = project_problem(name)
    if problem is not None:
        report.project_refused[f"project name: {problem}"] += 1
        return
    if conn.execute("SELECT 1 FROM project_stores WHERE project_id = %s AND target = %s",
                    (name, TARGET)).fetchone():
        report.project_skipped += 1
        return
    store = TeamProjectStore(_Within(conn), name, char_limit)
    copied = 0
    for entry in row["entries"]:
        result = store.run([Operation(action="add", content=entry)])
        if result.success and result.code == "ok":
            copied += 1
        elif not result.success:
            report.project_refused[f"entry: {result.code}"] += 1
    whole = copied == len(row["entries"])
    version = int(row.get("version") or 0) + (0 if whole else 1)
    conn.execute("INSERT INTO project_stores(project_id, target, entries, version, updated_at, updated_by) "
                 "VALUES (%s, %s, '[]'::jsonb, 0, %s, %s) ON CONFLICT DO NOTHING", (name, TARGET, now_iso(), "import"))
    conn.execute("UPDATE project_stores SET version = GREATEST(version, %s), updated_at = %s, updated_by = %s "
                 "WHERE project_id = %s AND target = %s", (version, now_iso(), "serve import", name, TARGET))
    report.project_stores += 1
    report.project_entries += copied


__all__ = ["KEY", "copy_project_store", "is_project_store", "project_store_rows", "shape_problem"]
