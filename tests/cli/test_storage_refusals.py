"""Every command, in a data folder that cannot be used: read-only, missing and not creatable, a file instead of
a folder, a full disk, an index locked by another process. Each must answer with exit 0 or 1, one JSON object
on standard output under ``--json``, never a traceback; a refusal names the folder and the problem (exit 2
stays for a usage error of the command's own, such as a folder to import from that does not exist).

The commands are read from the typer app, so a command added later is checked without editing this file
(only commands that serve until stopped, or never touch the data folder, are listed apart, with the reason).
The commands run in this process through :func:`pi_memory.cli.main` (one process per case would take minutes);
``mcp`` and ``serve`` run as real subprocesses. A read-only folder and a full disk are real file systems (a
tmpfs mounted read-only or filled up) when this user may mount one; otherwise the read-only case falls back to
file permissions (for a user who is not root) and the full-disk case is skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from pi_memory.cli import main
from pi_memory.cli.app import app

# Commands that serve until stopped or never use the data folder, with how they are covered instead.
APART = {
    "mcp": "serves until stdin closes: test_mcp_serves_a_read_only_folder_for_reading (serve: "
           "test_serve_refuses_a_read_only_folder_at_start, a group whose own callback serves)",
    "demo": "runs the real pi in a temporary folder of its own; no data folder",
    "install pi": "writes pi's agent folder (its errors: tests/cli/test_cli.py)",
    **{f"serve {name}": "the team store's PostgreSQL, not the data folder (tests/semantic/test_team_server.py)"
       for name in ("migrate", "token create", "token list", "token revoke", "audit", "import", "export")},
    "ui": "serves a page until stopped: tests/integrations/inspector/test_cli_ui.py",
    "hook": "answers a host and never refuses: any failure prints {} and is logged (tests/integrations/test_hook*)",
}
WRITERS = {"add", "replace", "remove", "index-sessions", "reindex", "sync-markdown", "semantic add"}


def _commands() -> dict[str, object]:
    found: dict[str, object] = {}

    def walk(command, path: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
        else:
            found[" ".join(path)] = command

    walk(typer.main.get_command(app), [])
    return found


COMMANDS = _commands()
CHECKED = sorted(set(COMMANDS) - set(APART))


def _args(name: str) -> list[str]:
    """The command with a value for each required argument: a store target, text matching the saved entry."""
    import enum

    values, options = [], []
    for param in COMMANDS[name].params:
        if not param.required:
            continue
        annotation = param.type_descriptor.annotation
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            value = "memory" if "memory" in {m.value for m in annotation} else next(iter(annotation)).value
        elif annotation in (int, float):
            value = "1"
        elif annotation is Path:
            value = "."
        else:
            value = "note"
        if param.param_type_name == "argument":
            values.append(value)
        else:
            options += [param.opts[0], value]
    return [*name.split(), *values, *options]


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _seed(folder: Path) -> None:
    """A data folder in use: an entry in MEMORY.md and an index holding it (written by a process of its own, so
    no file stays open here and the file system can be remounted read-only)."""
    subprocess.run([sys.executable, "-m", "pi_memory", "add", "memory", "note about the build", "--dir",
                    str(folder)], check=True, capture_output=True, timeout=60)


def _run(argv: list[str]) -> tuple[int, str, str]:
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        else:  # pragma: no cover - main always exits
            code = 0
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module", autouse=True)
def _fast_locks(tmp_path_factory):
    """Short waits for a held lock (the real ones are 10 s), and an agent folder of this test's own."""
    from pi_memory.index import db

    agent = tmp_path_factory.mktemp("agent")
    (agent / "settings.json").write_text(json.dumps({"pi-memory": {"lockTimeoutSeconds": 0.2}}))
    patch = pytest.MonkeyPatch()
    patch.setattr(db, "BUSY_TIMEOUT_S", 0.2)
    patch.setenv("PI_CODING_AGENT_DIR", str(agent))
    patch.delenv("PI_MEMORY_DIR", raising=False)
    home = tmp_path_factory.mktemp("home")  # install/import commands read and write the hosts' folders there
    for name, value in (("HOME", home), ("CLAUDE_CONFIG_DIR", home / ".claude"), ("CODEX_HOME", home / ".codex"),
                        ("XDG_STATE_HOME", home / ".local" / "state"), ("XDG_CONFIG_HOME", home / ".config")):
        patch.setenv(name, str(value))
    yield
    patch.undo()


@pytest.fixture(scope="module")
def read_only(tmp_path_factory):
    """A seeded data folder on a read-only file system (as root: a tmpfs remounted read-only; otherwise the
    folder's permissions, which bind a user who is not root)."""
    base = tmp_path_factory.mktemp("ro")
    folder = base / "data"
    mounted = os.geteuid() == 0 and _mount("-t", "tmpfs", "-o", "size=8m", "tmpfs", str(base))
    if os.geteuid() == 0 and not mounted:
        pytest.skip("root without permission to mount a tmpfs: a read-only folder cannot be made")
    _seed(folder)
    empty = base / "empty"
    empty.mkdir()
    if mounted:
        assert _mount("-o", "remount,ro", str(base))
        kind = "read_only"
    else:
        for path in (folder, empty, *folder.iterdir()):
            path.chmod(0o555 if path.is_dir() else 0o444)
        kind = "permission"
    yield base, kind
    if mounted:
        subprocess.run(["umount", "-l", str(base)])
    else:
        for path in (folder, empty):
            path.chmod(0o755)


@pytest.fixture(scope="module")
def full_disk(tmp_path_factory):
    """A seeded data folder on a 4 MiB tmpfs filled to the last byte."""
    base = tmp_path_factory.mktemp("full")
    if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(base)):
        pytest.skip("a full disk needs a small tmpfs, which only root may mount here")
    _seed(base / "data")
    with contextlib.suppress(OSError), open(base / "filler", "wb") as filler:
        while True:
            filler.write(b"\0" * 65536)
            filler.flush()
    yield base / "data"
    subprocess.run(["umount", "-l", str(base)])


@pytest.fixture(scope="module")
def locked(tmp_path_factory):
    """A seeded data folder whose index and MEMORY.md lock are held by another process."""
    folder = tmp_path_factory.mktemp("locked") / "data"
    _seed(folder)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys, filelock\n"
         f"lock = filelock.FileLock({str(folder / 'MEMORY.md.lock')!r}); lock.acquire()\n"
         f"c = sqlite3.connect({str(folder / 'index.sqlite3')!r}, isolation_level=None)\n"
         "c.execute('BEGIN EXCLUSIVE'); c.execute('DELETE FROM meta')\n"
         "print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    yield folder
    holder.stdin.close()
    holder.wait(timeout=10)


def _run_in(name: str, folder: Path, *extra: str) -> tuple[int, str, str]:
    """``name`` on data folder ``folder``: ``--dir`` when the command has it, else ``$PI_MEMORY_DIR``."""
    if any(p.name == "dir" for p in COMMANDS[name].params):
        return _run([*_args(name), "--dir", str(folder), "--json", *extra])
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PI_MEMORY_DIR", str(folder))
        return _run([*_args(name), "--json", *extra])


def _check(name: str, folder: Path, kind: str | None, must_refuse: bool) -> dict:
    """Run ``name`` on ``folder`` with --json; assert the clean-refusal contract and return the JSON."""
    code, out, err = _run_in(name, folder)
    assert "Traceback" not in err, f"{name}: {err}"
    assert code in (0, 1, 2), f"{name}: exit {code}: {out} {err}"
    data = json.loads(out)  # one JSON object, never empty
    assert isinstance(data, dict), name
    if code == 2:  # a usage error of the command's own (a source folder to import that is not there...)
        assert data["exitCode"] == 2 and "problem" not in data and not must_refuse, (name, data)
        return data
    if "problem" in data:
        assert code == 1 and data["exitCode"] == 1, name
        assert data["problem"] == kind and data["dataDir"] == str(folder) and str(folder) in data["error"], data
    elif code == 1 and kind is not None and data.get("code") in ("io_error", "read_only"):
        assert str(folder) in data["error"], data  # a curated store's result: refused before the file was touched
    if must_refuse:
        assert code == 1 and (data.get("problem") == kind or data.get("code") in ("io_error", "read_only", "locked")), \
            (name, data)
    return data


def test_every_command_is_checked_or_listed_apart():
    assert set(APART) <= set(COMMANDS)
    assert {"add", "semantic status", "memory-search", "index-sessions"} <= set(CHECKED)


@pytest.mark.parametrize("name", CHECKED)
def test_read_only_folder(read_only, name):
    base, kind = read_only
    _check(name, base / "data", kind, must_refuse=name in WRITERS)
    _check(name, base / "empty", kind, must_refuse=name in WRITERS)


@pytest.mark.parametrize("name", CHECKED)
def test_missing_folder_that_cannot_be_created(read_only, name):
    base, kind = read_only
    _check(name, base / "not" / "there", kind, must_refuse=name in WRITERS)


@pytest.mark.parametrize("name", CHECKED)
def test_data_folder_that_is_a_file(tmp_path, name):
    path = tmp_path / "data"
    path.write_text("not a folder")
    _check(name, path, "not_a_folder", must_refuse=name in WRITERS)
    _check(name, path / "below", "not_a_folder", must_refuse=name in WRITERS)


@pytest.mark.parametrize("name", CHECKED)
def test_missing_folder_is_created_by_a_write(tmp_path, name):
    code, out, err = _run_in(name, tmp_path / "new" / "data")
    assert "Traceback" not in err and code in (0, 1, 2) and isinstance(json.loads(out), dict), (name, out, err)
    assert "problem" not in json.loads(out), out


@pytest.mark.parametrize("name", CHECKED)
def test_full_disk(full_disk, name):
    _check(name, full_disk, "disk_full", must_refuse=name in WRITERS - {"remove", "replace"})


@pytest.mark.parametrize("name", CHECKED)
def test_locked_index(locked, name):
    _check(name, locked, "locked", must_refuse=name in {"add", "replace", "remove", "reindex", "semantic add"})


def test_refusal_without_json_is_one_sentence_on_stderr(read_only):
    base, kind = read_only
    for name in ("reindex", "semantic add", "index-sessions"):
        code, out, err = _run([*_args(name), "--dir", str(base / "data")])
        assert code == 1 and out == "" and "Traceback" not in err, (name, err)
        last = err.strip().splitlines()[-1]  # index-sessions draws its progress bar first
        assert last.startswith("refused: The data folder ") and str(base / "data") in last and "--dir" in last, err


def test_a_failed_index_mirror_after_a_saved_write_is_one_warning_line(locked):
    """The Markdown write succeeded; the index mirror could not run. The person gets one line, no traceback."""
    script = ("import pi_memory.index.db as db; db.BUSY_TIMEOUT_S = 0.2\nfrom pi_memory.cli import main\n"
              f"main(['add', 'user', 'prefers short answers', '--dir', {str(locked)!r}])")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PI_CODING_AGENT_DIR": str(locked.parent / "agent2")})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Saved to USER.md." in proc.stdout
    assert proc.stderr.splitlines() == [
        "warning: USER.md was saved, but another process held the search index, so searches may not find the change "
        "until the index is brought up to date (the next pi-memory command or session does it; `pi-memory "
        "sync-markdown` does it now)."]


def test_mcp_serves_a_full_disk_for_reading(full_disk):
    proc = subprocess.run([sys.executable, "-m", "pi_memory", "mcp", "--index-interval", "0", "--dir",
                           str(full_disk), "--json"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr
    started = [json.loads(line) for line in proc.stderr.splitlines() if '"started"' in line][0]
    assert started["readOnly"].startswith(f"The disk holding the data folder {full_disk} is full."), started
    assert "opened it for reading only" in started["readOnly"] and "Free some space" in started["readOnly"]


def test_an_index_damaged_beyond_repair_is_a_refusal(tmp_path, monkeypatch):
    from pi_memory.index import IndexUnavailableError

    def unavailable(*args, **kwargs):
        raise IndexUnavailableError("The search index is damaged again; delete the file and run `pi-memory reindex`.")

    monkeypatch.setattr("pi_memory.index.open_index", unavailable)
    code, out, err = _run(["sync-markdown", "--dir", str(tmp_path), "--json"])  # (the search tools answer it)
    assert code == 1 and "Traceback" not in err
    assert json.loads(out) == {"success": False, "exitCode": 1, "problem": "index_unavailable",
                               "dataDir": str(tmp_path), "error": "The search index is damaged again; delete the "
                               "file and run `pi-memory reindex`."}


def test_serve_refuses_a_read_only_folder_at_start(read_only):
    """The semantic-memory server is there to take writes; it refuses a folder it could only read."""
    base, kind = read_only
    proc = subprocess.run([sys.executable, "-m", "pi_memory", "serve", "--port", "0", "--dir", str(base / "data"),
                           "--json"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    data = json.loads(proc.stdout)
    assert data["problem"] == kind and data["dataDir"] == str(base / "data")


def test_mcp_serves_a_read_only_folder_for_reading(read_only):
    """``mcp`` starts on a read-only folder, saying so on its start line (tests/index/test_read_only_index.py
    drives its tools); a folder that is missing or a file is still refused at start."""
    base, kind = read_only
    proc = subprocess.run([sys.executable, "-m", "pi_memory", "mcp", "--index-interval", "0", "--dir",
                           str(base / "data"), "--json"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr
    started = [json.loads(line) for line in proc.stderr.splitlines() if '"started"' in line][0]
    assert "opened it for reading only" in started["readOnly"] and str(base / "data") in started["readOnly"]
