"""``pi-memory status`` on an index it cannot use says so: a 0000 index is unreadable (it said "read-only ...
searches and recall answer from what is there" although they refuse it), random bytes or another program's
SQLite file are not a pi-memory index (it said nothing, with ``readOnly`` false). Nothing is created beside it."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from read_only_folder import cli, foreign_sqlite, own_agent  # noqa: E402,F401

TODO = ("Move or rename it if it belongs to another program (if it is a damaged pi-memory index, move it aside "
        "rather than deleting it -- semantic memories live only in that file -- and run `pi-memory reindex`), "
        "or point --dir or $PI_MEMORY_DIR at another folder.")
UNTIL = "pi-memory refuses searches, recall and every write until this is fixed."


pytestmark = pytest.mark.usefixtures("own_agent")


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "data"
    assert cli(["add", "memory", "the build uses make", "--dir", str(folder)])[0] == 0
    yield folder
    (folder / "index.sqlite3").chmod(0o600)


def status(folder: Path) -> tuple[dict, list[str]]:
    import contextlib
    import io

    from pi_memory.cli import main  # the person's text too

    code, result, _ = cli(["status", "--dir", str(folder)])
    assert code == 0
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main(["status", "--dir", str(folder)])
    return result, out.getvalue().splitlines()


def test_an_unreadable_index_is_called_unreadable(data):
    index = data / "index.sqlite3"
    index.chmod(0o000)
    result, lines = status(data)
    said = (f"The file {index} cannot be read by this user (root): it belongs to root and its mode is 0000 (its mode "
            "lets no one read it, and pi-memory honours that even when running as root).")
    todo = (f"Give your user read access to it (for example `chmod u+r {index}`), or point --dir or $PI_MEMORY_DIR "
            "at another folder.")
    assert result["readOnly"] is True and result["readOnlyReason"] == f"{said} {UNTIL} {todo}"
    assert result["indexProblem"] == {"code": "unreadable", "message": f"{said} Nothing was read or changed. {todo}"}
    assert lines[:2] == [f"data dir: {data} (its search index cannot be used)", f"  {said} {UNTIL} {todo}"]
    assert "answer from what is there" not in "\n".join(lines)


@pytest.mark.parametrize("content", ["random", "text", "photos"])
def test_a_file_that_is_not_an_index_is_named(data, content):
    index = data / "index.sqlite3"
    index.unlink()
    if content == "photos":
        foreign_sqlite(index)
        what = "it is an SQLite database of another program (tables: photos)"
    else:
        index.write_bytes(random.Random(3).randbytes(4096) if content == "random" else b"notes\n" * 50)
        what = ("SQLite does not recognise it as a database (it is another kind of file, or its first page is "
                "damaged)")
    before = sorted(p.name for p in data.iterdir())
    result, lines = status(data)
    said = f"The file {index} is not a pi-memory search index: {what}."
    assert result["readOnly"] is True and result["readOnlyReason"] == f"{said} {UNTIL} {TODO}"
    assert result["indexProblem"] == {"code": "not_an_index",
                                      "message": f"{said} pi-memory left it as it is and stopped. {TODO}"}
    assert lines[1] == f"  {said} {UNTIL} {TODO}"
    assert sorted(p.name for p in data.iterdir()) == before


def test_a_usable_index_has_no_index_problem(data):
    result, lines = status(data)
    assert result["readOnly"] is False and "indexProblem" not in result
    assert lines[0] == f"data dir: {data}"
