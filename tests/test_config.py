"""Settings resolution (issue #2 §1): data root order, user vs trusted project settings, interpolation."""

from __future__ import annotations

import json

import pytest

from pi_memory.config import SettingsError, load_settings, set_trust


@pytest.fixture
def agent(tmp_path, monkeypatch):
    adir = tmp_path / "agent"
    adir.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(adir))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    return adir


def write(path, block):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"theme": "dark", "pi-memory": block}))


def test_defaults(agent, tmp_path):
    s = load_settings(cwd=tmp_path)
    assert s.data_dir == agent / "memories"
    assert (s.memory_char_limit, s.user_char_limit) == (2200, 1375)


def test_override_beats_env_beats_settings(agent, tmp_path, monkeypatch):
    write(agent / "settings.json", {"dataDir": str(tmp_path / "from-settings")})
    assert load_settings(cwd=tmp_path).data_dir == tmp_path / "from-settings"
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "from-env"))
    assert load_settings(cwd=tmp_path).data_dir == tmp_path / "from-env"
    assert load_settings(cwd=tmp_path, override_dir=tmp_path / "cli").data_dir == tmp_path / "cli"


def test_user_settings_interpolate_env(agent, tmp_path, monkeypatch):
    monkeypatch.setenv("PIM_ROOT", str(tmp_path / "root"))
    write(agent / "settings.json", {"dataDir": "${PIM_ROOT}/mem", "memoryCharLimit": 4000})
    s = load_settings(cwd=tmp_path)
    assert s.data_dir == tmp_path / "root" / "mem" and s.memory_char_limit == 4000


def test_unset_variable_ignores_setting_with_warning(agent, tmp_path, monkeypatch):
    monkeypatch.delenv("PIM_NOPE", raising=False)
    write(agent / "settings.json", {"dataDir": "${PIM_NOPE}/mem"})
    s = load_settings(cwd=tmp_path)
    assert s.data_dir == agent / "memories"
    assert "PIM_NOPE" in s.warnings[0]


def test_project_settings_ignored_until_trusted_and_never_interpolated(agent, tmp_path, monkeypatch):
    project = tmp_path / "repo"
    monkeypatch.setenv("PIM_ROOT", "/should-not-be-used")
    write(project / ".pi" / "settings.json", {"dataDir": "${PIM_ROOT}/x", "userCharLimit": 99})
    assert load_settings(cwd=project).user_char_limit == 1375
    set_trust(project, True)
    s = load_settings(cwd=project)
    assert s.user_char_limit == 99
    assert s.data_dir == project.resolve() / "${PIM_ROOT}" / "x"
    set_trust(project, False)
    assert load_settings(cwd=project).user_char_limit == 1375


def test_malformed_json_names_file_and_position(agent, tmp_path):
    (agent / "settings.json").write_text('{"pi-memory": {"dataDir": }')
    with pytest.raises(SettingsError, match=r"settings.json is not valid JSON \(line 1, column 27"):
        load_settings(cwd=tmp_path)


def test_invalid_value_names_key(agent, tmp_path):
    write(agent / "settings.json", {"userCharLimit": "lots"})
    with pytest.raises(SettingsError, match="userCharLimit"):
        load_settings(cwd=tmp_path)


def test_strict_ints_bom_unknown_keys_and_relative_data_dir(agent, tmp_path):
    (agent / "settings.json").write_text('{"pi-memory": {"memoryCharLimit": true}}')
    with pytest.raises(SettingsError, match="memoryCharLimit"):
        load_settings(cwd=tmp_path)
    (agent / "settings.json").write_bytes(
        "\ufeff".encode() + json.dumps({"pi-memory": {"memoryCharLimt": 5, "dataDir": "mem"}}).encode()
    )
    s = load_settings(cwd=tmp_path)
    assert s.data_dir == agent / "mem"
    assert any("memoryCharLimt" in w for w in s.warnings)


def test_trusting_a_missing_folder_is_an_error(agent, tmp_path):
    with pytest.raises(SettingsError, match="not an existing folder"):
        set_trust(tmp_path / "nope", True)


@pytest.mark.parametrize(("key", "guess"), [
    ("memoryCharLimt", "memoryCharLimit"),
    ("memorycharlimit", "memoryCharLimit"),
    ("userCharLimits", "userCharLimit"),
    ("datadir", "dataDir"),
    ("autoCaputre", "autoCapture"),
])
def test_unknown_key_names_the_closest_known_one(agent, tmp_path, key, guess):
    write(agent / "settings.json", {key: 5})
    warnings = load_settings(cwd=tmp_path).warnings
    assert warnings == (f"{agent / 'settings.json'}: unknown pi-memory key {key!r} ignored; did you mean {guess!r}?",)


def test_unknown_key_far_from_any_lists_the_known_ones(agent, tmp_path):
    write(agent / "settings.json", {"zzqx": 1})
    (warning,) = load_settings(cwd=tmp_path).warnings
    assert "unknown pi-memory key 'zzqx' ignored; known keys: " in warning and "memoryCharLimit" in warning


# ${HOME} and ~ in the settings under PI_MEMORY_HOME: the Claude Code / Codex hooks get it from a pi-memory MCP
# server entry whose env sets HOME, so a dataDir naming the home means the server's home in the hooks too (before:
# the hooks' own home, another data root than the server's).
@pytest.mark.parametrize(("data_dir", "env_dir", "expect"), [
    ("${HOME}/notes", None, "server/notes"),
    ("~/notes", None, "server/notes"),
    ("~", None, "server"),
    ("${HOME}", None, "server"),
    (None, "~/env notes", "server/env notes"),
])
def test_home_in_the_settings_is_pi_memory_home_when_set(agent, tmp_path, monkeypatch, data_dir, env_dir, expect):
    monkeypatch.setenv("HOME", str(tmp_path / "hook"))
    if data_dir is not None:
        write(agent / "settings.json", {"dataDir": data_dir})
    if env_dir is not None:
        monkeypatch.setenv("PI_MEMORY_DIR", env_dir)
    assert load_settings(cwd=tmp_path).data_dir == tmp_path / "hook" / expect.removeprefix("server").lstrip("/")
    monkeypatch.setenv("PI_MEMORY_HOME", str(tmp_path / "server"))
    assert load_settings(cwd=tmp_path).data_dir == tmp_path / expect  # before: under the hook's own home


@pytest.mark.parametrize("value", ["", "relative/home"])
def test_a_pi_memory_home_that_is_not_an_absolute_path_is_not_used(agent, tmp_path, monkeypatch, value):
    monkeypatch.setenv("HOME", str(tmp_path / "hook"))
    monkeypatch.setenv("PI_MEMORY_HOME", value)
    write(agent / "settings.json", {"dataDir": "~/notes"})
    assert load_settings(cwd=tmp_path).data_dir == tmp_path / "hook" / "notes"


def test_the_default_agent_folder_is_under_pi_memory_home(tmp_path, monkeypatch):
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "hook"))
    monkeypatch.setenv("PI_MEMORY_HOME", str(tmp_path / "server"))
    assert load_settings(cwd=tmp_path).data_dir == tmp_path / "server" / ".pi" / "agent" / "memories"
