"""A write whose index mirror fails (the index locked by another process) is saved; a person reads what that
means and what to run, not a hook's name (a tester saw "on_change hook failed ... (OperationalError: database is
locked)")."""

from __future__ import annotations

import logging
import sqlite3

from pi_memory.curated import MemoryStore


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
        "MEMORY.md was saved, but another process held the search index, so memory_search may not find the change "
        "until the next pi-memory command or session brings the index up to date (`pi-memory sync-markdown` does it "
        "now)."]


def test_another_failure_names_what_failed(tmp_path, caplog):
    assert saved_with(tmp_path, caplog, sqlite3.DatabaseError("file is not a database")) == [
        "MEMORY.md was saved, but updating the search index failed: DatabaseError: file is not a database, so "
        "memory_search may not find the change until the next pi-memory command or session brings the index up to "
        "date (`pi-memory sync-markdown` does it now)."]


def test_no_traceback_unless_debugging(tmp_path, caplog):
    saved_with(tmp_path, caplog, sqlite3.OperationalError("database is locked"))
    assert not any(r.exc_info for r in caplog.records if r.name == "pi_memory.curated.store")
