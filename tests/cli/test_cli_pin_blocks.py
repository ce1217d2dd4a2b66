"""``pi-memory pin`` and ``pi-memory blocks`` (issue 11 §1, §4): exit codes, --json, text a person reads."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    d = str(tmp_path / "mem")

    def cli(*args: str):
        return runner.invoke(app, [*args, "--dir", d])

    return cli


def test_pin_verbs_and_exit_codes(cli):
    r = cli("pin", "add", "never push to main")
    assert (r.exit_code, r.stdout.splitlines()[0]) == (0, "Pinned as rule 1: never push to main")
    assert cli("pin", "add", "NEVER push to main").exit_code == 1
    r = cli("pin", "list", "--json")
    data = json.loads(r.stdout)
    assert (data["rules"], data["count"], data["chars"], data["enabled"]) == (["never push to main"], 1, 18, True)
    r = cli("pin", "remove", "3", "--json")
    assert (r.exit_code, json.loads(r.stdout)["code"]) == (1, "out_of_range")
    assert cli("pin", "remove", "1").exit_code == 0
    r = cli("pin", "clear", "--json")
    assert (r.exit_code, json.loads(r.stdout)["code"]) == (1, "empty")


def test_blocks_create_list_show(cli):
    r = cli("blocks", "create", "decisions", "--description", "Architecture decisions", "--limit", "300")
    assert r.exit_code == 0 and "Created block 'decisions'" in r.stdout
    r = cli("blocks", "list")
    assert r.stdout.splitlines()[:3] == ["decisions (global) [░░░░░░░░░░░░░░░░░░░░] 0% — 0/300 chars",
                                         "  Architecture decisions", "  (empty)"]
    data = json.loads(cli("blocks", "show", "decisions", "--json").stdout)
    assert (data["limit"], data["value"]) == (300, "")
    r = cli("blocks", "show", "nope", "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["error"].startswith("There is no memory block 'nope'")
    r = cli("blocks", "create", "decisions", "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["refusal"] == "exists"
