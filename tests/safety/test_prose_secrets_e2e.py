"""End to end: a past turn and a hand-edited curated entry holding a credential in prose (the shapes of
``test_secrets_prose_leaks``) never come back raw from ``session_search``, ``memory_search`` or a recall; the words
around the value do."""

from __future__ import annotations

import json

import pytest

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import index_paths, open_index, sync_markdown
from pi_memory.runtime import open_memory

TURN = "heron mail: Das Passwort für den SMTP-Server lautet Sommer2026!Berlin"
ANSWER = "heron mail: noted, login: admin / hunter2 and use token 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c for the api"
ENTRY = "heron db: creds are admin:Sup3rS3cret! and the password is letmein"
RAW = ("Sommer2026!Berlin", "hunter2", "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "Sup3rS3cret!", "letmein")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("prose-secrets")
    home, data = root / "home", root / "data"
    repo = home / "shop"
    (repo / ".git").mkdir(parents=True)
    sessions = home / ".pi" / "agent" / "sessions" / "--shop--"
    write_pi_session(sessions / "a.jsonl", repo, [("user", TURN), ("assistant", ANSWER)], session_id="s-a")
    data.mkdir()
    (data / "MEMORY.md").write_text(f"{ENTRY}\n", encoding="utf-8")  # edited by hand
    conn = open_index(data)
    index_paths(conn, [home / ".pi"])
    sync_markdown(conn, data)
    conn.close()
    patch = pytest.MonkeyPatch()
    for name, value in (("HOME", home), ("PI_CODING_AGENT_DIR", home / "agent"), ("PI_MEMORY_DIR", data),
                        ("PI_MEMORY_CATCH_UP", "0")):
        patch.setenv(name, str(value))
    yield {"home": home, "data": data, "repo": repo}
    patch.undo()


def call(memory, name: str, arguments: dict) -> dict:
    spec = next(t for t in memory.tools() if t.name == name)
    outcome = spec.call(arguments)
    assert not outcome.is_error, outcome.result
    return outcome.result


def test_session_search_and_memory_search_show_the_sentence_without_the_value(env):
    memory = open_memory(cwd=env["repo"])
    sessions = call(memory, "session_search", {"query": "heron mail", "limit": 10})
    snippets = [h["snippet"].replace("**", "") for h in sessions["results"]]
    assert "heron mail: Das Passwort für den SMTP-Server lautet [REDACTED:password_phrase]" in snippets
    assert ("heron mail: noted, login: admin / [REDACTED:credential_pair] and use token "
            "[REDACTED:secret_assignment] for the api") in snippets
    entries = call(memory, "memory_search", {"query": "heron db"})
    assert [h["content"] for h in entries["results"]] == [
        "heron db: creds are admin:[REDACTED:credential_pair] and the password is [REDACTED:password_in_prose]"]
    text = json.dumps([sessions, entries], ensure_ascii=False)
    for value in RAW:
        assert value not in text, value


def test_recall_never_holds_the_value(env):
    from pi_memory.integrations.pi.bridge import Bridge

    (env["home"] / "agent").mkdir(exist_ok=True)
    (env["home"] / "agent" / "settings.json").write_text(
        json.dumps({"pi-memory": {"semantic": {"recallSources": ["semantic", "sessions"]}}}))
    try:
        b = Bridge()
        b.hello(cwd=str(env["repo"]))
        text = b.recall(prompt="what is the heron mail SMTP password and the heron db login for the api?",
                        state={})["text"] or ""
        b.shutdown(wait=5)
    finally:
        (env["home"] / "agent" / "settings.json").unlink()
    assert "[REDACTED:" in text, text  # the turns were recalled, their values replaced
    for value in RAW:
        assert value not in text, value
