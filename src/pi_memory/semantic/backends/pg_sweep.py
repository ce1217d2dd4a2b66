"""Every column of the rows written since the last start, read for credentials: what :mod:`.pg_clean`'s id
rewrite does not reach by itself.

:func:`.pg_clean.clean_stored_ids` finds credential-looking ids through the memories' scopes, the tokens and
the project stores. Rows it cannot reach that way: a history event or an audit row whose memory is gone (an
operator deleted it with SQL, a copy left it behind), a memory *id* holding a credential (``serve import``
keeps a row's id), and texts stored before they were redacted (memory texts, metadata, sources, history
texts: an older server, or a copy made before ``serve import`` redacted). This module reads them.

Decisions
---------
* **Which rows: those written since the last sweep, all of them once when the scanner changed.** Reading
  every text of a large store at every start costs seconds (25 µs a text: 200,000 memories and their history
  are 15 s), so each append-only table (memories by ``pk``, history and audit by ``id``) has a mark in
  ``pi_memory_sweeps``: the last key read and the scanner's version (:func:`scanner_fingerprint`: the
  version the embedded index's redaction migration uses, raised whenever the scanner learns a format). A
  start reads only rows past the mark; a pi-memory whose scanner knows other formats reads every row again,
  once (about 50 s for 200,000 memories, 200,000 history events and 200,000 audit rows on a loaded 2-core
  machine; 0.6 s for 10,000 new rows). With nothing new a start costs one index lookup per table (the whole
  clean-up, ids included, 0.08-0.14 s at 200,000). Values in the forms the store writes itself (a UUID, an
  ISO-8601 time, a memory's SHA-256 hash) are not read: the scanner finds nothing in them, and they are most
  of a row's reading.
  A row another process inserted with a lower key but committed after a sweep read past it is not read (a
  window of milliseconds while servers of two versions write at once); the scope check of
  :mod:`.pg_clean` still covers its ids.
* **What is done to a column holding a credential.** An id (a scope column, a memory id, an audit scope,
  a token id) is rewritten to the keyed placeholder of :mod:`.pg_clean` (the same credential gives the same
  placeholder everywhere, so rows stay joined); a memory id is rewritten in every column that names one
  (``id``, ``superseded_by``, ``memory_id``, ``related_id``, the vectors'). A text is redacted as an add
  redacts it (``[REDACTED:<id>]``); metadata, sources and a project store's entries likewise, string by
  string; an audit row's ``detail`` as :mod:`.pg_clean` does (placeholders: it holds ids).
* **A memory whose text changed:** its ``hash`` is computed again from the stored text (the hash is always
  the stored text's, as ``serve import`` does). When an active memory of its scope already holds the
  redacted text, this one is marked superseded by it with a history event saying why (two memories that
  differed only by their credential). Its vectors are deleted and the memory is queued in
  ``pi_memory_reembed``: they were computed from the text *with* the credential (an embedding can be
  partly inverted, and it no longer matches the text); ``serve`` embeds the queue again when it opens the
  store (:meth:`~.postgres.PostgresBackend.embed_queued`: the embedder is not loaded here, and ``serve
  migrate`` or ``serve export`` may be what opened the store). The full-text column follows the text (it
  is generated).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from pi_memory import safety
from pi_memory.index.redaction import VERSION as REDACTION_VERSION
from pi_memory.semantic.id_redaction import own_form
from pi_memory.semantic.models import now_iso, text_hash

# table -> (key column, memory-id columns, text columns, JSON columns); every other text column is an id
log = logging.getLogger(__name__)

TABLES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "semantic_memories": ("pk", ("id", "superseded_by"), ("text",), ("source", "metadata")),
    "semantic_history": ("id", ("memory_id", "related_id"), ("old_text", "new_text", "reason"), ()),
    "audit_log": ("id", ("memory_id",), (), ("detail",)),
}
_IDS = {"semantic_memories": ("user_id", "project_id", "agent_id", "status", "created_at", "updated_at",
                              "observed_at", "superseded_at", "hash"),
        "semantic_history": ("user_id", "project_id", "agent_id", "event", "at"),
        "audit_log": ("at", "token_id", "user_id", "action", "scope")}
# every column that names a memory, as (table, column): a rewritten memory id is rewritten in all of them
MEMORY_ID_COLUMNS = (("semantic_memories", "superseded_by"), ("semantic_history", "memory_id"),
                     ("semantic_history", "related_id"), ("audit_log", "memory_id"))
_SHA256 = re.compile("[0-9a-f]{64}")  # a memory's hash as the store computes it (of the stored text): not read
SAME_TEXT = ("the same text is stored in an active memory of this scope (its credential was redacted at start, "
             "which made the two texts equal)")


def scanner_fingerprint() -> str:
    """The scanner's version as the index's redaction migration names it (:data:`pi_memory.index.redaction.VERSION`,
    raised whenever the secret scanner learns a format): the rows are read again once when it changes."""
    return f"redaction-v{REDACTION_VERSION}"


def json_strings(value: Any) -> list[str]:
    """Every string in a JSON value, keys too."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *json_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in json_strings(v)]
    return []


@dataclass
class Swept:
    """What a sweep found: ``rows`` (table -> keys of rows with a column holding a credential),
    ``memory_ids`` (memory ids holding one), ``marks`` (table -> (fingerprint, last key) to store)."""

    rows: dict[str, list[int]] = field(default_factory=dict)
    memory_ids: set[str] = field(default_factory=set)
    marks: dict[str, tuple[str, int]] = field(default_factory=dict)
    changed_marks: bool = False
    counted: set[tuple[str, int]] = field(default_factory=set)  # (table, key) already counted in the report

    @property
    def anything(self) -> bool:
        return bool(self.memory_ids or any(self.rows.values()))


def _columns(table: str) -> list[str]:
    _key, mids, texts, jsons = TABLES[table]
    return [*mids, *texts, *jsons, *_IDS[table]]


def sweep(conn: Any) -> Swept:
    """Read the rows past each table's mark (module docstring); nothing is written here."""
    found = Swept()
    scanner = scanner_fingerprint()
    marks = dict(conn.execute("SELECT name, scanner || ':' || last_key FROM pi_memory_sweeps").fetchall())
    seen: dict[str, bool] = {}

    def holds(value: Any) -> bool:
        if value is None or value == "" or isinstance(value, str) and own_form(value):
            return False
        if not isinstance(value, str):
            return any(holds(s) for s in json_strings(value))
        if len(value) <= 200:  # ids and short texts repeat: read each once
            if len(seen) > 100_000:
                seen.clear()
            if value not in seen:
                seen[value] = bool(safety.secret_spans(value))
            return seen[value]
        return bool(safety.secret_spans(value))

    starts = {}
    for table in TABLES:
        fingerprint, _, last = (marks.get(table) or ":-1").rpartition(":")
        starts[table] = (fingerprint, last, int(last) if fingerprint == scanner else -1)
    _say_long_read(conn, [t for t, (_f, _l, start) in starts.items() if start < 0])
    for table, (key, mids, _texts, _jsons) in TABLES.items():
        fingerprint, last, start = starts[table]
        cols = _columns(table)
        top, dirty = start, []
        query = sql.SQL("SELECT {key}, {cols} FROM {table} WHERE {key} > %s ORDER BY {key}").format(
            key=sql.Identifier(key), cols=sql.SQL(", ").join(map(sql.Identifier, cols)), table=sql.Identifier(table))
        with conn.cursor(name=f"sweep_{table}") as cur:  # server-side: a full read does not load the table at once
            cur.itersize = 5000
            cur.execute(query, (start,))
            for row in cur:
                top = row[0]
                flagged = [c for c, v in zip(cols, row[1:], strict=True)
                           if not (c == "hash" and _SHA256.fullmatch(v or "")) and holds(v)]
                if flagged:
                    dirty.append(row[0])
                    found.memory_ids.update(v for c, v in zip(cols, row[1:], strict=True)
                                            if c in mids and c in flagged)
        found.rows[table] = dirty
        found.marks[table] = (scanner, top)
        found.changed_marks |= (fingerprint, int(last)) != (scanner, top)
    return found


LONG_READ_ROWS = 50_000  # a first read of more rows than this is said before it starts


def _say_long_read(conn: Any, tables: list[str]) -> None:
    """One line on standard error (through logging) before a read of every row of ``tables`` (the first start of
    this version, or a scanner that learned a format) when they hold more than :data:`LONG_READ_ROWS`: the
    start then takes a while (about 50 s for 600,000 rows on a loaded 2-core machine), once."""
    if not tables:
        return
    rows = sum(conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(t))).fetchone()[0]
               for t in tables)
    if rows > LONG_READ_ROWS:
        log.warning("checking the %s rows stored before this version of pi-memory for credentials, once: this "
                    "start takes longer than the next ones", f"{rows:,}")


def save_marks(conn: Any, swept: Swept) -> None:
    if not swept.changed_marks:
        return
    for table, (scanner, last) in swept.marks.items():
        conn.execute("INSERT INTO pi_memory_sweeps(name, scanner, last_key) VALUES (%s,%s,%s) ON CONFLICT (name) DO "
                     "UPDATE SET scanner = excluded.scanner, last_key = excluded.last_key, at = now()",
                     (table, scanner, last))


def rewrite_memory_ids(conn: Any, ids_of: Any, swept: Swept, report: Any) -> None:
    """Each memory id holding a credential, rewritten in every column that names it; its vectors move with it."""
    for old in sorted(swept.memory_ids):
        new = ids_of.rewrite(old)
        if new == old:
            continue
        vectors = conn.execute("DELETE FROM semantic_vectors WHERE memory_id = %s RETURNING model, dim, "
                               "embedding::text", (old,)).fetchall()
        changed = conn.execute("UPDATE semantic_memories SET id = %s WHERE id = %s RETURNING pk", (new, old)).fetchall()
        _count_rows(swept, report, ids_of, new, "semantic_memories", [r[0] for r in changed])
        for model, dim, vector in vectors:
            conn.execute("INSERT INTO semantic_vectors(memory_id, model, dim, embedding) VALUES (%s,%s,%s,%s::vector)",
                         (new, model, dim, vector))
        for table, column in MEMORY_ID_COLUMNS:
            changed = conn.execute(sql.SQL("UPDATE {t} SET {c} = %s WHERE {c} = %s RETURNING {k}").format(
                t=sql.Identifier(table), c=sql.Identifier(column), k=sql.Identifier(TABLES[table][0])),
                (new, old)).fetchall()
            _count_rows(swept, report, ids_of, new, table, [r[0] for r in changed])


def _count_rows(swept: Swept, report: Any, ids_of: Any, new: str, table: str, keys: list[int]) -> None:
    """Count the rows a memory id was rewritten in, each row once however many of its columns changed."""
    fresh = [k for k in keys if (table, k) not in swept.counted]
    swept.counted.update((table, k) for k in keys)
    if fresh:
        report.note(new, ids_of.kinds[new], "memory id", table, len(fresh))
        report.rows[table] += len(fresh)


def clean_rows(conn: Any, ids_of: Any, swept: Swept, report: Any) -> None:
    """The swept rows, read again (the id rewrite may have changed them): every column still holding a
    credential rewritten (ids) or redacted (texts), and a memory whose text changed handled as the module
    docstring says."""
    for table, keys in swept.rows.items():
        if not keys:
            continue
        key, _mids, texts, jsons = TABLES[table]
        cols = _columns(table)
        query = sql.SQL("SELECT {key}, {cols} FROM {table} WHERE {key} = ANY(%s) ORDER BY {key}").format(
            key=sql.Identifier(key), cols=sql.SQL(", ").join(map(sql.Identifier, cols)), table=sql.Identifier(table))
        for row in conn.execute(query, (keys,)).fetchall():
            old = dict(zip(cols, row[1:], strict=True))
            new = {}
            for c, v in old.items():
                if v is None or v == "":
                    new[c] = v
                elif c in texts:
                    new[c] = safety.redact(v)
                elif c in jsons:
                    new[c] = ids_of.rewrite_json(v) if table == "audit_log" else safety.redact_value(v)
                else:
                    new[c] = ids_of.rewrite(v)
            changed = [c for c in cols if new[c] != old[c]]
            if not changed:
                continue
            texts_changed = [c for c in changed if (c in texts or c in jsons) and table != "audit_log"]
            ids_changed = [c for c in changed if c not in texts_changed]
            named: dict[str, list[str]] = {}  # a new id -> the columns of this row it is now in
            for c in ids_changed:
                if c not in jsons:
                    named.setdefault(new[c], []).append(_where(c))
            for value, where in named.items():
                report.note(value, ids_of.kinds.get(value, []), where[0], table, 1)
                for other in where[1:]:
                    report.ids[value].fields.add(other)
            report.rows[table] += bool(ids_changed) and (table, row[0]) not in swept.counted
            report.texts[table] += bool(texts_changed)
            if "text" in changed and table == "semantic_memories":
                _new_text(conn, old, new, swept, report)
                changed = [c for c in cols if new[c] != old[c]]
            conn.execute(sql.SQL("UPDATE {table} SET {sets} WHERE {key} = %s").format(
                table=sql.Identifier(table), key=sql.Identifier(key),
                sets=sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(c)) for c in changed)),
                (*[Jsonb(new[c]) if c in jsons else new[c] for c in changed], row[0]))


_WHERE = {"project_id": "run_id", "scope": "audit scope", "token_id": "token id"}


def _where(column: str) -> str:
    return _WHERE.get(column, column)


def _new_text(conn: Any, old: dict[str, Any], new: dict[str, Any], swept: Swept, report: Any) -> None:
    """A memory's redacted text: its hash, a duplicate superseded, its vectors dropped and queued again."""
    new["hash"] = text_hash(new["text"])
    scope = (new["user_id"], new["project_id"] or "", new["agent_id"] or "")
    if new["status"] == "active":
        same = conn.execute("SELECT id FROM semantic_memories WHERE user_id = %s AND project_id = %s AND agent_id = %s "
                            "AND hash = %s AND status = 'active' AND id <> %s ORDER BY pk LIMIT 1",
                            (*scope, new["hash"], old["id"])).fetchone()
        if same is not None:
            now = now_iso()
            new.update(status="superseded", superseded_by=same[0], superseded_at=now, updated_at=now)
            (event,), = conn.execute(
                "INSERT INTO semantic_history(memory_id, user_id, project_id, agent_id, event, old_text, new_text, "
                "related_id, reason, at) VALUES (%s,%s,%s,%s,'SUPERSEDE',%s,%s,%s,%s,%s) RETURNING id",
                (new["id"], *scope, new["text"], new["text"], same[0], SAME_TEXT, now)).fetchall()
            scanner, last = swept.marks["semantic_history"]  # written clean here: the next start need not read it
            swept.marks["semantic_history"] = (scanner, max(last, event))
            report.same_text += 1
    if conn.execute("DELETE FROM semantic_vectors WHERE memory_id = %s", (new["id"],)).rowcount:
        conn.execute("INSERT INTO pi_memory_reembed(memory_id) VALUES (%s) ON CONFLICT DO NOTHING", (new["id"],))
        report.reembed += 1


def clean_store_entries(conn: Any, report: Any) -> None:
    """The project stores' entries (a small table, read whole): strings holding a credential redacted."""
    for project, target, entries in conn.execute("SELECT project_id, target, entries FROM project_stores").fetchall():
        if not any(safety.secret_spans(s) for s in json_strings(entries)):
            continue
        conn.execute("UPDATE project_stores SET entries = %s WHERE project_id = %s AND target = %s",
                     (Jsonb(safety.redact_value(entries)), project, target))
        report.texts["project_stores"] += 1


__all__ = ["SAME_TEXT", "Swept", "clean_rows", "clean_store_entries", "json_strings", "rewrite_memory_ids",
           "save_marks", "scanner_fingerprint", "sweep"]
