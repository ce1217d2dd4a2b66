"""Anchor-mode session search (``sessionSearch.variant: "anchors"``): the session files read directly, no index.

:func:`anchor_search` answers where in the transcripts something was said, as ``path:startLine-endLine`` anchors
with a short reason each, never a preview of the text: the agent opens the lines it wants with its own read
tool. It needs no database, so it works before the index exists, under lazy initialization and while the index
is being rebuilt.

Request: terms in ``all`` (every one must appear), ``any`` (at least one), ``exclude`` (none may appear), all
matched case-insensitively as substrings of one record's text (a message, a tool call, a tool result); ``from``
/ ``to`` bound the record's time (:func:`.filters.parse_time`: ISO dates or times, ages such as ``7d``; a bare
``to`` date includes that day); ``cwd`` keeps the sessions started in that folder or below it; ``limit`` (10,
at most 50) anchors are shown, newest first, and ``count`` says how many matched in all (counting stops at
:data:`MAX_COUNTED`). Matching records at most :data:`MERGE_GAP` lines apart in a file become one anchor.

Speed: files are listed newest first (:func:`.readers.discover`); a file last written before ``from`` is not
opened; a file whose raw bytes lack an ``all`` term, or every ``any`` term, is not parsed (terms that JSON
would escape, and non-ASCII ones, skip this pre-check). ``benchmarks/anchor_search.py`` measures it.

Output is bounded (:data:`MAX_TEXT_CHARS`) and redacted like every other output (:func:`pi_memory.safety.redact`
on the rendered text; reasons hold only the request's own terms, roles, dates and folders).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pi_memory import safety
from pi_memory.index.filters import SearchInputError, parse_time
from pi_memory.index.readers import UnknownSessionFormat, discover, read_session

DEFAULT_LIMIT = 10
MAX_LIMIT = 50
MAX_COUNTED = 200  # counting stops here ("count: 200+"); files are read newest first
MERGE_GAP = 3
MAX_TERMS = 20
MAX_REASON_CHARS = 160
MAX_TEXT_CHARS = 8000


@dataclass(frozen=True)
class Anchor:
    path: str
    start_line: int
    end_line: int
    reason: str
    timestamp: str | None  # the newest record's time (ordering)

    def to_dict(self) -> dict:
        return {"path": self.path, "startLine": self.start_line, "endLine": self.end_line, "reason": self.reason}


@dataclass
class AnchorResult:
    count: int
    anchors: list[Anchor]
    message: str | None = None
    files_read: int = 0
    files_skipped: int = 0
    capped: bool = False
    failures: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        out: dict = {"count": self.count, "shown": len(self.anchors), "anchors": [a.to_dict() for a in self.anchors]}
        if self.message:
            out["message"] = self.message
        if self.capped:
            out["capped"] = True
        return out

    def text(self) -> str:
        """The plain-text answer for a model (:func:`render`)."""
        return render(self.to_dict())


def render(result: dict) -> str:
    """``count``, an optional ``message``, one ``path:start-end reason`` anchor a line (bounded, redacted); a
    failed request (``{"success": false, "error"}``) is ``error: ...``."""
    if result.get("success") is False:
        text = f"error: {result.get('error', 'the search failed')}"
    else:
        head = [f"count: {result.get('count', 0)}{'+' if result.get('capped') else ''}"]
        if result.get("message"):
            head.append(f"message: {result['message']}")
        lines, size = head, sum(len(h) + 1 for h in head)
        anchors = result.get("anchors") or []
        for i, a in enumerate(anchors):
            span = f"{a['startLine']}" if a["startLine"] == a["endLine"] else f"{a['startLine']}-{a['endLine']}"
            line = f"{a['path']}:{span} {a['reason']}"
            if size + len(line) + 1 > MAX_TEXT_CHARS:
                lines.append(f"… {len(anchors) - i} more anchors left out to keep this answer short; narrow the "
                             "request.")
                break
            lines.append(line)
            size += len(line) + 1
        text = "\n".join(lines)
    return safety.redact(text) if safety.scan_secrets(text) else text


def _terms(values: Iterable[str] | None, name: str) -> list[str]:
    terms = [" ".join(str(v).split()).lower() for v in values or []]
    terms = [t for t in terms if t]
    if len(terms) > MAX_TERMS:
        raise SearchInputError(f"'{name}' holds {len(terms)} terms; give at most {MAX_TERMS}.")
    return list(dict.fromkeys(terms))


def _raw_checkable(term: str) -> bool:
    """Whether ``term`` appears in a JSONL file's bytes as it is (ASCII, nothing JSON escapes)."""
    return term.isascii() and not any(c in term for c in '"\\') and all(c >= " " for c in term)


def _under(cwd: str | None, folder: str) -> bool:
    if not cwd:
        return False
    cwd = os.path.normpath(cwd)
    return cwd == folder or cwd.startswith(folder.rstrip(os.sep) + os.sep)


def anchor_search(
    roots: Mapping[str, Path | str] | Iterable[Path | str],
    *,
    all_terms: Iterable[str] | None = None,
    any_terms: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
    since: str | None = None,
    until: str | None = None,
    cwd: str | None = None,
    limit: int | None = None,
) -> AnchorResult:
    """Anchors to the records of the session files under ``roots`` that match the request (module docstring).

    Raises :class:`SearchInputError` for a request that cannot be run (no term, a bad time, a bad limit)."""
    must, some, never = _terms(all_terms, "all"), _terms(any_terms, "any"), _terms(exclude, "exclude")
    if not must and not some:
        raise SearchInputError("Give at least one term in 'all' or 'any' (words or phrases to find).")
    limit = DEFAULT_LIMIT if limit is None else limit
    if not 1 <= limit <= MAX_LIMIT:
        raise SearchInputError(f"'limit' must be between 1 and {MAX_LIMIT}, not {limit}.")
    lo, hi = parse_time(since), parse_time(until, upper=True)
    folder = os.path.normpath(os.path.expanduser(cwd)) if cwd else None
    raw_must = [t.encode() for t in must if _raw_checkable(t)]
    raw_some = [t.encode() for t in some] if some and all(_raw_checkable(t) for t in some) else []
    lo_epoch = _epoch(lo)

    found: list[Anchor] = []
    result = AnchorResult(0, [])
    for path in discover(roots):
        if len(found) >= MAX_COUNTED:
            result.capped = True
            break
        try:
            if lo_epoch is not None and path.stat().st_mtime < lo_epoch:
                result.files_skipped += 1  # nothing in it can be as new as `from`
                continue
            raw = path.read_bytes().lower()
        except OSError as exc:
            result.failures.append(f"{path}: {exc.strerror or exc}")
            continue
        if any(t not in raw for t in raw_must) or (raw_some and not any(t in raw for t in raw_some)):
            result.files_skipped += 1
            continue
        try:
            read = read_session(path)
        except (UnknownSessionFormat, OSError, ValueError) as exc:
            result.failures.append(f"{path}: {exc}")
            continue
        result.files_read += 1
        if folder is not None and not _under(read.info.cwd, folder):
            continue
        found.extend(_file_anchors(str(path), read, must, some, never, lo, hi, MAX_COUNTED - len(found)))
    found.sort(key=lambda a: a.timestamp or "", reverse=True)
    result.count, result.anchors = len(found), found[:limit]
    notes = []
    if result.count > limit:
        notes.append(f"{result.count}{'+' if result.capped else ''} anchors matched; the newest {limit} are "
                     f"shown. Narrow with from, to, cwd, all or exclude, or raise limit (at most {MAX_LIMIT}).")
    elif result.count == 0:
        notes.append("Nothing matched. Try fewer 'all' terms, more 'any' terms, or a wider from/to.")
    if result.failures:
        notes.append(f"{len(result.failures)} file(s) could not be read, for example {result.failures[0]}.")
    result.message = " ".join(notes) or None
    return result


def _epoch(iso: str | None) -> float | None:
    if iso is None:
        return None
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _file_anchors(path: str, read, must: list[str], some: list[str], never: list[str], lo: str | None,
                  hi: str | None, room: int) -> list[Anchor]:
    """The anchors of one parsed file: matching records, neighbours within :data:`MERGE_GAP` lines merged."""
    out: list[Anchor] = []
    group: list = []  # (record, matched terms)

    def close() -> None:
        if not group:
            return
        first, last = group[0][0], group[-1][0]
        roles = "+".join(dict.fromkeys(r.role for r, _ in group))
        terms = ", ".join(dict.fromkeys(t for _, ts in group for t in ts))
        day = (last.timestamp or "")[:10]
        where = f" in {read.info.cwd}" if read.info.cwd else ""
        reason = f"{roles}{' ' + day if day else ''}{where}: {terms}"
        if len(reason) > MAX_REASON_CHARS:
            reason = reason[: MAX_REASON_CHARS - 1] + "…"
        out.append(Anchor(path, first.line, last.line, reason, last.timestamp))
        group.clear()

    for record in read.records:
        if len(out) >= room:
            break
        stamp = record.timestamp
        if (lo is not None and (stamp is None or stamp < lo)) or (hi is not None and stamp is not None and stamp > hi):
            continue
        text = record.text.lower()
        if any(t not in text for t in must) or any(t in text for t in never):
            continue
        hits = [t for t in some if t in text]
        if some and not hits:
            continue
        if group and record.line - group[-1][0].line > MERGE_GAP:
            close()
        group.append((record, must + hits))
    if len(out) < room:
        close()
    return out
