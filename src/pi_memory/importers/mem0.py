"""``pi-memory import mem0 [PATH]``: move over from pi-memory-mem0's embedded store (seed 004).

Its files (``<agentDir>/memories/`` by default, so usually inside our own data root):

* ``mem0-vectors.db``: mem0 OSS's SQLite vector store, table ``vectors(id, vector BLOB, payload TEXT)``;
  ``payload`` is JSON with ``data`` (the text), ``hash``, ``created_at``, ``updated_at``, ``user_id``
  (``<userId>:project:<cwd-hash>`` by default), ``agent_id``, ``run_id`` and any metadata;
* ``mem0-history.db``: ``memory_history(memory_id, previous_value, new_value, action, created_at, ...)``
  with ``ADD`` / ``UPDATE`` / ``DELETE`` rows.

Each memory goes into the semantic scope of the current project (:class:`pi_memory.semantic.Scope`, from our
settings), **re-embedded with our model** (mem0's vectors came from another model and are not read). Its
history is replayed through the backend so nothing is erased: the first version is added, each ``UPDATE``
supersedes it (the old text stays as a superseded memory with its history row), a ``DELETE`` marks it
deleted; a memory only the history knows (deleted in mem0) comes over as deleted. The mem0 id and times are
kept in the metadata (``mem0Id``, ``mem0CreatedAt``, ``mem0UpdatedAt``, ``mem0UserId``); the observation time
is mem0's ``created_at``.

Source scopes: mem0 kept one user id per project. With one user id in the file, it is imported; with
several, name one (``--source-user``) or take all of them (``--all-users``) -- the dry run lists them.

Idempotent: a memory whose ``mem0Id`` is already ours, or whose current text is already an active memory of
the scope, is "already there". When only an earlier version matches one of our memories, ours is left as it
is and mem0's current text is added beside it (its history is then not replayed). Texts the threat scanner refuses are skipped; credentials are redacted by the
backend, as for every write.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pi_memory import safety
from pi_memory.importers.curated import found_in_import
from pi_memory.importers.hermes import ImportSourceError
from pi_memory.importers.report import ImportReport
from pi_memory.semantic.models import normalise_text

VECTORS_FILE = "mem0-vectors.db"
HISTORY_FILE = "mem0-history.db"
KIND = "mem0"


@dataclass
class SourceMemory:
    mem0_id: str
    versions: list[str]
    user_id: str
    created_at: str | None = None
    updated_at: str | None = None
    deleted: bool = False
    metadata: dict = field(default_factory=dict)


def locate(path: Path | None, default_dir: Path, history: Path | None = None) -> tuple[Path, Path]:
    """``(vectors db, history db)``: ``PATH`` is the vectors file or the folder holding it; the history is
    ``history`` when given (mem0's ``oss.historyDbPath``), else ``mem0-history.db`` beside the vectors."""
    base = (path or default_dir).expanduser()
    vectors = base / VECTORS_FILE if base.is_dir() else base
    if not vectors.is_file():
        raise ImportSourceError(f"No mem0 store at {vectors}. Pass the mem0-vectors.db file (pi-memory-mem0's "
                                "embedded store, by default ~/.pi/agent/memories/mem0-vectors.db).")
    if history is not None and not history.expanduser().is_file():
        raise ImportSourceError(f"No mem0 history at {history}. Pass the mem0-history.db file, or leave "
                                "--history out to read the one beside mem0-vectors.db (a missing one is fine).")
    return vectors, history.expanduser() if history is not None else vectors.with_name(HISTORY_FILE)


def _query(db: Path, sql: str) -> list[sqlite3.Row]:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ImportSourceError(f"Cannot open {db}: {exc}.") from exc
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.Error as exc:
        raise ImportSourceError(f"{db} is not a mem0 store ({exc}).") from exc
    finally:
        conn.close()


def read_source(vectors: Path, history: Path) -> list[SourceMemory]:
    """Every memory of the store, with its versions from the history (oldest first), plus the deleted ones."""
    events: dict[str, list[sqlite3.Row]] = {}
    if history.is_file():
        for row in _query(history, "SELECT * FROM memory_history ORDER BY id"):
            events.setdefault(str(row["memory_id"]), []).append(row)
    out = []
    for row in _query(vectors, "SELECT id, payload FROM vectors"):
        try:
            payload = safety.replace_unencodable(json.loads(row["payload"]))  # JSON.stringify's "\ud83d"
        except (TypeError, ValueError):
            continue
        text = str(payload.get("data") or "").strip()
        if not text:
            continue
        mem = SourceMemory(str(row["id"]), _versions(events.pop(str(row["id"]), []), text),
                           str(payload.get("user_id") or payload.get("userId") or ""),
                           payload.get("created_at"), payload.get("updated_at"))
        mem.metadata = {k: v for k, v in payload.items() if k not in
                        ("data", "hash", "created_at", "updated_at", "user_id", "userId", "text_lemmatized")}
        out.append(mem)
    for mem_id, rows in events.items():  # only the history knows them: deleted in mem0
        deleted = [r for r in rows if str(r["action"]).upper() == "DELETE"]
        versions = _versions(rows, None)
        if deleted and versions:
            out.append(SourceMemory(mem_id, versions, "", rows[0]["created_at"], deleted[-1]["created_at"], True))
    return out


def _versions(rows: list[sqlite3.Row], current: str | None) -> list[str]:
    versions: list[str] = []
    for row in rows:
        action = str(row["action"]).upper()
        if action == "ADD" and row["new_value"]:
            versions = [row["new_value"]]
        elif action == "UPDATE":
            if not versions and row["previous_value"]:
                versions.append(row["previous_value"])
            if row["new_value"]:
                versions.append(row["new_value"])
        elif action == "DELETE" and not versions and row["previous_value"]:
            versions.append(row["previous_value"])
    versions = [v.strip() for v in versions if v and v.strip()]
    if current is not None and (not versions or versions[-1] != current):
        versions.append(current)
    return versions


def import_mem0(service, path: Path | None, default_dir: Path, apply: bool = False,
                source_user: str | None = None, all_users: bool = False,
                history: Path | None = None) -> ImportReport:
    """Import into ``service`` (:class:`pi_memory.semantic.SemanticService`: its backend and scope)."""
    vectors, history = locate(path, default_dir, history)
    memories = read_source(vectors, history)
    report = ImportReport(source=str(vectors), applied=apply)
    users = Counter(m.user_id for m in memories if m.user_id)
    if source_user is not None:
        if source_user not in users:
            raise ImportSourceError(f"No memories of user id {source_user!r} in {vectors}; it has "
                                    f"{', '.join(sorted(users)) or 'none'}.")
        memories = [m for m in memories if m.user_id in (source_user, "")]
    elif len(users) > 1 and not all_users:
        listing = ", ".join(f"{u} ({n})" for u, n in sorted(users.items()))
        if apply:
            raise ImportSourceError(f"{vectors} holds memories of several user ids: {listing}. Choose one with "
                                    "--source-user ID, or take them all with --all-users.")
        report.notes.append(f"Several source user ids: {listing}. Choose one with --source-user ID or take all "
                            "with --all-users before --apply.")
    backend, scope = service.backend, service.scope
    ours = backend.get_all(scope=scope, limit=1_000_000, include_superseded=True)
    imported = {m.metadata.get("mem0Id") for m in ours}
    active = {normalise_text(m.text) for m in ours if m.status == "active"}
    for mem in memories:
        label = mem.versions[-1]
        if mem.mem0_id in imported or (not mem.deleted and normalise_text(label) in active):
            report.add(KIND, label, "already")
            continue
        hostile = next((f for v in mem.versions for f in safety.scan_threats(v)), None)
        if hostile:
            report.add(KIND, label, "skip", found_in_import(hostile), refused=True)
            continue
        if apply:
            _replay(backend, scope, mem)
        earlier = len(mem.versions) - 1
        parts = [f"{earlier} earlier version{'s' if earlier > 1 else ''}"] if earlier else []
        parts += ["deleted in mem0"] if mem.deleted else []
        what = f"{label} ({', '.join(parts)})" if parts else label
        report.add(KIND, what, "add", to=f"semantic memory ({scope.user_key})")
    if memories:
        report.notes.append("Each memory is embedded again with pi-memory's model (mem0's vectors are not reused).")
    return report


def _replay(backend, scope, mem: SourceMemory) -> None:
    meta = {**mem.metadata, "mem0Id": mem.mem0_id, "mem0CreatedAt": mem.created_at,
            "mem0UpdatedAt": mem.updated_at, "mem0UserId": mem.user_id or None}
    meta = {k: v for k, v in meta.items() if v is not None}
    observed = mem.created_at if isinstance(mem.created_at, str) else None
    try:
        stored = backend.add(mem.versions[0], scope=scope, source={"kind": "import"}, metadata=meta,
                             observed_at=observed)
    except ValueError:  # an observation time the backend cannot read
        stored = backend.add(mem.versions[0], scope=scope, source={"kind": "import"}, metadata=meta)
    if stored.metadata.get("mem0Id") != mem.mem0_id:
        # the first version is already one of our memories: leave ours alone, bring mem0's current text beside it
        if len(mem.versions) > 1 and not mem.deleted:
            backend.add(mem.versions[-1], scope=scope, source={"kind": "import"}, metadata=meta)
        return
    for text in mem.versions[1:]:
        stored = backend.update(stored.id, text, scope=scope, reason="mem0 history: UPDATE")
    if mem.deleted:
        backend.delete(stored.id, scope=scope, reason="mem0 history: DELETE")
