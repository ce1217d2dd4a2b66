"""A tester's findings on `pi-memory install|uninstall claude-code|codex`: the user's own MCP server entry named
"pi-memory" was replaced by install and deleted by uninstall; a settings file that is a link to nothing was
written through (its target's folders created); a file that is not UTF-8 gave a traceback; a mistyped
`--project` got a whole folder tree. Now: the user's entry keeps its env and comes back byte for byte, and the
others are refusals (exit 1, `{"problem", "path"}`, nothing written)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from pi_memory.integrations.hooks import claude_code, codex
from pi_memory.integrations.hooks.install import InstallRefusal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder's CLI helpers
from read_only_folder import cli, text_cli, tree_state  # noqa: E402

SCRIPT = "/opt/pi memory/bin/pi-memory"


@pytest.fixture
def home(install_home):
    return install_home


def put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


# -- the user's own "pi-memory" MCP server entry ------------------------------------------------------------------

UVX = b'{"mcpServers":{"pi-memory":{"command":"uvx","args":["pi-memory","mcp"],"env":{"PI_MEMORY_DIR":"/home/me/notes"}}}}'
UVX_PRETTY = (b'{\n  "numStartups": 3,\n  "mcpServers": {\n    "pi-memory": {\n      "type": "stdio",\n'
              b'      "command": "/usr/local/bin/pi-memory",\n      "args": ["mcp", "--index-interval", "0"],\n'
              b'      "env": {\n        "PI_MEMORY_DIR": "/home/me/notes",\n        "PI_MEMORY_STATE_DIR": "/tmp/s"\n'
              b'      }\n    },\n    "other": {"command": "x"}\n  }\n}\n')


@pytest.mark.parametrize(("before", "installed"), [
    (UVX, {"command": SCRIPT, "args": ["mcp"], "env": {"PI_MEMORY_DIR": "/home/me/notes"}, "type": "stdio"}),
    (UVX_PRETTY, {"type": "stdio", "command": SCRIPT, "args": ["mcp"],
                  "env": {"PI_MEMORY_DIR": "/home/me/notes", "PI_MEMORY_STATE_DIR": "/tmp/s"}}),
])
def test_the_users_own_claude_entry_keeps_its_env_and_comes_back_byte_for_byte(home, before, installed):
    path = home / ".claude.json"
    put(path, before)
    changes = claude_code.install("user", script=SCRIPT)
    servers = json.loads(path.read_bytes())["mcpServers"]
    assert servers["pi-memory"] == installed
    assert list(servers["pi-memory"]) == list(installed)  # the user's keys where they were
    env = ", ".join(installed["env"])
    assert changes[1].details == [
        f"MCP server pi-memory: {SCRIPT} mcp; your entry's env ({env}) is kept, and uninstall puts your entry back"]
    assert changes[0].details[0].endswith(  # the hooks get its data root (was: only told to set it by hand)
        "with PI_MEMORY_DIR=/home/me/notes from your MCP server entry, so they use the same memory (data root) as "
        "its server")
    assert [c.action for c in claude_code.install("user", script=SCRIPT)] == ["unchanged", "unchanged"]
    claude_code.install("user", script="/new/venv/bin/pi-memory")  # a moved venv: still the user's entry to restore
    removed = claude_code.uninstall("user")
    assert (removed[1].action, removed[1].details) == ("updated", [
        "your own MCP server pi-memory runs what it ran before the install (its env as it is now)",
        "the file is again byte for byte as before the install"])
    assert path.read_bytes() == before  # was: the entry deleted


def test_the_users_entry_comes_back_also_when_the_rest_of_the_file_changed(home):
    path = home / ".claude.json"
    put(path, UVX)
    claude_code.install("user", script=SCRIPT)
    data = json.loads(path.read_bytes())
    data["numStartups"] = 4  # Claude Code writes this file all the time
    path.write_text(json.dumps(data), encoding="utf-8")
    claude_code.uninstall("user")
    assert json.loads(path.read_bytes()) == {**json.loads(UVX), "numStartups": 4}


def test_an_entry_exactly_as_install_writes_it_is_ours_after_a_lost_manifest(home):
    path = home / ".claude.json"
    ours = {"mcpServers": {"pi-memory": {"type": "stdio", "command": "/old/bin/pi-memory", "args": ["mcp"],
                                         "env": {}}, "x": {"command": "x"}}}
    put(path, json.dumps(ours).encode())
    claude_code.install("user", script=SCRIPT)
    claude_code.uninstall("user")
    assert json.loads(path.read_bytes()) == {"mcpServers": {"x": {"command": "x"}}}


@pytest.mark.parametrize("entry", [{"type": "http", "url": "https://team.example/mcp"},
                                   {"type": "sse", "url": "http://127.0.0.1:8766/mcp", "headers": {"X": "1"}}])
def test_a_remote_entry_of_the_users_is_refused_and_nothing_is_written(home, entry):
    put(home / ".claude.json", json.dumps({"mcpServers": {"pi-memory": entry}}).encode())
    before = tree_state(home)
    code, data, _ = cli(["install", "claude-code"])
    message = (f"{home / '.claude.json'} already has an MCP server named pi-memory of yours that talks to "
               f"{entry['url']}, which install would replace with the local server; rename yours (or remove it), "
               "then run this command again (nothing was changed).")
    assert (code, data) == (1, {"success": False, "exitCode": 1, "error": message, "problem": "user_server",
                                "path": str(home / ".claude.json")})
    assert tree_state(home) == before


CODEX_UVX = (b'model = "gpt-5"\n\n[mcp_servers.pi-memory]\ncommand = "uvx"\nargs = ["pi-memory", "mcp"]  # from the '
             b'README\n\n[mcp_servers.pi-memory.env]\nPI_MEMORY_DIR = "/home/me/notes"\n')
CODEX_INLINE = (b'[mcp_servers.pi-memory]\r\ncommand = "pipx"\r\nargs = ["run", "pi-memory", "mcp"]\r\n'
                b'env = { PI_MEMORY_DIR = "/home/me/notes" }\r\nstartup_timeout_sec = 30\r\n')


@pytest.mark.parametrize(("before", "command"), [(CODEX_UVX, "uvx"), (CODEX_INLINE, "pipx")])
def test_the_users_own_codex_entry_keeps_its_env_and_comes_back_byte_for_byte(home, before, command):
    import tomlkit

    path = home / ".codex" / "config.toml"
    put(path, before)
    result = codex.install(script=SCRIPT)
    entry = tomlkit.parse(path.read_bytes().decode()).unwrap()["mcp_servers"]["pi-memory"]
    assert {k: v for k, v in entry.items() if k != "startup_timeout_sec"} == {
        "command": SCRIPT, "args": ["mcp"], "env": {"PI_MEMORY_DIR": "/home/me/notes"},
        "env_vars": ["PI_MEMORY_DIR", "PI_CODING_AGENT_DIR", "PI_MEMORY_STATE_DIR"]}
    assert result["changes"][1].details[0] == (
        f"your [mcp_servers.pi-memory] now runs {SCRIPT} mcp; the rest of it is kept (env: PI_MEMORY_DIR), and "
        "uninstall puts it back as it was")
    codex.install(script=SCRIPT)
    removed = codex.uninstall()
    assert removed["changes"][1].details == [
        "your own [mcp_servers.pi-memory] is back as it was before the install", "removed [features] hooks",
        "the file is again byte for byte as before the install"]
    assert path.read_bytes() == before  # was: the whole table deleted
    assert command in before.decode()


def test_a_remote_codex_entry_of_the_users_is_refused_before_hooks_json_is_written(home):
    put(home / ".codex" / "config.toml", b'[mcp_servers.pi-memory]\nurl = "https://team.example/mcp"\n')
    before = tree_state(home)
    code, data, _ = cli(["install", "codex"])
    assert (code, data["problem"], data["path"]) == (1, "user_server", str(home / ".codex" / "config.toml"))
    assert tree_state(home) == before


# -- a settings file that is a symbolic link to nothing ---------------------------------------------------------

@pytest.mark.parametrize(("host", "name"), [("claude-code", ".claude/settings.json"), ("claude-code", ".claude.json"),
                                            ("codex", ".codex/config.toml"), ("codex", ".codex/hooks.json")])
def test_a_link_to_nothing_is_refused_and_nothing_is_written(home, tmp_path, host, name):
    link = home / name
    link.parent.mkdir(parents=True, exist_ok=True)
    target = tmp_path / "nonexistent" / "target"
    link.symlink_to(target)
    before = tree_state(home)
    message = (f"{link} is a symbolic link to {target}, which does not exist, so pi-memory would create files "
               "wherever it points; create its target (an empty file will do) or remove the link, then run this "
               "command again (nothing was changed).")
    for action in ("install", "uninstall"):
        code, data, _ = cli([action, host])
        assert (code, data) == (1, {"success": False, "exitCode": 1, "error": message, "problem": "dangling_link",
                                    "path": str(link)})
    assert (text_cli(["install", host])) == (1, "", f"refused: {message}\n")
    assert tree_state(home) == before and link.is_symlink()
    assert not (tmp_path / "nonexistent").exists()  # was: made, and the settings written into it


def test_a_folder_that_is_a_link_to_nothing_is_refused_too(home, tmp_path):
    (home / ".claude").symlink_to(tmp_path / "dotfiles" / "claude")
    with pytest.raises(InstallRefusal) as refused:
        claude_code.install("user", script=SCRIPT)
    assert (refused.value.problem, refused.value.path) == ("dangling_link", home / ".claude")
    assert not (tmp_path / "dotfiles").exists() and not (home / ".claude.json").exists()


def test_a_link_to_an_existing_file_is_still_edited_through(home, tmp_path):
    target = tmp_path / "dotfiles" / "settings.json"
    put(target, b'{"theme": "dark"}')
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").symlink_to(target)
    claude_code.install("user", script=SCRIPT)
    claude_code.uninstall("user")
    assert (home / ".claude" / "settings.json").is_symlink() and target.read_bytes() == b'{"theme": "dark"}'


# -- a settings file that is not UTF-8 -------------------------------------------------------------------------

@pytest.mark.parametrize(("host", "name", "data", "byte", "offset"), [
    ("claude-code", ".claude.json", b"\xff\xfe{", "0xff", 0),
    ("claude-code", ".claude/settings.json", b'{"theme": "d\xe9j\xe0"}', "0xe9", 12),
    ("codex", ".codex/config.toml", b"\xff\xfe{", "0xff", 0),
    ("codex", ".codex/hooks.json", b'{"hooks": {}}\n\x80', "0x80", 14),
])
def test_a_file_that_is_not_utf8_is_refused_without_a_traceback(home, host, name, data, byte, offset):
    put(home / name, data)
    before = tree_state(home)
    message = (f"{home / name} is not UTF-8 text (byte {byte} at offset {offset}), so pi-memory cannot edit it "
               "safely; save it as UTF-8 (or move it away), then run this command again (nothing was changed).")
    code, data_, _ = cli(["install", host])
    assert (code, data_) == (1, {"success": False, "exitCode": 1, "error": message, "problem": "not_utf8",
                                 "path": str(home / name)})
    assert text_cli(["install", host]) == (1, "", f"refused: {message}\n")
    assert text_cli(["uninstall", host])[0] == 1
    assert tree_state(home) == before


# -- a project folder that does not exist ----------------------------------------------------------------------

@pytest.mark.parametrize("where", ["typo/path", "a-file"])
def test_a_project_folder_that_does_not_exist_is_refused(home, tmp_path, where):
    (tmp_path / "a-file").write_text("x")
    project = tmp_path / where
    before = tree_state(tmp_path)
    what = "is not a folder" if where == "a-file" else "does not exist"
    message = (f"the project folder {project} {what}; give --project an existing project folder (or run the "
               "command inside it), then run this command again (nothing was changed).")
    for action in ("install", "uninstall"):
        code, data, _ = cli([action, "claude-code", "--scope", "project", "--project", str(project)])
        assert (code, data) == (1, {"success": False, "exitCode": 1, "error": message,
                                    "problem": "no_project_folder", "path": str(project)})
    assert tree_state(tmp_path) == before and not (tmp_path / "typo").exists()


# -- a codex binary that hangs ---------------------------------------------------------------------------------

def test_a_hanging_codex_is_stopped_with_the_children_it_started(home, tmp_path, monkeypatch):
    pids = tmp_path / "pids"
    fake = tmp_path / "codex"
    fake.write_text(f"#!/bin/sh\nPATH=/usr/bin:/bin\nsleep 300 &\necho $! > {pids}\nsleep 300\n")
    fake.chmod(0o755)
    monkeypatch.setattr(codex, "LIST_TIMEOUT_S", 1.0)
    result = codex.install(script=SCRIPT, codex_bin=str(fake), cwd=tmp_path)
    assert result["trustError"] == (f"{fake} app-server did not list the hooks (no answer); trust them in Codex's "
                                    "/hooks")
    child = int(pids.read_text())
    assert not _alive(child)  # was: left running (only the direct child was killed)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:  # a zombie waiting for its reaper is gone too
        return fh.read().split(") ")[-1][:1] != "Z"

