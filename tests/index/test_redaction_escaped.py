"""A credential in a file an agent's tool call writes is redacted before it is indexed (tester's top report):
pi stores a tool call's arguments as compact JSON, so a JSON, YAML or INI config body is an escaped string inside
it (``{\\"password\\": \\"…\\"}``, ``password: …\\n``), and the password reached ``session_search``, recall and
``index.sqlite3``. Also an index redacted with the patterns before this one (``redaction.VERSION`` 4) is redacted
again at open."""

from __future__ import annotations

import json
from pathlib import Path

from readers_helpers import insert_plaintext_session

from pi_memory.devtools.transcripts import tool_call, write_pi_session
from pi_memory.index import index_paths, open_index, redaction, transaction
from pi_memory.retrieval import session_search
from pi_memory.tools.search import create_search_tools

PASSWORD = "hunter2-very-secret-pw"
API_KEY = "q8Zr2LmN4vB7xK1pT9wE3yU6"
YAML_TOKEN = "Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1"
INI_PASSWORD = "Tq7wV2xM9pL4-ini"
PLAIN = (PASSWORD, API_KEY, YAML_TOKEN, INI_PASSWORD)

TURNS = [
    ("user", "write the staging config for the password checker"),
    ("assistant", [tool_call("write", {"path": "cfg.json", "content": json.dumps(
        {"password": PASSWORD, "api_key": API_KEY}, indent=2)}, "c1")]),
    ("assistant", [tool_call("write", {"path": "deploy.yml", "content":
        f"db:\n  host: db.internal\n  password: {PASSWORD}\n  token: {YAML_TOKEN}\n"}, "c2")]),
    ("assistant", [tool_call("write", {"path": "app.ini", "content": f"[db]\npassword={INI_PASSWORD}\n"}, "c3")]),
]


def _blob(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (data / "index.sqlite3", data / "index.sqlite3-wal") if p.exists())


def test_a_config_written_by_a_tool_call_is_indexed_redacted(tmp_path: Path) -> None:
    session = write_pi_session(tmp_path / "sessions" / "s.jsonl", tmp_path, TURNS, "escaped")
    assert PASSWORD in session.read_text()  # the file holds it, escaped twice over: {\"password\": \"…\"}
    data = tmp_path / "data"
    conn = open_index(data)
    index_paths(conn, [session])
    texts = [r[0] for r in conn.execute("SELECT text FROM messages ORDER BY id")]
    assert texts == [
        "write the staging config for the password checker",
        'write: {"path":"cfg.json","content":"{\\n  \\"password\\": \\"[REDACTED:password_in_prose]\\",\\n'
        '  \\"api_key\\": \\"[REDACTED:secret_assignment]\\"\\n}"}',
        'write: {"path":"deploy.yml","content":"db:\\n  host: db.internal\\n  password: '
        '[REDACTED:password_in_prose]\\n  token: [REDACTED:secret_assignment]\\n"}',
        'write: {"path":"app.ini","content":"[db]\\npassword=[REDACTED:password_in_prose]\\n"}',
    ]
    found = session_search(conn, "password", limit=20)
    assert found.count == 4
    shown = json.dumps(found.to_json(), ensure_ascii=False)
    tools = {t.name: t for t in create_search_tools(lambda: conn, str(tmp_path))}
    shown += json.dumps(tools["session_search"].call({"query": "password", "limit": 20}).result, ensure_ascii=False)
    assert "[REDACTED:password_in_prose]" in shown
    assert [value for value in PLAIN if value in shown] == []
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert [value for value in PLAIN if value.encode() in _blob(data)] == []


def test_an_index_redacted_with_version_4_patterns_is_redacted_again(tmp_path: Path) -> None:
    """Rows stored by an index whose redaction finished with the patterns before escaped text was read."""
    rows = [("assistant", 'write: {"path":"cfg.json","content":"{\\"password\\": \\"' + PASSWORD + '\\"}"}'),
            ("assistant", f"<server><id>nexus</id><password>{PASSWORD}</password></server>"),
            ("user", f"mycli --api-token {API_KEY}")]
    session = write_pi_session(tmp_path / "sessions" / "old.jsonl", tmp_path, rows, "old")
    data = tmp_path / "data"
    conn = open_index(data)
    with transaction(conn):
        insert_plaintext_session(conn, "old", session, rows)
        redaction.save_state(conn, redaction.RedactionState(version=4, phase="done"))
    conn.close()
    assert PASSWORD.encode() in _blob(data)
    conn = open_index(data)
    state = redaction.load_state(conn)
    assert (state.version, state.phase, state.changed) == (redaction.VERSION, "done", 3)
    assert [r[0] for r in conn.execute("SELECT text FROM messages ORDER BY id")] == [
        'write: {"path":"cfg.json","content":"{\\"password\\": \\"[REDACTED:password_in_prose]\\"}"}',
        "<server><id>nexus</id><password>[REDACTED:xml_secret]</password></server>",
        "mycli --api-token [REDACTED:cli_token]",
    ]
    conn.close()
    assert [value for value in PLAIN if value.encode() in _blob(data)] == []
