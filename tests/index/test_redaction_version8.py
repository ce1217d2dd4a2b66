"""An index whose rows were redacted with the patterns of ``redaction.VERSION`` 7 is redacted again at open: a
password on the line after its label, key material after a label naming a key or a cookie, a password column of a
Markdown table and a short password after ``pw:`` were kept in clear by them."""

from __future__ import annotations

from pathlib import Path

from readers_helpers import insert_plaintext_session

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import open_index, redaction, transaction

ROWS = [("user", "Prod DB login\nuser: deploy\nPassword:\nXk29!fpQ7zz"),
        ("assistant", "The backup encryption key: 4Gx7pQ2mZ9vB1nL8kR3tY6wE0uI5oA=="),
        ("user", "session cookie is Qm4Tz8Lp2Vx7Nc3Rb9Wk5Hd1Jf6Gs0Ya"),
        ("assistant", "| host | user | password |\n|---|---|---|\n| db | admin | Fq83!zLw0p |"),
        ("user", "ssh root@10.0.0.5 (pw: toor)"),
        ("assistant", "the primary key is customer_id; sort key: created_at; pass=true")]
PLAIN = ("Xk29!fpQ7zz", "4Gx7pQ2mZ9vB1nL8kR3tY6wE0uI5oA", "Qm4Tz8Lp2Vx7Nc3Rb9Wk5Hd1Jf6Gs0Ya", "Fq83!zLw0p", "toor")


def _blob(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (data / "index.sqlite3", data / "index.sqlite3-wal") if p.exists())


def test_an_index_redacted_with_version_7_patterns_is_redacted_again(tmp_path: Path) -> None:
    session = write_pi_session(tmp_path / "sessions" / "old.jsonl", tmp_path, ROWS, "old")
    data = tmp_path / "data"
    conn = open_index(data)
    with transaction(conn):
        insert_plaintext_session(conn, "old", session, ROWS)
        redaction.save_state(conn, redaction.RedactionState(version=7, phase="done"))
    conn.close()
    assert b"Xk29!fpQ7zz" in _blob(data)
    conn = open_index(data)
    state = redaction.load_state(conn)
    assert (state.version, state.phase, state.changed) == (redaction.VERSION, "done", 5)
    assert [r[0] for r in conn.execute("SELECT text FROM messages ORDER BY id")] == [
        "Prod DB login\nuser: deploy\nPassword:\n[REDACTED:password_in_prose]",
        "The backup encryption key: [REDACTED:secret_assignment]",
        "session cookie is [REDACTED:secret_assignment]",
        "| host | user | password |\n|---|---|---|\n| db | admin | [REDACTED:password_in_prose] |",
        "ssh root@10.0.0.5 (pw: [REDACTED:password_in_prose])",
        "the primary key is customer_id; sort key: created_at; pass=true",
    ]
    conn.close()
    assert [value for value in PLAIN if value.encode() in _blob(data)] == []
