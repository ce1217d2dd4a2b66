"""``pi-memory install`` on a home folder it cannot write: a sentence naming the path, why and what to do, and the
exit code the README gives a folder that cannot be written (1, a refusal), not 2 (usage errors).

A fresh tester ran ``pi-memory install claude-code`` with a read-only HOME and got "...: [Errno 30] Read-only
file system: '/tmp/h-ro/.local'" with exit 2. The home folder here is a read-only tmpfs (``tests/read_only_folder``:
as root, a mode of 0555 does not stop a write)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder
from read_only_folder import cli, read_only_folder, text_cli, tree_state  # noqa: E402


@pytest.fixture
def read_only_home(tmp_path: Path):
    with read_only_folder(tmp_path / "ro") as ro:
        if ro.kind != "read_only" and os.geteuid() == 0:
            pytest.skip("a read-only home needs a read-only mount here (root writes through a mode of 0555)")
        ro.freeze()
        with pytest.MonkeyPatch.context() as mp:  # undone before the mount is (umount is found on PATH)
            mp.setenv("HOME", str(ro.folder))
            mp.setenv("PI_MEMORY_STATE_DIR", str(tmp_path / "state"))
            mp.delenv("CLAUDE_CONFIG_DIR", raising=False)
            mp.delenv("CODEX_HOME", raising=False)
            mp.setenv("PATH", "/nonexistent")  # no codex binary: its trust is not recorded
            yield ro.folder


@pytest.mark.parametrize(("host", "folder"), [("claude-code", ".claude"), ("codex", ".codex")])
def test_install_on_a_read_only_home_says_what_and_refuses(read_only_home: Path, host: str, folder: str) -> None:
    before = tree_state(read_only_home)
    code, out, err = text_cli(["install", host])
    assert (code, out, err) == (1, "", (
        f"refused: pi-memory could not write {read_only_home / folder}, so it is not installed for {host}: it is on a "
        "read-only file system. Remount that file system read-write, then run this command again.\n"))
    code, data, _ = cli(["install", host])
    assert (code, data) == (1, {
        "success": False, "exitCode": 1, "problem": "read_only", "path": str(read_only_home / folder),
        "error": f"pi-memory could not write {read_only_home / folder}, so it is not installed for {host}: it is on "
                 "a read-only file system. Remount that file system read-write, then run this command again."})
    assert tree_state(read_only_home) == before


def test_install_pi_on_a_read_only_agent_folder_says_the_same(read_only_home: Path, monkeypatch) -> None:
    """A second tester: `install pi` printed "[Errno 1] Operation not permitted: ..." and exited 2, where the
    other hosts give the sentence and 1."""
    agent = read_only_home / ".pi" / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    before = tree_state(read_only_home)
    code, out, err = text_cli(["install", "pi"])
    assert (code, out) == (1, "")
    assert err.startswith(f"refused: pi-memory could not write {read_only_home / '.pi'}, so it is not installed for "
                          "pi: it is on a read-only file system. Remount that file system read-write, then run this "
                          "command again. (Or name another agent folder with --agent-dir.)")
    assert tree_state(read_only_home) == before
