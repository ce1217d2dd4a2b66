"""Ids stored before ``pi-memory serve`` refused credential-looking ids, in the embedded store it serves
without ``--database-url``: rewritten when the server opens the store, as the team store's are (:mod:`.backends.
pg_clean`: the same keyed placeholder ``redacted-<scanner id>-<12 letters>``, only the credential's part of
an id replaced).

The embedded server refuses an add whose ``user_id`` / ``agent_id`` / ``run_id`` reads as a credential, like
the team server; rows stored before keep it as their id, in results and in the index file. What is rewritten:
the scope columns (``user_id``, ``project_id``, ``agent_id``) of ``semantic_memories``, ``semantic_history``
and ``semantic_vectors``, the memory ids (``semantic_memories.id`` and ``superseded_by``, the history's
``memory_id`` and ``related_id``, the vectors' ``memory_id``) and the capture outcomes' ``project_id``. Texts,
metadata, sources and history texts are not read here: the index's redaction migration redacts them again
whenever the scanner learns a format (:mod:`pi_memory.index.redaction_semantic`, run by ``open_index``).

Decisions
---------
* **When:** each time ``serve`` opens the embedded store (not when the agent's own tools open it: a local
  store's ids are the user's settings, which the server's clients do not write). Only the rows added since
  the last run are read (``meta`` key ``semantic_id_sweep``: the last memory ``pk`` and history ``id`` read,
  with the scanner's version, :data:`pi_memory.index.redaction.VERSION`; a new version reads every row again,
  once); the capture outcomes (at most 200 a job) are read whole. Nothing new: two index lookups.
* **Key:** a random key made once in ``meta`` (``id-redaction-key``); it never leaves the index file.
* A memory under a rewritten id is not merged with one already stored under the new id: the embedded store
  has no unique active text per scope, so both stay, as two adds of one text under two ids would.
* One transaction (foreign keys checked at its end, so a memory id and its vectors change together), then
  the index's compaction (:func:`pi_memory.index.redaction.compact`) so the old ids leave the file's freed
  pages and its ``-wal`` file: only when something was rewritten.
"""

from __future__ import annotations

import json
import secrets
import sqlite3

from pi_memory import safety
from pi_memory.index.db import meta_get, transaction
from pi_memory.index.read_only import skipped
from pi_memory.index.redaction import VERSION, compact
from pi_memory.semantic.id_redaction import CleanReport, IdRewriter, own_form

SWEEP_KEY = "semantic_id_sweep"
ID_KEY = "id-redaction-key"
_SCOPES = ("user_id", "project_id", "agent_id")
_SCOPE_NAMES = {"user_id": "user_id", "project_id": "run_id", "agent_id": "agent_id"}
_SCOPE_TABLES = ("semantic_memories", "semantic_history", "semantic_vectors")
_MEMORY_IDS = (("semantic_memories", "id"), ("semantic_memories", "superseded_by"), ("semantic_history", "memory_id"),
               ("semantic_history", "related_id"), ("semantic_vectors", "memory_id"))


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def clean_embedded_ids(conn: sqlite3.Connection) -> CleanReport:
    """Rewrite the credential-looking ids of the embedded store on ``conn`` (module docstring); returns what
    changed (an empty report when nothing did: then nothing but the sweep mark is written)."""
    report = CleanReport()
    tables = _tables(conn)
    if "semantic_memories" not in tables or skipped(conn, "the rewrite of credential-looking ids"):
        return report
    state = json.loads(meta_get(conn, SWEEP_KEY) or "{}")
    fresh = state.get("version") == VERSION
    after = {"memories": state.get("memories", 0) if fresh else 0, "history": state.get("history", 0) if fresh else 0}
    seen: dict[str, bool] = {}

    def holds(value: str | None) -> bool:
        if not value or own_form(value):
            return False
        if value not in seen:
            if len(seen) > 100_000:
                seen.clear()
            seen[value] = bool(safety.secret_spans(value))
        return seen[value]

    scopes: set[str] = set()
    memory_ids: set[str] = set()
    top = dict(after)
    for pk, mid, by, *scope in conn.execute("SELECT pk, id, superseded_by, user_id, project_id, agent_id FROM "
                                            "semantic_memories WHERE pk > ? ORDER BY pk", (after["memories"],)):
        top["memories"] = pk
        memory_ids.update(v for v in (mid, by) if holds(v))
        scopes.update(v for v in scope if holds(v))
    if "semantic_history" in tables:
        for hid, mid, related, *scope in conn.execute(
                "SELECT id, memory_id, related_id, user_id, project_id, agent_id FROM semantic_history WHERE id > ? "
                "ORDER BY id", (after["history"],)):
            top["history"] = hid
            memory_ids.update(v for v in (mid, related) if holds(v))
            scopes.update(v for v in scope if holds(v))
    if "job_outcomes" in tables:
        scopes.update(r[0] for r in conn.execute("SELECT DISTINCT project_id FROM job_outcomes") if holds(r[0]))
    new_state = {"version": VERSION, **top}
    if not scopes and not memory_ids:
        if new_state != state:
            with transaction(conn):
                _save(conn, SWEEP_KEY, json.dumps(new_state))
        return report
    with transaction(conn):
        conn.execute("PRAGMA defer_foreign_keys = ON")  # a memory's id and its vectors' change in one step
        ids_of = IdRewriter(_key(conn))
        changed: dict[str, set[int]] = {}
        for old in sorted(scopes):
            new = ids_of.rewrite(old)
            for table in _SCOPE_TABLES:
                for column in _SCOPES:
                    _update(conn, report, changed, ids_of, table, column, old, new, _SCOPE_NAMES[column])
            if "job_outcomes" in tables:
                _update(conn, report, changed, ids_of, "job_outcomes", "project_id", old, new, "run_id")
        for old in sorted(memory_ids):
            new = ids_of.rewrite(old)
            for table, column in _MEMORY_IDS:
                _update(conn, report, changed, ids_of, table, column, old, new, "memory id")
        for table, rows in changed.items():
            if "\0" not in table:
                report.rows[table] = len(rows)
        _save(conn, SWEEP_KEY, json.dumps(new_state))
    compact(conn)  # the old ids must not stay readable in freed pages or the -wal file
    return report


def _update(conn: sqlite3.Connection, report: CleanReport, changed: dict[str, set[int]], ids_of: IdRewriter,
            table: str, column: str, old: str, new: str, where: str) -> None:
    if new == old:
        return
    rows = {r[0] for r in conn.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ? RETURNING rowid",
                                       (new, old))}
    if rows:  # each row counted once in the table's total, and once under each new id it holds
        changed.setdefault(table, set()).update(rows)
        mine = changed.setdefault(f"{new}\0{table}", set())
        report.note(new, ids_of.kinds[new], where, table, len(rows - mine))
        mine |= rows


def _key(conn: sqlite3.Connection) -> bytes:
    value = meta_get(conn, ID_KEY)
    if value is None:
        value = secrets.token_hex(32)
        _save(conn, ID_KEY, value)
    return bytes.fromhex(value)


def _save(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


__all__ = ["clean_embedded_ids"]
