"""Writes on a data folder whose index cannot be written are refused up front, in one message, before anything is
written or computed: curated add / replace / remove (never "Saved" and then "nothing was saved"), ``split
--apply``, ``semantic embed-sessions``; a folder that turns read-only after the open is asked again at the next
write; ``status`` says the folder is read-only; an unreadable index file or one that is not a pi-memory index is
named. The suite runs as root, so "read-only" is what pi-memory honours even as root: a ``0444`` index file, a
``0555`` folder (``storage.write_blocker``)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from pi_memory import storage  # noqa: E402
from pi_memory.storage import read_only_problem  # noqa: E402
from read_only_folder import cli, foreign_sqlite, own_agent, pi_session, text_cli  # noqa: E402,F401
from read_only_folder import tree_state as state  # noqa: E402

pytestmark = pytest.mark.usefixtures("own_agent")


@pytest.fixture
def data(tmp_path):
    """A data folder in use: entries in MEMORY.md and USER.md, mirrored into its index."""
    folder = tmp_path / "data"
    for target, text in (("memory", "the build uses make"), ("user", "prefers short answers")):
        assert cli(["add", target, text, "--dir", str(folder)])[0] == 0
    gc.collect()  # the commands' connections, left to the garbage collector in-process, close (and checkpoint)
    assert sorted(p.name for p in folder.iterdir()) == ["MEMORY.md", "MEMORY.md.lock", "USER.md", "USER.md.lock",
                                                        "index.sqlite3"]
    yield folder
    folder.chmod(0o755)
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)


def index_refusal(folder: Path, for_model: bool, name: str = "MEMORY.md") -> str:
    index = folder / "index.sqlite3"
    tell = "Retrying will not help; tell the user, who can fix it: " if for_model else ""
    return (f"Nothing was saved to {name}: you have no permission to write the file {index} in the data folder "
            f"{folder} (its mode 0444 lets no one write it, and pi-memory honours that even when running as root). "
            f"{tell}Give your user write access to it (for example `chmod u+w {index}`), or use another folder with "
            "--dir or $PI_MEMORY_DIR.")


WRITES = [(["add", "memory", "the deploy port is 8443"], "MEMORY.md"),
          (["add", "user", "works in Lisbon"], "USER.md"),
          (["replace", "memory", "build", "the build uses just"], "MEMORY.md"),
          (["remove", "user", "short"], "USER.md")]


@pytest.mark.parametrize(("argv", "name"), WRITES, ids=lambda v: " ".join(v[:2]) if isinstance(v, list) else v)
def test_a_curated_write_is_refused_before_its_markdown_file_is_written(data, argv, name):
    (data / "index.sqlite3").chmod(0o444)  # the folder is writable, the index is not: the mirror could not run
    before = state(data)
    code, out, err = text_cli([*argv, "--dir", str(data)])
    assert (code, out) == (1, "")
    assert "Saved" not in err and "nothing was saved" not in err.replace("Nothing was saved to", "")
    assert err.strip().splitlines()[-1] == f"refused (read_only): {index_refusal(data, False, name)}"
    code, result, _ = cli([*argv, "--dir", str(data)])
    assert code == 1 and result["code"] == "read_only" and result["error"] == index_refusal(data, True, name)
    assert state(data) == before


def test_a_folder_made_read_only_after_the_open_is_asked_again_at_each_write(data):
    from pi_memory.runtime import open_memory

    memory = open_memory(override_dir=data)
    try:
        tools = {tool.name: tool for tool in memory.tools()}
        assert tools["memory_add"].call({"target": "memory", "content": "the deploy port is 8443"}).result["success"]
        data.chmod(0o555)
        before = state(data)
        why = (f"you have no permission to write in the data folder {data} (its mode 0555 lets no one write there, "
               "and pi-memory honours that even when running as root). Retrying will not help; tell the user, who "
               f"can fix it: Give your user write access to it (for example `chmod u+w {data}`), or use another "
               "folder with --dir or $PI_MEMORY_DIR.")
        for name, args in (("memory_add", {"target": "memory", "content": "the queue is Redis"}),
                           ("memory_replace", {"target": "memory", "oldText": "8443", "newContent": "port 9443"}),
                           ("memory_remove", {"target": "user", "oldText": "short"})):
            refused = tools[name].call(args)
            assert refused.is_error and refused.result["code"] == "read_only", refused.result
            assert refused.result["error"] == f"Nothing was saved to {args['target'].upper()}.md: {why}"
        assert state(data) == before
        data.chmod(0o755)
        assert tools["memory_add"].call({"target": "memory", "content": "the queue is Redis"}).result["success"]
        found = tools["memory_search"].call({"query": "Redis queue"}).result
        assert [hit["content"] for hit in found["results"]] == ["the queue is Redis"]  # mirrored into the index
    finally:
        data.chmod(0o755)
        memory.close()


def test_a_host_opened_on_a_read_only_folder_writes_again_once_it_is_fixed(data, monkeypatch):
    """A long-running host (the MCP server, a pi session) that started while the folder could not be written got
    its index opened for reading only; once the user fixes the folder, its next writes go through, curated and
    semantic, without a restart."""
    from pi_memory import runtime
    from pi_memory.index.read_only import ReadOnlyConnection

    monkeypatch.setattr(runtime, "REOPEN_CHECK_S", 0.0)
    data.chmod(0o555)
    memory = runtime.open_memory(override_dir=data)
    try:
        tools = {tool.name: tool for tool in memory.tools()}
        assert isinstance(memory.index(), ReadOnlyConnection)
        refused = tools["memory_add"].call({"target": "memory", "content": "the queue is Redis"})
        assert refused.is_error and refused.result["code"] == "read_only"
        semantic = tools["mem0_memory"].call({"action": "add", "text": "the staging database is Postgres 16"})
        assert (semantic.result["success"], semantic.result["code"]) == (False, "read_only"), semantic.result
        data.chmod(0o755)
        assert tools["memory_add"].call({"target": "memory", "content": "the queue is Redis"}).result["success"]
        assert not isinstance(memory.index(), ReadOnlyConnection)
        found = tools["memory_search"].call({"query": "Redis queue"}).result
        assert [hit["content"] for hit in found["results"]] == ["the queue is Redis"]  # mirrored into the index
        added = tools["mem0_memory"].call({"action": "add", "text": "the staging database is Postgres 16"}).result
        assert added["success"], added
        found = tools["mem0_memory"].call({"action": "search", "query": "staging database"}).result
        assert "the staging database is Postgres 16" in str(found)
    finally:
        data.chmod(0o755)
        memory.close()


def test_a_read_only_host_asks_again_only_every_few_seconds(data, monkeypatch):
    """The check costs a few system calls: a host asks at most every ``REOPEN_CHECK_S``."""
    from pi_memory import runtime
    from pi_memory.index import file_guard

    data.chmod(0o555)
    memory = runtime.open_memory(override_dir=data)
    asked = []
    real = file_guard.write_problem
    monkeypatch.setattr(file_guard, "write_problem", lambda folder: asked.append(folder) or real(folder))
    try:
        for _ in range(20):
            memory.index()
        assert len(asked) == 1
        data.chmod(0o755)
        memory.index()
        assert len(asked) == 1  # not yet asked again: the old connection still serves reads
        memory._reopen_after = 0.0
        memory.index()
        assert len(asked) == 2
    finally:
        data.chmod(0o755)
        memory.close()


def run_cli(*argv: str, env: dict) -> subprocess.CompletedProcess:
    """The installed CLI in a process of its own: its logging is the CLI's own (in this process pytest's is)."""
    return subprocess.run([sys.executable, "-m", "pi_memory", *argv], capture_output=True, text=True, env=env,
                          timeout=120)


def test_a_refused_write_says_why_once_and_a_read_still_warns(data, tmp_path):
    """Opening the index of a read-only folder logs a notice for a person; a write refused for that reason says it
    in its refusal, so the notice is not printed too (it repeated the cause and the fix); a read prints it."""
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    env.pop("PI_MEMORY_DIR", None)
    data.chmod(0o555)
    why = (f"you have no permission to write in the data folder {data} (its mode 0555 lets no one write there, and "
           "pi-memory honours that even when running as root)")
    fix = (f"Give your user write access to it (for example `chmod u+w {data}`), or use another folder with --dir "
           "or $PI_MEMORY_DIR.")
    for argv, refusal in ((["add", "memory", "the queue is Redis"],
                           f"refused (read_only): Nothing was saved to MEMORY.md: {why}. {fix}"),
                          (["semantic", "add", "the staging database is Postgres 16"],
                           f"refused: {why[0].upper()}{why[1:]}. pi-memory opened it for reading only, so nothing "
                           f"was saved. {fix}")):
        done = run_cli(*argv, "--dir", str(data), env=env)
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr.strip().splitlines() == [refusal]
    done = run_cli("memory-search", "build", "--dir", str(data), env=env)
    assert done.returncode == 0 and "the build uses make" in done.stdout
    assert done.stderr.strip().splitlines() == [
        f"warning: {why[0].upper()}{why[1:]}. pi-memory opened it for reading only: searches and recall answer from "
        f"what is there; indexing, capture and every other write are skipped. {fix}"]


def test_status_says_whether_the_folder_is_read_only(data, monkeypatch):
    code, result, _ = cli(["status", "--dir", str(data)])
    assert code == 0 and (result["readOnly"], result["readOnlyReason"]) == (False, None)
    data.chmod(0o555)
    code, result, _ = cli(["status", "--dir", str(data)])
    notice = read_only_problem("permission", data, "its mode 0555 lets no one write there, and pi-memory honours "
                               "that even when running as root").notice
    assert code == 0 and (result["readOnly"], result["readOnlyReason"]) == (True, notice)
    code, out, _ = text_cli(["status", "--dir", str(data)])
    assert out.splitlines()[:2] == [f"data dir: {data} (read-only)", f"  {notice}"]
    data.chmod(0o755)
    monkeypatch.setattr(storage, "MIN_FREE_BYTES", 1 << 62)  # a nearly full disk
    code, result, _ = cli(["status", "--dir", str(data)])
    assert result["readOnly"] is True
    assert result["readOnlyReason"].startswith(f"The disk holding the data folder {data} is full (")


@pytest.mark.parametrize("make_read_only", ["index 0444", "folder 0555"])
def test_embed_sessions_is_refused_before_anything_is_embedded(data, monkeypatch, make_read_only):
    from pi_memory.semantic import turn_vectors

    def embedded(*args, **kwargs):
        raise AssertionError("something was embedded on a read-only folder")

    monkeypatch.setattr(turn_vectors, "_run", embedded)
    (data / "index.sqlite3").chmod(0o444) if make_read_only == "index 0444" else data.chmod(0o555)
    before = state(data)
    for argv in (["semantic", "embed-sessions"], ["semantic", "embed-sessions", "--all", "--limit", "5"]):
        code, result, _ = cli([*argv, "--dir", str(data)])
        assert code == 1 and result["problem"] == "permission" and result["dataDir"] == str(data), result
        said = (f"You have no permission to write the file {data / 'index.sqlite3'} in the data folder {data} ("
                if make_read_only == "index 0444" else f"You have no permission to write in the data folder {data} (")
        assert result["error"].startswith(said)
        assert "pi-memory opened it for reading only, so nothing was saved." in result["error"]
    assert state(data) == before


@pytest.mark.parametrize("fails_at", ["curated", "sessions"])
def test_embed_sessions_stopped_by_a_folder_turned_read_only_keeps_and_counts_what_it_saved(data, monkeypatch,
                                                                                           fails_at):
    """The folder stops taking writes during the pass (a full disk, a chmod): the vectors written before are kept
    and the message says so, instead of "nothing was saved" (the refusal a write gets when nothing was)."""
    from pi_memory.semantic import turn_vectors

    sessions = data.parent / "sessions"
    pi_session(sessions / "s1.jsonl", "/work/shop", [("user", "how do we deploy to staging?"),
                                                     ("assistant", "Run make deploy; staging listens on 8443.")])
    assert cli(["index-sessions", str(sessions), "--dir", str(data)])[0] == 0
    monkeypatch.setattr(turn_vectors, "BATCH", 1)
    real, writes = turn_vectors._write, []

    def write(conn, source, *args):  # the folder turns read-only once this write is done: the next one is refused
        real(conn, source, *args)
        writes.append(source)
        if len(writes) == (1 if fails_at == "curated" else 2):
            data.chmod(0o555)

    monkeypatch.setattr(turn_vectors, "_write", write)
    code, result, _ = cli(["semantic", "embed-sessions", "--all", "--dir", str(data)])
    saved = 1 if fails_at == "curated" else 2  # the data holds two curated entries
    assert code == 1, result
    assert result["error"] == (
        f"You have no permission to write in the data folder {data} (its mode 0555 lets no one write there, and "
        "pi-memory honours that even when running as root). Embedding stopped there; the vectors saved before it "
        f"are kept ({saved} vector{'' if saved == 1 else 's'}). Give your user write access to it (for example "
        f"`chmod u+w {data}`), or use another folder with --dir or $PI_MEMORY_DIR.")
    data.chmod(0o755)
    import sqlite3

    conn = sqlite3.connect(data / "index.sqlite3")
    try:
        stored = conn.execute("SELECT count(*) FROM semantic_curated_vectors").fetchone()[0] + conn.execute(
            "SELECT count(*) FROM semantic_turn_vectors").fetchone()[0]
    finally:
        conn.close()
    assert stored == saved


def test_split_apply_is_refused_before_anything_is_written(data):
    notes = "# Notes\n\n- the build uses make\n- the deploy port is 8443\n"
    (data / "MEMORY.md").write_text(notes)
    (data / "index.sqlite3").chmod(0o444)
    before = state(data)
    code, result, _ = cli(["split", "memory", "--apply", "--dir", str(data)])
    assert code == 1 and result["code"] == "read_only" and result["error"] == index_refusal(data, True)
    code, out, err = text_cli(["split", "memory", "--apply", "--dir", str(data)])
    assert (code, out, err.strip().splitlines()[-1]) == (1, "", f"refused (read_only): {index_refusal(data, False)}")
    code, result, _ = cli(["split", "memory", "--dir", str(data)])  # the proposal alone writes nothing: shown
    assert code == 0 and [e["text"] for e in result["entries"]] == ["Notes: the build uses make",
                                                                    "Notes: the deploy port is 8443"]
    assert state(data) == before and (data / "MEMORY.md").read_text() == notes


@pytest.mark.parametrize("argv", [["session-search", "build"], ["memory-search", "build"], ["index-sessions"],
                                  ["reindex"]], ids=" ".join)
def test_an_unreadable_index_is_named_with_its_owner_and_mode(data, argv):
    index = data / "index.sqlite3"
    index.chmod(0o000)
    before = state(data)
    code, result, _ = cli([*argv, "--dir", str(data)])
    said = (f"The file {index} cannot be read by this user (root): it belongs to root and its mode is 0000 (its mode "
            "lets no one read it, and pi-memory honours that even when running as root). Nothing was read or "
            f"changed. Give your user read access to it (for example `chmod u+r {index}`), or point --dir or "
            "$PI_MEMORY_DIR at another folder.")
    if argv[0].endswith("-search"):  # the search tools' result: the same words, and what a model should do
        assert code == 1 and result == {"success": False, "code": "unreadable",
                                        "error": said + " Retrying will not help; tell the user."}, result
    else:
        assert code == 1 and result == {"success": False, "exitCode": 1, "problem": "unreadable",
                                        "dataDir": str(data), "error": said}, result
    assert state(data) == before


@pytest.mark.parametrize("content", [b"plain text notes\n", "sqlite"], ids=["text", "sqlite"])
def test_a_file_that_is_not_an_index_is_refused_and_kept(tmp_path, content):
    folder = tmp_path / "other"
    folder.mkdir()
    index = folder / "index.sqlite3"
    if content == "sqlite":
        foreign_sqlite(index)
        what = "it is an SQLite database of another program (tables: photos)"
    else:
        index.write_bytes(content)
        what = "it is not an SQLite database (its first bytes are not SQLite's header)"
    before = state(folder)
    for argv in (["index-sessions"], ["reindex"], ["sync-markdown"]):
        code, result, _ = cli([*argv, "--dir", str(folder)])
        assert code == 1 and result["problem"] == "not_an_index", result
        assert result["error"] == (
            f"The file {index} is not a pi-memory search index: {what}. pi-memory left it as it is and stopped. "
            "Move or rename it if it belongs to another program (if it is a damaged pi-memory index, move it aside "
            "rather than deleting it -- semantic memories live only in that file -- and run `pi-memory reindex`), "
            "or point --dir or $PI_MEMORY_DIR at another folder.")
    code, result, _ = cli(["add", "memory", "the build uses make", "--dir", str(folder)])
    assert code == 1 and result["code"] == "not_an_index"
    assert result["error"].startswith("Nothing was saved to MEMORY.md: its search index cannot be used. The file ")
    assert state(folder) == before


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o550], ids=lambda m: f"{m:04o}")
def test_a_read_only_index_file_is_named_with_the_chmod_for_it(data, mode):
    """A read-only index file in a writable folder: the advice names the file and `chmod u+w <file>`, not the
    folder (whose permission is fine)."""
    path = data / "index.sqlite3"
    path.chmod(mode)
    code, result, _ = cli(["status", "--dir", str(data)])
    what = (f"You have no permission to write the file {path} in the data folder {data} (its mode {mode:04o} lets "
            "no one write it, and pi-memory honours that even when running as root).")
    todo = (f"Give your user write access to it (for example `chmod u+w {path}`), or use another folder with --dir "
            "or $PI_MEMORY_DIR.")
    assert code == 0 and result["readOnly"] is True
    assert result["readOnlyReason"] == (f"{what} pi-memory opened it for reading only: searches and recall answer "
                                        f"from what is there; indexing, capture and every other write are skipped. "
                                        f"{todo}")
    code, result, _ = cli(["semantic", "add", "Production runs PostgreSQL 16.", "--dir", str(data)])
    assert code == 1 and result["error"] == f"{what} pi-memory opened it for reading only, so nothing was saved. {todo}"
