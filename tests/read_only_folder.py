"""A data folder made truly read-only for a test, and the refusal a write then gets.

As root (the suite's user here) file permissions do not stop a write, so the folder is a small tmpfs remounted
read-only when this user may mount one: writes then fail with ``EROFS`` for everyone. Otherwise it falls back
to ``chmod a-w`` (folder 0555, files 0444), which binds a user who is not root and which pi-memory honours
even as root (:func:`pi_memory.storage.refuse_read_only_folder`). ``kind`` says which one a test got.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


class ReadOnlyFolder:
    """``folder`` (empty, writable) until :meth:`freeze`; then read-only by ``kind`` (module docstring)."""

    def __init__(self, base: Path, mount: bool = True) -> None:
        base.mkdir(parents=True, exist_ok=True)
        self.base = base
        self.mounted = mount and os.geteuid() == 0 and _mount("-t", "tmpfs", "-o", "size=16m", "tmpfs", str(base))
        self.kind = "read_only" if self.mounted else "permission"
        self.folder = base / "data"
        self.folder.mkdir()

    def freeze(self) -> None:
        if self.mounted:
            assert _mount("-o", "remount,ro", str(self.base)), "could not remount the tmpfs read-only"
        else:
            for path in [self.folder, *self.folder.rglob("*")]:
                path.chmod(0o555 if path.is_dir() else 0o444)

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.base)], capture_output=True)
        else:
            for path in [self.folder, *self.folder.rglob("*")]:
                with contextlib.suppress(OSError):
                    path.chmod(0o755 if path.is_dir() else 0o644)

    def state(self) -> dict[str, str]:
        """Every file under the folder with a hash of its bytes: what a test asserts did not change."""
        return tree_state(self.folder)

    def refusal(self) -> str:
        """The exact words a write into the frozen folder gets once its index was opened for reading only."""
        folder = self.folder
        if self.kind == "read_only":
            return (f"The data folder {folder} is on a read-only file system, so pi-memory cannot write there. "
                    "pi-memory opened it for reading only, so nothing was saved. Remount it read-write, or use "
                    "another folder with --dir or $PI_MEMORY_DIR.")
        return (f"You have no permission to write in the data folder {folder} (its mode 0555 lets no one write "
                "there, and pi-memory honours that even when running as root). pi-memory opened it for reading "
                f"only, so nothing was saved. Give your user write access to it (for example `chmod u+w {folder}`), "
                "or use another folder with --dir or $PI_MEMORY_DIR.")


    def parts(self) -> tuple[str, str]:
        """The two halves of :meth:`refusal` other messages say again: what is wrong, and what to do."""
        why, todo = self.refusal().split(" pi-memory opened it for reading only, so nothing was saved. ")
        return why, todo


@contextlib.contextmanager
def read_only_folder(base: Path, mount: bool = True) -> Iterator[ReadOnlyFolder]:
    """A :class:`ReadOnlyFolder` under ``base``; ``mount=False``: by its mode (chmod), even where a tmpfs could be
    mounted."""
    made = ReadOnlyFolder(base, mount)
    try:
        yield made
    finally:
        made.close()


def tree_state(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with a hash of its bytes ("dir" for a folder): what a test asserts did not
    change."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(folder.rglob("*"))}


def text_cli(argv: list[str]) -> tuple[int, str, str]:
    """``pi-memory ARGV`` for a person (no --json), in this process: (exit code, standard output, standard
    error)."""
    from pi_memory.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def cli(argv: list[str]) -> tuple[int, dict, str]:
    """``pi-memory ARGV --json`` in this process: (exit code, the JSON answer, standard error)."""
    code, out, err = text_cli([*argv, "--json"])
    assert "Traceback" not in err, err
    return code, json.loads(out), err


def foreign_sqlite(path: Path) -> None:
    """Another program's SQLite database at ``path`` (one table, ``photos``)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)")
    conn.commit()
    conn.close()


@pytest.fixture
def own_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A CLI test's own agent folder and HOME, no data folder from the environment, run from ``tmp_path``
    (modules use it with ``pytestmark = pytest.mark.usefixtures("own_agent")``)."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def pi_session(path: Path, cwd: str, turns: list[tuple[str, str]], day: str = "2026-11-01") -> Path:
    """A linear pi v3 session file of ``turns`` ([(role, text)])."""
    lines = [{"type": "session", "version": 3, "id": path.stem, "timestamp": f"{day}T10:00:00.000Z", "cwd": cwd}]
    parent = None
    for n, (role, text) in enumerate(turns, 1):
        msg: dict = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
        if role == "assistant":
            msg["stopReason"] = "stop"
        lines.append({"type": "message", "id": f"e{n}", "parentId": parent, "timestamp": f"{day}T10:00:{n:02d}.000Z",
                      "message": msg})
        parent = f"e{n}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


TURNS = [("user", "how do we deploy to staging?"),
         ("assistant", "Run make deploy; the staging server listens on port 8443."),
         ("user", "and the invoice rounding bug?"),
         ("assistant", "Fixed with banker's rounding in totals.py.")]


def seed(folder: Path, sessions: Path, cwd: str = "/work/shop") -> None:
    """A data folder in use: a MEMORY.md entry mirrored into the index, and one pi session (run in ``cwd``)
    indexed (the index closed cleanly, so its -wal and -shm files are gone)."""
    from pi_memory.index import index_paths, open_index
    from pi_memory.runtime import open_memory

    memory = open_memory(override_dir=folder)
    assert memory.store.add("memory", "the build uses make and the deploy port is 8443").success
    memory.close()
    pi_session(sessions / "--work-shop--" / "s1.jsonl", cwd, TURNS)
    conn = open_index(folder)
    try:
        assert index_paths(conn, [sessions]).messages_added == len(TURNS)
    finally:
        conn.close()


SKILL = {"action": "create", "name": "evil", "description": "Deploys the staging server with make", "scope": "global",
         "procedure_steps": ["make deploy"]}


def seed_every_store(folder: Path) -> None:
    """A data folder every writer has written (through the public APIs): a MEMORY.md entry, the default blocks
    (``agent`` holding a line), the skill ``global:evil``, a pinned rule."""
    from pi_memory.runtime import open_memory
    from pi_memory.standing import StandingStore

    memory = open_memory(override_dir=folder)
    try:
        assert memory.store.add("memory", "the build uses make").success
        blocks = memory.blocks()
        assert [b.key for b in blocks.ensure_defaults()] == ["user", "agent"]
        assert blocks.update("agent", "reviews every diff").success
        tools = {tool.name: tool for tool in memory.tools()}
        assert tools["skill_manage"].call(SKILL).result["success"]
        assert StandingStore.in_data_dir(folder).add("never push to main").success
    finally:
        memory.close()
    import gc

    gc.collect()  # connections left to the garbage collector close (and checkpoint) now, not during a test


def root_read_only(folder: Path) -> str:
    """``chmod 0555`` of the data folder alone (its subfolders stay writable, as a user's `chmod 555` leaves
    them); returns the words of what is wrong that every refusal then says, in a person's words."""
    folder.chmod(0o555)
    return (f"you have no permission to write in the data folder {folder} (its mode 0555 lets no one write there, "
            "and pi-memory honours that even when running as root).")


def root_todo(folder: Path) -> str:
    """What a refusal of :func:`root_read_only`'s folder says to do."""
    return (f"Give your user write access to it (for example `chmod u+w {folder}`), or use another folder with "
            "--dir or $PI_MEMORY_DIR.")


TELL = "Retrying will not help; tell the user, who can fix it: "  # what a model's refusal says before the todo
