"""Credentials never enter the index: redaction at index time, and the named migration that redacts an old index.

What the index stores is the redacted form (:func:`pi_memory.safety.redact`: each value becomes
``[REDACTED:<id>]``, the words around it stay): ``messages.text`` (so ``fts_text``, the word index and the text
session turns are embedded from) and ``memories.content`` / ``failure_reason`` (the mirror of hand-edited
Markdown files and the extended store, so curated entries are embedded from it too). The session files
themselves are never rewritten; a hit's file and line still point at the original.

* **Before capping.** :func:`prepare_text` redacts a record's text and only then cuts it to the index's cap
  (:func:`cap_text`, head 80% + tail 20%), so a cut never leaves half a key that the scanner no longer knows. A
  text far over the cap is redacted in two windows, the kept head and tail each with ``MARGIN`` characters more
  than they keep (longer than the longest credential the scanner knows, a 20,000-character private key block),
  instead of whole: a 1 MB log costs the scan of 2 x 25 KB plus the kept part.
* **With the record before.** A record is scanned behind the last ``CONTEXT_CHARS`` characters of the record
  read before it in the same pass (the tool call before its result, the question before the paste), and only
  the part of a match that falls in the record itself is replaced. So ``printenv AWS_SECRET_ACCESS_KEY`` in a
  tool call followed by the bare 40-character value in its result is recognised, as the scanner needs the word
  "secret" near such a value. An incremental pass starts without that context for its first record.

Migration ``008_redact_secrets`` (:data:`MIGRATION`) redacts an index written before this version, in place:

* the migration step itself only records the work in ``meta`` (``redaction`` = ``{"version", "phase",
  "cursor", "total", "changed"}``; a new, empty index is marked done at once);
* :func:`redact_pending_index` does the work, called by :func:`pi_memory.index.open_index` right after the
  migrations and by every indexing pass until it is done (all at once under the CLI's progress bar, else in
  slices of ``HOST_BUDGET_S`` so a host is never held up for long by a large old index; until it is done,
  searches and recall redact every text they show): messages in batches of
  ``BATCH`` rows by id, each batch one transaction that also advances the cursor (killed at any point, it goes
  on from the last committed batch), then the memories, then the compaction below. One process does it at a
  time (``index.sqlite3.redact.lock``); another process opening the index meanwhile finds the lock held and
  goes on, and its searches redact the rows they show (:func:`redaction_pending`);
* **compaction**, so the old plaintext really leaves the file: a changed row is updated through the word
  index's triggers (the contentless FTS5 table is told the old text to delete its tokens), which leaves
  delete markers and old segments; ``optimize`` merges each word index into one segment without them,
  ``VACUUM`` rewrites the file without the freed pages, and ``wal_checkpoint(TRUNCATE)`` empties the
  ``-wal`` file. When a reader keeps the WAL from being truncated, the phase stays ``compact`` and the next
  open tries again. Vectors of changed turns and entries are deleted (they were embedded from the
  plaintext; the session worker and ``pi-memory semantic embed-sessions`` embed them again). A run that
  changed no row compacts nothing: a new :data:`VERSION` that finds no credential in an index (most) costs
  its text phases only, not a ``VACUUM`` of the whole file in a host's open (about 3.6 s per 500 MB here).

``pi-memory reindex`` gives the same stored text: the indexer redacts as it writes, and the run ends with the
same compaction (:func:`compact`).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from pi_memory.index import redaction_semantic, segments
from pi_memory.safety import redact, secret_spans

VERSION = 11
"""The scanner's patterns the stored rows were redacted with: raised whenever the secret scanner learns a
format (2: truncated private keys, Vault, Telegram, ``.pgpass``, Basic auth, Docker auths; 3: ``.netrc``,
registry ``login -p``, password phrases in 11 languages, age and PuTTY keys; 4: password phrases with an arrow,
"is now" or only a space, and the Persian copula form; 5: escaped text read as decoded (a config file in a tool
call's JSON arguments), XML config secrets, ``--api-token``-style flags, ``twine``/``mongosh -p``, PyPI, Docker
Hub, Shopify, Google OAuth client secret, GitLab runner and other ``gl…-`` tokens, Discord bot tokens; 6: a password
named with a qualifier before its copula or value (``Passwort für den Server lautet X``, ``пароль от сервера X``),
login pairs (``login: admin / hunter2``), a long random value after a token word with only a space, and a plain word
after "password is"; 7: PINs, PUKs, passcodes, door and alarm codes, safe combinations (``pin_code``), a plain word
after a password label of another language or script (``Passwort ist sommerwiese``, ``пароль: подсолнух``,
``密码是向日葵``), and a passphrase of several English words; 8: a value on the line after its label (``Password:\nX``),
key material after a label naming a key, cookie, seed or salt (``encryption key: 4Gx7…==``), a password or token
column of a Markdown table, and a 4-5 character password after ``pw:``/``pass=``; 9: a password in a table row with
no header, a value under a heading (``## Password\nX``), a capitalised word under a label, hex key material after a
label word the lists lacked, BIP39 seed phrases, ``pw is toor`` and 2-3 character passwords, words people choose as
passwords (``Passwort ist geheim``), and a door code after an opening verb (``the door opens with 7731``); 10: a word
password under a known account in a table row with no header (``| root | toor |``), ``pass: toor`` and one-letter
passwords (``pass = x``), BIP39 seed phrases of the other lists, in capitals or mid-sentence with no label (while
hex after "the widget key" and "Das Passwort ist geheim." are kept as they are, which a new version cannot undo in
rows already redacted); 11: a qualifier between a label and its verb for words-and-digits passwords in every
language (``la contraseña del wifi es Gato-Azul-77``) and for token, key and secret labels (``the api token for
sentry is 4f9c…``), ``creds for X are user / Cat-Blue-80``, ``login user:pass on X`` and a quoted passphrase after
"passphrase" (``use passphrase 'purple monkey dishwasher 42'``). An index whose finished state has an older version runs the text phases again
(:func:`redact_pending_index`)."""
BATCH = 2000
CONTEXT_CHARS = 120
MARGIN = 25_000
META_KEY = "redaction"

RedactProgress = Callable[[int, int], None]
"""``progress(rows_done, rows_total)``, called after each committed batch and once at the end."""

_PROGRESS: contextvars.ContextVar[RedactProgress | None] = contextvars.ContextVar("redact_progress", default=None)


def set_progress(callback: RedactProgress | None) -> None:
    """Report the migration's progress to ``callback`` from now on in this context (a command-line run)."""
    _PROGRESS.set(callback)


@contextlib.contextmanager
def redaction_progress(callback: RedactProgress | None) -> Iterator[None]:
    """Report the migration's progress to ``callback`` for the indexes opened inside the block (the CLI draws a
    progress bar with it; hosts without a person watching pass nothing)."""
    token = _PROGRESS.set(callback)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


# ------------------------------------------------------------------------------------------ text
def cap_text(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters: the first 80% and the last 20% kept, a marker between."""
    if len(text) <= limit:
        return text
    head, tail = limit * 4 // 5, limit // 5
    left_out = len(text) - head - tail
    return f"{text[:head]}\n… [{left_out:,} characters not indexed] …\n{text[-tail:]}"


# A command that prints one variable named like a credential: its output is that credential's bare value.
_PRINTS_VARIABLE = re.compile(
    r"(?:printenv|echo|printf\s+['\"]?%s\\?n?['\"]?|print|Write-Output)\s+['\"]?(?:\$\{?|\$env:)?"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|PASS|AUTH|CREDENTIALS?)[A-Za-z0-9_]*)"
    r"\}?['\"]?[^\n]{0,40}$",
    re.IGNORECASE,
)


def redact_text(text: str, context: str = "") -> str:
    """``text`` with every credential replaced by ``[REDACTED:<id>]``; ``context`` (the text read just before
    it) is scanned with it, and a match reaching from it into ``text`` is replaced from the start of ``text``.

    When ``context`` ends with a command printing one credential-named variable (``printenv DB_PASSWORD``,
    ``echo $API_TOKEN``), ``text`` is scanned as that variable's assignment (``DB_PASSWORD=<text>``): the bare
    value a tool result prints has no label of its own."""
    if not text:
        return text
    if not context:
        return redact(text)
    tail = context[-CONTEXT_CHARS:]
    printed = _PRINTS_VARIABLE.search(tail.rstrip().rstrip('"}').rstrip())
    joined = f"{printed.group('name')}=" if printed else tail + "\n"
    offset = len(joined)
    spans = [s for s in secret_spans(joined + text) if s.end > offset]
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, end, ident in spans:
        start = max(0, start - offset)
        out.append(text[pos:start])
        out.append(f"[REDACTED:{ident}]")
        pos = end - offset
    out.append(text[pos:])
    return "".join(out)


def prepare_text(text: str, limit: int, context: str = "") -> str:
    """What the index stores for a record's ``text``: redacted (see the module docstring), then capped."""
    if len(text) <= limit + 2 * MARGIN:
        return cap_text(redact_text(text, context), limit)
    head, tail = limit * 4 // 5, limit // 5
    first = redact_text(text[: head + MARGIN], context)[:head]
    last = redact(text[len(text) - tail - MARGIN :])[-tail:]
    left_out = len(text) - head - tail
    return f"{first}\n… [{left_out:,} characters not indexed] …\n{last}"


# ------------------------------------------------------------------------------------------ state
@dataclass
class RedactionState:
    """The migration's progress, as stored in ``meta``: ``phase`` is ``messages``, ``memories``, ``semantic``,
    ``semantic_history``, ``compact`` or ``done``; ``cursor`` the last row id done in the phase's table;
    ``changed`` the rows whose text changed; ``version`` the :data:`VERSION` of the patterns it runs with."""

    version: int = VERSION
    phase: str = "messages"
    cursor: int = 0
    total: int = 0
    changed: int = 0

    def to_json(self) -> str:
        return json.dumps(self.__dict__)


def load_state(conn: sqlite3.Connection) -> RedactionState | None:
    """The stored state, ``None`` before migration 008 ran."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    except sqlite3.OperationalError:
        return None
    if not row:
        return None
    try:
        return RedactionState(**json.loads(row[0]))
    except (TypeError, ValueError):
        return RedactionState()  # unreadable: start over (redacting a redacted row changes nothing)


def save_state(conn: sqlite3.Connection, state: RedactionState) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (META_KEY, state.to_json()))


_TEXT_PHASES = ("messages", "memories", "semantic", "semantic_history")


def outdated(state: RedactionState | None) -> bool:
    """True when ``state`` was written with older patterns than this version's: its text phases run again."""
    return state is not None and state.version < VERSION


def redaction_pending(conn: sqlite3.Connection) -> bool:
    """True while stored rows may still hold a credential (the migration has not finished its text phases, or
    finished them with older patterns)."""
    state = load_state(conn)
    return state is not None and (state.phase in _TEXT_PHASES or outdated(state))


def start(conn: sqlite3.Connection) -> None:
    """Migration 008: record the work; an index without rows has none."""
    has_rows = conn.execute(
        "SELECT EXISTS(SELECT 1 FROM messages) OR EXISTS(SELECT 1 FROM memories)"
    ).fetchone()[0]
    save_state(conn, RedactionState(phase="messages" if has_rows else "done"))


MIGRATION_NAME = "008_redact_secrets"


# ------------------------------------------------------------------------------------------ migration
@dataclass
class RedactReport:
    """What one run of :func:`redact_pending_index` did."""

    messages_changed: int = 0
    memories_changed: int = 0
    semantic_changed: int = 0  # semantic memories and history events
    compacted: bool = False
    seconds: float = 0.0
    busy: bool = False  # another process holds the redaction lock
    finished: bool = False  # the migration is done (else the next call goes on)


def _drop_vectors(conn: sqlite3.Connection, table: str, column: str, ids: list[int]) -> None:
    """Vectors embedded from a row's plaintext go with it (their tables exist once semantic memory ran)."""
    if ids and conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
        conn.executemany(f"DELETE FROM {table} WHERE {column} = ?", [(i,) for i in ids])


def _messages_batch(conn: sqlite3.Connection, state: RedactionState, batch: int) -> bool:
    """Redact one batch of messages after ``state.cursor``; False when none was left."""
    from pi_memory.index.words import fts_form

    rows = conn.execute(
        "SELECT id, file_id, text FROM messages WHERE id > ? ORDER BY id LIMIT ?", (state.cursor, batch)
    ).fetchall()
    if not rows:
        return False
    before: dict[int, str] = {}  # file -> the text of its row before (the context the indexer gives)
    first = conn.execute("SELECT text FROM messages WHERE file_id = ? AND id < ? ORDER BY id DESC LIMIT 1",
                         (rows[0][1], rows[0][0])).fetchone()
    if first:
        before[rows[0][1]] = first[0]
    changed = []
    for rid, file_id, text in rows:
        new = redact_text(text, before.get(file_id, ""))
        before[file_id] = text
        if new != text:
            changed.append((rid, new))
    with _tx(conn):
        conn.executemany(  # the update trigger deletes the old tokens from the word index and adds the new
            "UPDATE messages SET text = ?, fts_text = ? WHERE id = ?",
            [(new, None if new.isascii() else fts_form(new), rid) for rid, new in changed],
        )
        _drop_vectors(conn, "semantic_turn_vectors", "message_id", [rid for rid, _ in changed])
        state.cursor = rows[-1][0]
        state.changed += len(changed)
        save_state(conn, state)
    return True


def _memories(conn: sqlite3.Connection, state: RedactionState) -> int:
    rows = conn.execute("SELECT id, content, failure_reason FROM memories").fetchall()
    changed = []
    for rid, content, reason in rows:
        new_content, new_reason = redact(content), redact(reason) if reason else reason
        if (new_content, new_reason) != (content, reason):
            changed.append((new_content, new_reason, rid))
    with _tx(conn):
        for new_content, new_reason, rid in changed:
            try:
                conn.execute("UPDATE memories SET content = ?, failure_reason = ? WHERE id = ?",
                             (new_content, new_reason, rid))
            except sqlite3.IntegrityError:  # the redacted text equals another entry of that store: one row
                conn.execute("DELETE FROM memories WHERE id = ?", (rid,))
        _drop_vectors(conn, "semantic_curated_vectors", "memory_id", [rid for *_x, rid in changed])
        state.phase, state.cursor = "semantic", 0
        state.changed += len(changed)
        save_state(conn, state)
    return len(changed)


@contextlib.contextmanager
def _tx(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def compact(conn: sqlite3.Connection) -> bool:
    """Make freed text unreadable in the file: merge both word indexes into one segment each (``optimize``
    drops the deleted tokens), ``VACUUM`` (no freed page keeps old bytes) and truncate the ``-wal`` file.
    Returns False when the WAL could not be truncated because another connection still reads from it."""
    with _tx(conn):
        segments.optimize(conn, "messages_fts")
        segments.optimize(conn, "memories_fts")
        redaction_semantic.optimize(conn)
    try:
        conn.execute("VACUUM")
    except sqlite3.OperationalError:  # another connection is writing, or the disk is full: try at the next open
        return False
    busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return busy == 0


_SEMANTIC_PHASES = (  # (phase, next batch, apply it, the phase after)
    ("semantic", redaction_semantic.memories_batch, redaction_semantic.apply_memories, "semantic_history"),
    ("semantic_history", redaction_semantic.history_batch, redaction_semantic.apply_history, "compact"),
)

HOST_BUDGET_S = 2.0
"""Seconds of redaction one call does when no person watches (no progress callback): a host (the pi bridge, the
MCP server) opening a large old index goes on after about this long, and every later open and indexing pass
does the next slice. Meanwhile searches and recall redact what they show (:func:`redaction_pending`). With a
progress callback (the CLI's bar) the whole migration runs at once."""


def redact_pending_index(
    conn: sqlite3.Connection,
    path: Path | None = None,
    progress: RedactProgress | None = None,
    batch: int = BATCH,
    budget_s: float | None | str = "auto",
) -> RedactReport:
    """Run (or go on with) migration 008 on ``conn`` (see the module docstring); nothing to do once done.

    ``path``: the index file, for the lock that keeps two processes from doing the same work (without it no
    lock is taken). ``progress`` defaults to the callback of :func:`redaction_progress`. ``budget_s``: stop
    after the batch that passes this many seconds (``None``: no limit; ``"auto"``: no limit with a progress
    callback, else :data:`HOST_BUDGET_S`); ``report.finished`` says whether it got to the end."""
    report = RedactReport()
    state = load_state(conn)
    if state is None or (state.phase == "done" and not outdated(state)):
        report.finished = True
        return report
    progress = progress or _PROGRESS.get()
    if budget_s == "auto":
        budget_s = None if progress is not None else HOST_BUDGET_S
    lock = FileLock(str(path) + ".redact.lock", timeout=0) if path is not None else None
    started = time.perf_counter()
    try:
        with lock if lock is not None else contextlib.nullcontext():
            state = load_state(conn) or state  # a peer may have finished while we looked
            if outdated(state):  # stored with older patterns: every text phase again, from the start (a
                # compaction the older run still owed is kept owed)
                state = RedactionState(changed=state.changed if state.phase != "done" else 0)
                with _tx(conn):
                    save_state(conn, state)
            if state.phase == "messages":
                changed_before = state.changed
                if not state.total:
                    state.total = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
                done = conn.execute("SELECT count(*) FROM messages WHERE id <= ?", (state.cursor,)).fetchone()[0]
                more = True
                while more and (more := _messages_batch(conn, state, batch)):
                    done += batch
                    if progress is not None:
                        progress(min(done, state.total), state.total)
                    if budget_s is not None and time.perf_counter() - started > budget_s:
                        report.messages_changed = state.changed - changed_before
                        report.seconds = time.perf_counter() - started
                        return report  # the next call goes on from the cursor
                report.messages_changed = state.changed - changed_before
                state.phase = "memories"
                with _tx(conn):
                    save_state(conn, state)
            if state.phase == "memories":
                report.memories_changed = _memories(conn, state)
            for phase, batch_of, apply, after in _SEMANTIC_PHASES:
                while state.phase == phase:
                    found = batch_of(conn, state.cursor, batch)
                    with _tx(conn):
                        if found is None:
                            state.phase, state.cursor = after, 0
                        else:
                            apply(conn, found[0])
                            state.cursor = found[1]
                            state.changed += len(found[0])
                            report.semantic_changed += len(found[0])
                        save_state(conn, state)
                    if found is not None and budget_s is not None and time.perf_counter() - started > budget_s:
                        report.seconds = time.perf_counter() - started
                        return report  # the next call goes on from the cursor
            if state.phase == "compact":  # nothing rewritten, no plaintext freed: no VACUUM of a large file
                report.compacted = compact(conn) if state.changed else True
                if report.compacted:
                    state.phase = "done"
                    with _tx(conn):
                        save_state(conn, state)
            report.finished = state.phase == "done"
            if progress is not None:
                progress(state.total, state.total)
    except Timeout:
        report.busy = True
    report.seconds = time.perf_counter() - started
    return report
