"""``pi-memory serve import``: copying memories into the team store under the rules of ``POST /memories``.

The rows come from an embedded store's ``index.sqlite3`` (:func:`sqlite_rows`) or from a file ``serve export``
wrote (:func:`jsonl_rows`), each with its ids, status, history and vectors. What the server serves must be
what an add would have stored, so every row passes the add's checks before it is copied (decisions made for
the tester's report of credentials copied in verbatim):

* the text goes through :func:`~pi_memory.semantic.embedded.check_text` (what an add runs): credentials are redacted, and text
  that is empty, unreadable, longer than 4,000 characters or matched by the threat scanner is **refused**:
  that row is not copied, and the report counts it by reason (``copied N, refused M (reasons)``). The hash is
  computed again from the stored text;
* metadata and source are redacted as an add's are (identity keys dropped), a history reason as a ``PUT``'s;
  the texts of the history are redacted too, and an event whose text the scanner refuses, or that is too
  long, is left out (counted);
* its user, agent and project ids must be plain names, as a new scope's on ``POST /memories``
  (:func:`~pi_memory.semantic.sanitize.id_problem`: no credential, no invisible character): else refused;
* a NUL character (U+0000) anywhere in the row refuses it (PostgreSQL cannot keep one; the server answers 400);
  so does a control character other than tab and newline in a metadata key or value (an add's 400 too);
* an active row whose text an active memory of its scope already holds (another id) is refused as a duplicate;
  a row whose id is already there is skipped (so a copy can run again: it adds only what is new);
* vectors are kept when the text is stored unchanged; when redaction changed it, they were computed from the
  credential, so they are dropped and the stored text is embedded again;
* a row copied without a vector of the store's embedding model (an export of another model, a hand-written
  file without ``vectors``, an embedding that failed) is queued in ``pi_memory_reembed``, which ``serve``
  embeds when it opens the store and, while it runs, every 30 s (:mod:`.team_reembed`); the report counts
  them (``queued``) and says so: until then a search finds them by their words only.

A shared project store's line (what ``serve export`` writes after the memories) is copied under the rules of
the server's own writes to it, entry by entry (:mod:`.team_project_copy`); a store already on the server is
left as it is.

A source that is not what ``serve export`` writes (a line that is not a JSON object, a row without ``id``,
``user_id`` or ``text``, a malformed field or vector; a file that is no pi-memory index) stops the copy with
an :class:`ImportProblem` naming the line or row and what to do. Everything runs in one transaction: when the
copy stops, nothing was imported.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_memory import safety
from pi_memory.semantic.backends.rest_wire import IDENTITY_KEYS as WIRE_IDENTITY_KEYS
from pi_memory.semantic.backends.team_reembed import CAP, EVERY_S
from pi_memory.semantic.embedded import IDENTITY_KEYS, check_text
from pi_memory.semantic.models import Scope, now_iso, parse_iso, text_hash
from pi_memory.semantic.sanitize import (
    check_observed_at,
    clean_metadata,
    clean_reason,
    clean_source,
    id_problem,
    nul_place,
)

_HISTORY_KEYS = ("event", "old_text", "new_text", "related_id", "reason", "at", "seq")
_SQLITE_COLS = ("id", "user_id", "project_id", "agent_id", "text", "hash", "status", "created_at", "updated_at",
                "observed_at", "superseded_by", "superseded_at", "source", "metadata")
_STATUSES = ("active", "superseded", "deleted")
_EVENTS = ("ADD", "UPDATE", "DELETE", "SUPERSEDE")
_DROP = IDENTITY_KEYS | WIRE_IDENTITY_KEYS
Row = tuple[str, dict[str, Any]]  # (where it was read: "line 3 of team.jsonl", the row)


class ImportProblem(ValueError):
    """The source is not what ``serve import`` reads; nothing was imported. The message names the line or row."""


@dataclass
class ImportReport:
    """What a copy did: ``memories`` copied, ``skipped`` (their id was already there), ``refused`` rows by
    reason (``refused_rows``: the first of them, where and why), ``history`` events and ``vectors`` copied,
    ``history_left_out`` events the checks refused, ``redacted`` rows whose credentials were redacted,
    ``reembedded`` rows embedded again after redaction, ``queued`` rows copied without a vector of ``model``
    (the store's embedding model), queued for ``serve`` to embed."""

    memories: int = 0
    skipped: int = 0
    history: int = 0
    vectors: int = 0
    history_left_out: int = 0
    redacted: int = 0
    reembedded: int = 0
    queued: int = 0
    model: str = ""
    reasons: Counter = field(default_factory=Counter)
    refused_rows: list[dict[str, str]] = field(default_factory=list)
    project_stores: int = 0  # shared project stores copied (team_project_copy), their entries copied
    project_entries: int = 0
    project_skipped: int = 0  # already on the server: left as they are
    project_refused: Counter = field(default_factory=Counter)  # entries (or whole stores) by the store's code

    @property
    def refused(self) -> int:
        return sum(self.reasons.values())

    def refuse(self, where: str, memory_id: Any, reason: str) -> None:
        self.reasons[reason] += 1
        if len(self.refused_rows) < 50:
            self.refused_rows.append({"where": where, "id": str(memory_id), "reason": reason})

    def to_dict(self) -> dict[str, Any]:
        return {"memories": self.memories, "skipped": self.skipped, "refused": self.refused,
                "reasons": dict(self.reasons), "refusedRows": self.refused_rows, "history": self.history,
                "historyLeftOut": self.history_left_out, "vectors": self.vectors, "redacted": self.redacted,
                "reembedded": self.reembedded, "queued": self.queued,
                "projectStores": {"copied": self.project_stores, "entries": self.project_entries,
                                  "alreadyThere": self.project_skipped, "refused": dict(self.project_refused)}}

    def summary(self) -> str:
        """One paragraph: ``copied N memories (…); S were already there; refused M (reasons)``."""
        text = (f"copied {_n(self.memories, 'memory', 'memories')} ({_n(self.history, 'history event')}, "
                f"{_n(self.vectors, 'vector')}); {self.skipped} {'was' if self.skipped == 1 else 'were'} already there")
        if self.refused:
            why = ", ".join(f"{n} {reason}" for reason, n in self.reasons.most_common())
            text += f"; refused {self.refused} ({why}), not copied"
        text += "."
        if self.history_left_out:
            text += (f" {_n(self.history_left_out, 'history event')} left out: the same checks refuse "
                     f"{'its' if self.history_left_out == 1 else 'their'} text.")
        if self.redacted:
            text += (f" Credentials were redacted in {_n(self.redacted, 'memory', 'memories')} "
                     f"({self.reembedded} embedded again).")
        if self.queued:
            text += (f" {_n(self.queued, 'memory', 'memories')} had no vector of this server's embedding model "
                     f"({self.model}): {'it is' if self.queued == 1 else 'they are'} queued, and `pi-memory serve` "
                     f"embeds {'it' if self.queued == 1 else 'them'} (a running server within "
                     f"{EVERY_S:g} s, {CAP} a pass; otherwise when it starts); until then a search finds "
                     f"{'it' if self.queued == 1 else 'them'} by {'its' if self.queued == 1 else 'their'} words only.")
        if self.project_stores or self.project_skipped or self.project_refused:
            text += (f" Shared project stores: copied {self.project_stores} "
                     f"({_n(self.project_entries, 'entry', 'entries')}); {self.project_skipped} "
                     f"{'was' if self.project_skipped == 1 else 'were'} already there (left as "
                     f"{'it is' if self.project_skipped == 1 else 'they are'})")
            if self.project_refused:
                why = ", ".join(f"{n} {reason}" for reason, n in self.project_refused.most_common())
                text += f"; refused {sum(self.project_refused.values())} ({why}), not copied"
            text += "."
        return text


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else many or one + 's'}"


# --- sources -------------------------------------------------------------------------------------------
def jsonl_rows(path: Path) -> Iterator[Row]:
    """The rows of a file ``serve export`` wrote, one JSON object per line (blank lines skipped)."""
    try:
        with path.open(encoding="utf-8") as stream:
            for n, line in enumerate(stream, 1):
                if not line.strip():
                    continue
                where = f"line {n} of {path}"
                try:
                    row = json.loads(line)
                except (ValueError, RecursionError) as exc:
                    why = f"{exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
                    raise ImportProblem(f"{where} is not JSON ({why}). `serve import --from-jsonl` reads what "
                                        "`serve export` writes, one JSON object per line; fix or remove that line "
                                        "and run the import again. Nothing was imported.") from None
                yield where, row
    except UnicodeDecodeError as exc:
        raise ImportProblem(f"{path} is not UTF-8 text (byte {exc.start}); `serve import --from-jsonl` reads what "
                            "`serve export` writes. Nothing was imported.") from None
    except OSError as exc:
        raise ImportProblem(f"cannot read {path}: {exc.strerror or exc}. Nothing was imported.") from None


def sqlite_rows(index_path: Path) -> Iterator[Row]:
    """Every semantic memory of an embedded store (all scopes, all statuses), with its history and vectors."""
    import numpy as np

    def not_an_index(exc: Exception) -> ImportProblem:
        return ImportProblem(f"{index_path} is not a pi-memory index ({exc}). Name the index.sqlite3 in a pi-memory "
                             "data folder (`pi-memory status` shows the data folder). Nothing was imported.")

    try:
        conn = sqlite3.connect(f"{Path(index_path).resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise not_an_index(exc) from None
    try:
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as exc:
            raise not_an_index(exc) from None
        if "semantic_memories" not in tables:
            raise not_an_index(ValueError("it holds no table of semantic memories"))
        history: dict[str, list[dict[str, Any]]] = {}
        if "semantic_history" in tables:
            for r in conn.execute("SELECT memory_id, event, old_text, new_text, related_id, reason, at, id FROM "
                                  "semantic_history ORDER BY id"):
                history.setdefault(r[0], []).append(dict(zip(_HISTORY_KEYS, r[1:], strict=True)))
        vectors: dict[str, list[dict[str, Any]]] = {}
        if "semantic_vectors" in tables:
            for mid, model, dim, blob in conn.execute("SELECT memory_id, model, dim, vector FROM semantic_vectors"):
                vectors.setdefault(mid, []).append({"model": model, "dim": dim,
                                                    "vector": np.frombuffer(blob, dtype="<f4").tolist()})
        for r in conn.execute(f"SELECT {', '.join(_SQLITE_COLS)} FROM semantic_memories ORDER BY pk"):
            row = dict(zip(_SQLITE_COLS, r, strict=True))
            where = f"memory {row['id']!r} of {index_path}"
            try:
                row["source"] = json.loads(row["source"] or "{}")
                row["metadata"] = json.loads(row["metadata"] or "{}")
            except (ValueError, TypeError) as exc:
                raise ImportProblem(f"{where} has a source or metadata column that is not JSON ({exc}); the row "
                                    "was changed outside pi-memory: check the index file (`pi-memory status --check`), "
                                    "then import from an undamaged copy of it or leave it out. Nothing was imported.") from None
            row["history"] = history.get(row["id"], [])
            row["vectors"] = vectors.get(row["id"], [])
            yield where, row
    except sqlite3.DatabaseError as exc:
        raise not_an_index(exc) from None
    finally:
        conn.close()


# --- checks --------------------------------------------------------------------------------------------
def _shape(where: str, row: Any) -> None:
    """Raise :class:`ImportProblem` when ``row`` is not shaped as ``serve export`` writes it."""
    def bad(what: str) -> ImportProblem:
        return ImportProblem(f"{where}: {what}. `serve import` reads what `serve export` writes (or an embedded "
                             "index); fix or remove that row and run the import again. Nothing was imported.")

    if not isinstance(row, dict):
        raise bad(f"it is a JSON {type(row).__name__}, not an object holding one memory")
    for key in ("id", "user_id", "text"):
        if key not in row:
            raise bad(f"it has no {key!r}")
    if not isinstance(row["id"], str) or not row["id"].strip():
        raise bad("its 'id' is not a non-empty string")
    for key in ("user_id", "text"):
        if not isinstance(row[key], str):
            raise bad(f"its {key!r} is not a string")
    for key in ("project_id", "agent_id", "superseded_by", "created_at", "updated_at", "observed_at",
                "superseded_at"):
        if row.get(key) is not None and not isinstance(row[key], str):
            raise bad(f"its {key!r} is not a string")
    for key in ("created_at", "updated_at", "superseded_at"):
        if row.get(key) and parse_iso(row[key]) is None:
            raise bad(f"its {key!r} ({str(row[key])[:40]!r}) is not an ISO-8601 time")
    if (row.get("status") or "active") not in _STATUSES:
        raise bad(f"its status {row.get('status')!r} is not one of: {', '.join(_STATUSES)}")
    for key in ("metadata", "source"):
        if row.get(key) is not None and not isinstance(row[key], dict):
            raise bad(f"its {key!r} is not an object")
    for key in ("history", "vectors"):
        if row.get(key) is not None and not isinstance(row[key], list):
            raise bad(f"its {key!r} is not a list")
    for i, h in enumerate(row.get("history") or []):
        if not isinstance(h, dict) or h.get("event") not in _EVENTS or not isinstance(h.get("at"), str):
            raise bad(f"history event {i + 1} is not an object with an event ({', '.join(_EVENTS)}) and a time 'at'")
        if any(h.get(k) is not None and not isinstance(h[k], str) for k in ("old_text", "new_text", "related_id",
                                                                            "reason")):
            raise bad(f"history event {i + 1} has a text, related_id or reason that is not a string")
    for i, v in enumerate(row.get("vectors") or []):
        ok = (isinstance(v, dict) and isinstance(v.get("model"), str) and v["model"] and isinstance(v.get("dim"), int)
              and not isinstance(v["dim"], bool) and v["dim"] > 0 and isinstance(v.get("vector"), list)
              and len(v["vector"]) == v["dim"]
              and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                      for x in v["vector"]))
        if not ok:
            raise bad(f"vector {i + 1} is not an object with a model, a dimension 'dim' and 'dim' finite numbers")


def _history_text(text: str | None) -> tuple[str | None, bool]:
    """A history text as stored (redacted) and whether it may be stored at all: the add's checks, except that
    an empty or unreadable text is kept (an event may have none)."""
    if text is None:
        return None, True
    checked = check_text(text)
    return checked.text, checked.refusal not in ("threat", "long", "control")


@dataclass
class _Clean:
    scope: Scope
    text: str
    metadata: dict[str, Any]
    source: dict[str, Any]
    observed_at: str | None
    history: list[dict[str, Any]]
    left_out: int
    text_changed: bool  # by redaction: the row's vectors were computed from the credential
    redacted: bool  # text, metadata or source


def _clean(row: dict[str, Any]) -> _Clean | str:
    """The row as the team store keeps it, or the reason it is refused."""
    place = nul_place({k: v for k, v in row.items() if k != "vectors"})
    if place:
        return "holds a NUL character"
    try:
        scope = Scope(user_id=row["user_id"], project_id=row.get("project_id") or None,
                      agent_id=row.get("agent_id") or None)
    except ValueError:
        return "its user_id, agent_id or project_id is empty, too long or holds a control character"
    for name, value in (("user_id", scope.user_id), ("agent_id", scope.agent_id), ("project_id", scope.project_id)):
        if value and safety.scan_secrets(value):
            return f"its {name} looks like a credential"
        if value and id_problem(name, value, spaces=True):
            return f"its {name} holds an invisible or direction-changing character"
    checked = check_text(row["text"])
    if checked.reason:
        return checked.reason
    text = checked.text
    try:
        observed = check_observed_at(row.get("observed_at"))
    except ValueError:
        return "its observed_at is not a date"
    try:
        metadata = clean_metadata(row.get("metadata"), _DROP)
    except ValueError:  # a key or value holds a control character, as an add refuses it
        return "its metadata holds a control character"
    try:
        source = clean_source(row.get("source")).model_dump(exclude_none=True)
    except ValueError:  # as an add refuses it
        return "its source holds a control character"
    history, left_out = [], 0
    for h in row.get("history") or []:
        old, old_ok = _history_text(h.get("old_text"))
        new, new_ok = _history_text(h.get("new_text"))
        if not (old_ok and new_ok):
            left_out += 1
            continue
        history.append({**h, "old_text": old, "new_text": new, "reason": clean_reason(h.get("reason"))})
    text_changed = text != row["text"].strip()
    redacted = text_changed or metadata != {k: v for k, v in (row.get("metadata") or {}).items() if k not in _DROP}
    return _Clean(scope, text, metadata, source, observed or row.get("observed_at"), history, left_out, text_changed,
                  redacted)


# --- the copy ------------------------------------------------------------------------------------------
def import_rows(backend: Any, rows: Iterable[Row], *, project_char_limit: int | None = None) -> ImportReport:
    """Copy ``rows`` (``(where, row)`` from :func:`sqlite_rows` or :func:`jsonl_rows`) into the team store of
    ``backend`` (a :class:`~.postgres.PostgresBackend`) under the module's rules, in one transaction. A shared
    project store's line is copied by :mod:`.team_project_copy` within ``project_char_limit`` (default: the
    curated project store's limit), as the server's own writes are."""
    from psycopg import errors
    from psycopg.types.json import Jsonb

    from pi_memory.config import DEFAULT_MEMORY_CHAR_LIMIT
    from pi_memory.semantic.backends import team_project_copy as projects
    from pi_memory.semantic.backends.postgres import SCOPE, _vector_literal

    report = ImportReport(model=backend.model)
    links: list[tuple[str, str]] = []
    events: list[tuple[int, str, Scope, dict[str, Any]]] = []
    with backend.pool.connection() as conn, conn.transaction():
        for where, row in rows:
            if projects.is_project_store(row):
                problem = projects.shape_problem(row)
                if problem:
                    raise ImportProblem(f"{where}: {problem}. `serve import` reads what `serve export` writes; fix or "
                                        "remove that line and run the import again. Nothing was imported.")
                projects.copy_project_store(conn, row, project_char_limit or DEFAULT_MEMORY_CHAR_LIMIT, report)
                continue
            _shape(where, row)
            clean = _clean(row)
            if isinstance(clean, str):
                report.refuse(where, row["id"], clean)
                continue
            scope, status, digest = clean.scope, row.get("status") or "active", text_hash(clean.text)
            if conn.execute("SELECT 1 FROM semantic_memories WHERE id = %s", (row["id"],)).fetchone():
                report.skipped += 1
                continue
            if status == "active" and conn.execute(
                    f"SELECT 1 FROM semantic_memories WHERE {SCOPE} AND hash = %s AND status = 'active'",
                    (*scope.columns(), digest)).fetchone():
                report.refuse(where, row["id"], "same text as an active memory of its scope already there")
                continue
            created = row.get("created_at") or now_iso()
            try:
                with conn.transaction():
                    conn.execute(
                        "INSERT INTO semantic_memories(id, user_id, project_id, agent_id, text, hash, status, "
                        "created_at, updated_at, observed_at, superseded_by, superseded_at, source, metadata) "
                        "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,NULL,%s,%s,%s)",
                        (row["id"], *scope.columns(), clean.text, digest, status, created,
                         row.get("updated_at") or created, clean.observed_at or created,
                         row.get("superseded_at"), Jsonb(clean.source), Jsonb(clean.metadata)))
            except errors.UniqueViolation as exc:  # a server stored the same fact (or id) while this copy ran
                if getattr(exc.diag, "constraint_name", None) == "semantic_memories_active_hash":
                    report.refuse(where, row["id"], "same text as an active memory of its scope already there")
                else:
                    report.skipped += 1
                continue
            except errors.DataError as exc:
                raise ImportProblem(f"{where}: PostgreSQL cannot store it ({str(exc).strip()}); fix or remove that "
                                    "row and run the import again. Nothing was imported.") from exc
            report.memories += 1
            report.history_left_out += clean.left_out
            if row.get("superseded_by"):
                links.append((row["id"], row["superseded_by"]))
            events += [(int(h.get("seq") or 0), row["id"], scope, h) for h in clean.history]
            vectors = row.get("vectors") or []
            report.redacted += clean.redacted
            if clean.text_changed:
                vectors = []  # computed from the text before its credentials were redacted
                embedded = backend._embed([clean.text])
                if embedded is not None:
                    vectors = [{"model": backend.model, "dim": int(embedded.shape[1]), "vector": embedded[0]}]
                    report.reembedded += 1
            for v in vectors:
                report.vectors += conn.execute(
                    "INSERT INTO semantic_vectors(memory_id, model, dim, embedding) VALUES (%s,%s,%s,%s::vector) "
                    "ON CONFLICT DO NOTHING", (row["id"], v["model"], v["dim"], _vector_literal(v["vector"]))).rowcount
            if not any(v["model"] == backend.model for v in vectors):  # `serve` embeds it when it opens the store
                report.queued += conn.execute("INSERT INTO pi_memory_reembed(memory_id) VALUES (%s) ON CONFLICT DO "
                                              "NOTHING", (row["id"],)).rowcount
        for _seq, memory_id, scope, h in sorted(events, key=lambda e: e[0]):
            conn.execute("INSERT INTO semantic_history(memory_id, user_id, project_id, agent_id, event, old_text, "
                         "new_text, related_id, reason, at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                         (memory_id, *scope.columns(), h["event"], h["old_text"], h["new_text"], h.get("related_id"),
                          h["reason"], h["at"]))
            report.history += 1
        for old, new in links:  # a newer version that was refused is not linked to: the row stays superseded
            conn.execute("UPDATE semantic_memories SET superseded_by = %s WHERE id = %s AND EXISTS (SELECT 1 FROM "
                         "semantic_memories WHERE id = %s)", (new, old, new))
    return report


__all__ = ["ImportProblem", "ImportReport", "import_rows", "jsonl_rows", "sqlite_rows"]
