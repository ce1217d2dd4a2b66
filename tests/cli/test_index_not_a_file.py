"""An index path SQLite cannot open (a folder named ``index.sqlite3``, a symbolic link to nothing, a link to a named
pipe) is refused up front with code ``not_a_file``, like another program's file: a curated write saves nothing to
Markdown and exits 1 (a tester got "Saved to MEMORY.md." and then "on_change hook failed ... unable to open
database file"), the search tools answer with the refusal (they raised ``sqlite3.OperationalError``), and the
folder, the pipe and the link are left exactly as they were. The pipes are made in tmp with ``os.mkfifo``."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from read_only_folder import cli, own_agent  # noqa: E402,F401

ENTRY = "- the build uses make"


pytestmark = pytest.mark.usefixtures("own_agent")


def make(tmp_path: Path, kind: str) -> tuple[Path, str]:
    """A data folder with MEMORY.md and ``index.sqlite3`` of ``kind``, and what the refusal says it is."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "MEMORY.md").write_text(ENTRY + "\n", encoding="utf-8")
    index = data / "index.sqlite3"
    if kind == "folder":
        index.mkdir()
        return data, "it is a folder"
    if kind == "dangling":
        index.symlink_to(tmp_path / "gone.sqlite3")
        return data, f"it is a symbolic link to {tmp_path / 'gone.sqlite3'}, which does not exist"
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe, 0o644)
    index.symlink_to(pipe)
    return data, f"it is a symbolic link to {pipe}, which is a named pipe (FIFO)"


def refusal(data: Path, what: str) -> str:
    index = data / "index.sqlite3"
    todo = ("Move or remove it" if what == "it is a folder" else "Point the link at a pi-memory index file or remove it")
    return (f"The search index {index} cannot be opened: {what}. pi-memory left it as it is and stopped. {todo} "
            "(pi-memory then makes a new index there, and `pi-memory reindex` fills it), or point --dir or "
            "$PI_MEMORY_DIR at another folder.")


def snapshot(data: Path) -> dict[str, str]:
    out = {}
    for p in sorted(data.rglob("*")):
        st = os.lstat(p)
        out[p.name] = (f"link {os.readlink(p)}" if stat.S_ISLNK(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode)
                       else p.read_text(encoding="utf-8"))
    return out


KINDS = ["folder", "dangling", "fifo"]
WRITES = [["add", "memory", "the queue is redis"], ["replace", "memory", "build", "the build uses just"],
          ["remove", "memory", "build"], ["split", "memory", "--apply"]]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("argv", WRITES, ids=lambda v: v[0])
def test_a_curated_write_is_refused_before_markdown_is_written(tmp_path, kind, argv):
    data, what = make(tmp_path, kind)
    before = snapshot(data)
    code, result, err = cli([*argv, "--dir", str(data)])
    assert (code, result["success"], result["code"]) == (1, False, "not_a_file")
    assert result["error"] == ("Nothing was saved to MEMORY.md: its search index cannot be used. "
                               f"{refusal(data, what)} Retrying will not help; tell the user.")
    assert "on_change" not in err and "Saved" not in err
    assert snapshot(data) == before


@pytest.mark.parametrize("kind", KINDS)
def test_the_tools_answer_with_the_refusal(tmp_path, kind):
    from pi_memory.runtime import open_memory

    data, what = make(tmp_path, kind)
    before = snapshot(data)
    memory = open_memory(override_dir=data)
    try:
        tools = {tool.name: tool for tool in memory.tools()}
        added = tools["memory_add"].call({"target": "memory", "content": "the queue is redis"})
        assert added.is_error and added.result["code"] == "not_a_file"
        assert added.result["error"].startswith("Nothing was saved to MEMORY.md: its search index cannot be used. ")
        for name in ("memory_search", "session_search"):
            found = tools[name].call({"query": "build"}).result
            assert found == {"success": False, "code": "not_a_file",
                             "error": f"{refusal(data, what)} Retrying will not help; tell the user."}
    finally:
        memory.close()
    assert snapshot(data) == before


@pytest.mark.parametrize("kind", KINDS)
def test_status_answers_at_once_and_says_what_the_index_is(tmp_path, kind):
    data, what = make(tmp_path, kind)
    code, result, _ = cli(["status", "--dir", str(data)])
    assert code == 0 and result["readOnly"] is True
    assert result["indexProblem"] == {"code": "not_a_file", "message": refusal(data, what)}
