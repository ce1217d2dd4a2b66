"""A user's own ``pi-memory`` MCP server entry with an ``env`` choosing the data root (``PI_MEMORY_DIR``): install kept
the entry, but the hook commands it wrote ran ``pi-memory hook ...`` without that env, so the hooks read and wrote
another data root than the server (the memory injected was not the one the agent's tools changed). Now the hook
commands carry the entry's data-root variables (``env PI_MEMORY_DIR=... <pi-memory> hook ...``), each installed
command line is run here through a real shell (``bash -c``, and ``sh -c``), and what cannot be carried safely is
refused with a sentence before anything is written."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import pi_memory
from pi_memory.integrations.hooks import claude_code, codex

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder's CLI helpers
from read_only_folder import cli, tree_state  # noqa: E402

SRC = Path(pi_memory.__file__).resolve().parents[1]


@pytest.fixture
def home(install_home):
    return install_home


def put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def wrapper(tmp_path: Path) -> str:
    """A ``pi-memory`` console script (in a folder with a space) that runs this tree's code."""
    script = tmp_path / "my bin" / "pi-memory"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"#!/bin/sh\nPYTHONPATH={shlex.quote(str(SRC))} exec {shlex.quote(sys.executable)} -m pi_memory "
                      '"$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return str(script)


def claude_entry(home: Path, env: dict) -> Path:
    path = home / ".claude.json"
    put(path, json.dumps({"mcpServers": {"pi-memory": {"command": "uvx", "args": ["pi-memory", "mcp"],
                                                       "env": env}}}, indent=2).encode())
    return path


def commands(settings: Path) -> dict[str, str]:
    hooks = json.loads(settings.read_bytes())["hooks"]
    return {event: groups[-1]["hooks"][0]["command"] for event, groups in hooks.items()}


def run_through_shell(command: str, tmp_path: Path, shell: str = "bash", host_root: bool = True) -> str | None:
    """The installed ``command`` of a session start, run by ``shell -c`` as the host runs it, in an environment
    whose own PI_MEMORY_DIR is another folder (the host's): the snapshot it answered."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True, exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"], "PI_MEMORY_STATE_DIR": str(tmp_path / "state"),
           "PI_MEMORY_HOOK_CEILING_S": "60", **({"PI_MEMORY_DIR": str(tmp_path / "host root")} if host_root else {})}
    payload = {"session_id": "s1", "cwd": str(proj), "source": "startup", "hook_event_name": "SessionStart"}
    done = subprocess.run([shell, "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          env=env, cwd=proj, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout).get("hookSpecificOutput", {}).get("additionalContext")


def seeded(root: Path, fact: str) -> None:
    put(root / "MEMORY.md", f"{fact}\n".encode())


# -- the cases a user's entry has -----------------------------------------------------------------------------

ODD = "it's \"$HOME\" $(touch pwned); *"  # a quote, $ (not ${), a command substitution, ; and * in a folder name


@pytest.mark.parametrize("name", ["notes", "my notes dir", ODD])
def test_claude_hooks_carry_the_entrys_data_root_through_a_real_shell(home, tmp_path, name):
    root = tmp_path / name
    seeded(root, "Entry root fact: deploys are blue-green")
    seeded(tmp_path / "host root", "Host root fact: never shown")
    claude_entry(home, {"PI_MEMORY_DIR": str(root)})
    script = wrapper(tmp_path)
    changes = claude_code.install("user", script=script)
    pair = shlex.quote(f"PI_MEMORY_DIR={root}")
    found = commands(home / ".claude" / "settings.json")
    assert found == {event: f"env {pair} {shlex.quote(script)} hook claude-code {ours}"
                     for ours, event in [("session-start", "SessionStart"), ("prompt", "UserPromptSubmit"),
                                         ("pre-compact", "PreCompact"), ("stop", "Stop"),
                                         ("session-end", "SessionEnd")]}
    assert changes[0].details == [
        f"hooks SessionStart, UserPromptSubmit, PreCompact, Stop, SessionEnd run {script} hook claude-code … with "
        f"PI_MEMORY_DIR={root} from your MCP server entry, so they use the same memory (data root) as its server"]
    assert changes[1].details == [f"MCP server pi-memory: {script} mcp; your entry's env (PI_MEMORY_DIR) is kept, "
                                  "and uninstall puts your entry back"]
    for shell in ("bash", "sh"):
        context = run_through_shell(found["SessionStart"], tmp_path, shell)
        assert "Entry root fact: deploys are blue-green" in context and "Host root fact" not in context
    assert (root / "blocks").is_dir()  # the session start's default blocks: written in the entry's root
    assert not (tmp_path / "host root" / "blocks").exists()
    assert not (tmp_path / "proj" / "pwned").exists() and not (tmp_path / "pwned").exists()


def test_a_tilde_path_is_expanded_by_pi_memory_in_the_hooks_as_in_the_server(home, tmp_path):
    seeded(home / "tilde notes", "Tilde fact: the hooks found it")
    claude_entry(home, {"PI_MEMORY_DIR": "~/tilde notes"})
    claude_code.install("user", script=wrapper(tmp_path))
    command = commands(home / ".claude" / "settings.json")["SessionStart"]
    assert command.startswith("env 'PI_MEMORY_DIR=~/tilde notes' ")
    assert "Tilde fact: the hooks found it" in run_through_shell(command, tmp_path)


def test_an_entry_setting_home_pins_the_agent_folder_it_chooses_not_home(home, tmp_path):
    other = tmp_path / "other home"
    seeded(other / ".pi" / "agent" / "memories", "Other home fact: from the agent folder")
    claude_entry(home, {"HOME": str(other)})
    claude_code.install("user", script=wrapper(tmp_path))
    command = commands(home / ".claude" / "settings.json")["SessionStart"]
    assert command.startswith(f"env {shlex.quote('PI_CODING_AGENT_DIR=' + str(other / '.pi' / 'agent'))} "
                              f"{shlex.quote('PI_MEMORY_HOME=' + str(other))} ")
    assert "'HOME=" not in command and " HOME=" not in command  # the hooks' own HOME is not moved
    context = run_through_shell(command, tmp_path, host_root=False)
    assert "Other home fact: from the agent folder" in context
    assert not (home / ".pi").exists()  # the hooks' own HOME held no agent folder of theirs


@pytest.mark.parametrize("data_dir", ["${HOME}/team notes", "~/team notes", "${HOME}/a/../team notes"])
@pytest.mark.parametrize("agent_too", [False, True])
def test_a_settings_data_dir_under_the_entrys_home_is_the_servers_in_the_hooks(home, tmp_path, data_dir, agent_too):
    """An entry pinning HOME, whose settings file names ``dataDir`` by ``${HOME}`` or ``~``: the hooks read it
    under their own HOME, another data root than the server's (before: the session start was empty)."""
    other = tmp_path / "other home"
    agent = other / ".pi" / "agent" if not agent_too else tmp_path / "agent elsewhere"
    put(agent / "settings.json", json.dumps({"pi-memory": {"dataDir": data_dir}}).encode())
    seeded(other / "team notes", "Server root fact: the hooks read the server's memory")
    seeded(home / "team notes", "Hook home fact: never shown")
    entry = {"HOME": str(other), **({"PI_CODING_AGENT_DIR": str(agent)} if agent_too else {})}
    claude_entry(home, entry)
    claude_code.install("user", script=wrapper(tmp_path))
    command = commands(home / ".claude" / "settings.json")["SessionStart"]
    assert shlex.quote(f"PI_MEMORY_HOME={other}") in command
    context = run_through_shell(command, tmp_path, host_root=False)
    assert "Server root fact: the hooks read the server's memory" in context and "Hook home fact" not in context


def test_no_env_and_our_own_entry_give_plain_commands(home, tmp_path):
    claude_entry(home, {})
    claude_code.install("user", script="/opt/bin/pi-memory")
    assert set(commands(home / ".claude" / "settings.json").values()) == {
        f"/opt/bin/pi-memory hook claude-code {e}" for e in ("session-start", "prompt", "pre-compact", "stop",
                                                              "session-end")}


def test_a_reinstall_after_the_entry_changed_updates_the_hooks_and_uninstall_restores_the_entry(home, tmp_path):
    path = claude_entry(home, {"PI_MEMORY_DIR": "/home/me/notes"})
    before = path.read_bytes()
    claude_code.install("user", script="/opt/bin/pi-memory")
    assert commands(home / ".claude" / "settings.json")["Stop"] == (
        "env PI_MEMORY_DIR=/home/me/notes /opt/bin/pi-memory hook claude-code stop")
    data = json.loads(path.read_bytes())
    data["mcpServers"]["pi-memory"]["env"] = {"PI_MEMORY_DIR": "/srv/team notes", "PI_CODING_AGENT_DIR": "/srv/pi"}
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    changes = claude_code.install("user", script="/opt/bin/pi-memory")
    assert changes[0].action == "updated"
    assert commands(home / ".claude" / "settings.json")["Stop"] == (
        "env 'PI_MEMORY_DIR=/srv/team notes' PI_CODING_AGENT_DIR=/srv/pi /opt/bin/pi-memory hook claude-code stop")
    data["mcpServers"]["pi-memory"]["env"] = {"PI_MEMORY_DIR": "/home/me/notes"}  # the user's own value again
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    removed = claude_code.uninstall("user")
    assert [c.action for c in removed] == ["removed", "updated", "removed"]  # and the .claude folder it made
    assert path.read_bytes() == before
    assert not (home / ".claude" / "settings.json").exists()


def test_uninstall_keeps_the_env_the_user_edited_after_install(home, tmp_path):
    """Uninstall put back the env noted at the first install: a data root the user had moved to since was undone
    without a word (install never changes a user's env, so uninstall has nothing of it to give back)."""
    path = claude_entry(home, {"PI_MEMORY_DIR": "/home/me/notes"})
    claude_code.install("user", script="/opt/bin/pi-memory")
    data = json.loads(path.read_bytes())
    data["mcpServers"]["pi-memory"]["env"] = {"PI_MEMORY_DIR": "/srv/moved", "PI_CODING_AGENT_DIR": "/srv/pi"}
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    claude_code.install("user", script="/opt/bin/pi-memory")
    claude_code.uninstall("user")
    entry = json.loads(path.read_bytes())["mcpServers"]["pi-memory"]
    assert entry == {"command": "uvx", "args": ["pi-memory", "mcp"],
                     "env": {"PI_MEMORY_DIR": "/srv/moved", "PI_CODING_AGENT_DIR": "/srv/pi"}}


def test_a_data_root_named_like_a_hook_command_is_not_taken_for_one(home, tmp_path):
    """A PI_MEMORY_DIR of ".../pi-memory hook codex notes": the regex found "pi-memory hook codex" inside the quoted
    value, so install added the Claude Code hooks a second time and uninstall left all of them."""
    claude_entry(home, {"PI_MEMORY_DIR": str(tmp_path / "pi-memory hook codex notes")})
    claude_code.install("user", script="/opt/bin/pi-memory")
    claude_code.install("user", script="/opt/bin/pi-memory")
    hooks = json.loads((home / ".claude" / "settings.json").read_bytes())["hooks"]
    assert {event: len(groups) for event, groups in hooks.items()} == {
        "SessionStart": 1, "UserPromptSubmit": 1, "PreCompact": 1, "Stop": 1, "SessionEnd": 1}
    claude_code.uninstall("user")
    assert not (home / ".claude" / "settings.json").exists()


# -- what is refused, before anything is written ----------------------------------------------------------------

@pytest.mark.parametrize(("value", "why"), [
    ("notes", "is a relative path, which the server reads from whichever folder the host starts it in"),
    ("./data/memory", "is a relative path, which the server reads from whichever folder the host starts it in"),
    ("${HOME}/notes", "uses ${...}, which Claude Code fills in when it starts the server, so the hooks cannot be "
                      "given the same value"),
    ("/srv/a\nb", "holds a line break or another control character, which a hook's command line cannot carry"),
    ("C:\\Users\\me\\notes", "holds a backslash, which the shells that run hooks do not all read the same way"),
    (42, "is not a string"),
])
def test_a_value_that_cannot_be_carried_is_refused_with_a_sentence(home, value, why):
    path = claude_entry(home, {"PI_MEMORY_DIR": value})
    before = tree_state(home)
    code, data, _ = cli(["install", "claude-code"])
    shown = json.dumps(value) if isinstance(value, str) else repr(value)
    message = (f"{path}: the env of your MCP server entry pi-memory sets PI_MEMORY_DIR to {shown}, which {why}. The "
               "hooks install writes must use the same memory as that server, so set it to the absolute path it "
               "stands for (for example /home/you/notes), then run this command again (nothing was changed).")
    assert (code, data) == (1, {"success": False, "exitCode": 1, "error": message, "problem": "entry_env",
                                "path": str(path)})
    assert tree_state(home) == before


# -- Codex --------------------------------------------------------------------------------------------------------

def codex_entry(home: Path, env_line: str) -> Path:
    path = home / ".codex" / "config.toml"
    put(path, (f'model = "gpt-5"\n\n[mcp_servers.pi-memory]\ncommand = "uvx"\nargs = ["pi-memory", "mcp"]\n'
               f"env = {{ {env_line} }}\n").encode())
    return path


@pytest.mark.parametrize("name", ["codex notes", ODD, "${HOME}"])
def test_codex_hooks_carry_the_entrys_data_root_through_a_real_shell(home, tmp_path, name):
    root = tmp_path / name
    seeded(root, "Codex entry fact: releases on Tuesdays")
    seeded(tmp_path / "host root", "Host root fact: never shown")
    path = codex_entry(home, f"PI_MEMORY_DIR = {json.dumps(str(root))}")
    before = path.read_bytes()
    script = wrapper(tmp_path)
    result = codex.install(script=script)
    found = commands(home / ".codex" / "hooks.json")
    assert found["UserPromptSubmit"] == (f"env {shlex.quote(f'PI_MEMORY_DIR={root}')} {shlex.quote(script)} hook "
                                         "codex prompt")
    assert result["changes"][0].details == [
        f"hooks SessionStart, UserPromptSubmit, PreCompact, Stop run {script} hook codex … with "
        f"PI_MEMORY_DIR={root} from your MCP server entry, so they use the same memory (data root) as its server"]
    context = run_through_shell(found["SessionStart"], tmp_path)  # Codex: `$SHELL -lc`
    assert "Codex entry fact: releases on Tuesdays" in context and "Host root fact" not in context
    codex.uninstall()
    assert path.read_bytes() == before and not (home / ".codex" / "hooks.json").exists()


def test_a_relative_codex_value_is_refused_before_hooks_json_is_written(home):
    path = codex_entry(home, 'PI_MEMORY_DIR = "notes"')
    before = tree_state(home)
    code, data, _ = cli(["install", "codex"])
    assert (code, data["problem"], data["path"]) == (1, "entry_env", str(path))
    assert tree_state(home) == before
