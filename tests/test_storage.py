"""pi_memory.storage: which storage problem an exception means, in words naming the folder."""

from __future__ import annotations

import errno
import sqlite3

import pytest
from filelock import Timeout

from pi_memory.storage import folder_problem, probe_folder, storage_problem


def _os(code: int, filename: str | None = None) -> OSError:
    return OSError(code, __import__("os").strerror(code), filename)


@pytest.mark.parametrize(("exc", "kind"), [
    (_os(errno.EROFS), "read_only"),
    (_os(errno.EACCES), "permission"),
    (_os(errno.EPERM), "permission"),
    (_os(errno.ENOSPC), "disk_full"),
    (_os(errno.EDQUOT), "disk_full"),
    (_os(errno.ENOTDIR), "not_a_folder"),
    (sqlite3.OperationalError("database is locked"), "locked"),
    (sqlite3.OperationalError("database table is locked"), "locked"),
    (Timeout("/x/MEMORY.md.lock"), "locked"),
])
def test_kinds(tmp_path, exc, kind):
    problem = storage_problem(exc, tmp_path)
    assert problem is not None and problem.kind == kind and problem.folder == tmp_path
    assert str(tmp_path) in problem.message and "The command stopped" in problem.message


@pytest.mark.parametrize("exc", [ValueError("bad"), KeyError("x"), sqlite3.OperationalError("no such table: foo"),
                                 _os(errno.EINVAL), RuntimeError("boom")])
def test_other_errors_are_not_storage_problems(tmp_path, exc):
    assert storage_problem(exc, tmp_path) is None


def test_a_wrapped_cause_is_found(tmp_path):
    try:
        try:
            raise _os(errno.ENOSPC, str(tmp_path / "index.sqlite3"))
        except OSError as inner:
            raise RuntimeError("indexing failed") from inner
    except RuntimeError as outer:
        problem = storage_problem(outer, tmp_path)
    assert problem.kind == "disk_full" and f"at {tmp_path / 'index.sqlite3'}" in problem.message
    assert "what it had already saved is kept" in problem.message


def test_a_file_outside_the_data_folder_names_its_own_folder(tmp_path):
    agent = tmp_path / "agent"
    problem = storage_problem(_os(errno.EROFS, str(agent / "pi-memory-trust.json")), tmp_path / "data")
    assert problem.folder == agent and problem.message.startswith(f"The folder {agent} is on a read-only")


def test_sqlite_open_failure_is_probed(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    problem = storage_problem(sqlite3.OperationalError("unable to open database file"), blocker / "data")
    assert problem.kind == "not_a_folder" and f"{blocker} is a file, not a folder" in problem.message
    usable = storage_problem(sqlite3.OperationalError("unable to open database file"), tmp_path)
    assert usable.kind == "unusable" and "SQLite: unable to open database file" in usable.message


def test_probe_of_a_usable_folder_leaves_nothing(tmp_path):
    assert probe_folder(tmp_path) is None and folder_problem(tmp_path / "not" / "yet") is None
    assert list(tmp_path.iterdir()) == []


def test_locked_message_says_what_to_do(tmp_path):
    problem = storage_problem(sqlite3.OperationalError("database is locked"), tmp_path)
    assert problem.message == (
        f"The search index in {tmp_path} is locked by another process (a pi session, `pi-memory mcp` or an "
        "indexing run) (SQLite: database is locked). The command stopped. Wait for that process to finish, then "
        "run it again.")


def test_unexpected_error_under_json_is_still_json(tmp_path, monkeypatch, capsys):
    import json
    import sys

    from pi_memory.cli import main

    cli_app = sys.modules["pi_memory.cli.app"]  # the package's `app` attribute is the typer app

    def broken(store, **_options):
        raise RuntimeError("snapshot exploded")

    monkeypatch.setattr(cli_app, "build_snapshot", broken)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    with pytest.raises(SystemExit) as exit_:
        main(["snapshot", "--dir", str(tmp_path / "d"), "--json"])
    assert exit_.value.code == 1
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["success"] is False and data["errorType"] == "RuntimeError" and "snapshot exploded" in data["error"]
    assert "Traceback" in captured.err  # for the bug report
    with pytest.raises(RuntimeError, match="snapshot exploded"):  # without --json: the traceback itself
        main(["snapshot", "--dir", str(tmp_path / "d")])
