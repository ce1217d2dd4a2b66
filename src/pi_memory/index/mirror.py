"""The ``memories`` table: a searchable mirror of the Markdown stores, plus the extended store.

* **Mirror** (``source = 'markdown'``): :func:`sync_store` makes the rows of one store -- exactly one
  ``(scope, project, target)`` -- equal to the entries of its Markdown file: new entries are inserted,
  entries gone from the file are deleted, unchanged ones keep ``created``, ``last_used`` and ``hit_count``.
  The curated layer calls it after every successful write; :func:`sync_markdown` backfills every store from
  disk (``pi-memory sync-markdown``, and after the index was rebuilt).
* **Extended store** (``source = 'extended'``): memories kept only here, beyond what the Markdown budget holds
  (:func:`add_extended`, :func:`remove_memory`, :func:`list_memories`). These rows are not derived data: they
  survive ``reindex`` (which clears sessions only), and after corruption :func:`salvage_memories` copies what
  can still be read from the damaged file. Callers scan content for threats and secrets before adding it.

Credentials are stored redacted (:mod:`.redaction`): a hand-edited Markdown entry holding a key is mirrored with
``[REDACTED:<id>]`` in its place, so it is compared, searched and embedded in that form.

Within one ``(scope, project, target)`` a content appears once: mirroring an entry that the extended store
already holds turns that row into the mirror row (its metadata kept); an entry removed from Markdown is
deleted only from the mirror, never from the extended store.

Size bound: :func:`sync_markdown` does not mirror a store file over ``MAX_BYTES`` (1 MiB; nothing past it is
read) or holding over ``MAX_ENTRIES`` (10,000) entries. The file is never changed, the entries the index
already had from it stay, and its stats say why (``too_large``; :func:`not_mirrored_text` for a person): a
warning once per change of the file (:mod:`.mirror_watch`), and ``pi-memory sync-markdown`` and
``pi-memory status``, with what to do (trim the file under its character limit). Why: curated stores have hard
limits of 2,200 / 1,375 chars by default (4,400 for ``FAILURES.md``), so 1 MiB is 476 times the ``MEMORY.md``
limit and a bigger file is a mistake or hostile; the bound still holds a store filled to the largest limit
settings accept (1,000,000 chars, when ASCII in entries of 100 chars or more) and one grown past its limit in
policy mode (about 6,000 entries of 175 chars). Mirroring is linear, not cheap: the redaction scan and the
word index cost about 0.5 s per MiB of entries, 35-90 µs per entry. Measured with
``benchmarks/mirror_size.py`` on 2 shared cores, without the bound a 16 MiB file took 7.1 s (99,405 entries of
175 chars), 19.4 s (257,568 entries holding credentials), 7.7 s (random bytes), 56.7 s (1.6 million one-number
entries; 1 MiB of them: 4.0 s), at each change of the file and at every ``pi-memory sync-markdown``. Within
the bound the slowest was 0.86 s (9,946 entries holding credentials), 1 MiB of 175-char entries 0.47 s; a file
over it costs under 5 ms. A file merely over its limit (3,000 chars) is far under the bound and mirrored as
always, so search finds hand edits.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pi_memory.index import segments
from pi_memory.index.damaged import open_damaged, read_rows
from pi_memory.index.db import now_iso, transaction
from pi_memory.index.redaction import redact_text

SCOPES = ("global", "project")
TARGETS = ("memory", "user", "project", "failure")
CATEGORIES = ("failure", "correction", "insight", "preference", "convention", "tool-quirk")
_FAILURE = re.compile(
    r"^\[(?P<cat>" + "|".join(re.escape(c) for c in CATEGORIES) + r")\]\s*(?P<body>.*?)"
    r"(?:\s+—\s+Failed:\s*(?P<reason>.*))?$",
    re.DOTALL,
)
_PROJECT_FOLDER = re.compile(r"-(?P<id>[0-9a-f]{12})$")
MAX_BYTES = 1 << 20  # a store file mirrored holds at most this many bytes (module docstring)
MAX_ENTRIES = 10_000  # ... and at most this many entries


class MirrorInputError(ValueError):
    """An invalid scope, project, target or category; the message lists the accepted values."""


@dataclass(frozen=True)
class MirrorEntry:
    """An entry with optional metadata; a bare ``str`` means content only (existing metadata is kept)."""

    content: str
    category: str | None = None
    failure_reason: str | None = None


@dataclass(frozen=True)
class SyncStats:
    added: int = 0
    removed: int = 0
    kept: int = 0
    updated: int = 0
    unreadable: str = ""  # why the store's file could not be read (its mirror rows were left as they were)
    too_large: str = ""  # the file is over the size bound (:func:`bound_problem`); its rows were left as they were


def bound_problem(size: int, entries: int | None = None) -> str:
    """Why a store file of ``size`` bytes holding ``entries`` entries is not mirrored (over ``MAX_BYTES`` or
    ``MAX_ENTRIES``), or ``""``."""
    if size > MAX_BYTES:
        return f"{size:,} bytes, over the {MAX_BYTES:,}-byte bound"
    if entries is not None and entries > MAX_ENTRIES:
        return f"{entries:,} entries, over the {MAX_ENTRIES:,}-entry bound"
    return ""


def not_mirrored_text(name: str, why: str, limit: int | None = None) -> str:
    """What a person is told about a store file over the bound (``why``: :func:`bound_problem`; ``limit``: the
    store's character limit, when known)."""
    under = f"its limit of {limit:,} chars" if limit else "its character limit (`pi-memory status` shows it)"
    return (f"{name} is too large to mirror into the search index ({why}), so memory_search does not see what "
            f"it holds now; the file was not changed and the entries the index already had from it stay. Trim it "
            f"under {under}: it is mirrored again at the next search or `pi-memory sync-markdown`.")


def _read_bounded(path: Path) -> tuple[bytes, int]:
    """The bytes of ``path`` up to one past ``MAX_BYTES`` (a bigger file is not read further), and its size."""
    with open(path, "rb") as f:
        return f.read(MAX_BYTES + 1), os.fstat(f.fileno()).st_size


def _check(scope: str, project: str | None, target: str, category: str | None = None) -> None:
    if scope not in SCOPES:
        raise MirrorInputError(f"Unknown scope {scope!r}; use one of: {', '.join(SCOPES)}.")
    if (scope == "project") != bool(project):
        raise MirrorInputError(
            "A project-scoped memory needs a project id, and a global one must not have one "
            f"(got scope={scope!r}, project={project!r})."
        )
    if target not in TARGETS:
        raise MirrorInputError(f"Unknown target {target!r}; use one of: {', '.join(TARGETS)}.")
    if category is not None and category not in CATEGORIES:
        raise MirrorInputError(f"Unknown category {category!r}; use one of: {', '.join(CATEGORIES)}.")


def parse_failure_entry(text: str) -> MirrorEntry:
    """A ``failure`` store entry ``[category] content — Failed: reason`` with its category and reason.

    The content stays the whole entry, as in the Markdown file; text without a known ``[category]`` prefix
    gets no category.
    """
    m = _FAILURE.match(text.strip())
    if not m:
        return MirrorEntry(text)
    reason = (m.group("reason") or "").strip() or None
    return MirrorEntry(text, category=m.group("cat"), failure_reason=reason)


def mirror_content(entry: str) -> str:
    """The content the mirror keeps of a store entry (stripped, credentials redacted): what its row is found by
    (a hit count, a last use)."""
    return redact_text(entry.strip())


def _normalise(entries: Sequence[str | MirrorEntry], target: str) -> list[MirrorEntry]:
    seen: set[str] = set()
    out = []
    for item in entries:
        if isinstance(item, str):
            entry = parse_failure_entry(item) if target == "failure" else MirrorEntry(item)
        else:
            entry = item
        content = mirror_content(entry.content)
        if content and content not in seen:
            seen.add(content)
            reason = redact_text(entry.failure_reason) if entry.failure_reason else entry.failure_reason
            out.append(MirrorEntry(content, entry.category, reason))
    return out


def sync_store(
    conn: sqlite3.Connection,
    scope: str,
    project: str | None,
    target: str,
    entries: Sequence[str | MirrorEntry],
) -> SyncStats:
    """Make the mirror rows of ``(scope, project, target)`` equal ``entries`` (one transaction)."""
    _check(scope, project, target)
    wanted = _normalise(entries, target)
    for e in wanted:
        _check(scope, project, target, e.category)
    proj = project if scope == "project" else None
    added = removed = kept = updated = 0
    now = now_iso()
    with transaction(conn):
        rows = conn.execute(
            "SELECT id, content, source, category, failure_reason FROM memories "
            "WHERE scope = ? AND ifnull(project, '') = ifnull(?, '') AND target = ?",
            (scope, proj, target),
        ).fetchall()
        by_content = {r[1]: r for r in rows}
        wanted_set = {e.content for e in wanted}
        for rid, content, source, _cat, _reason in rows:
            if source == "markdown" and content not in wanted_set:
                conn.execute("DELETE FROM memories WHERE id = ?", (rid,))
                removed += 1
        for e in wanted:
            row = by_content.get(e.content)
            if row is None:
                conn.execute(
                    "INSERT INTO memories(scope, project, target, category, content, failure_reason, source, "
                    "created) VALUES (?, ?, ?, ?, ?, ?, 'markdown', ?)",
                    (scope, proj, target, e.category, e.content, e.failure_reason, now),
                )
                added += 1
                continue
            rid, _content, source, cat, reason = row
            new_cat = e.category if e.category is not None else cat
            new_reason = e.failure_reason if e.failure_reason is not None else reason
            if source != "markdown" or new_cat != cat or new_reason != reason:
                conn.execute(
                    "UPDATE memories SET source = 'markdown', category = ?, failure_reason = ? WHERE id = ?",
                    (new_cat, new_reason, rid),
                )
                updated += 1
            else:
                kept += 1
        if added or removed or updated:
            segments.settle(conn, "memories_fts")  # few word-index segments (.segments)
    return SyncStats(added=added, removed=removed, kept=kept, updated=updated)


def sync_markdown(
    conn: sqlite3.Connection,
    data_dir: Path | str,
    stores: Iterable[tuple[str, str | None, str, Path]] | None = None,
) -> dict[str, SyncStats]:
    """Mirror Markdown stores from disk; returns stats per file path.

    Default (``stores`` None): :func:`markdown_stores` of ``data_dir``. ``stores`` lists files as
    ``(scope, project, target, path)``. A missing file counts as an empty store (its mirror rows are removed); a
    file that cannot be read (a folder, no permission) is skipped, its rows kept, its stats saying why
    (``unreadable``); so is a file over the size bound (``too_large``, module docstring).
    Entries are read with the curated parser, so a drifted file mirrors the entries it holds.
    """
    from pi_memory.curated.entries import analyse

    todo = list(stores) if stores is not None else markdown_stores(data_dir)
    out: dict[str, SyncStats] = {}
    for scope, project, target, path in todo:
        try:
            raw, size = _read_bounded(Path(path))
        except FileNotFoundError:
            raw, size = None, 0
        except OSError as exc:  # a folder, no permission, an I/O error: not an empty store, the rows stay
            out[str(path)] = SyncStats(unreadable=f"{type(exc).__name__}: {exc.strerror or exc}")
            continue
        if too_large := bound_problem(max(size, len(raw or b""))):
            out[str(path)] = SyncStats(too_large=too_large)
            continue
        entries = analyse(raw, 10**9).entries
        if too_large := bound_problem(size, len(entries)):
            out[str(path)] = SyncStats(too_large=too_large)
            continue
        out[str(path)] = sync_store(conn, scope, project, target, entries)
    if stores is None:  # project folders that are gone: their mirror rows go too
        kept = sorted({p for scope, p, _t, _path in todo if scope == "project" and p})
        marks = ",".join("?" * len(kept))
        gone_where = " AND project NOT IN (" + marks + ")" if kept else ""
        with transaction(conn):
            for project, n in conn.execute(  # said per project, under the folder's name pattern
                    "SELECT project, count(*) FROM memories WHERE source = 'markdown' AND scope = 'project'"
                    + gone_where + " GROUP BY project", kept).fetchall():
                out[str(Path(data_dir) / "projects" / f"*-{project}" / "MEMORY.md")] = SyncStats(removed=n)
            conn.execute("DELETE FROM memories WHERE source = 'markdown' AND scope = 'project'" + gone_where, kept)
    return out


def markdown_stores(data_dir: Path | str) -> list[tuple[str, str | None, str, Path]]:
    """The curated stores under ``data_dir``, as ``(scope, project, target, path)``.

    Global ``MEMORY.md``/``USER.md``/``FAILURES.md`` (listed even when missing), and the project stores
    ``projects/<name>-<project id>/MEMORY.md`` that exist (layout of :class:`pi_memory.curated.MemoryStore`).
    """
    from pi_memory.curated.store import PROJECT_FILE, TARGET_FILES

    data_dir = Path(data_dir)
    out: list[tuple[str, str | None, str, Path]] = [
        ("global", None, target, data_dir / name) for target, name in TARGET_FILES.items()
    ]
    projects = data_dir / "projects"
    if projects.is_dir():
        for folder in sorted(projects.iterdir()):
            m = _PROJECT_FOLDER.search(folder.name)
            if m and (folder / PROJECT_FILE).is_file():
                out.append(("project", m.group("id"), "project", folder / PROJECT_FILE))
    return out


def add_extended(
    conn: sqlite3.Connection,
    content: str,
    target: str = "memory",
    scope: str = "global",
    project: str | None = None,
    category: str | None = None,
    failure_reason: str | None = None,
    created: str | None = None,
) -> tuple[int, bool]:
    """Store a memory in SQLite only. Returns ``(id, created)``; ``created`` is False when the same content
    already exists in that store (Markdown or extended), whose row is returned unchanged. ``created``: when
    the memory was first saved (an import keeps the source's date; default now)."""
    _check(scope, project, target, category)
    content = redact_text(content.strip())
    if not content:
        raise MirrorInputError("A memory cannot be empty.")
    failure_reason = redact_text(failure_reason) if failure_reason else failure_reason
    proj = project if scope == "project" else None
    with transaction(conn):
        row = conn.execute(
            "SELECT id FROM memories WHERE scope = ? AND ifnull(project, '') = ifnull(?, '') AND target = ? "
            "AND content = ?",
            (scope, proj, target, content),
        ).fetchone()
        if row:
            return row[0], False
        cur = conn.execute(
            "INSERT INTO memories(scope, project, target, category, content, failure_reason, source, created) "
            "VALUES (?, ?, ?, ?, ?, ?, 'extended', ?)",
            (scope, proj, target, category, content, (failure_reason or "").strip() or None, created or now_iso()),
        )
        return int(cur.lastrowid or 0), True


def remove_memory(conn: sqlite3.Connection, memory_id: int, extended_only: bool = True) -> bool:
    """Delete one memory row by id. By default only extended rows (a mirror row follows its Markdown file)."""
    with transaction(conn):
        sql = "DELETE FROM memories WHERE id = ?" + (" AND source = 'extended'" if extended_only else "")
        return conn.execute(sql, (memory_id,)).rowcount > 0


def list_memories(
    conn: sqlite3.Connection,
    scope: str | None = None,
    project: str | None = None,
    target: str | None = None,
    source: str | None = None,
) -> list[dict]:
    """Memory rows as dicts (oldest first), filtered by any of scope, project, target and source."""
    conds, args = [], []
    for col, value in (("scope", scope), ("project", project), ("target", target), ("source", source)):
        if value is not None:
            conds.append(f"{col} = ?")
            args.append(value)
    where = " WHERE " + " AND ".join(conds) if conds else ""
    cur = conn.execute(
        "SELECT id, scope, project, target, category, content, failure_reason, source, created, last_used, "
        f"hit_count FROM memories{where} ORDER BY id",
        args,
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur]


def salvage_memories(conn: sqlite3.Connection, damaged: Path | str) -> int:
    """Copy the memory rows still readable in a damaged index file into ``conn``; returns how many.

    Reading stops quietly at the first damaged page (what was read is kept), goes on past a damaged schema entry
    of another table, and keeps text that is not UTF-8 with U+FFFD (:mod:`.damaged`). Errors writing ``conn``
    propagate.
    """
    src = open_damaged(damaged)
    if src is None:
        return 0
    try:
        batch, _ = read_rows(src, "SELECT scope, project, target, category, content, failure_reason, source, created, "
                                  "last_used, hit_count FROM memories")
    finally:
        src.close()
    copied = 0
    batch = [(*r[:4], redact_text(r[4]), redact_text(r[5]) if r[5] else r[5], *r[6:]) for r in batch]
    with transaction(conn):
        for row in batch:
            try:
                cur = conn.execute(
                    "INSERT OR IGNORE INTO memories(scope, project, target, category, content, failure_reason, "
                    "source, created, last_used, hit_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
            except sqlite3.IntegrityError:  # a damaged value the schema refuses: that row only
                continue
            copied += cur.rowcount
    return copied
