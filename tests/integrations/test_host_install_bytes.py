"""A tester's findings on `pi-memory install claude-code|codex`: while installed, a CRLF settings file was rewritten
with LF and a JSON file lost its duplicate keys; `mcp_servers = {}` in config.toml was gone after install and
uninstall. The user's bytes now stay, our lines end like theirs, and a duplicate where we edit is refused."""

from __future__ import annotations

import json
import re

import pytest
import tomlkit

from pi_memory.integrations.hooks import claude_code, codex
from pi_memory.integrations.hooks.install import InstallError

SCRIPT = "/opt/pi memory/bin/pi-memory"
EVENTS = {"SessionStart": "session-start", "UserPromptSubmit": "prompt", "PreCompact": "pre-compact",
          "Stop": "stop", "SessionEnd": "session-end"}
BARE_LF = re.compile(r"(?<!\r)\n")


@pytest.fixture
def home(install_home):
    return install_home


def hooks_block(indent: str = "  ") -> str:
    """Our hooks as the install writes them into a two-space indented settings.json (LF)."""
    hooks = {event: [{"hooks": [{"type": "command", "command": f"'{SCRIPT}' hook claude-code {ours}",
                                 "timeout": 10}]}] for event, ours in EVENTS.items()}
    return json.dumps(hooks, indent=2).replace("\n", "\n" + indent)


def put(path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())


def read(path) -> str:
    return path.read_bytes().decode()


# -- line endings ---------------------------------------------------------------------------------------------

INDENTED = '{\n  "permissions": {\n    "allow": ["Bash(ls:*)"],\n    "deny": []\n  },\n  "model": "opus"\n}\n'


def test_a_crlf_settings_file_stays_crlf_while_installed_and_after(home):
    settings = home / ".claude" / "settings.json"
    crlf = INDENTED.replace("\n", "\r\n")
    put(settings, crlf)
    claude_code.install("user", script=SCRIPT)
    expected = INDENTED[:-3] + f',\n  "hooks": {hooks_block()}\n}}\n'
    assert read(settings) == expected.replace("\n", "\r\n")  # was: our lines in LF between the user's CRLF ones
    claude_code.uninstall("user")
    assert settings.read_bytes() == crlf.encode()
    claude_code.install("user", script=SCRIPT)
    put(settings, read(settings).replace('"opus"', '"sonnet"'))  # edited meanwhile: no byte-exact restore
    claude_code.uninstall("user")
    assert read(settings) == crlf.replace('"opus"', '"sonnet"')


def test_a_crlf_claude_json_gets_its_server_in_crlf(home):
    path = home / ".claude.json"
    original = '{\r\n  "numStartups": 3\r\n}'
    put(path, original)
    claude_code.install("user", script=SCRIPT)
    expected = {"numStartups": 3, "mcpServers": {"pi-memory": claude_code.server_entry(SCRIPT)}}
    assert read(path) == json.dumps(expected, indent=2).replace("\n", "\r\n")
    claude_code.uninstall("user")
    assert read(path) == original


def test_codex_hooks_json_in_crlf_stays_crlf(home):
    path = home / ".codex" / "hooks.json"
    original = '{\r\n  "hooks": {}\r\n}\r\n'
    put(path, original)
    codex.install(script=SCRIPT)
    text = read(path)
    assert not BARE_LF.search(text) and sorted(json.loads(text)["hooks"]) == [
        "PreCompact", "SessionStart", "Stop", "UserPromptSubmit"]
    codex.uninstall()
    assert read(path) == original


@pytest.mark.parametrize(("original", "expected"), [
    # mostly CRLF, one LF line: that line keeps its LF, every line we add ends in CRLF
    ('{\r\n  "model": "opus",\n  "theme": "dark"\r\n}\r\n',
     '{\r\n  "model": "opus",\n  "theme": "dark",\r\n  "hooks": HOOKS\r\n}\r\n'),
    # mostly LF, one CRLF line: that line keeps its CRLF, every line we add ends in LF
    ('{\r\n  "model": "opus",\n  "theme": "dark",\n  "x": 1\n}\n',
     '{\r\n  "model": "opus",\n  "theme": "dark",\n  "x": 1,\n  "hooks": HOOKS\n}\n'),
])
def test_a_json_file_with_mixed_endings_keeps_each_line_and_ours_follow_the_most_used(home, original, expected):
    settings = home / ".claude" / "settings.json"
    put(settings, original)
    claude_code.install("user", script=SCRIPT)
    newline = "\r\n" if expected.endswith("}\r\n") else "\n"
    assert read(settings) == expected.replace("HOOKS", hooks_block().replace("\n", newline))
    claude_code.uninstall("user")
    assert read(settings) == original


PROFILES = ('model = "o3"\n\n[mcp_servers.other]\ncommand = "other"\n\n[profiles.fast]\nmodel = "gpt-4.1"\n')
OUR_SERVER = ('[mcp_servers.pi-memory]\ncommand = "/opt/pi memory/bin/pi-memory"\nargs = ["mcp"]\n'
              'env_vars = ["PI_MEMORY_DIR", "PI_CODING_AGENT_DIR", "PI_MEMORY_STATE_DIR"]\n')


def test_a_crlf_codex_config_stays_crlf_while_installed_and_after(home):
    config = home / ".codex" / "config.toml"
    crlf = PROFILES.replace("\n", "\r\n")
    put(config, crlf)
    codex.install(script=SCRIPT)
    expected = ('model = "o3"\n\n[mcp_servers.other]\ncommand = "other"\n\n' + OUR_SERVER +
                '\n[profiles.fast]\nmodel = "gpt-4.1"\n\n[features]\nhooks = true\n')
    assert read(config) == expected.replace("\n", "\r\n")  # was: every line LF
    codex.uninstall()
    assert config.read_bytes() == crlf.encode()
    codex.install(script=SCRIPT)
    put(config, read(config).replace('"o3"', '"o4"'))
    codex.uninstall()  # edited meanwhile: our tables go, the CRLF stays
    assert read(config) == crlf.replace('"o3"', '"o4"')


@pytest.mark.parametrize(("original", "added"), [
    # mostly CRLF: the user's LF line stays LF, our tables are CRLF
    ('model = "o3"\r\nprofile = "x"\n\r\n[tui]\r\nnotifications = true\r\n', "\r\n"),
    # mostly LF: the user's CRLF line stays CRLF, our tables are LF
    ('model = "o3"\r\nprofile = "x"\n\n[tui]\nnotifications = true\n', "\n"),
])
def test_a_codex_config_with_mixed_endings_keeps_each_line(home, original, added):
    config = home / ".codex" / "config.toml"
    put(config, original)
    codex.install(script=SCRIPT)
    ours = ("\n" + OUR_SERVER + "\n[features]\nhooks = true\n").replace("\n", added)
    assert read(config) == original + ours
    codex.uninstall()
    assert read(config) == original


# -- duplicate keys ---------------------------------------------------------------------------------------------

DUPLICATES = ('{\n  "model": "opus",\n  "permissions": {"allow": ["Read"], "allow": ["Bash(ls)"]},\n'
              '  "model": "sonnet"\n}\n')


def test_duplicate_keys_outside_the_hooks_stay_while_installed_and_after(home):
    settings = home / ".claude" / "settings.json"
    put(settings, DUPLICATES)
    claude_code.install("user", script=SCRIPT)
    assert read(settings) == DUPLICATES[:-3] + f',\n  "hooks": {hooks_block()}\n}}\n'  # was: one "model", one "allow"
    claude_code.uninstall("user")
    assert read(settings) == DUPLICATES
    claude_code.install("user", script=SCRIPT)
    put(settings, read(settings).replace('"sonnet"', '"haiku"'))  # the copy a reader sees, edited meanwhile
    claude_code.uninstall("user")
    assert read(settings) == DUPLICATES.replace('"sonnet"', '"haiku"')


def test_duplicate_keys_outside_mcp_servers_stay_in_claude_json(home):
    path = home / ".claude.json"
    original = '{"numStartups": 1, "projects": {"/a": {"x": 1, "x": 2}}, "numStartups": 2}'
    put(path, original)
    claude_code.install("user", script=SCRIPT)
    server = json.dumps(claude_code.server_entry(SCRIPT))
    assert read(path) == original[:-1] + f', "mcpServers": {{"pi-memory": {server}}}}}'
    claude_code.uninstall("user")
    assert read(path) == original


def test_duplicate_keys_outside_the_hooks_stay_in_codex_hooks_json(home):
    path = home / ".codex" / "hooks.json"
    original = '{"version": 1, "version": 2}\n'
    put(path, original)
    codex.install(script=SCRIPT)
    assert read(path).startswith('{"version": 1, "version": 2, "hooks": {"SessionStart": [')
    codex.uninstall()
    assert read(path) == original


@pytest.mark.parametrize(("where", "text", "listed"), [
    (".claude/settings.json", '{"hooks": {}, "model": "opus", "hooks": {"Stop": []}}', '"hooks" (2 times)'),
    (".claude/settings.json", '{"hooks": {"Stop": [], "Stop": [], "Stop": []}}', '"hooks.Stop" (3 times)'),
    (".claude/settings.json", '{"hooks": {"Stop": [{"matcher": "a", "matcher": "b", "hooks": []}]}}',
     '"hooks.Stop[0].matcher" (2 times)'),
    (".claude.json", '{"mcpServers": {}, "mcpServers": {"x": {"command": "x"}}}', '"mcpServers" (2 times)'),
    (".claude.json", '{"mcpServers": {"x": {"command": "a"}, "x": {"command": "b"}}}', '"mcpServers.x" (2 times)'),
    (".codex/hooks.json", '{"hooks": {}, "hooks": {"Stop": [], "Stop": []}}',
     '"hooks" (2 times), "hooks.Stop" (2 times)'),
])
def test_a_duplicate_key_where_install_edits_is_refused_and_nothing_written(home, tmp_path, where, text, listed):
    path = home / where
    put(path, text)
    with pytest.raises(InstallError) as refused:
        if where.startswith(".codex"):
            codex.install(script=SCRIPT)
        else:
            claude_code.install("user", script=SCRIPT)
    assert str(refused.value) == (
        f"{path} has a key written more than once in the part pi-memory edits: {listed}. A JSON reader (Claude "
        "Code and Codex too) takes only the last one and ignores the others, so which one to change is not clear. "
        "Keep one of each (move what the others hold into it), then run the command again. Nothing was changed.")
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()) == [where]
    assert read(path) == text and not (tmp_path / "state").exists()


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_uninstall_refuses_a_duplicate_in_the_hooks_before_writing_any_file(home, host):
    if host == "claude-code":
        claude_code.install("user", script=SCRIPT)
        settings, other = home / ".claude" / "settings.json", home / ".claude.json"
    else:
        codex.install(script=SCRIPT)
        settings, other = home / ".codex" / "hooks.json", home / ".codex" / "config.toml"
    text = read(settings)
    put(settings, text[:-2] + ',\n  "hooks": {}\n}\n')  # the user pasted a second "hooks"
    before = {settings: read(settings), other: read(other)}
    with pytest.raises(InstallError, match=r'"hooks" \(2 times\)'):
        claude_code.uninstall("user") if host == "claude-code" else codex.uninstall()
    assert {path: read(path) for path in before} == before


def test_duplicate_keys_are_found_with_their_paths():
    from pi_memory.integrations.hooks.json_edit import duplicate_keys

    text = '{"a": 1, "h": {"S": [{"m": 1, "m": 2}], "S": [{"k": 1, "k": 1, "k": 1}]}, "a": 2, "b": [{"c": 0}]}'
    assert duplicate_keys(text) == [("a", 2), ("h.S", 2), ("h.S[0].k", 3)]
    assert duplicate_keys('{"a": {"b": 1}}') == []
    assert duplicate_keys(text, ("h",)) == [("h.S", 2), ("h.S[0].k", 3)]  # only the part named ("a" is not)
    assert duplicate_keys('{"h": [{"m": 1, "m": 2}], "x": 1, "x": 2}', ("h",)) == [("h[0].m", 2)]


# -- empty tables the user wrote in config.toml -------------------------------------------------------------

@pytest.mark.parametrize("original", [
    "mcp_servers = {}\n",
    'model = "o3"\nmcp_servers = {}\n\n[profiles.fast]\nmodel = "gpt-4.1"\n\n[tui]\nnotifications = true\n',
    "mcp_servers = {}\nfeatures = {}\n",
    'mcp_servers = {}\n\n[mcp_servers_note]\ntext = "a table named like it"\n',
    "[mcp_servers]\n\n[tui]\nnotifications = true\n",
    "mcp_servers = {}\r\nfeatures = {}\r\n",
])
def test_an_empty_table_of_the_users_comes_back_after_uninstall(home, original):
    config = home / ".codex" / "config.toml"
    put(config, original)
    codex.install(script=SCRIPT)
    servers = tomlkit.parse(read(config)).unwrap()["mcp_servers"]
    assert list(servers) == ["pi-memory"]
    codex.uninstall()
    assert read(config) == original  # was: the `mcp_servers = {}` line (or `[mcp_servers]`) gone
    codex.install(script=SCRIPT)
    put(config, "editor = 1\n" + read(config))  # edited meanwhile: no byte-exact restore, the empty table stays
    codex.uninstall()
    assert read(config) == "editor = 1\n" + original


def test_an_explicit_mcp_servers_header_keeps_a_blank_line_before_the_next_table(home):
    config = home / ".codex" / "config.toml"
    put(config, "[mcp_servers]\n\n[tui]\nnotifications = true\n")
    codex.install(script=SCRIPT)
    assert read(config) == ("[mcp_servers]\n\n" + OUR_SERVER + "\n[tui]\nnotifications = true\n\n"
                            "[features]\nhooks = true\n")


def test_an_empty_mcp_servers_table_install_made_still_goes(home):
    config = home / ".codex" / "config.toml"
    put(config, 'model = "o3"\n')
    codex.install(script=SCRIPT)
    put(config, "editor = 1\n" + read(config))
    codex.uninstall()
    assert read(config) == 'editor = 1\nmodel = "o3"\n'


@pytest.mark.parametrize("original", ["hooks = {}\n", "mcp_servers = {}\r\nhooks = {}\r\n", "[hooks]\n"])
def test_trust_goes_into_an_empty_hooks_table_of_the_users_and_leaves_it_as_it_was(home, monkeypatch, original):
    """With a codex binary, `hooks = {}` made install raise "Inline tables cannot contain a table" after
    hooks.json was written (a half install)."""
    hooks_json = home / ".codex" / "hooks.json"
    key = f"{hooks_json}:stop:0:0"
    monkeypatch.setattr(codex, "list_hooks", lambda *_: [{
        "key": key, "command": f"'{SCRIPT}' hook codex stop", "currentHash": "sha256:ab",
        "sourcePath": str(hooks_json)}])
    config = home / ".codex" / "config.toml"
    put(config, original)
    assert codex.install(script=SCRIPT)["trusted"] == [key]
    assert tomlkit.parse(read(config)).unwrap()["hooks"] == {"state": {key: {"trusted_hash": "sha256:ab"}}}
    codex.uninstall()
    assert read(config) == original
    newline = "\r\n" if "\r" in original else "\n"
    codex.install(script=SCRIPT)
    put(config, f"editor = 1{newline}" + read(config))
    codex.uninstall()
    assert read(config) == f"editor = 1{newline}" + original


# A fresh tester's findings: installed, Claude Code's compact `"allow": ["Bash(ls:*)"]` became four lines, and the
# blank line before Codex's `[profiles.fast]` went. Install now changes only what it adds.


def our_hooks(script: str = SCRIPT) -> dict:
    return {event: [{"hooks": [{"type": "command", "command": f"'{script}' hook claude-code {ours}" if " " in script
                                else f"{script} hook claude-code {ours}", "timeout": 10}]}]
            for event, ours in EVENTS.items()}


def test_install_adds_its_hooks_and_keeps_a_compact_array_compact(home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(INDENTED, encoding="utf-8")
    claude_code.install("user", script=SCRIPT)
    hooks = json.dumps(our_hooks(), indent=2).replace("\n", "\n  ")
    assert settings.read_text(encoding="utf-8") == INDENTED[:-3] + f',\n  "hooks": {hooks}\n}}\n'
    settings.write_text(settings.read_text(encoding="utf-8").replace('"opus"', '"sonnet"'), encoding="utf-8")
    claude_code.uninstall("user")  # changed meanwhile: no byte-exact restore, our hooks alone go
    assert settings.read_text(encoding="utf-8") == INDENTED.replace('"opus"', '"sonnet"')


def test_a_moved_script_changes_only_its_command_in_a_tab_indented_file(home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    user_group = '{"matcher": "", "hooks": [{"type": "command", "command": "/bin/true"}]}'
    settings.write_text('{\n\t"hooks": {\n\t\t"Stop": [' + user_group + ']\n\t},\n\t"theme": "dark"\n}',
                        encoding="utf-8")
    claude_code.install("user", script="/old/venv/bin/pi-memory")
    before = settings.read_text(encoding="utf-8")  # the one-line array stays one line, ours in its style
    assert before.startswith('{\n\t"hooks": {\n\t\t"Stop": [' + user_group + ', {"hooks": [{"type": "command", '
                             '"command": "/old/venv/bin/pi-memory hook claude-code stop", "timeout": 10}]}],\n'
                             '\t\t"SessionStart": [\n\t\t\t{\n\t\t\t\t"hooks": [\n')
    claude_code.install("user", script="/new/venv/bin/pi-memory")
    assert settings.read_text(encoding="utf-8") == before.replace("/old/venv/", "/new/venv/")
    claude_code.uninstall("user")
    assert settings.read_text(encoding="utf-8") == ('{\n\t"hooks": {\n\t\t"Stop": [' + user_group +
                                                    ']\n\t},\n\t"theme": "dark"\n}')


TWO_PROFILES = ('model = "o3"\n\n[mcp_servers.other]\ncommand = "other"\n\n[profiles.fast]\nmodel = "gpt-4.1"\n\n'
            '[profiles.deep]\nmodel = "o3"\n')


def test_codex_install_keeps_the_blank_line_before_the_next_table(home):
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(TWO_PROFILES, encoding="utf-8")
    codex.install(script=SCRIPT)
    assert config.read_text(encoding="utf-8") == (
        'model = "o3"\n\n[mcp_servers.other]\ncommand = "other"\n\n' + OUR_SERVER + '\n[profiles.fast]\n'
        'model = "gpt-4.1"\n\n[profiles.deep]\nmodel = "o3"\n\n[features]\nhooks = true\n')
    codex.uninstall()
    assert config.read_text(encoding="utf-8") == TWO_PROFILES


def test_codex_updates_its_own_server_table_in_place(home):
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('[mcp_servers.pi-memory]\ncommand = "/old/pi-memory"  # moved venv\nstartup_timeout_sec = 20'
                      '\n\n[profiles.fast]\nmodel = "gpt-4.1"\n\n[features]\nhooks = true\n', encoding="utf-8")
    codex.install(script=SCRIPT)
    assert config.read_text(encoding="utf-8") == (
        '[mcp_servers.pi-memory]\ncommand = "/opt/pi memory/bin/pi-memory"  # moved venv\nstartup_timeout_sec = 20'
        '\nargs = ["mcp"]\nenv_vars = ["PI_MEMORY_DIR", "PI_CODING_AGENT_DIR", "PI_MEMORY_STATE_DIR"]\n\n'
        '[profiles.fast]\nmodel = "gpt-4.1"\n\n[features]\nhooks = true\n')


@pytest.mark.parametrize("servers", [
    'mcp_servers = { other = { command = "x" } }\n',
    'mcp_servers = { other = { command = "x", args = ["a"] }, more = { command = "y" } }\n',
])
def test_codex_install_adds_its_server_to_an_inline_table(home, servers):
    # "Inline tables cannot contain a table": a traceback after hooks.json was written, a half install
    import tomllib

    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = 'model = "o3"\n' + servers
    config.write_text(original, encoding="utf-8")
    codex.install(script=SCRIPT)
    doc = tomllib.loads(config.read_text(encoding="utf-8"))
    assert doc["mcp_servers"]["pi-memory"] == {"command": SCRIPT, "args": ["mcp"], "env_vars": [
        "PI_MEMORY_DIR", "PI_CODING_AGENT_DIR", "PI_MEMORY_STATE_DIR"]}
    assert ("other" in doc["mcp_servers"]) == ("other" in servers)
    once = config.read_text(encoding="utf-8")
    codex.install(script=SCRIPT)
    assert config.read_text(encoding="utf-8") == once
    codex.uninstall()
    assert config.read_text(encoding="utf-8") == original


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_a_settings_file_with_a_byte_order_mark_is_refused_in_words(home, host):
    path = home / ".claude" / "settings.json" if host == "claude-code" else home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    original = "\ufeff" + ('{"model": "opus"}\n' if host == "claude-code" else 'model = "o3"\n')
    path.write_text(original, encoding="utf-8")
    with pytest.raises(InstallError) as refused:
        if host == "claude-code":
            claude_code.install("user", script=SCRIPT)
        else:
            codex.install(script=SCRIPT)
    assert str(refused.value) == (f"{path} starts with a byte-order mark (BOM), which JSON and TOML do not allow; "
                                  "save it as UTF-8 without a BOM, then run the command again. Nothing was changed.")
    assert path.read_text(encoding="utf-8") == original
