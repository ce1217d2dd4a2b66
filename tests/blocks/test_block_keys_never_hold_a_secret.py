"""A block key is a file name and is shown in every session's prompt: a credential is refused as a key, and no
refusal (invalid key, unknown block; store, tool or CLI) repeats a credential it was given."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from pi_memory.blocks import BlockStore
from pi_memory.cli.app import app
from pi_memory.tools.blocks import create_block_tools

GITHUB = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"  # matches the key rule: letters, digits, '_'
AWS = "AKIA" + "IOSFODNN7EXAMPLE"


@pytest.fixture
def store(tmp_path):
    return BlockStore(tmp_path / "global", tmp_path / "project", project_trusted=True)


@pytest.mark.parametrize("key", [GITHUB, AWS, f"notes-{AWS}"])
def test_a_credential_is_refused_as_a_key_and_no_file_is_written(store, tmp_path, key):
    result = store.create(key, "d")
    assert (result.success, result.code) == (False, "secret")
    assert key not in json.dumps(result.to_dict())
    assert "Name the block for what it holds (e.g. deploy-notes)" in result.error
    assert not (tmp_path / "global").exists() or list((tmp_path / "global").iterdir()) == []


def test_an_invalid_key_holding_a_credential_is_not_repeated(store):
    result = store.create(f"token {GITHUB}", "d")
    assert result.code == "invalid_key" and GITHUB not in json.dumps(result.to_dict())
    assert result.error.startswith("'token [REDACTED:github_token]' is not a usable block key")


def test_update_of_an_unknown_block_named_by_a_credential_is_not_repeated(store):
    assert store.create("notes", "d").success
    [tool] = create_block_tools(store)
    outcome = tool.call({"blockKey": GITHUB, "newText": "x"})
    assert GITHUB not in json.dumps(outcome.result)
    assert outcome.result["code"] == "unknown_block"
    assert outcome.result["error"].startswith("There is no memory block '[REDACTED:github_token]'.")


def test_cli_create_and_show_never_print_the_credential(tmp_path):
    run = CliRunner()
    created = run.invoke(app, ["--dir", str(tmp_path / "d"), "blocks", "create", GITHUB, "--description", "x"])
    assert created.exit_code == 1 and GITHUB not in created.output
    shown = run.invoke(app, ["--dir", str(tmp_path / "d"), "blocks", "show", AWS])
    assert shown.exit_code == 1 and AWS not in shown.output
    assert "There is no memory block '[REDACTED:aws_access_key_id]'" in shown.output
