"""What changed in a session file since the last pass: unchanged, appended, or new/rewritten.

Per file, decided from one ``SELECT`` of every ``session_files`` row plus a ``stat`` of each file:

* **unchanged** (same size, same ``mtime_ns`` and the same BLAKE2b hash of the last ``TAIL_BYTES``): skipped;
* **appended** (the first ``TAIL_BYTES`` and the ``TAIL_BYTES`` before the old ``end_offset`` still hash the
  same): read from ``end_offset`` on;
* **new**, or **rewritten** (shorter, or the old prefix changed): its rows are replaced by a full read.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from dataclasses import dataclass

TAIL_BYTES = 4096


def file_hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def read_range(fh, end: int) -> bytes:
    start = max(0, end - TAIL_BYTES)
    fh.seek(start)
    return fh.read(end - start)


def prefix_hash(fh, end: int) -> bytes:
    """Hash of the first 4 KiB and of the 4 KiB before ``end``: what an append leaves unchanged."""
    fh.seek(0)
    head = fh.read(min(TAIL_BYTES, end))
    return file_hash(head + b"\x00" + read_range(fh, end))


def tail_hash(path: str, size: int) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return file_hash(read_range(fh, size))
    except OSError:
        return None


@dataclass
class Known:
    file_id: int
    size: int
    mtime_ns: int
    tail_hash: bytes | None
    prefix_hash: bytes | None
    end_offset: int
    end_line: int
    leaf_id: str | None
    info: str | None


@dataclass
class Todo:
    path: str
    size: int
    mtime_ns: int
    mode: str  # "new" | "append" | "replace"
    known: Known | None


def classify(path: str, known: Known | None) -> Todo | None:
    """What to do with ``path``; ``None`` when it is unchanged or gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if known is None:
        return Todo(path, st.st_size, st.st_mtime_ns, "new", None)
    same_stat = st.st_size == known.size and st.st_mtime_ns == known.mtime_ns
    if same_stat and tail_hash(path, st.st_size) == known.tail_hash:
        return None
    if st.st_size >= known.end_offset:
        try:
            with open(path, "rb") as fh:
                prefix = prefix_hash(fh, known.end_offset)
        except OSError:
            return None
        if prefix == known.prefix_hash:
            return Todo(path, st.st_size, st.st_mtime_ns, "append", known)
    return Todo(path, st.st_size, st.st_mtime_ns, "replace", known)


def load_known(conn: sqlite3.Connection) -> dict[str, Known]:
    rows = conn.execute(
        "SELECT path, id, size, mtime_ns, tail_hash, prefix_hash, end_offset, end_line, leaf_id, info "
        "FROM session_files"
    )
    return {r[0]: Known(*r[1:]) for r in rows}
