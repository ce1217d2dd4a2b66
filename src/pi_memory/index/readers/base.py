"""Shared shapes and helpers for the session-transcript readers.

Every reader turns one append-only JSONL transcript into a :class:`ReadResult`:

* ``info`` (:class:`SessionInfo`): where the session comes from (``source`` is ``"pi"``, ``"claude_code"``
  or ``"codex"``), its id, cwd, start time and the format/app version found in the file.
* ``records`` (:class:`Record`): the searchable units, in file order. One transcript line can give several
  records (an assistant message with text and two tool calls gives one ``message`` and two ``tool_call``
  records, all with the same ``entry_id`` and ``line``).
* ``parents``: ``entry_id -> parent_id`` for every tree entry read, including entries that gave no record
  (model changes, labels, extension state...), so the caller can rebuild the tree and find the active branch
  with :func:`active_branch`. Linear formats (pi v1, Codex) get synthetic ids ``"L<line>"`` chained line by
  line (see the reader modules). ``leaf_id`` is the last entry read; ``None`` when an incremental pass read no
  entry (the caller keeps the previous leaf).
* ``skipped``: reason -> count for everything left out on purpose or by necessity. Reasons used by all
  readers: ``malformed_line`` (not JSON; invalid UTF-8 bytes are decoded as U+FFFD first), ``not_object`` (JSON but not an object),
  ``blank_line``, ``thinking`` (per block), ``image`` (per block; base64 data never reaches ``text``),
  ``empty`` (a message with no searchable text), ``unknown_type:<t>``, ``unknown_role:<r>``,
  ``unknown_block:<t>``, and ``meta:<type>`` for known entry types that carry no conversation.
* ``end_offset`` / ``end_line``: where the next incremental pass starts (byte offset just after the last
  complete line consumed, and that line's 1-based number). ``partial_tail`` is True when the file ends in an
  incomplete line (a writer is mid-append); that line is not consumed and a later pass picks it up.

Reading is done on bytes in large chunks split on ``b"\\n"``, with one JSON decode per line, which keeps
the readers close to the speed of bare ``json.loads`` (see ``benchmarks/readers_throughput.py``).
"""

from __future__ import annotations

import collections
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import orjson

from pi_memory import safety
from pi_memory.index.filters import parse_time, stored_time

CHUNK_SIZE = 16 * 1024 * 1024
"""Bytes read per ``read()`` call. Lines longer than this are joined across chunks."""


@dataclass(frozen=True, slots=True)
class Record:
    """One searchable unit of a session."""

    kind: str  # "message" | "tool_call" | "tool_result" | "compaction" | "branch_summary" | "custom_message" | "bash"
    role: str  # "user" | "assistant" | "tool" | "system" | "summary"
    text: str  # tool_call: "name: <compact JSON args>"; tool_result: the text content
    entry_id: str | None
    parent_id: str | None
    line: int  # 1-based line number in the file
    timestamp: str | None  # ISO-8601 UTC, e.g. "2026-11-29T13:28:08.800Z"
    tool_name: str | None = None


def keep(records: list[Record], skipped: collections.Counter, record: Record) -> None:
    """Add ``record`` when its text holds more than blanks, else count the entry as ``empty``: the rule every
    reader applies to a message, tool result or summary."""
    if record.text.strip():
        records.append(record)
    else:
        skipped["empty"] += 1


@dataclass
class SessionInfo:
    source: str  # "pi" | "claude_code" | "codex"
    session_id: str | None
    cwd: str | None
    started_at: str | None
    version: str | None  # format/app version as found
    parent_session: str | None = None


@dataclass
class ReadResult:
    info: SessionInfo
    records: list[Record]
    parents: dict[str, str | None]  # entry_id -> parent_id for every tree entry read
    leaf_id: str | None  # id of the last entry (pi: the active leaf); None if this pass read no entry
    skipped: collections.Counter = field(default_factory=collections.Counter)
    end_offset: int = 0  # byte offset just after the last complete line consumed
    end_line: int = 0  # number of the last complete line consumed
    partial_tail: bool = False  # the file ended in an incomplete line: not consumed, not an error


def active_branch(parents: dict[str, str | None], leaf: str | None) -> set[str]:
    """Ids on the path from ``leaf`` back to the root, following ``parents``.

    Only ids present in ``parents`` are returned. The walk stops at a root (parent ``None``), at a parent that
    was never read (missing entry) and at the first id seen twice (a cycle), so it always terminates.
    """
    branch: set[str] = set()
    cur = leaf
    while cur is not None and cur in parents and cur not in branch:
        branch.add(cur)
        cur = parents[cur]
    return branch


class LineSource:
    """Iterate the complete lines of ``path`` from ``start_offset``, as ``(line_no, raw_bytes)``.

    The file is read as bytes in big chunks split on ``b"\\n"`` (offsets stay byte-exact; a UTF-8 BOM at offset 0
    is dropped). After iteration ``end_offset``/``end_line`` point just past the last complete line and
    ``partial_tail`` tells whether unconsumed bytes remain. A final line without ``\\n`` counts as complete only if
    it parses as a JSON object (a writer that stopped without a newline); anything else is left for later.
    """

    __slots__ = ("path", "end_offset", "end_line", "partial_tail")

    def __init__(self, path: str | Path, start_offset: int = 0, start_line: int = 0) -> None:
        self.path = path
        self.end_offset = start_offset
        self.end_line = start_line
        self.partial_tail = False

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        offset = self.end_offset
        line_no = self.end_line
        pending: list[bytes] = []  # pieces of a line not yet ended (joined once, so long lines stay linear)
        with open(self.path, "rb") as fh:
            if offset:
                fh.seek(offset)
            else:
                head = fh.read(3)
                if head == b"\xef\xbb\xbf":
                    offset = 3
                elif head:
                    pending.append(head)
            while True:
                buf = fh.read(CHUNK_SIZE)
                if not buf:
                    break
                if b"\n" not in buf:
                    pending.append(buf)
                    continue
                if pending:
                    pending.append(buf)
                    buf = b"".join(pending)
                parts = buf.split(b"\n")
                carry = parts.pop()
                pending = [carry] if carry else []
                offset += len(buf) - len(carry)
                first = line_no + 1
                line_no += len(parts)
                self.end_offset = offset
                self.end_line = line_no
                yield from zip(range(first, line_no + 1), parts, strict=True)
        carry = b"".join(pending)
        if carry.strip():
            if type(_loads_or_none(carry)) is dict:
                self.end_offset = offset + len(carry)
                self.end_line = line_no + 1
                yield line_no + 1, carry
            else:
                self.partial_tail = True
        elif carry:  # trailing spaces without a newline: nothing to read, nothing pending
            self.end_offset = offset + len(carry)


_decode = json.JSONDecoder().decode


def _loads(raw: bytes) -> object:
    """``orjson`` first (about 2x the standard library on session lines); the standard library, on text
    decoded with U+FFFD for invalid UTF-8, for whatever ``orjson`` refuses (bad UTF-8, NaN, huge integers,
    nesting past 1,024)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return safety.replace_unencodable(_decode(raw.decode("utf-8", "replace")))  # lone "\ud83d" escapes


def _loads_or_none(raw: bytes) -> object:
    try:
        return _loads(raw)
    except (ValueError, RecursionError):
        return None


def parse_line(raw: bytes, skipped: collections.Counter) -> dict | None:
    """Parse one line; count and return ``None`` for blank, malformed and non-object lines.

    Invalid UTF-8 bytes are decoded as U+FFFD (the line is kept).
    """
    try:
        obj = _loads(raw)
    except (ValueError, RecursionError):
        if raw.strip():
            skipped["malformed_line"] += 1
        else:
            skipped["blank_line"] += 1
        return None
    if type(obj) is not dict:
        skipped["not_object"] += 1
        return None
    return obj


def read_first_object(path: str | Path, limit: int = 8 * 1024 * 1024) -> dict | None:
    """The first line of ``path`` parsed as a JSON object, or ``None`` (empty, incomplete or not JSON)."""
    try:
        with open(path, "rb") as fh:
            chunks: list[bytes] = []
            size = 0
            while size < limit:
                chunk = fh.read(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if b"\n" in chunk:
                    break
    except OSError:
        return None
    line = b"".join(chunks).split(b"\n", 1)[0]
    if not line.strip():
        return None
    try:
        obj = safety.replace_unencodable(json.loads(line))
    except (ValueError, RecursionError):
        return None
    return obj if type(obj) is dict else None


def ms_to_iso(value: float) -> str:
    """Unix time (milliseconds, or seconds when it is too small to be ms) as ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""
    ms = value if value >= 1e11 else value * 1000.0
    return stored_time(datetime.fromtimestamp(ms / 1000.0, tz=UTC))


_STORED_TS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def utc_ts(text: str) -> str:
    """An ISO timestamp in the stored form, UTC with milliseconds (``2026-12-04T09:00:00+14:00`` ->
    ``2026-12-03T19:00:00.000Z``): timestamps are compared as text (``as_of``, ``since``/``until``), which is
    right only when every one is in the same form. A string that does not read as one is kept as found."""
    if _STORED_TS.fullmatch(text) or not _ISO_DATE.match(text):
        return text
    try:
        return parse_time(text) or text
    except ValueError:
        return text


def norm_ts(value: object) -> str | None:
    """A timestamp as found, in the stored form: ISO strings in UTC (:func:`utc_ts`), unix numbers converted;
    anything else gives ``None``."""
    if type(value) is str:
        return utc_ts(value) if value else None
    if type(value) in (int, float) and value > 0:
        try:
            return ms_to_iso(value)  # type: ignore[arg-type]
        except (OverflowError, OSError, ValueError):
            return None
    return None


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def compact_json(value: object) -> str:
    """Compact JSON (no spaces, non-ASCII kept) for tool-call arguments: ``orjson``, else the standard
    library (integers past 64 bits, ...), else ``str(value)``."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        try:
            return _COMPACT.encode(value)
        except (TypeError, ValueError):
            return str(value)


def block_text(
    content: object,
    skipped: collections.Counter,
    text_types: frozenset[str] = frozenset({"text"}),
    counted: dict[str, str] | None = None,
) -> str:
    """Text of a message content: a string, or the ``text`` of blocks whose type is in ``text_types``, joined
    with newlines. Blocks whose type is a key of ``counted`` are skipped and counted under its value
    (e.g. ``{"image": "image"}``: never put base64 into text); any other type is counted as
    ``unknown_block:<type>``."""
    if type(content) is str:
        return content
    if type(content) is not list:
        return ""
    counted = counted or {}
    parts: list[str] = []
    for block in content:
        if type(block) is not dict:
            continue
        btype = block.get("type")
        if btype in text_types:
            text = block.get("text")
            if type(text) is str and text:
                parts.append(text)
        elif btype in counted:
            skipped[counted[btype]] += 1
        else:
            skipped[f"unknown_block:{btype}"] += 1
    return "\n".join(parts)


def tool_call_text(name: str | None, args: object) -> str:
    """The searchable text of a tool call: ``"name: <compact JSON args>"`` (strings are kept as they are)."""
    body = args if type(args) is str else compact_json(args)
    return f"{name or '?'}: {body}"
