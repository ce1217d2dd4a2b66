"""Codex keeps a hook's additionalContext in the model's context only up to the handler's `additionalContextLimit`
(2,500 tokens when absent; a longer answer reached the model as its head and tail and a file path). Our
SessionStart and UserPromptSubmit handlers now carry `"additionalContextLimit": 0` (no spilling): written by a
clean install, added by an install over an older one (whose handlers Codex then trusts again), kept out of the
events that cannot answer context, and never touching the person's own entries, settings or chosen limit."""

from __future__ import annotations

import hashlib
import json

import pytest
import tomlkit

from pi_memory.integrations.hooks import codex

SCRIPT = "/opt/pi memory/bin/pi-memory"


@pytest.fixture
def home(install_home):
    return install_home


def ours(event: str, limit: object = None) -> dict:
    handler = {"type": "command", "command": f"'{SCRIPT}' hook codex {event}", "timeout": 10}
    return {**handler, "additionalContextLimit": limit} if limit is not None else handler


def read(path) -> str:
    return path.read_bytes().decode()


def test_a_clean_install_writes_a_limit_of_zero_on_the_two_events_that_answer_context(home):
    codex.install(script=SCRIPT)
    hooks_json = home / ".codex" / "hooks.json"
    expected = {"hooks": {
        "SessionStart": [{"hooks": [ours("session-start", 0)]}],
        "UserPromptSubmit": [{"hooks": [ours("prompt", 0)]}],
        "PreCompact": [{"hooks": [ours("pre-compact")]}],  # Codex warns of the key on events without context
        "Stop": [{"hooks": [ours("stop")]}],
    }}
    assert read(hooks_json) == json.dumps(expected, indent=2) + "\n"


USERS = {
    "description": "my hooks",
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [
            {"type": "command", "command": "/usr/local/bin/greet", "timeout": 5, "additionalContextLimit": 8000,
             "statusMessage": "greeting"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "/usr/local/bin/audit"}]}],
    },
}


def with_ours(users: dict, limit_key: bool = True) -> dict:
    zero = 0 if limit_key else None
    return {"description": "my hooks", "hooks": {
        "SessionStart": [*users["hooks"]["SessionStart"], {"hooks": [ours("session-start", zero)]}],
        "UserPromptSubmit": [*users["hooks"]["UserPromptSubmit"], {"hooks": [ours("prompt", zero)]}],
        "PreCompact": [{"hooks": [ours("pre-compact")]}],
        "Stop": [{"hooks": [ours("stop")]}],
    }}


def test_the_persons_entries_and_their_own_limit_stay_and_a_second_install_changes_nothing(home):
    hooks_json = home / ".codex" / "hooks.json"
    hooks_json.parent.mkdir()
    original = json.dumps(USERS, indent=4) + "\n"
    hooks_json.write_text(original, encoding="utf-8")
    codex.install(script=SCRIPT)
    assert json.loads(read(hooks_json)) == with_ours(USERS)
    assert [c.action for c in codex.install(script=SCRIPT)["changes"]] == ["unchanged", "unchanged"]
    codex.uninstall()
    assert read(hooks_json) == original


def test_an_install_over_one_without_the_limit_adds_it_and_uninstall_still_gives_the_bytes_back(home, monkeypatch):
    hooks_json = home / ".codex" / "hooks.json"
    hooks_json.parent.mkdir()
    original = json.dumps(USERS, indent=2) + "\n"
    hooks_json.write_text(original, encoding="utf-8")
    with monkeypatch.context() as before:  # what an install of an earlier pi-memory wrote
        before.setattr(codex, "CONTEXT_LIMIT", {})
        codex.install(script=SCRIPT)
    assert json.loads(read(hooks_json)) == with_ours(USERS, limit_key=False)
    changes = codex.install(script=SCRIPT)["changes"]
    assert (changes[0].path, changes[0].action) == (hooks_json, "updated")
    assert json.loads(read(hooks_json)) == with_ours(USERS)
    codex.uninstall()
    assert read(hooks_json) == original


def fake_hash(handler: dict) -> str:
    return "sha256:" + hashlib.sha256(json.dumps(handler, sort_keys=True).encode()).hexdigest()


def test_the_upgrade_trusts_the_changed_handlers_again(home, monkeypatch):
    """Codex's trust hash covers `additionalContextLimit`: a handler that gained it is untrusted (skipped without a
    word) until its new hash is recorded, which the install does by asking Codex again."""
    hooks_json = home / ".codex" / "hooks.json"
    snake = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit", "PreCompact": "pre_compact",
             "Stop": "stop"}

    def listed(*_):  # Codex's view: a key per position and a hash of the handler as the file has it now
        doc = json.loads(read(hooks_json))
        return [{"key": f"{hooks_json}:{snake[event]}:{g}:{h}", "command": handler["command"],
                 "currentHash": fake_hash(handler), "sourcePath": str(hooks_json)}
                for event, groups in doc["hooks"].items() for g, group in enumerate(groups)
                for h, handler in enumerate(group["hooks"])]

    monkeypatch.setattr(codex, "list_hooks", listed)
    with monkeypatch.context() as before:
        before.setattr(codex, "CONTEXT_LIMIT", {})
        codex.install(script=SCRIPT)
    codex.install(script=SCRIPT)
    state = tomlkit.parse(read(home / ".codex" / "config.toml")).unwrap()["hooks"]["state"]
    assert state == {
        f"{hooks_json}:session_start:0:0": {"trusted_hash": fake_hash(ours("session-start", 0))},
        f"{hooks_json}:user_prompt_submit:0:0": {"trusted_hash": fake_hash(ours("prompt", 0))},
        f"{hooks_json}:pre_compact:0:0": {"trusted_hash": fake_hash(ours("pre-compact"))},
        f"{hooks_json}:stop:0:0": {"trusted_hash": fake_hash(ours("stop"))},
    }


@pytest.mark.parametrize(("set_by_hand", "after"), [(5000, 5000), (2500, 2500), (-1, 0), ("0", 0), (True, 0),
                                                    (1.5, 0), (None, 0)])
def test_a_limit_set_by_hand_on_our_handler_stays_and_one_codex_cannot_read_becomes_ours(home, set_by_hand, after):
    """A whole number of at least 0 is the person's choice; anything else makes Codex refuse the whole hooks.json
    ("invalid value: integer `-1`, expected usize"), so the install writes its own 0 there."""
    hooks_json = home / ".codex" / "hooks.json"
    codex.install(script=SCRIPT)
    doc = json.loads(read(hooks_json))
    doc["hooks"]["SessionStart"][0]["hooks"][0]["additionalContextLimit"] = set_by_hand
    hooks_json.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    codex.install(script=SCRIPT)
    doc = json.loads(read(hooks_json))
    assert doc["hooks"]["SessionStart"] == [{"hooks": [ours("session-start", after)]}]
    assert doc["hooks"]["UserPromptSubmit"] == [{"hooks": [ours("prompt", 0)]}]
