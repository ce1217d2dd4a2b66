"""The memories mirror (Markdown -> SQLite) and the extended store."""

from __future__ import annotations

import shutil

import pytest

from pi_memory.curated import MemoryStore
from pi_memory.index import open_index
from pi_memory.index.mirror import (
    MirrorEntry,
    MirrorInputError,
    SyncStats,
    add_extended,
    list_memories,
    markdown_stores,
    remove_memory,
    salvage_memories,
    sync_markdown,
    sync_store,
)
from pi_memory.retrieval import memory_search


def contents(conn, **filters) -> list[str]:
    return [m["content"] for m in list_memories(conn, **filters)]


def test_sync_inserts_deletes_and_keeps_metadata(conn):
    assert sync_store(conn, "global", None, "memory", ["one", "two"]) == SyncStats(added=2)
    memory_search(conn, "one")  # hit_count 1, last_used set
    before = list_memories(conn)
    stats = sync_store(conn, "global", None, "memory", ["  one  ", "three", "three", ""])
    assert stats == SyncStats(added=1, removed=1, kept=1)
    rows = list_memories(conn)
    assert [r["content"] for r in rows] == ["one", "three"]
    one_before = next(r for r in before if r["content"] == "one")
    assert rows[0] == one_before  # created, last_used and hit_count untouched
    assert rows[0]["hit_count"] == 1


def test_sync_touches_only_its_own_store(conn):
    sync_store(conn, "global", None, "memory", ["shared text"])
    sync_store(conn, "global", None, "user", ["shared text"])
    sync_store(conn, "project", "aaaaaaaaaaaa", "project", ["p1"])
    sync_store(conn, "project", "bbbbbbbbbbbb", "project", ["p2"])
    sync_store(conn, "global", None, "memory", [])
    sync_store(conn, "project", "aaaaaaaaaaaa", "project", [])
    assert [(m["target"], m["content"]) for m in list_memories(conn)] == [("user", "shared text"), ("project", "p2")]


def test_failure_entries_carry_category_and_reason(conn):
    sync_store(conn, "global", None, "failure", [
        "[correction] Use pnpm, not npm — Failed: npm broke the lockfile",
        "[insight] Auth0 SDK refreshes tokens itself",
        "no prefix here",
    ])
    rows = [(m["category"], m["failure_reason"], m["content"][:12]) for m in list_memories(conn)]
    assert rows == [("correction", "npm broke the lockfile", "[correction]"), ("insight", None, "[insight] Au"),
                    (None, None, "no prefix he")]


def test_mirror_entry_metadata_updates(conn):
    sync_store(conn, "global", None, "failure", [MirrorEntry("lesson", category="insight")])
    stats = sync_store(conn, "global", None, "failure", [MirrorEntry("lesson", category="convention", failure_reason="r")])
    assert stats == SyncStats(updated=1)
    assert list_memories(conn)[0]["category"] == "convention"
    assert sync_store(conn, "global", None, "failure", ["lesson"]) == SyncStats(kept=1)  # bare str keeps metadata
    assert list_memories(conn)[0]["failure_reason"] == "r"


@pytest.mark.parametrize(
    ("scope", "project", "target", "message"),
    [
        ("team", None, "memory", "Unknown scope 'team'"),
        ("global", "aaaaaaaaaaaa", "memory", "a global one must not have one"),
        ("project", None, "project", "needs a project id"),
        ("global", None, "notes", "Unknown target 'notes'; use one of: memory, user, project, failure."),
    ],
)
def test_invalid_store_is_refused(conn, scope, project, target, message):
    with pytest.raises(MirrorInputError, match=message):
        sync_store(conn, scope, project, target, ["x"])


def test_extended_store(conn):
    mid, created = add_extended(conn, "  beyond the cap  ", category="insight")
    assert created
    assert add_extended(conn, "beyond the cap") == (mid, False)
    row = list_memories(conn)[0]
    assert (row["content"], row["source"], row["category"], row["scope"]) == ("beyond the cap", "extended", "insight", "global")
    # Markdown never deletes an extended row
    sync_store(conn, "global", None, "memory", [])
    assert contents(conn) == ["beyond the cap"]
    # the same text written to Markdown becomes the mirror row, metadata kept
    sync_store(conn, "global", None, "memory", ["beyond the cap"])
    row2 = list_memories(conn)[0]
    assert (row2["id"], row2["source"], row2["category"], row2["created"]) == (mid, "markdown", "insight", row["created"])
    assert not remove_memory(conn, mid)  # a mirror row follows its file
    other, _ = add_extended(conn, "temporary", target="failure")
    assert remove_memory(conn, other)
    assert contents(conn, source="extended") == []
    with pytest.raises(MirrorInputError, match="cannot be empty"):
        add_extended(conn, "   ")


def test_extended_memories_are_searchable(conn):
    add_extended(conn, "The staging database is on port 5433", scope="project", project="aaaaaaaaaaaa", target="project")
    r = memory_search(conn, "staging port")
    assert [(h.content, h.source, h.scope, h.project) for h in r.results] == [
        ("The staging database is on port 5433", "extended", "project", "aaaaaaaaaaaa")]


def test_sync_markdown_reads_every_store_on_disk(tmp_path, conn):
    data = tmp_path / "mem"
    store = MemoryStore(data, project_root=tmp_path / "repo")
    store.load_from_disk()
    assert store.add("memory", "Project uses uv").success
    assert store.add("user", "Name is Ada").success
    assert store.add_failure("Use pnpm", category="correction", reason="npm broke it").success
    assert store.add("project", "Deploys with make deploy").success
    listed = [(s, p, t, path.name) for s, p, t, path in markdown_stores(data)]
    assert listed == [("global", None, "memory", "MEMORY.md"), ("global", None, "user", "USER.md"),
                      ("global", None, "failure", "FAILURES.md"), ("project", store.project_id, "project", "MEMORY.md")]
    sync_markdown(conn, data)
    assert [(m["target"], m["content"], m["category"]) for m in list_memories(conn)] == [
        ("memory", "Project uses uv", None), ("user", "Name is Ada", None),
        ("failure", "[correction] Use pnpm — Failed: npm broke it", "correction"),
        ("project", "Deploys with make deploy", None),
    ]
    # a deleted file empties its store; a deleted project folder removes its rows
    (data / "USER.md").unlink()
    shutil.rmtree(data / "projects")
    sync_markdown(conn, data)
    assert [m["target"] for m in list_memories(conn)] == ["memory", "failure"]


def test_on_change_hook_mirrors_every_write(tmp_path, conn):
    store = MemoryStore(tmp_path / "mem", on_change=lambda target, entries: sync_store(conn, "global", None, target, entries))
    store.load_from_disk()
    store.add("memory", "Tests run with pytest -q")
    assert [h.content for h in memory_search(conn, "pytest").results] == ["Tests run with pytest -q"]
    store.replace("memory", "pytest -q", "Tests run with pytest -x")
    assert contents(conn) == ["Tests run with pytest -x"]
    store.remove("memory", "pytest -x")
    assert contents(conn) == []


def test_salvage_copies_readable_memories(tmp_path):
    src = open_index(tmp_path / "a")
    add_extended(src, "only in sqlite")
    sync_store(src, "global", None, "memory", ["mirrored"])
    src.execute("UPDATE memories SET hit_count = 7")
    src.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    src.close()
    dst = open_index(tmp_path / "b")
    assert salvage_memories(dst, tmp_path / "a" / "index.sqlite3") == 2
    assert [(m["content"], m["hit_count"]) for m in list_memories(dst)] == [("only in sqlite", 7), ("mirrored", 7)]
    assert salvage_memories(dst, tmp_path / "a" / "index.sqlite3") == 0  # no duplicates
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"x" * 5000)
    assert salvage_memories(dst, garbage) == 0
