"""The learning log and the shared token budget, in the index (``index.sqlite3``).

Tables (own named migrations, applied by :func:`open_log` like the semantic layer's):

* ``learning_jobs``: one row per background job: ``kind`` (review | correction | refine | flush | consolidate |
  dream | undo), ``trigger``, ``session_ids`` / ``entry_ids`` (JSON lists: what it read), ``model``, ``input_tokens``,
  ``output_tokens``, ``cost_usd``, ``calls``, ``duration_ms``, ``outcome`` (running | ok | nothing | dry_run |
  budget | invalid_output | error | refused | undone), ``detail``, ``day`` (UTC ``YYYY-MM-DD`` of the start),
  ``reserved_tokens`` (held against the day's budget while the job runs), ``undone_at``.
* ``learning_writes``: each write of a job as a before/after pair (``before`` NULL for an add, ``after`` NULL
  for a remove and for a ``dedupe``: a copy of an exact duplicate the job's write merged), ``target`` and the store
  file; the old text of a removed or merged entry stays here. ``place``
  (``learning_003_write_place``): where a removed entry stood, JSON ``{"index", "after", "before"}`` (the index and
  the texts of the entries around it), so an undo puts it back there. ``shown`` (``learning_005_write_shown``):
  for an entry that trips the threat scanner and held a credential, JSON ``[before, after]`` of its blocked
  markers as the store shows it (their Ref is the hash of the entry as stored, which the redacted ``before`` /
  ``after`` no longer give), so the log names the Ref ``pi-memory remove`` finds.
* ``learning_layouts`` (``learning_004_file_layout``): for a job's first write to a store file that was not in the
  store's format (CRLF, a BOM, blank lines, copies of exact duplicates), that file's layout
  (:class:`pi_memory.curated.layout.Layout`: the text between the entries and their line breaks, no entry text)
  and the SHA-256 of the bytes the write left, so the job's undo can give back the file's exact bytes.
* ``learning_gate``: named gate state (the dream gate: ``last_run_at``, ``last_message_id``).
* ``learning_pending`` (``learning_006_pending_flush``): per session file, the mark of the messages a flush at a
  session's end could not review (a budget, a model that did not answer, a process that ended first), which the
  next session of the project reviews (:mod:`.pending`).

The day's budget is shared by every process on the data root: a job reserves its estimate in a
``BEGIN IMMEDIATE`` transaction that first sums what the day already spent and holds. Token counts are never
below 0 (:func:`settle`; ``learning_002_clean`` mended rows written before).

No credential is kept here: a job's ``detail`` (which can quote a model: its note, the ``oldText`` a refusal
names, a validation error) and every write's ``before`` / ``after`` are redacted
(:func:`pi_memory.safety.redact`) when the job is logged, the detail also with control characters escaped
(``\\xNN``) and cut at :data:`DETAIL_CAP` characters (:func:`clean`); rows written before were redacted by the
migration ``learning_002_clean``, and what :func:`list_jobs` returns is redacted again (patterns learned since).
So a write that removed a hand-edited entry holding a credential keeps it redacted, and its undo restores the
redacted text.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pi_memory.curated.entries import printable
from pi_memory.curated.layout import Layout, Published, Restore
from pi_memory.index.db import Migration, migrate, now_iso, transaction
from pi_memory.safety import blocked, blocked_marker, for_model, redact

DETAIL_CAP = 1_000  # characters of a job's detail kept and shown
NOTE_CAP = 300  # characters of a model's own note (one line)


def clean(text: str | None, cap: int = DETAIL_CAP) -> str | None:
    """What the log keeps and a person is shown of a text that may quote a model: credentials redacted (before
    the cut, so no half key is left), control characters escaped (``\\xNN``: a terminal never runs an escape
    sequence), at most ``cap`` characters (``…`` marks a cut)."""
    if not text:
        return text
    shown = printable(redact(text))
    return shown if len(shown) <= cap else shown[: cap - 1] + "…"


def clean_note(note: str | None) -> str | None:
    """A model's note as one line of at most :data:`NOTE_CAP` characters, cleaned as :func:`clean` does."""
    return clean(" ".join(note.split()), NOTE_CAP) if note else None


def _clean_rows(conn: sqlite3.Connection) -> None:
    """``learning_002_clean``: redact what older versions logged, and mend negative token counts."""
    conn.execute("UPDATE learning_jobs SET input_tokens = max(0, input_tokens), output_tokens = max(0, output_tokens),"
                 " reserved_tokens = max(0, reserved_tokens) WHERE min(input_tokens, output_tokens, reserved_tokens) < 0")
    for job_id, detail in conn.execute("SELECT id, detail FROM learning_jobs WHERE detail IS NOT NULL").fetchall():
        if (shown := clean(detail)) != detail:
            conn.execute("UPDATE learning_jobs SET detail = ? WHERE id = ?", (shown, job_id))
    for row_id, *texts in conn.execute("SELECT id, before, after FROM learning_writes").fetchall():
        if (shown := [redact(t) if t else t for t in texts]) != texts:
            conn.execute("UPDATE learning_writes SET before = ?, after = ? WHERE id = ?", (*shown, row_id))


LEARNING_MIGRATIONS = [
    Migration(
        "learning_001_log",
        """
        CREATE TABLE learning_jobs (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            trigger TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            day TEXT NOT NULL,
            project TEXT,
            session_ids TEXT NOT NULL DEFAULT '[]',
            entry_ids TEXT NOT NULL DEFAULT '[]',
            model TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            reserved_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL,
            calls INTEGER NOT NULL DEFAULT 0,
            duration_ms REAL,
            dry_run INTEGER NOT NULL DEFAULT 0,
            outcome TEXT NOT NULL DEFAULT 'running',
            detail TEXT,
            undone_at TEXT
        );
        CREATE INDEX learning_jobs_day ON learning_jobs(day);
        CREATE TABLE learning_writes (
            id INTEGER PRIMARY KEY,
            job_id INTEGER NOT NULL REFERENCES learning_jobs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            target TEXT NOT NULL,
            store TEXT NOT NULL,
            action TEXT NOT NULL,
            before TEXT,
            after TEXT
        );
        CREATE INDEX learning_writes_job ON learning_writes(job_id);
        CREATE TABLE learning_gate (
            name TEXT PRIMARY KEY,
            last_run_at TEXT,
            last_message_id INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        """,
    ),
    Migration("learning_002_clean", "", run=_clean_rows, readers_need=False),  # readers clean what they show
    # Only undo reads it (a read-only index written by an older version is listed as it is).
    Migration("learning_003_write_place", "ALTER TABLE learning_writes ADD COLUMN place TEXT;", readers_need=False),
    Migration("learning_004_file_layout", """
        CREATE TABLE learning_layouts (
            job_id INTEGER NOT NULL REFERENCES learning_jobs(id) ON DELETE CASCADE,
            target TEXT NOT NULL,
            layout TEXT NOT NULL,
            left_sha256 TEXT NOT NULL,
            PRIMARY KEY (job_id, target)
        );
        """, readers_need=False),  # only undo reads it
    # A read-only index written before is listed without it (:func:`job_writes`).
    Migration("learning_005_write_shown", "ALTER TABLE learning_writes ADD COLUMN shown TEXT;", readers_need=False),
    # The mark of a session a flush at its end could not review (:mod:`.pending`); only writable sessions read it.
    Migration("learning_006_pending_flush", """
        CREATE TABLE learning_pending (
            session_file TEXT PRIMARY KEY,
            project TEXT NOT NULL DEFAULT '',
            session_id TEXT,
            reviewed INTEGER NOT NULL,
            refused_from INTEGER NOT NULL DEFAULT -1,
            reason TEXT NOT NULL,
            since TEXT NOT NULL,
            outcome TEXT,
            detail TEXT
        ) WITHOUT ROWID;
        """, readers_need=False),
]


class BudgetExceeded(Exception):
    """A job would go over a budget; ``which`` is ``job`` or ``daily``, the message says when it resets."""

    def __init__(self, which: str, message: str):
        super().__init__(message)
        self.which = which
        self.message = message


@dataclass(frozen=True)
class Write:
    """One change a job made (or, in a dry run, would make)."""

    target: str
    store: str
    action: str  # add | replace | remove | dedupe (a copy of an exact duplicate the write merged)
    before: str | None
    after: str | None
    # a remove or dedupe: where the entry stood ({"index", "after", "before"}: :func:`record_places`); not in to_dict
    place: dict | None = field(default=None, compare=False)
    # the blocked markers of ``before`` / ``after`` as they stood, kept when redacting them changed them: the Ref
    # the store gives a blocked entry is the hash of its stored text, not of the redacted one (``None``: none kept)
    shown: tuple[str | None, str | None] | None = field(default=None, compare=False)

    def to_dict(self) -> dict:
        """The write as data: its texts as anyone may be shown them (:func:`shown_entry`), never raw."""
        kept = self.shown or (None, None)
        return {"target": self.target, "store": self.store, "action": self.action,
                "before": kept[0] or shown_entry(self.store, self.before),
                "after": kept[1] or shown_entry(self.store, self.after)}

    def redacted(self) -> Write:
        """This write with credentials in ``before`` / ``after`` and in its place's neighbours redacted (what the
        log keeps and shows; a neighbour holding one is then found by its index instead, :mod:`.undo`)."""
        place = None if self.place is None else {
            k: redact(v) if isinstance(v, str) and v else v for k, v in self.place.items()}
        shown = self.shown or _markers_of_changed(self.store, self.before, self.after)
        return Write(self.target, self.store, self.action, redact(self.before) if self.before else self.before,
                     redact(self.after) if self.after else self.after, place, shown)


def _markers_of_changed(store: str, *texts: str | None) -> tuple[str | None, str | None] | None:
    """The blocked marker of each text that redacting changes, as the store shows it (``None`` where the text is
    not blocked or redacting leaves it as it is; ``None`` for none at all)."""
    found = tuple(blocked(t, lambda ids: blocked_marker(store, ids)) if t and redact(t) != t else None
                  for t in texts)
    return found if any(found) else None  # type: ignore[return-value]


def shown_entry(store: str, text: str | None) -> str | None:
    """An entry a write names, as a report, the log's listing or a notification shows it: one that trips the
    threat scanner as its blocked marker (with its Ref, :func:`pi_memory.safety.blocked_marker`), credentials
    redacted. The log keeps the text itself (redacted), which an undo needs."""
    if not text:
        return text
    return for_model(text, lambda ids: blocked_marker(store, ids))


def open_log(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Apply the learning migrations to an index connection (cheap when they are applied)."""
    migrate(conn, LEARNING_MIGRATIONS)
    return conn


def utc_day(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).strftime("%Y-%m-%d")


def next_reset(now: datetime | None = None) -> str:
    """When the daily budget resets: the next UTC midnight, ISO-8601."""
    now = now or datetime.now(UTC)
    return (now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")


def spent_today(conn: sqlite3.Connection, day: str | None = None) -> int:
    """Tokens the day's jobs spent plus what running jobs hold, over every process on this data root."""
    row = conn.execute(
        "SELECT coalesce(sum(input_tokens + output_tokens + reserved_tokens), 0) FROM learning_jobs WHERE day = ?",
        (day or utc_day(),),
    ).fetchone()
    return int(row[0])


def held_today(conn: sqlite3.Connection, day: str | None = None) -> tuple[int, int]:
    """``(tokens, jobs)`` the day's running jobs hold for their next call (part of :func:`spent_today`)."""
    row = conn.execute("SELECT coalesce(sum(reserved_tokens), 0), count(*) FROM learning_jobs WHERE day = ? AND "
                       "reserved_tokens > 0", (day or utc_day(),)).fetchone()
    return int(row[0]), int(row[1])


def tokens_per_day(conn: sqlite3.Connection, days: int = 14, now: datetime | None = None) -> list[dict]:
    """Tokens the jobs of each of the last ``days`` UTC days spent (held tokens of running jobs included), oldest
    first, days without a job as 0: ``[{"day": "YYYY-MM-DD", "tokens": n, "jobs": n}]``."""
    today = (now or datetime.now(UTC)).date()
    first = (today - timedelta(days=days - 1)).isoformat()
    rows = dict((d, (t, n)) for d, t, n in conn.execute(
        "SELECT day, coalesce(sum(input_tokens + output_tokens + reserved_tokens), 0), count(*) FROM learning_jobs "
        "WHERE day >= ? GROUP BY day", (first,)))
    out = []
    for i in range(days):
        day = (today - timedelta(days=days - 1 - i)).isoformat()
        tokens, jobs = rows.get(day, (0, 0))
        out.append({"day": day, "tokens": int(tokens), "jobs": int(jobs)})
    return out


def start_job(conn: sqlite3.Connection, kind: str, trigger: str, *, project: str | None, dry_run: bool,
              model: str | None) -> int:
    with transaction(conn):
        cur = conn.execute(
            "INSERT INTO learning_jobs(kind, trigger, started_at, day, project, dry_run, model) VALUES (?,?,?,?,?,?,?)",
            (kind, trigger, now_iso(), utc_day(), project, int(dry_run), model),
        )
        return int(cur.lastrowid)


def reserve(conn: sqlite3.Connection, job_id: int, tokens: int, daily_budget: int) -> None:
    """Hold ``tokens`` of the day's budget for a call of ``job_id``; raises :class:`BudgetExceeded` when the day
    (every process's jobs, running ones included) would go over ``daily_budget``."""
    with transaction(conn):
        day = conn.execute("SELECT day FROM learning_jobs WHERE id = ?", (job_id,)).fetchone()[0]
        used = spent_today(conn, day)
        if used + tokens > daily_budget:
            held, holders = held_today(conn, day)
            raise BudgetExceeded("daily", daily_refusal(used, tokens, daily_budget, held, holders))
        conn.execute("UPDATE learning_jobs SET reserved_tokens = reserved_tokens + ? WHERE id = ?", (tokens, job_id))


def settle(conn: sqlite3.Connection, job_id: int, reserved: int, input_tokens: int, output_tokens: int,
           cost: float | None) -> None:
    """Replace a call's reservation by what the call is counted as (never below 0)."""
    input_tokens, output_tokens = max(0, input_tokens), max(0, output_tokens)
    with transaction(conn):
        conn.execute(
            "UPDATE learning_jobs SET reserved_tokens = max(0, reserved_tokens - ?), input_tokens = input_tokens + ?,"
            " output_tokens = output_tokens + ?, calls = calls + 1,"
            " cost_usd = CASE WHEN ? IS NULL THEN cost_usd ELSE coalesce(cost_usd, 0) + ? END WHERE id = ?",
            (reserved, input_tokens, output_tokens, cost, cost, job_id),
        )


def finish_job(conn: sqlite3.Connection, job_id: int, *, outcome: str, detail: str | None, duration_ms: float,
               writes: list[Write], session_ids: list[str], entry_ids: list[str]) -> None:
    with transaction(conn):
        conn.execute(
            "UPDATE learning_jobs SET outcome = ?, detail = ?, duration_ms = ?, finished_at = ?, reserved_tokens = 0,"
            " session_ids = ?, entry_ids = ? WHERE id = ?",
            (outcome, clean(detail), round(duration_ms, 1), now_iso(), json.dumps(session_ids),
             json.dumps(entry_ids[:500]), job_id),
        )
        conn.executemany(
            "INSERT INTO learning_writes(job_id, seq, target, store, action, before, after, shown) "
            "VALUES (?,?,?,?,?,?,?,?)",
            [(job_id, i, w.target, w.store, w.action, w.before, w.after, json.dumps(w.shown) if w.shown else None)
             for i, w in enumerate(w.redacted() for w in writes)],
        )


def job_writes(conn: sqlite3.Connection, job_id: int) -> list[Write]:
    try:
        rows = conn.execute("SELECT target, store, action, before, after, shown FROM learning_writes WHERE job_id = ? "
                            "ORDER BY seq", (job_id,)).fetchall()
    except sqlite3.OperationalError:  # a read-only index written before learning_005_write_shown
        rows = [(*r, None) for r in conn.execute("SELECT target, store, action, before, after FROM learning_writes "
                                                 "WHERE job_id = ? ORDER BY seq", (job_id,)).fetchall()]
    return [Write(*r[:5], shown=tuple(json.loads(r[5])) if r[5] else None) for r in rows]


_JOB_COLUMNS = ("id", "kind", "trigger", "started_at", "finished_at", "project", "session_ids", "entry_ids", "model",
                "input_tokens", "output_tokens", "cost_usd", "calls", "duration_ms", "dry_run", "outcome", "detail",
                "undone_at")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def get_job(conn: sqlite3.Connection, job_id: int) -> dict | None:
    row = conn.execute(f"SELECT {', '.join(_JOB_COLUMNS)} FROM learning_jobs WHERE id = ?", (job_id,)).fetchone()
    return _job_dict(conn, row) if row else None


def list_jobs(conn: sqlite3.Connection, limit: int = 50, kind: str | None = None) -> list[dict]:
    """The newest jobs first, each with its writes (camelCase, JSON-ready)."""
    where, args = ("WHERE kind = ?", [kind]) if kind else ("", [])
    rows = conn.execute(
        f"SELECT {', '.join(_JOB_COLUMNS)} FROM learning_jobs {where} ORDER BY id DESC LIMIT ?", [*args, limit]
    ).fetchall()
    return [_job_dict(conn, r) for r in rows]


def _job_dict(conn: sqlite3.Connection, row: tuple) -> dict:
    data = {_camel(k): v for k, v in zip(_JOB_COLUMNS, row, strict=True)}
    data["sessionIds"] = json.loads(data["sessionIds"] or "[]")
    data["entryIds"] = json.loads(data["entryIds"] or "[]")
    data["dryRun"] = bool(data["dryRun"])
    data["detail"] = clean(data["detail"])
    data["tokens"] = data["inputTokens"] + data["outputTokens"]
    data["writes"] = [w.redacted().to_dict() for w in job_writes(conn, row[0])]
    return data


def mark_undone(conn: sqlite3.Connection, job_id: int, undo_job: int) -> None:
    with transaction(conn):
        conn.execute("UPDATE learning_jobs SET undone_at = ?, detail = coalesce(detail || ' ', '') || ? WHERE id = ?",
                     (now_iso(), f"(undone by job {undo_job})", job_id))


def mark_in_effect(conn: sqlite3.Connection, job_id: int, undo_job: int, redo_job: int) -> None:
    """Job ``job_id``'s writes are in effect again: ``redo_job`` undid ``undo_job``, the undo that took them back
    (so the log does not show it undone, and it can be undone again)."""
    with transaction(conn):
        conn.execute("UPDATE learning_jobs SET undone_at = NULL, detail = coalesce(detail || ' ', '') || ? "
                     "WHERE id = ?", (f"(in effect again: job {redo_job} undid job {undo_job})", job_id))


def gate_state(conn: sqlite3.Connection, name: str) -> tuple[str | None, int]:
    row = conn.execute("SELECT last_run_at, last_message_id FROM learning_gate WHERE name = ?", (name,)).fetchone()
    return (row[0], int(row[1])) if row else (None, 0)


def set_gate(conn: sqlite3.Connection, name: str, last_run_at: str, last_message_id: int) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO learning_gate(name, last_run_at, last_message_id) VALUES (?,?,?) ON CONFLICT(name) DO UPDATE"
            " SET last_run_at = excluded.last_run_at, last_message_id = excluded.last_message_id",
            (name, last_run_at, last_message_id),
        )


def record_places(conn: sqlite3.Connection, job_id: int, writes: list[Write]) -> None:
    """Keep where each removed entry of a finished job stood (``learning_writes.place``), for its undo."""
    rows = [(json.dumps(w.place), job_id, i) for i, w in enumerate(writes) if w.place is not None]
    if rows:
        with transaction(conn):
            conn.executemany("UPDATE learning_writes SET place = ? WHERE job_id = ? AND seq = ?", rows)


def write_places(conn: sqlite3.Connection, job_id: int) -> list[dict | None]:
    """``place`` of each write of ``job_id`` in order (``None`` where none was kept: a job logged before it was)."""
    rows = conn.execute("SELECT place FROM learning_writes WHERE job_id = ? ORDER BY seq", (job_id,)).fetchall()
    return [json.loads(r[0]) if r[0] else None for r in rows]


def record_layouts(conn: sqlite3.Connection, job_id: int, published: dict[str, Published]) -> None:
    """Keep, for each store file a job wrote, the layout of the bytes its write replaced and the SHA-256 of the
    bytes it left (``learning_layouts``; nothing for a file that was in the store's format)."""
    rows = [(job_id, t, p.before.to_json(), p.digest) for t, p in published.items() if p.before is not None]
    if rows:
        with transaction(conn):
            conn.executemany("INSERT OR IGNORE INTO learning_layouts(job_id, target, layout, left_sha256) "
                             "VALUES (?,?,?,?)", rows)


def file_layout(conn: sqlite3.Connection, job_id: int, target: str) -> Restore | None:
    """What the undo of ``job_id`` asks the store of ``target`` to give back (``None``: nothing was kept)."""
    row = conn.execute("SELECT layout, left_sha256 FROM learning_layouts WHERE job_id = ? AND target = ?",
                       (job_id, target)).fetchone()
    return Restore(Layout.from_json(row[0]), row[1]) if row else None


def held_words(held: int, holders: int) -> str:
    """``2,090 reserved by a running job``: what running jobs hold of the day's budget (``""`` for none)."""
    if not held:
        return ""
    return f"{held:,} reserved by " + ("a running job" if holders <= 1 else f"{holders} running jobs")


def daily_refusal(used: int, tokens: int, daily_budget: int, held: int = 0, holders: int = 0) -> str:
    """Why a call does not fit the day's budget, for a person: what is left (or that it is used up) and what to do.
    ``used``: the day's tokens, ``held`` of them reserved by ``holders`` running jobs (:func:`held_today`), said
    apart from what was spent."""
    spent, reserved = used - held, (f", {held_words(held, holders)}" if held else "")
    if used < daily_budget:
        state = (f"has {daily_budget - used:,} tokens left today ({spent:,} spent{reserved}), too few for the next "
                 f"call (about {tokens:,})")
    else:
        state = f"is used up{' for now' if held else ''} ({spent:,} tokens spent today{reserved})"
    wait = "; a running job gives back what it reserved and did not use when it ends" if held else ""
    return (f"the daily learning budget (learning.dailyTokenBudget = {daily_budget:,} tokens) {state}; it resets at "
            f"{next_reset()} (UTC midnight), or raise learning.dailyTokenBudget to run jobs before then{wait}")
