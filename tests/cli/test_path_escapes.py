"""A folder name given on the command line never acts on the terminal: `pi-memory trust "$(printf 'zz\\033[31mRED')"`
and `pi-memory index-sessions <same>` printed the path with its raw ESC (a tester's case), while every other command
escaped it. `trust` / `untrust` and every refusal through `fail` now show such characters as `\\x1b` / `\\u202e`."""

from __future__ import annotations

import pytest

from cli_homes import isolated_cli

NAMES = [("zz\x1b[31mRED", "zz\\x1b[31mRED"), ("rtl\u202eevil", "rtl\\u202eevil"),
         ("bell\x07x", "bell\\x07x"), ("csi\x9bz", "csi\\x9bz")]


@pytest.fixture
def run(tmp_path, monkeypatch):
    return isolated_cli(tmp_path, monkeypatch)


def clean(text: str) -> bool:
    return not any(ch in text for ch in "\x1b\u202e\x07\x9b")


@pytest.mark.parametrize(("name", "shown"), NAMES)
def test_trust_of_a_missing_folder_escapes_its_name(run, tmp_path, name, shown):
    r = run("trust", name)
    assert r.exit_code == 2 and clean(r.output)
    assert r.output == f"error: Cannot trust {tmp_path}/{shown}: it is not an existing folder.\n"


@pytest.mark.parametrize(("name", "shown"), NAMES)
def test_trust_and_untrust_of_a_folder_escape_its_name(run, tmp_path, name, shown):
    (tmp_path / name).mkdir()
    said = [run(verb, name).output for verb in ("trust", "trust", "untrust", "untrust")]
    assert all(clean(text) for text in said)
    assert said == [f"Trusted {tmp_path}/{shown} (1 trusted project(s)).\n",
                    f"{tmp_path}/{shown} was already trusted; nothing changed.\n",
                    f"{tmp_path}/{shown} is no longer trusted.\n",
                    f"{tmp_path}/{shown} was not trusted; nothing changed.\n"]


@pytest.mark.parametrize(("name", "shown"), NAMES)
def test_index_sessions_of_a_missing_path_escapes_it(run, name, shown):
    r = run("index-sessions", name)
    assert r.exit_code == 1 and clean(r.output)
    assert r.output.startswith(f"refused: {shown} does not exist; nothing was indexed.")
