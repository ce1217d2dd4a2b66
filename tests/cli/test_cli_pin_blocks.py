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


DEFAULT_NOTE = "  (default: no file yet; the next session start creates it)"


def test_blocks_list_shows_the_default_blocks_preview_context_shows(cli, tmp_path):
    """A fresh tester's finding: `blocks list` said "No memory blocks yet" while `preview-context` showed the
    `user` and `agent` blocks a session start creates. Both show them now, marked as defaults with no file."""
    r = cli("blocks", "list")
    assert (r.exit_code, r.stdout.splitlines()) == (0, [
        "user (global) [░░░░░░░░░░░░░░░░░░░░] 0% — 0/2,000 chars" + DEFAULT_NOTE,
        "  Facts about the user: name, role, preferences, how they like to work",
        "  (empty)",
        "agent (global) [░░░░░░░░░░░░░░░░░░░░] 0% — 0/2,000 chars" + DEFAULT_NOTE,
        "  Your own role and context in this work: what you are helping with, conventions you follow",
        "  (empty)"])
    data = json.loads(cli("blocks", "list", "--json").stdout)
    assert [(b["key"], b["scope"], b.get("default"), b["file"]) for b in data["blocks"]] == [
        ("user", "global", True, str(tmp_path / "mem" / "blocks" / "user.md")),
        ("agent", "global", True, str(tmp_path / "mem" / "blocks" / "agent.md"))]
    assert not (tmp_path / "mem" / "blocks").exists()  # listed, not written
    preview = json.loads(cli("preview-context", "--json").stdout)
    blocks_part = next(p for p in preview["parts"] if p["name"] == "blocks")
    assert blocks_part["note"] == ("2 default block(s) (user, agent), no file yet: the next session start "
                                   "creates them")
    assert "## user [0/2,000 chars]" in blocks_part["text"] and "## agent [0/2,000 chars]" in blocks_part["text"]
    r = cli("blocks", "show", "agent")
    assert (r.exit_code, r.stdout.splitlines()[0]) == (0, f"agent (global, {tmp_path / 'mem' / 'blocks' / 'agent.md'}) "
                                                          "0% — 0/2,000 chars" + DEFAULT_NOTE[1:])


def test_once_a_block_exists_the_defaults_are_not_listed(cli):
    """ensure_defaults creates them only when no block exists, so a list with one block of the user's is that
    block alone (as preview-context and the next session show it)."""
    assert cli("blocks", "create", "infra", "--description", "Servers").exit_code == 0
    data = json.loads(cli("blocks", "list", "--json").stdout)
    assert [(b["key"], b.get("default")) for b in data["blocks"]] == [("infra", None)]
    r = cli("blocks", "show", "user", "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["error"] == (
        "There is no memory block 'user' (blocks: infra). See `pi-memory blocks list`.")
    preview = json.loads(cli("preview-context", "--json").stdout)
    assert next(p for p in preview["parts"] if p["name"] == "blocks")["note"] == "1 block(s)"
