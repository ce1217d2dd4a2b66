"""The integrity check a host runs on the index (``quickCheckOnOpen``): ``PRAGMA quick_check`` on a read-only
connection of its own, reported, never repaired (:func:`check_integrity`)."""

from __future__ import annotations

import dataclasses
import sqlite3
import time
from pathlib import Path

from pi_memory import timing
from pi_memory.index.db import BUSY_TIMEOUT_S, index_path, is_corruption, read_only_uri


@dataclasses.dataclass(frozen=True)
class IntegrityReport:
    """What one integrity check of the index found (:func:`check_integrity`)."""

    ok: bool
    detail: str  # "ok", SQLite's first findings, or why the check could not run
    seconds: float
    size_bytes: int
    ran: bool = True  # False: no index file yet, or it could not be opened

    def to_dict(self) -> dict:
        return {"ok": self.ok, "detail": self.detail, "seconds": round(self.seconds, 3),
                "sizeBytes": self.size_bytes, "ran": self.ran}


def check_integrity(data_dir: Path | str) -> IntegrityReport:
    """``PRAGMA quick_check`` of ``<data_dir>/index.sqlite3`` on a read-only connection of its own (every page is
    read; the cross-check of indexes against tables that ``integrity_check`` adds is left out, it is several
    times slower and finds nothing a search could not). Never raises, never repairs: a host reports the result,
    and the next operation that meets the damage repairs it (:func:`open_index` with ``check=True``)."""
    path = index_path(data_dir)
    start = time.perf_counter()
    if not path.exists():
        return IntegrityReport(True, "no index yet", 0.0, 0, ran=False)
    if not path.is_file():  # a folder, a pipe: open_index refuses it (file_guard.refuse_not_a_file)
        return IntegrityReport(True, "check not run: the index is not a file", 0.0, 0, ran=False)
    size = path.stat().st_size
    try:
        with timing.span("database.quick-check", f"{size} bytes"):
            conn = sqlite3.connect(read_only_uri(path), uri=True, timeout=BUSY_TIMEOUT_S)
            try:
                rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check")]
            finally:
                conn.close()
    except sqlite3.DatabaseError as exc:
        seconds = time.perf_counter() - start
        if is_corruption(exc):
            return IntegrityReport(False, str(exc), seconds, size)
        return IntegrityReport(True, f"check not run: {exc}", seconds, size, ran=False)
    seconds = time.perf_counter() - start
    return IntegrityReport(rows == ["ok"], "ok" if rows == ["ok"] else "; ".join(rows[:3]), seconds, size)
