"""A write whose index mirror fails (the index locked by another process) is saved; a person reads what that
means and what to run, not a hook's name (a tester saw "on_change hook failed ... (OperationalError: database is
locked)")."""

from __future__ import annotations

import logging
import sqlite3

import pytest

from pi_memory.curated import MemoryStore
from pi_memory.storage import ReadOnlyDataError, read_only_problem


def failing(exc: Exception):
    def mirror(target, entries):
        raise exc
    return mirror


def saved_with(tmp_path, caplog, exc: Exception) -> list[str]:
    store = MemoryStore(tmp_path)
    store.load_from_disk()
    store.on_change = failing(exc)
    with caplog.at_level(logging.WARNING, logger="pi_memory.curated.store"):
        assert store.add("memory", "The queue is Redis").success
    assert store.path("memory").read_text(encoding="utf-8") == "The queue is Redis\n"
    return [r.getMessage() for r in caplog.records if r.name == "pi_memory.curated.store"]


def test_a_locked_index_is_said_in_words(tmp_path, caplog):
    assert saved_with(tmp_path, caplog, sqlite3.OperationalError("database is locked")) == [
        "MEMORY.md was saved, but another process held the search index, so searches may not find the change until "
        "the index is brought up to date (the next pi-memory command or session does it; `pi-memory sync-markdown` "
        "does it now)."]


@pytest.mark.parametrize(("exc", "said"), [
    (sqlite3.DatabaseError("file is not a database"), "file is not a database"),
    (sqlite3.IntegrityError("UNIQUE constraint\nfailed: memories.id"), "UNIQUE constraint failed: memories.id"),
    (RuntimeError(""), "no reason given"),
])
def test_another_failure_says_what_failed_without_a_class_name(tmp_path, caplog, exc, said):
    assert saved_with(tmp_path, caplog, exc) == [
        f"MEMORY.md was saved, but updating its search index failed ({said}), so searches may not find the change "
        "until the index is brought up to date (the next pi-memory command or session tries again; `pi-memory "
        "sync-markdown` does it now)."]


FULL = "1000 KiB free; pi-memory writes nothing there with less than 1.0 MiB free"


@pytest.mark.parametrize(("kind", "detail", "what", "fix"), [
    ("disk_full", FULL, "the disk holding the data folder {d} is full (" + FULL + ").", "free some space on that disk"),
    ("read_only", "", "the data folder {d} is on a read-only file system, so pi-memory cannot write there.",
     "remount it read-write"),
    ("permission", "", "you have no permission to write in the data folder {d}.", "give your user write access to it"),
])
def test_a_folder_that_stopped_taking_writes_is_said_without_contradiction(tmp_path, caplog, kind, detail, what, fix):
    """A tester's case: on a full disk `pi-memory add memory "after full"` printed "Saved to MEMORY.md." and then
    "warning: MEMORY.md was saved, but updating the search index failed: ReadOnlyDataError: The disk ... is full ...
    so nothing was saved." (the Markdown write took the last free space the index's check wants)."""
    exc = ReadOnlyDataError(read_only_problem(kind, tmp_path, detail))
    said = saved_with(tmp_path, caplog, exc)
    assert said == [f"MEMORY.md was saved, but its search index was not updated: {what.format(d=tmp_path)} Searches "
                    f"may not find the change until the index is updated: {fix}, then run `pi-memory sync-markdown`."]
    assert "nothing was saved" not in said[0] and "Error" not in said[0]


def test_no_traceback_unless_debugging(tmp_path, caplog):
    saved_with(tmp_path, caplog, sqlite3.OperationalError("database is locked"))
    assert not any(r.exc_info for r in caplog.records if r.name == "pi_memory.curated.store")
