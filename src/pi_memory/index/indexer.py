"""Index session transcripts into the ``messages`` table, incrementally.

Which files changed, and how (unchanged, appended, new or rewritten): :mod:`.changes`.

Files are processed oldest first (``max_files`` keeps the newest ones when it must choose), so insertion order
follows time -- :mod:`.search` relies on it to rank the newest matches first. Each file is read (parsed,
hashed) outside any transaction and written inside a savepoint of a group transaction; the word index gets
each group's new rows at once. How, and the measurements behind it: :mod:`.writer`.

FTS segments: every group adds a segment to the word index and FTS5 merges them as it goes (``automerge=4``).
A pass reading at least ``BULK_BYTES`` (32 MiB) does not merge while writing (``automerge=0``, ``crisismerge``
1000), keeps up to ``BULK_HASH_BYTES`` of pending terms in memory so each group is flushed as one segment
instead of one per MiB (FTS5 ``hashsize``; 18-25% faster on 64 MB), checkpoints the WAL every 16,384 pages
instead of 1,000 and ends with one ``optimize`` that merges every segment at once (query time grows with the
segment count). Merging once instead of at every 16 segments and then again took 1 GB from 43 to 49-51 MB/s;
the optimize itself takes about 2 s per GB. The FTS5 defaults are put back at the end (and at the start of
any small pass, should a bulk pass have been killed). Smaller passes (the pi bridge after every run) add one small segment each; each such pass
then does a bounded merge once the segments are over a few (:func:`.segments.settle`), so the count stays
low without a long lock. Measured at 1M messages: 13 segments -> 1 took session_search p50 from 2-9 ms to
1.5-5 ms per query class. Before SQLite 3.42 both kinds of merge need care: :mod:`.segments`.

Branches: every tree entry's parent is kept in ``entries``; after a read the labels are recomputed from the
leaf (``active_branch``). An append that continues from the previous leaf cannot change old labels and
writes none; one that continues elsewhere (the user went back in the tree) relabels the file's rows.

Credentials: every record's text is redacted before it is capped and stored (:mod:`.redaction`).

Text: a record's text is stored and indexed up to ``MAX_TEXT_CHARS`` (20,000) characters, tool calls, tool
results and bash output up to ``TOOL_TEXT_CHARS`` (8,000): the first 80% and the last 20% of the limit are kept
with a marker saying how much was left out. Tool calls and results are about 90% of a transcript's indexed
characters (measured on the fixtures); the session file keeps the whole text and a hit's file/line point at
it.

Files that disappear keep their rows (Claude Code deletes transcripts after 30 days; they stay searchable).
:func:`prune` removes old rows by age, never a source file.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pi_memory.index import segments
from pi_memory.index.changes import (
    Todo,
    classify,
    file_hash,
    load_known,
    prefix_hash,
    read_range,
)
from pi_memory.index.db import database_file, now_iso, transaction
from pi_memory.index.read_only import refuse_write
from pi_memory.index.readers import default_roots, discover, read_session
from pi_memory.index.readers.base import ReadResult, SessionInfo, active_branch
from pi_memory.index.redaction import (
    CONTEXT_CHARS,
    RedactionState,
    compact,
    load_state,
    outdated,
    prepare_text,
    redact_pending_index,
    redact_text,
    save_state,
)
from pi_memory.index.redaction import cap_text as _cap
from pi_memory.index.schema import MESSAGES_DELETE_TRIGGER
from pi_memory.index.words import clean_text, fts_form
from pi_memory.index.writer import GroupWriter, IdRange, index_ranges
from pi_memory.project import project_id, project_name, project_root

MAX_TEXT_CHARS = 20_000  # messages, summaries: head 16,000 + tail 4,000
TOOL_TEXT_CHARS = 8_000  # tool calls and results (file dumps, logs): head 6,400 + tail 1,600
_TOOL_KINDS = frozenset({"tool_call", "tool_result", "bash"})
MAX_ERRORS = 20
BULK_BYTES = 32 * 1024 * 1024
BULK_HASH_BYTES = 32 * 1024 * 1024  # FTS5 pending-term memory in a bulk pass: one flush per group (default 1 MiB)

Progress = Callable[[int, int, int, int], None]
"""``progress(files_done, files_total, bytes_done, bytes_total)``, called after each file that is read."""


@dataclass
class IndexStats:
    files_seen: int = 0
    files_unchanged: int = 0
    files_new: int = 0
    files_appended: int = 0
    files_replaced: int = 0
    files_failed: int = 0
    files_deferred: int = 0  # changed files left for a later pass because of max_files
    files_raced: int = 0  # indexed by another pass (another process) while this one ran: left as it wrote them
    messages_added: int = 0
    messages_removed: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    optimize_seconds: float = 0.0  # time spent merging the FTS index after a bulk pass
    skipped: collections.Counter = field(default_factory=collections.Counter)
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["skipped"] = dict(self.skipped)
        return data


def cap_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``text`` cut to about ``limit`` characters: the first 80% and the last 20% kept, a marker between."""
    return _cap(text, limit)


class _Projects:
    """cwd -> (project id, name, root), looked up once per pass."""

    def __init__(self) -> None:
        self.cache: dict[str, tuple[str, str, str]] = {}

    def get(self, cwd: str | None) -> tuple[str | None, str | None, str | None]:
        if not cwd:
            return None, None, None
        if cwd not in self.cache:
            root = project_root(Path(cwd))
            self.cache[cwd] = (project_id(root), project_name(root), str(root))
        return self.cache[cwd]


def _clean(value: str | None) -> str | None:
    return clean_text(value) if type(value) is str else value


def _same(value: str | None) -> str | None:
    return value


def _session_row(
    conn: sqlite3.Connection, info: SessionInfo, path: str, projects: _Projects, cl: Callable = _same
) -> int:
    if cl is not _same:
        info = SessionInfo(**{k: cl(v) for k, v in dataclasses.asdict(info).items()})
    key = info.session_id or Path(path).stem
    pid, pname, proot = projects.get(info.cwd)
    row = conn.execute(
        "INSERT INTO sessions(source, session_key, cwd, project_id, project_name, project_root, started_at, "
        "version, parent_session) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(source, session_key) DO UPDATE SET cwd = ifnull(excluded.cwd, cwd), "
        "project_id = ifnull(excluded.project_id, project_id), "
        "project_name = ifnull(excluded.project_name, project_name), "
        "project_root = ifnull(excluded.project_root, project_root), "
        "started_at = ifnull(started_at, excluded.started_at), version = ifnull(excluded.version, version), "
        "parent_session = ifnull(excluded.parent_session, parent_session) RETURNING id",
        (info.source, key, info.cwd, pid, pname, proot, info.started_at, info.version, info.parent_session),
    ).fetchone()
    return row[0]


def _labels_unchanged(new_parents: dict[str, str | None], leaf: str | None, old_leaf: str | None) -> bool:
    """True when the new leaf's path runs through the old leaf (a plain continuation)."""
    if old_leaf is None or leaf is None:
        return True
    cur: str | None = leaf
    seen: set[str] = set()
    while cur is not None and cur in new_parents and cur not in seen:
        seen.add(cur)
        cur = new_parents[cur]
    return cur == old_leaf or old_leaf in seen


MESSAGE_COLUMNS = (
    "session_id", "file_id", "entry_id", "parent_id", "line", "timestamp", "role", "kind", "tool_name", "branch",
    "text",
)


def _insert_rows(conn: sqlite3.Connection, rows: list[tuple]) -> IdRange | None:
    """Insert message rows (values in :data:`MESSAGE_COLUMNS` order), not yet word-indexed; their id range."""
    if not rows:
        return None
    start = conn.execute("SELECT ifnull(max(id), 0) FROM messages").fetchone()[0]
    marks = ", ".join("?" * (len(MESSAGE_COLUMNS) + 1))
    conn.executemany(
        f"INSERT INTO messages({', '.join(MESSAGE_COLUMNS)}, fts_text) VALUES ({marks})",
        [(*row, None if row[-1].isascii() else fts_form(row[-1])) for row in rows],
    )
    return start + 1, start + len(rows)


def insert_messages(conn: sqlite3.Connection, rows: list[tuple]) -> None:
    """Insert message rows (values in :data:`MESSAGE_COLUMNS` order) and add them to the word index.

    Runs inside the caller's transaction (or autocommits each statement without one). The indexer writes
    through :class:`~.writer.GroupWriter` instead, which indexes a whole group at once.
    """
    rows = [(*row[:-1], redact_text(row[-1])) for row in rows]  # what the index stores is redacted
    ids = _insert_rows(conn, rows)
    if ids is not None:
        index_ranges(conn, [ids])


class _Raced(Exception):
    """Raised inside a file's savepoint when another pass indexed the file after this pass classified it."""


@dataclass
class _Read:
    """A file read outside any transaction: the reader's result and the hashes stored for the next pass."""

    res: ReadResult
    prefix_hash: bytes
    tail_hash: bytes


def _read(todo: Todo) -> _Read | Exception:
    try:
        known = todo.known
        if todo.mode == "append" and known is not None:
            info = SessionInfo(**json.loads(known.info)) if known.info else None
            res = read_session(todo.path, known.end_offset, known.end_line, info)
        else:
            res = read_session(todo.path)
        with open(todo.path, "rb") as fh:
            head = prefix_hash(fh, res.end_offset)
            tail = file_hash(read_range(fh, todo.size))
        return _Read(res, head, tail)
    except Exception as exc:  # a reader bug costs this file (counted in files_failed), never the pass
        return exc


def _write(
    conn: sqlite3.Connection, todo: Todo, read: _Read, projects: _Projects, stats: IndexStats, clean: bool = False
) -> IdRange | None:
    """Write one file's rows (inside the caller's transaction); returns the new message ids.

    ``clean``: replace lone surrogates in every string first (:func:`~.words.clean_text`). Off on the first
    try (it costs a check of every string); a ``UnicodeEncodeError`` rolls the file back and it is written
    again with it on."""
    cl = _clean if clean else _same
    path, known, res = todo.path, todo.known, read.res
    now = conn.execute("SELECT end_offset, prefix_hash FROM session_files WHERE path = ?", (path,)).fetchone()
    if now != ((known.end_offset, known.prefix_hash) if known else None):
        raise _Raced(path)  # another pass wrote this file after this one looked at it: its rows stand
    leaf = res.leaf_id if res.leaf_id is not None else (known.leaf_id if known else None)
    session_id = _session_row(conn, res.info, path, projects, cl)
    file_id = conn.execute(
        "INSERT INTO session_files(path, session_id, size, mtime_ns, tail_hash, prefix_hash, end_offset, "
        "end_line, leaf_id, info, skipped, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(path) DO UPDATE SET session_id = excluded.session_id, size = excluded.size, "
        "mtime_ns = excluded.mtime_ns, tail_hash = excluded.tail_hash, prefix_hash = excluded.prefix_hash, "
        "end_offset = excluded.end_offset, end_line = excluded.end_line, leaf_id = excluded.leaf_id, "
        "info = excluded.info, skipped = excluded.skipped, indexed_at = excluded.indexed_at RETURNING id",
        (
            path, session_id, todo.size, todo.mtime_ns, read.tail_hash, read.prefix_hash, res.end_offset,
            res.end_line, leaf, json.dumps(dataclasses.asdict(res.info)), json.dumps(dict(res.skipped)), now_iso(),
        ),
    ).fetchone()[0]
    removed = 0
    if todo.mode == "append" and res.records:  # a repeated entry (Claude Code resumes): the last version wins
        again = {r.entry_id for r in res.records if r.entry_id is not None}
        if again:
            for eid in again:
                removed += conn.execute("DELETE FROM messages WHERE file_id = ? AND entry_id = ?",
                                        (file_id, cl(eid))).rowcount
    if todo.mode == "replace":
        removed = conn.execute("DELETE FROM messages WHERE file_id = ?", (file_id,)).rowcount
        conn.execute("DELETE FROM entries WHERE file_id = ?", (file_id,))
    if res.parents:
        conn.executemany(
            "INSERT OR REPLACE INTO entries(file_id, entry_id, parent_id) VALUES (?, ?, ?)",
            [(file_id, cl(k), cl(v)) for k, v in res.parents.items()] if clean
            else [(file_id, k, v) for k, v in res.parents.items()],
        )
    relabel = False
    if todo.mode == "append" and known is not None:
        relabel = not _labels_unchanged(res.parents, leaf, known.leaf_id)
        if relabel:
            parents = dict(conn.execute("SELECT entry_id, parent_id FROM entries WHERE file_id = ?", (file_id,)))
            active = active_branch(parents, leaf)
        else:
            active = active_branch(res.parents, leaf)
    else:
        active = active_branch(res.parents, leaf)
    rows = []
    before = ""  # the record read before: context for the credential scan (:mod:`.redaction`)
    for r in res.records:
        text = prepare_text(r.text, TOOL_TEXT_CHARS if r.kind in _TOOL_KINDS else MAX_TEXT_CHARS, before)
        before = r.text[-CONTEXT_CHARS:]
        rows.append((
            session_id, file_id, cl(r.entry_id), cl(r.parent_id), r.line, r.timestamp, r.role, r.kind,
            cl(r.tool_name), "active" if r.entry_id is None or r.entry_id in active else "abandoned", cl(text),
        ))
    ids = _insert_rows(conn, rows)
    if relabel:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS _active(id TEXT PRIMARY KEY) WITHOUT ROWID")
        conn.execute("DELETE FROM temp._active")
        conn.executemany("INSERT OR IGNORE INTO temp._active(id) VALUES (?)", [(a,) for a in active])
        conn.execute(
            "UPDATE messages SET branch = CASE WHEN entry_id IS NULL OR entry_id IN "
            "(SELECT id FROM temp._active) THEN 'active' ELSE 'abandoned' END WHERE file_id = ?",
            (file_id,),
        )
    stats.messages_removed += removed
    stats.messages_added += len(res.records)
    stats.skipped.update(res.skipped)
    return ids


_COUNTERS = {"new": "files_new", "append": "files_appended", "replace": "files_replaced"}


def _index_file(conn: sqlite3.Connection) -> Path | None:
    """The file of ``conn``'s main database (for the redaction lock); ``None`` in memory."""
    path = database_file(conn)
    return Path(path) if path else None


def _paths(conn: sqlite3.Connection, paths: Iterable[Path | str] | None) -> list[str]:
    """The files to look at: under ``paths``, or under the default folders plus ``pending_paths``."""
    if paths is not None:  # absolute and symlink-free: one file, one row, whatever the cwd or spelling
        return [str(p) for p in discover([Path(p).expanduser().resolve() for p in paths])]
    roots = [*default_roots().values(), *(Path(r[0]) for r in conn.execute("SELECT path FROM pending_paths"))]
    return [str(p) for p in discover([Path(p).expanduser().resolve() for p in roots])]


def index_paths(
    conn: sqlite3.Connection,
    paths: Iterable[Path | str] | None = None,
    progress: Progress | None = None,
    max_files: int | None = None,
) -> IndexStats:
    """Index the transcripts under ``paths`` (files or folders; default: pi's, Claude Code's and Codex's).

    ``max_files`` bounds how many changed files are read in this pass (the newest); the rest are counted in
    ``files_deferred`` and picked up by the next pass. A file that cannot be read is counted in
    ``files_failed`` with a line in ``errors``; the pass goes on. A read-only index: ``ReadOnlyDataError``.
    """
    refuse_write(conn)
    started = time.perf_counter()
    stats = IndexStats()
    state = load_state(conn)
    if state is not None and (state.phase != "done" or outdated(state)):  # the next slice of migration 008
        redact_pending_index(conn, _index_file(conn))
    known = load_known(conn)
    todo: list[Todo] = []
    for path in _paths(conn, paths):  # newest first
        stats.files_seen += 1
        item = classify(path, known.get(path))
        if item is None:
            stats.files_unchanged += 1
        else:
            todo.append(item)
    if max_files is not None and len(todo) > max_files:
        stats.files_deferred = len(todo) - max(0, max_files)
        todo = todo[: max(0, max_files)]
    todo.reverse()  # oldest first, so insertion order follows time
    total_bytes = sum(t.size - (t.known.end_offset if t.mode == "append" and t.known else 0) for t in todo)
    projects = _Projects()
    bulk = total_bytes >= BULK_BYTES
    if not bulk and todo:
        _reset_bulk_settings(conn)
    if bulk:  # fewer, larger merges and checkpoints while writing; one merge at the end
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0)")
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('crisismerge', 1000)")
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('hashsize', ?)", (BULK_HASH_BYTES,))
        conn.execute("PRAGMA wal_autocheckpoint = 16384")
    try:
        _index_todo(conn, todo, projects, stats, progress, total_bytes)
    finally:
        if bulk:
            _reset_bulk_settings(conn)
            conn.execute("PRAGMA wal_autocheckpoint = 1000")
            if stats.messages_added:
                t0 = time.perf_counter()
                with transaction(conn):
                    segments.optimize(conn, "messages_fts")
                stats.optimize_seconds = time.perf_counter() - t0
    segments.after_pass(conn, added=not bulk and stats.messages_added > 0)  # merge a little; refill goes on
    pending = paths is None and conn.execute("SELECT 1 FROM pending_paths LIMIT 1").fetchone() is not None
    if pending and stats.files_failed == 0 and not stats.files_deferred:
        with transaction(conn):  # every pending file was read (or is gone): nothing is pending any more
            conn.execute("DELETE FROM pending_paths")
    stats.seconds = time.perf_counter() - started
    return stats


_SMALL_PASS_FTS = {"automerge": 4, "crisismerge": 16, "hashsize": 1024 * 1024}  # the FTS5 defaults


def _reset_bulk_settings(conn: sqlite3.Connection) -> None:
    """Put back the small-pass FTS settings if a bulk pass was killed before it could (``kill -9``)."""
    cfg = dict(conn.execute("SELECT k, v FROM messages_fts_config WHERE k IN ('automerge', 'crisismerge', 'hashsize')"))
    if any(cfg.get(k, v) != v for k, v in _SMALL_PASS_FTS.items()):
        with transaction(conn):
            for k, v in _SMALL_PASS_FTS.items():
                conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES (?, ?)", (k, v))


def _index_todo(
    conn: sqlite3.Connection,
    todo: list[Todo],
    projects: _Projects,
    stats: IndexStats,
    progress: Progress | None,
    total_bytes: int,
) -> None:
    """Read and write every file of ``todo`` (see :mod:`.writer`); a file that fails is counted, not fatal."""
    group = GroupWriter(conn)
    done = [0, 0]  # files, bytes

    def write(item: Todo, read: _Read | Exception) -> None:
        new_bytes = item.size - (item.known.end_offset if item.mode == "append" and item.known else 0)
        try:
            if isinstance(read, Exception):
                raise read
            try:
                group.write(lambda c: _write(c, item, read, projects, stats), new_bytes)
            except UnicodeEncodeError:  # a lone surrogate somewhere (an emoji cut in half): clean and write again
                group.write(lambda c: _write(c, item, read, projects, stats, clean=True), new_bytes)
            stats.bytes_read += read.res.end_offset - (item.known.end_offset if item.mode == "append" else 0)
            counter = _COUNTERS[item.mode]
            setattr(stats, counter, getattr(stats, counter) + 1)
        except _Raced:
            stats.files_raced += 1
        except (OSError, ValueError, TypeError, AttributeError, KeyError, sqlite3.IntegrityError) as exc:
            stats.files_failed += 1
            if len(stats.errors) < MAX_ERRORS:
                stats.errors.append(f"{item.path}: {type(exc).__name__}: {exc}")
        done[0] += 1
        done[1] += new_bytes
        if progress is not None:
            progress(done[0], len(todo), done[1], total_bytes)

    try:
        for item in todo:
            write(item, _read(item))
        group.commit()
    except BaseException:
        group.rollback()
        raise


def prune(conn: sqlite3.Connection, older_than_days: float | None) -> int:
    """Delete indexed messages older than ``older_than_days`` (by message time); returns how many.

    ``None`` or a value <= 0 does nothing (retention is off by default). Only index rows are deleted, never a
    session file; a pruned file is not read again unless it changes.
    """
    if not older_than_days or older_than_days <= 0:
        return 0
    cutoff = time.time() - older_than_days * 86400
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(cutoff))
    removed = 0
    while True:
        with transaction(conn):
            n = conn.execute(
                "DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE timestamp < ? LIMIT 5000)",
                (stamp,),
            ).rowcount
        removed += n
        if n < 5000:
            return removed


def clear_sessions(conn: sqlite3.Connection) -> None:
    """Remove every session row (for ``pi-memory reindex``); memories are kept."""
    with transaction(conn):
        conn.execute("DROP TRIGGER IF EXISTS messages_ad")
        conn.execute("DELETE FROM messages")
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('delete-all')")
        conn.execute("DELETE FROM meta WHERE key = ?", (segments.REFILL_KEY,))  # nothing is left to refill
        conn.execute("DELETE FROM entries")
        conn.execute("DELETE FROM session_files")
        conn.execute("DELETE FROM sessions")
        conn.execute(MESSAGES_DELETE_TRIGGER)


def reindex(
    conn: sqlite3.Connection, paths: Iterable[Path | str] | None = None, progress: Progress | None = None
) -> IndexStats:
    """Forget every indexed session and index ``paths`` again from scratch, then compact the file so nothing
    of the rows it held before stays in freed pages or the WAL (:func:`.redaction.compact`)."""
    clear_sessions(conn)
    state = load_state(conn)
    if state is not None and (state.phase != "done" or outdated(state)):  # no message left; the memories are
        state = RedactionState(phase="memories") if outdated(state) else state
        state.phase = "memories" if state.phase == "messages" else state.phase
        with transaction(conn):
            save_state(conn, state)
        redact_pending_index(conn, _index_file(conn), budget_s=None)
    stats = index_paths(conn, paths, progress)
    t0 = time.perf_counter()
    compact(conn)
    stats.optimize_seconds += time.perf_counter() - t0
    return stats
