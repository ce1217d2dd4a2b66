"""pi's `/mem0 add <text with a key>` replied only `Stored <id>`, while `pi-memory semantic add` says "Credentials
were replaced by [REDACTED:…] and not stored" (a tester's case): the memory is stored redacted, and the person who
typed the key is told so in both. A failed /mem0 action says what failed without an exception's class name."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app

CASES = [
    ("deploy key is ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab for the CI", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab",
     "github_token"),
    ("the AWS key id AKIAIOSFODNN7EXAMPLE is for staging", "AKIAIOSFODNN7EXAMPLE", "aws_access_key_id"),
    ("my password is hunter2hunter2 for the wiki", "hunter2hunter2", "password_in_prose"),
]
SAID = "Credentials were replaced by [REDACTED:…] and not stored ({}); keep where a secret lives in memory, never its value."


@pytest.fixture
def bridge(make_bridge):
    return make_bridge({})


def mem0(bridge, args: str) -> dict:
    reply = bridge.handle(json.dumps({"id": 1, "method": "command", "params": {"name": "mem0", "args": args,
                                                                              "data": {}}}))
    return reply["result"]


def test_mem0_add_says_the_credentials_were_redacted(bridge):
    for text, secret, kind in CASES:
        r = mem0(bridge, f"add {text}")
        lines = r["text"].splitlines()
        assert r["level"] == "info" and secret not in r["text"]
        assert lines[0].startswith("Stored ") and lines[1:] == [SAID.format(kind)]
    plain = mem0(bridge, "add The staging cluster runs in eu-west-1")
    assert len(plain["text"].splitlines()) == 1 and plain["text"].startswith("Stored ")


def test_semantic_add_says_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "mem"))
    monkeypatch.chdir(tmp_path)
    for text, secret, kind in CASES[:2]:
        r = CliRunner().invoke(app, ["semantic", "add", text])
        assert r.exit_code == 0 and secret not in r.stdout
        assert r.stdout.splitlines()[1:] == [SAID.format(kind)]
