"""Incremental session indexing: exact counts on the real fixtures, skips, appends, rewrites, branches."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from pi_memory.index import index_paths, open_index, prune, reindex
from pi_memory.index.indexer import MAX_TEXT_CHARS, TOOL_TEXT_CHARS, cap_text
from pi_memory.index.mirror import add_extended
from pi_memory.project import project_id

# records (messages table rows) and how many are on the active branch, per fixture file (by session id prefix)
EXPECTED = {
    "01a22781-0fa0": (17, 7),  # v1.6.0 race: branches, branch summary
    "01a22780-f511": (4, 4),
    "01a22780-125c": (18, 10),  # v0.73.1 race: compaction + branch
    "01a22781-5870": (5, 5),
    "01a2277f-e7c0": (18, 7),
    "01a2277d-d947": (4, 4),
    "01a2277d-cdb3": (2, 2),
    "01a22782-40a8": (1, 1),  # failed retries skipped
    "ffae836b-9420": (1215, 1215),  # pi-real v1 file, linear
}
RACE = "v0.73.1/--home-dev-scratch-race--/2026-11-29T13-30-34-460Z_01a22780-125c-75ef-9d5e-0db6290c51c8.jsonl"


def rows(conn, file_like: str = "%") -> list[tuple]:
    return conn.execute(
        "SELECT m.line, m.entry_id, m.parent_id, m.kind, m.role, m.branch, m.timestamp, m.text FROM messages m "
        "JOIN session_files f ON f.id = m.file_id WHERE f.path LIKE ? ORDER BY m.line, m.id",
        (file_like,),
    ).fetchall()


def test_fixtures_give_exact_counts(conn, fixtures_dir):
    stats = index_paths(conn, [fixtures_dir])
    assert (stats.files_seen, stats.files_new, stats.files_failed) == (9, 9, 0)
    assert stats.messages_added == 1284
    assert stats.bytes_read == sum(p.stat().st_size for p in fixtures_dir.rglob("*.jsonl"))
    assert stats.skipped["thinking"] == 49 and stats.skipped["failed_retry"] == 5
    got = {
        key[:13]: (n, active)
        for key, n, active in conn.execute(
            "SELECT s.session_key, count(*), sum(m.branch = 'active') FROM messages m "
            "JOIN sessions s ON s.id = m.session_id GROUP BY s.id"
        )
    }
    assert got == EXPECTED
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 9
    assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '\"compaction\"'").fetchone()[0] > 0


def test_session_provenance_and_project(conn, fixtures_dir):
    index_paths(conn, [fixtures_dir])
    row = conn.execute(
        "SELECT source, cwd, project_name, project_id, started_at, version FROM sessions WHERE session_key = ?",
        ("01a2277d-d947-7378-9703-2750a836eac5",),
    ).fetchone()
    assert row == ("pi", "/home/dev/scratch-project", "scratch-project", project_id("/home/dev/scratch-project"),
                   "2026-11-29T13:28:08.775Z", "3")
    first = conn.execute(
        "SELECT m.line, m.entry_id, m.parent_id, m.role, m.kind, m.timestamp, m.text FROM messages m "
        "JOIN sessions s ON s.id = m.session_id WHERE s.session_key LIKE '01a2277d-d947%' ORDER BY m.id LIMIT 2"
    ).fetchall()
    assert first == [
        (4, "4ccad43d", "13765b8d", "user", "message", "2026-11-29T13:28:08.800Z", "Please list files in this project"),
        (5, "251fced9", "4ccad43d", "assistant", "tool_call", "2026-11-29T13:28:08.893Z", 'bash: {"command":"ls -la"}'),
    ]


def test_unchanged_files_are_skipped(conn, fixtures_dir):
    index_paths(conn, [fixtures_dir])
    before = conn.execute("SELECT count(*), max(id) FROM messages").fetchone()
    stats = index_paths(conn, [fixtures_dir])
    assert (stats.files_seen, stats.files_unchanged, stats.messages_added, stats.bytes_read) == (9, 9, 0, 0)
    assert conn.execute("SELECT count(*), max(id) FROM messages").fetchone() == before


def copy_race(fixtures_dir: Path, dest: Path) -> tuple[Path, list[bytes]]:
    lines = (fixtures_dir / "pi-sessions" / RACE).read_bytes().splitlines(keepends=True)
    target = dest / "sessions" / "--home-dev-scratch-race--" / "race.jsonl"
    target.parent.mkdir(parents=True)
    return target, lines


def test_appended_file_is_read_from_its_old_offset_and_relabels_branches(tmp_path, fixtures_dir):
    target, lines = copy_race(fixtures_dir, tmp_path)
    target.write_bytes(b"".join(lines[:16]))
    conn = open_index(tmp_path / "a")
    first = index_paths(conn, [target.parent])
    assert first.files_new == 1
    # before the branch switch every record is on the active path
    assert {r[5] for r in rows(conn)} == {"active"}
    with open(target, "ab") as fh:
        fh.write(b"".join(lines[16:]))
    second = index_paths(conn, [target.parent])
    assert (second.files_appended, second.files_replaced, second.files_new) == (1, 0, 0)
    assert second.bytes_read == len(b"".join(lines[16:]))
    full = open_index(tmp_path / "b")
    index_paths(full, [target.parent])
    assert rows(conn) == rows(full)
    assert sum(r[5] == "abandoned" for r in rows(conn)) == 8


def test_partial_last_line_is_left_for_the_next_pass(tmp_path, fixtures_dir):
    target, lines = copy_race(fixtures_dir, tmp_path)
    cut = len(lines[10]) // 2
    target.write_bytes(b"".join(lines[:10]) + lines[10][:cut])
    conn = open_index(tmp_path / "a")
    index_paths(conn, [target.parent])
    assert max(r[0] for r in rows(conn)) <= 10
    end = conn.execute("SELECT end_offset, end_line FROM session_files").fetchone()
    assert end == (len(b"".join(lines[:10])), 10)
    with open(target, "ab") as fh:
        fh.write(lines[10][cut:] + b"".join(lines[11:]))
    stats = index_paths(conn, [target.parent])
    assert stats.files_appended == 1
    full = open_index(tmp_path / "b")
    index_paths(full, [target.parent])
    assert rows(conn) == rows(full)


def test_rewritten_file_replaces_its_rows(tmp_path, helpers):
    folder = tmp_path / "s"
    path = helpers.pi_session(folder / "a.jsonl", "sess-1", "/tmp/x", [("user", "alpha one"), ("assistant", "beta")])
    conn = open_index(tmp_path / "d")
    index_paths(conn, [folder])
    helpers.pi_session(path, "sess-1", "/tmp/x", [("user", "gamma only")])  # shorter: a rewrite
    stats = index_paths(conn, [folder])
    assert (stats.files_replaced, stats.messages_removed, stats.messages_added) == (1, 2, 1)
    assert [r[7] for r in rows(conn)] == ["gamma only"]
    assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] == 1


def test_same_size_and_mtime_but_new_tail_is_reindexed(tmp_path, helpers):
    folder = tmp_path / "s"
    path = helpers.pi_session(folder / "a.jsonl", "sess-1", "/tmp/x", [("user", "alpha text")])
    st = path.stat()
    conn = open_index(tmp_path / "d")
    index_paths(conn, [folder])
    path.write_bytes(path.read_bytes().replace(b"alpha text", b"omega text"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    stats = index_paths(conn, [folder])
    assert stats.files_replaced == 1
    assert [r[7] for r in rows(conn)] == ["omega text"]


def test_max_files_reads_the_newest_and_defers_the_rest(tmp_path, helpers):
    folder = tmp_path / "s"
    now = time.time()
    for n in range(3):
        p = helpers.pi_session(folder / f"f{n}.jsonl", f"sess-{n}", "/tmp/x", [("user", f"text number {n}")])
        os.utime(p, (now - 100 + n * 10, now - 100 + n * 10))  # f2 newest
    conn = open_index(tmp_path / "d")
    stats = index_paths(conn, [folder], max_files=2)
    assert (stats.files_new, stats.files_deferred) == (2, 1)
    assert [r[0] for r in conn.execute("SELECT session_key FROM sessions ORDER BY id")] == ["sess-1", "sess-2"]
    stats = index_paths(conn, [folder], max_files=2)
    assert (stats.files_new, stats.files_unchanged, stats.files_deferred) == (1, 2, 0)


def test_files_are_inserted_oldest_first(tmp_path, helpers):
    folder = tmp_path / "s"
    now = time.time()
    for n, age in enumerate([10, 300, 50]):
        p = helpers.pi_session(folder / f"f{n}.jsonl", f"sess-{n}", "/tmp/x", [("user", f"text {n}")])
        os.utime(p, (now - age, now - age))
    conn = open_index(tmp_path / "d")
    index_paths(conn, [folder])
    order = [r[0] for r in conn.execute("SELECT s.session_key FROM messages m JOIN sessions s ON s.id = m.session_id ORDER BY m.id")]
    assert order == ["sess-1", "sess-2", "sess-0"]


def test_progress_is_reported_per_file(tmp_path, helpers):
    folder = tmp_path / "s"
    for n in range(3):
        helpers.pi_session(folder / f"f{n}.jsonl", f"sess-{n}", "/tmp/x", [("user", "hello there")])
    calls = []
    conn = open_index(tmp_path / "d")
    index_paths(conn, [folder], progress=lambda *a: calls.append(a))
    total = sum(p.stat().st_size for p in folder.iterdir())
    assert [c[:2] for c in calls] == [(1, 3), (2, 3), (3, 3)]
    assert calls[-1][2:] == (total, total)


def test_unknown_file_is_counted_and_the_pass_goes_on(tmp_path, helpers):
    folder = tmp_path / "s"
    helpers.pi_session(folder / "good.jsonl", "sess-1", "/tmp/x", [("user", "fine")])
    (folder / "odd.jsonl").write_text('{"hello": "world"}\n', encoding="utf-8")
    conn = open_index(tmp_path / "d")
    stats = index_paths(conn, [folder])
    assert (stats.files_new, stats.files_failed) == (1, 1)
    assert "odd.jsonl" in stats.errors[0] and "cannot tell which agent" in stats.errors[0]


def test_deleted_source_file_stays_searchable(tmp_path, helpers):
    folder = tmp_path / "s"
    path = helpers.pi_session(folder / "a.jsonl", "sess-1", "/tmp/x", [("user", "remember the kiwi")])
    conn = open_index(tmp_path / "d")
    index_paths(conn, [folder])
    path.unlink()
    stats = index_paths(conn, [folder])
    assert stats.files_seen == 0
    assert [r[7] for r in rows(conn)] == ["remember the kiwi"]


def test_prune_deletes_old_rows_only(tmp_path, helpers):
    folder = tmp_path / "s"
    old = helpers.pi_session(folder / "old.jsonl", "old", "/tmp/x", [("user", "ancient")], day="2020-01-01")
    helpers.pi_session(folder / "new.jsonl", "new", "/tmp/x", [("user", "fresh")], day=time.strftime("%Y-%m-%d"))
    conn = open_index(tmp_path / "d")
    index_paths(conn, [folder])
    assert prune(conn, None) == 0 and prune(conn, 0) == 0
    assert prune(conn, 30) == 1
    assert [r[7] for r in rows(conn)] == ["fresh"]
    assert old.is_file()
    assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '\"ancient\"'").fetchone()[0] == 0
    assert index_paths(conn, [folder]).files_unchanged == 2


def test_reindex_rebuilds_sessions_and_keeps_memories(tmp_path, helpers):
    folder = tmp_path / "s"
    helpers.pi_session(folder / "a.jsonl", "sess-1", "/tmp/x", [("user", "alpha"), ("assistant", "beta")])
    conn = open_index(tmp_path / "d")
    index_paths(conn, [folder])
    add_extended(conn, "keep me")
    stats = reindex(conn, [folder])
    assert (stats.files_new, stats.messages_added) == (1, 2)
    assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 2
    assert conn.execute("SELECT content FROM memories").fetchall() == [("keep me",)]
    assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '\"alpha\"'").fetchone()[0] == 1


def test_session_in_a_git_subdirectory_gets_the_repository_project(tmp_path, helpers):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    import subprocess

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    folder = tmp_path / "s"
    helpers.pi_session(folder / "a.jsonl", "sess-1", str(repo / "pkg"), [("user", "hello")])
    conn = open_index(tmp_path / "d")
    index_paths(conn, [folder])
    assert conn.execute("SELECT project_id, project_name, project_root FROM sessions").fetchone() == (
        project_id(repo), "repo", str(repo.resolve()))


def test_long_texts_are_capped_with_a_marker():
    short = "x" * MAX_TEXT_CHARS
    assert cap_text(short) == short
    long = "a" * 30_000 + "END"
    capped = cap_text(long)
    assert capped.startswith("a" * 16_000) and capped.endswith("a" * 3_997 + "END")
    assert "\n… [10,003 characters not indexed] …\n" in capped
    assert len(cap_text("t" * 50_000, TOOL_TEXT_CHARS)) < TOOL_TEXT_CHARS + 60


def test_tool_output_is_capped_in_the_index(tmp_path, helpers):
    folder = tmp_path / "s"
    path = folder / "a.jsonl"
    helpers.write_lines(path, [
        helpers.pi_header("sess-1", "/tmp/x"),
        {"type": "message", "id": "r1", "parentId": None, "timestamp": "2026-11-01T10:00:00.000Z",
         "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                     "content": [{"type": "text", "text": "line\n" * 10_000}], "isError": False}},
    ])
    conn = open_index(tmp_path / "d")
    index_paths(conn, [folder])
    (text,) = conn.execute("SELECT text FROM messages").fetchone()
    assert len(text) < TOOL_TEXT_CHARS + 60 and "characters not indexed" in text


def test_bulk_pass_merges_the_fts_index_into_one_segment(tmp_path, helpers, monkeypatch):
    from pi_memory.index import indexer

    folder = tmp_path / "s"
    for n in range(6):
        helpers.pi_session(folder / f"f{n}.jsonl", f"sess-{n}", "/tmp/x", [("user", f"bulk text {n}")] * 3)
    conn = open_index(tmp_path / "d")
    monkeypatch.setattr(indexer, "BULK_BYTES", 1)
    stats = index_paths(conn, [folder])
    assert stats.optimize_seconds > 0
    assert conn.execute("SELECT count(DISTINCT segid) FROM messages_fts_idx").fetchone()[0] == 1
    assert conn.execute("SELECT v FROM messages_fts_config WHERE k = 'automerge'").fetchone()[0] == 4
    assert conn.execute("SELECT v FROM messages_fts_config WHERE k = 'hashsize'").fetchone()[0] == 1024 * 1024
    assert conn.execute("SELECT v FROM messages_fts_config WHERE k = 'crisismerge'").fetchone()[0] == 16
    monkeypatch.setattr(indexer, "BULK_BYTES", 10**12)
    helpers.pi_session(folder / "f9.jsonl", "sess-9", "/tmp/x", [("user", "small pass")])
    assert index_paths(conn, [folder]).optimize_seconds == 0
