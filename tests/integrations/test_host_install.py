"""``pi-memory install|uninstall claude-code|codex`` on a temporary HOME: what is written, that the user's
content and comments survive, idempotence, backups, and that uninstall leaves the files as they were."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import tomlkit

from pi_memory.integrations.hooks import claude_code, codex
from pi_memory.integrations.hooks.install import InstallError, is_ours

SCRIPT = "/opt/pi memory/bin/pi-memory"  # a space, so quoting is exercised

CODEX_CONFIG = '''# my codex config
model = "gpt-5"  # keep me

[mcp_servers.other]
command = "other"   # a comment inside a table
'''


@pytest.fixture
def home(install_home):
    return install_home


def commands(settings: dict) -> dict[str, list[str]]:
    return {event: [h["command"] for g in groups for h in g["hooks"]] for event, groups in settings["hooks"].items()}


def test_claude_code_user_install_writes_hooks_and_server_and_round_trips(home):
    settings_path = home / ".claude" / "settings.json"
    settings_path.parent.mkdir()
    original = {"theme": "dark", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/bin/true"}]}]}}
    settings_path.write_text(json.dumps(original), encoding="utf-8")
    changes = claude_code.install("user", script=SCRIPT)
    assert [(c.path.name, c.action) for c in changes] == [("settings.json", "updated"), (".claude.json", "created")]
    assert changes[0].backup.read_text(encoding="utf-8") == json.dumps(original)
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    assert settings["theme"] == "dark"
    assert commands(settings) == {
        "Stop": ["/bin/true", "'/opt/pi memory/bin/pi-memory' hook claude-code stop"],
        "SessionStart": ["'/opt/pi memory/bin/pi-memory' hook claude-code session-start"],
        "UserPromptSubmit": ["'/opt/pi memory/bin/pi-memory' hook claude-code prompt"],
        "PreCompact": ["'/opt/pi memory/bin/pi-memory' hook claude-code pre-compact"],
        "SessionEnd": ["'/opt/pi memory/bin/pi-memory' hook claude-code session-end"],
    }
    servers = json.loads((home / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]
    assert servers == {"pi-memory": {"type": "stdio", "command": SCRIPT, "args": ["mcp"], "env": {}}}
    assert [c.action for c in claude_code.install("user", script=SCRIPT)] == ["unchanged", "unchanged"]
    moved = claude_code.install("user", script="/new/venv/bin/pi-memory")  # a moved venv replaces, not adds
    assert moved[0].action == "updated"
    assert commands(json.loads(settings_path.read_text(encoding="utf-8")))["Stop"] == [
        "/bin/true", "/new/venv/bin/pi-memory hook claude-code stop"]
    removed = claude_code.uninstall("user")
    assert [(c.path.name, c.action) for c in removed] == [("settings.json", "updated"), (".claude.json", "removed")]
    assert json.loads(settings_path.read_text(encoding="utf-8")) == original
    assert not (home / ".claude.json").exists()
    assert claude_code.uninstall("user")[0].action == "unchanged"


def test_claude_code_keeps_the_users_other_servers_and_state_in_claude_json(home):
    (home / ".claude.json").write_text(json.dumps({"numStartups": 3, "mcpServers": {"x": {"command": "x"}}}),
                                       encoding="utf-8")
    claude_code.install("user", script=SCRIPT)
    claude_code.uninstall("user")
    assert json.loads((home / ".claude.json").read_text(encoding="utf-8")) == {
        "numStartups": 3, "mcpServers": {"x": {"command": "x"}}}


def test_claude_code_project_scope_uses_the_projects_files(home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    claude_code.install("project", proj, script=SCRIPT)
    assert "SessionStart" in json.loads((proj / ".claude" / "settings.json").read_text(encoding="utf-8"))["hooks"]
    assert "pi-memory" in json.loads((proj / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert not (home / ".claude").exists()
    claude_code.uninstall("project", proj)
    assert not (proj / ".mcp.json").exists() and not (proj / ".claude" / "settings.json").exists()


@pytest.mark.parametrize("bad", ["{not json", "[1, 2]"])
def test_an_unreadable_settings_file_is_left_alone(home, bad):
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(InstallError, match="settings.json"):
        claude_code.install("user", script=SCRIPT)
    assert path.read_text(encoding="utf-8") == bad
    assert not (home / ".claude.json").exists()


def test_codex_install_keeps_comments_and_uninstall_restores_the_bytes(home):
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_CONFIG, encoding="utf-8")
    result = codex.install(script=SCRIPT)
    assert result["trusted"] == [] and "not trusted" in result["trustError"]
    text = config.read_text(encoding="utf-8")
    assert text.startswith(CODEX_CONFIG)  # comments, order and formatting kept
    doc = tomlkit.parse(text).unwrap()
    assert doc["mcp_servers"]["pi-memory"] == {"command": SCRIPT, "args": ["mcp"], "env_vars": [
        "PI_MEMORY_DIR", "PI_CODING_AGENT_DIR", "PI_MEMORY_STATE_DIR"]}
    assert doc["features"] == {"hooks": True}
    hooks = json.loads((home / ".codex" / "hooks.json").read_text(encoding="utf-8"))
    assert sorted(hooks["hooks"]) == ["PreCompact", "SessionStart", "Stop", "UserPromptSubmit"]
    assert commands(hooks)["Stop"] == ["'/opt/pi memory/bin/pi-memory' hook codex stop"]
    assert [c.action for c in codex.install(script=SCRIPT)["changes"]] == ["unchanged", "unchanged"]
    removed = codex.uninstall()
    assert [(c.path.name, c.action) for c in removed["changes"]] == [("hooks.json", "removed"),
                                                                    ("config.toml", "updated")]
    assert config.read_text(encoding="utf-8") == CODEX_CONFIG


def test_codex_keeps_a_users_hooks_switch_and_server_options(home):
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('[features]\nhooks = false\n\n[mcp_servers.pi-memory]\ncommand = "old"\nrequired = true\n',
                      encoding="utf-8")
    codex.install(script=SCRIPT)
    doc = tomlkit.parse(config.read_text(encoding="utf-8")).unwrap()
    assert doc["features"] == {"hooks": False}  # the user's choice stays
    assert doc["mcp_servers"]["pi-memory"] == {"command": SCRIPT, "args": ["mcp"], "env_vars": [
        "PI_MEMORY_DIR", "PI_CODING_AGENT_DIR", "PI_MEMORY_STATE_DIR"], "required": True}
    codex.uninstall()  # the entry was the user's: it comes back as it was (it used to be deleted)
    assert config.read_text(encoding="utf-8") == ('[features]\nhooks = false\n\n[mcp_servers.pi-memory]\n'
                                                  'command = "old"\nrequired = true\n')


def test_invalid_toml_is_left_alone(home):
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("model = [unclosed\n", encoding="utf-8")
    with pytest.raises(InstallError, match="not valid TOML"):
        codex.install(script=SCRIPT)
    assert config.read_text(encoding="utf-8") == "model = [unclosed\n"


@pytest.mark.parametrize(("command", "host", "ours"), [
    ("/x/bin/pi-memory hook codex stop", "codex", True),
    ("'/a b/pi-memory' hook claude-code prompt", "claude-code", True),
    ("pi-memory hook codex stop", "claude-code", False),
    ("/x/bin/not-pi-memory hook codex stop", "codex", False),
    ("echo pi-memory", "codex", False),
    (None, "codex", False),
])
def test_our_hook_commands_are_recognised_by_their_command(command, host, ours):
    assert is_ours(command, host) is ours


def test_the_cli_prints_what_changed_as_json(home, tmp_path):
    env = {**os.environ, "HOME": str(home), "PI_MEMORY_STATE_DIR": str(tmp_path / "state")}
    run = lambda *args: subprocess.run([sys.executable, "-m", "pi_memory", *args], capture_output=True,  # noqa: E731
                                       text=True, env=env, timeout=60)
    first = run("install", "claude-code", "--json")
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert (data["success"], data["host"], data["action"], data["scope"]) == (True, "claude-code", "install", "user")
    assert [(c["path"], c["action"]) for c in data["changes"]] == [
        (str(home / ".claude" / "settings.json"), "created"), (str(home / ".claude.json"), "created")]
    script = json.loads((home / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]["pi-memory"]["command"]
    assert os.path.isabs(script) and os.path.basename(script) == "pi-memory"
    again = run("install", "claude-code")
    assert again.stdout.strip() == "claude-code: nothing to change (2 file(s) already as wanted)."
    gone = run("uninstall", "claude-code")
    assert gone.returncode == 0 and "removed" in gone.stdout
    assert not (home / ".claude" / "settings.json").exists()


def _left_behind(root) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_install_then_uninstall_on_a_clean_home_leaves_no_file_behind(home, host, tmp_path):
    """Files install created hold only what it wrote: uninstall removes them without a backup, and forgets the
    install (no manifest left in the state folder). Found by a fresh-user tester: .bak files and an empty {}.
    (A second install that changes such a file backs it up first: the host may have written to it since.)"""
    if host == "claude-code":
        claude_code.install("user", script=SCRIPT)
        removed = [c for c in claude_code.uninstall("user")]
    else:
        codex.install(script=SCRIPT)
        removed = codex.uninstall()["changes"]
    assert {c.action for c in removed} == {"removed"} and all(c.backup is None for c in removed)
    assert _left_behind(home) == []
    state_dir = tmp_path / "state"
    assert (_left_behind(state_dir) if state_dir.exists() else []) == []


@pytest.mark.parametrize(("config", "message"), [
    ('model = "gpt-5"\nfeatures = "nope"\n', "`features` is a string, where Codex expects a table ([features])"),
    ("mcp_servers = 3\n", "`mcp_servers` is an integer"),
    ('[mcp_servers]\npi-memory = "x"\n', "`mcp_servers.pi-memory` is a string"),
    ("hooks = [1]\n", "`hooks` is an array"),
    ("[hooks]\nstate = 1\n", "`hooks.state` is an integer"),
])
def test_codex_refuses_a_config_whose_tables_are_other_values_and_writes_nothing(home, config, message):
    """Valid TOML with a value where Codex wants a table made install raise a TypeError half-way, after
    hooks.json was written (a fresh tester's finding); now it is refused before any file is touched."""
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(config, encoding="utf-8")
    for run in (codex.install, codex.uninstall):
        with pytest.raises(InstallError, match="Nothing was changed") as refused:
            run()
        assert message in str(refused.value)
    assert sorted(p.name for p in (home / ".codex").iterdir()) == ["config.toml"]
    assert (home / ".codex" / "config.toml").read_text(encoding="utf-8") == config


@pytest.mark.parametrize(("where", "text", "message"), [
    (".claude/settings.json", '{"hooks": "x"}', '"hooks" is a string, where an object is expected'),
    (".claude/settings.json", '{"hooks": {"UserPromptSubmit": 7}}', '"hooks.UserPromptSubmit" is a number'),
    (".claude/settings.json", '"just a string"', "holds a string, not a JSON object"),
    (".claude.json", '{"mcpServers": [1]}', '"mcpServers" is an array'),
    (".claude.json", '{"mcpServers": {"pi-memory": true}}', '"mcpServers.pi-memory" is true or false'),
])
def test_claude_code_refuses_misshapen_settings_instead_of_replacing_them(home, where, text, message):
    """A "hooks" that was not an object used to be replaced by ours (the user's value gone, a backup kept)."""
    path = home / where
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InstallError, match="Nothing was changed") as refused:
        claude_code.install("user", script=SCRIPT)
    assert message in str(refused.value)
    assert sorted(p.name for p in home.rglob("*") if p.is_file()) == [path.name]
    assert path.read_text(encoding="utf-8") == text


def test_uninstall_leaves_a_file_without_our_hooks_byte_for_byte(home):
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    text = '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/bin/true"}]}]}, "theme": "dark"}'
    path.write_text(text, encoding="utf-8")  # compact JSON: a rewrite would re-indent it
    assert [(c.path.name, c.action) for c in claude_code.uninstall("user")] == [("settings.json", "unchanged")]
    assert path.read_text(encoding="utf-8") == text and [p.name for p in path.parent.iterdir()] == ["settings.json"]


# Round trips (breaker F11): install then uninstall gives the user's files back byte for byte: a compact one-line
# settings.json stays one line, a large indented ~/.claude.json changes only where our server goes, the user's
# own empty "Stop": [] survives, config.toml comes back exactly, backups land in the state folder (never in a
# project's repository), and a `[features] hooks = false` of the user's is reported, not silently kept.
OURS = {"hooks": [{"type": "command", "command": f"'{SCRIPT}' hook claude-code stop", "timeout": 10}]}
COMPACT = ('{"permissions": {"allow": ["Bash(ls)", "Read"]}, "hooks": {"Stop": []}, "model": "opus"}\n')


def big_claude_json() -> dict:
    """Like a real ~/.claude.json: many projects, nested state, non-ASCII text (written by JSON.stringify(x, null,
    2), which is json.dumps(indent=2, ensure_ascii=False))."""
    projects = {f"/home/u/src/p{i}": {"allowedTools": [], "history": [{"display": f"fix bug {i} – naïve"}],
                                      "mcpServers": {}, "lastCost": i * 0.25} for i in range(300)}
    return {"numStartups": 42, "theme": "dark", "projects": projects, "oauthAccount": {"emailAddress": "u@x.org"}}


def test_a_compact_settings_file_stays_one_line_and_comes_back_byte_for_byte(home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(COMPACT, encoding="utf-8")
    claude_code.install("user", script=SCRIPT)
    text = settings.read_text(encoding="utf-8")
    assert text.count("\n") == 1 and text.startswith('{"permissions": {"allow": ["Bash(ls)", "Read"]}, "hooks": ')
    assert json.loads(text)["hooks"]["Stop"] == [OURS]
    claude_code.uninstall("user")
    assert settings.read_bytes() == COMPACT.encode()


def test_a_large_indented_claude_json_changes_only_where_our_server_goes(home):
    original = json.dumps(big_claude_json(), indent=2, ensure_ascii=False)  # no final newline, as Claude writes it
    (home / ".claude.json").write_text(original, encoding="utf-8")
    claude_code.install("user", script=SCRIPT)
    expected = {**big_claude_json(), "mcpServers": {"pi-memory": claude_code.server_entry(SCRIPT)}}
    assert (home / ".claude.json").read_text(encoding="utf-8") == json.dumps(expected, indent=2, ensure_ascii=False)
    claude_code.uninstall("user")
    assert (home / ".claude.json").read_bytes() == original.encode()


def test_the_users_empty_event_survives_when_the_file_changed_in_between(home):
    """No byte-exact restore possible (the host wrote a key meanwhile): our entries go, the user's "Stop": [] stays."""
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(COMPACT, encoding="utf-8")
    claude_code.install("user", script=SCRIPT)
    changed = json.loads(settings.read_text(encoding="utf-8"))
    changed["model"] = "sonnet"
    settings.write_text(json.dumps(changed) + "\n", encoding="utf-8")
    claude_code.uninstall("user")
    assert settings.read_text(encoding="utf-8") == COMPACT.replace('"opus"', '"sonnet"')


def test_codex_config_round_trip_is_byte_exact_and_a_hand_edit_keeps_the_blank_lines(home):
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = ('# my codex config\nmodel = "gpt-5"  # keep me\n\n[mcp_servers.other]\ncommand = "other"\n\n'
                '[tui]\nnotifications = true\n')
    config.write_text(original, encoding="utf-8")
    codex.install(script=SCRIPT)
    codex.uninstall()
    assert config.read_bytes() == original.encode()
    codex.install(script=SCRIPT)
    config.write_text(config.read_text(encoding="utf-8").replace('"gpt-5"', '"gpt-5.1"'), encoding="utf-8")
    codex.uninstall()
    assert config.read_text(encoding="utf-8") == original.replace('"gpt-5"', '"gpt-5.1"')


def test_project_scope_keeps_its_backups_in_the_state_folder_not_the_repository(home, tmp_path):
    proj = tmp_path / "proj"
    (proj / ".claude").mkdir(parents=True)
    (proj / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "x"}}}\n', encoding="utf-8")
    (proj / ".claude" / "settings.json").write_text('{"model": "opus"}\n', encoding="utf-8")
    changes = claude_code.install("project", proj, script=SCRIPT)
    state = tmp_path / "state" / "backups" / str(proj).lstrip("/")
    assert [c.backup.parent for c in changes] == [state / ".claude", state]
    assert changes[1].backup.read_text(encoding="utf-8") == '{"mcpServers": {"x": {"command": "x"}}}\n'
    claude_code.uninstall("project", proj)
    assert sorted(str(p.relative_to(proj)) for p in proj.rglob("*") if p.is_file()) == [".claude/settings.json",
                                                                                         ".mcp.json"]
    assert (proj / ".mcp.json").read_text(encoding="utf-8") == '{"mcpServers": {"x": {"command": "x"}}}\n'
    assert (proj / ".claude" / "settings.json").read_text(encoding="utf-8") == '{"model": "opus"}\n'


def test_codex_hooks_switched_off_by_the_user_is_kept_and_warned_about(home, tmp_path):
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("[features]\nhooks = false\n", encoding="utf-8")
    result = codex.install(script=SCRIPT)
    warning = (f"{config} says [features] hooks = false, so Codex will not run pi-memory's hooks (no snapshot, "
               "recall or capture; the MCP tools still work). Set it to true in [features], then start Codex again.")
    assert result["warnings"] == [warning]
    assert "[features]\nhooks = false\n" in config.read_text(encoding="utf-8")
    env = {**os.environ, "HOME": str(home), "PI_MEMORY_STATE_DIR": str(tmp_path / "state")}
    run = subprocess.run([sys.executable, "-m", "pi_memory", "install", "codex", "--json"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert run.returncode == 0 and json.loads(run.stdout)["warnings"] == [warning]
    run = subprocess.run([sys.executable, "-m", "pi_memory", "install", "codex"], capture_output=True, text=True,
                         env=env, timeout=60)
    assert f"warning: {warning}" in run.stdout.splitlines()


# A fresh tester's findings: a project-scope install wrote this machine's venv path into the shareable
# .claude/settings.json and .mcp.json, and uninstall left the empty .claude/ it had made behind.
PROJECT_EVENTS = {"SessionStart": "session-start", "UserPromptSubmit": "prompt", "PreCompact": "pre-compact",
                  "Stop": "stop", "SessionEnd": "session-end"}


def test_project_scope_runs_pi_memory_from_path(home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    claude_code.install("project", proj)
    settings = json.loads((proj / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert commands(settings) == {event: [f"pi-memory hook claude-code {ours}"]
                                  for event, ours in PROJECT_EVENTS.items()}
    assert json.loads((proj / ".mcp.json").read_text(encoding="utf-8")) == {
        "mcpServers": {"pi-memory": {"type": "stdio", "command": "pi-memory", "args": ["mcp"], "env": {}}}}
    claude_code.install("user", script=SCRIPT)  # the user's own files keep this machine's absolute path
    assert json.loads((home / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]["pi-memory"][
        "command"] == SCRIPT


def test_project_scope_tells_each_teammate_to_have_pi_memory_on_path(home, tmp_path, monkeypatch):
    note = ("The project's files run `pi-memory` from PATH (they are shared, so they name no path of this "
            "machine): everyone who works in this project with Claude Code needs pi-memory installed and on PATH.")
    notes, warnings = claude_code.project_notes()
    script_dir = os.path.dirname(sys.executable)
    assert (notes, warnings) == ([note], [
        f"`pi-memory` is not on this machine's PATH, so Claude Code cannot run pi-memory's hooks or MCP server in "
        f"this project here either. Put the folder holding it ({script_dir}) on PATH, then start Claude Code "
        "again."])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pi-memory").write_text("#!/bin/sh\n")
    (bin_dir / "pi-memory").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert claude_code.project_notes() == ([note], [])
    proj = tmp_path / "proj"
    proj.mkdir()
    env = {**os.environ, "HOME": str(home), "PI_MEMORY_STATE_DIR": str(tmp_path / "state")}
    run = subprocess.run([sys.executable, "-m", "pi_memory", "install", "claude-code", "--scope", "project",
                          "--project", str(proj)], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        f"created {proj / '.claude' / 'settings.json'}: hooks SessionStart, UserPromptSubmit, PreCompact, Stop, "
        "SessionEnd run pi-memory hook claude-code …",
        f"created {proj / '.mcp.json'}: MCP server pi-memory: pi-memory mcp",
        note]


def test_uninstall_removes_the_empty_folders_install_made_and_only_those(home, tmp_path):
    made, kept, used = tmp_path / "made", tmp_path / "kept", tmp_path / "used"
    for proj in (made, kept, used):
        proj.mkdir()
    (kept / ".claude").mkdir()  # the user's own (empty) folder
    for proj in (made, kept, used):
        claude_code.install("project", proj, script=SCRIPT)
    (used / ".claude" / "commands").mkdir()  # the user put something in the folder install made
    (used / ".claude" / "commands" / "review.md").write_text("Review the diff.\n")
    removed = claude_code.uninstall("project", made)
    assert [(c.path, c.action) for c in removed] == [(made / ".claude" / "settings.json", "removed"),
                                                     (made / ".mcp.json", "removed"), (made / ".claude", "removed")]
    assert list(made.iterdir()) == []
    assert [(c.path.name, c.action) for c in claude_code.uninstall("project", kept)] == [
        ("settings.json", "removed"), (".mcp.json", "removed")]
    assert [p.name for p in kept.iterdir()] == [".claude"] and list((kept / ".claude").iterdir()) == []
    claude_code.uninstall("project", used)  # the notes on this project outlived the other two uninstalls
    assert _left_behind(used) == [".claude/commands/review.md"]
    assert not (tmp_path / "state" / "installs" / "claude-code-project.json").exists()


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_a_clean_home_gets_no_empty_host_folder_left_behind(home, host):
    if host == "claude-code":
        claude_code.install("user", script=SCRIPT)
        removed = claude_code.uninstall("user")
    else:
        codex.install(script=SCRIPT)
        removed = codex.uninstall()["changes"]
    folder = home / (".claude" if host == "claude-code" else ".codex")
    assert (folder, "removed") in [(c.path, c.action) for c in removed]
    assert list(home.iterdir()) == []
