"""An index whose rows were redacted with the patterns of ``redaction.VERSION`` 5 is redacted again at open: a
password named with a qualifier (``Passwort für den SMTP-Server lautet X``, ``пароль от сервера X``), a login pair,
a token after a token word with only a space, and a plain word after "password is" were kept in clear by them."""

from __future__ import annotations

from pathlib import Path

from readers_helpers import insert_plaintext_session

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import open_index, redaction, transaction

ROWS = [("user", "Das Passwort für den SMTP-Server lautet Sommer2026!Berlin"),
        ("assistant", "пароль от сервера Zima2026!Moskva"),
        ("user", "login: admin / hunter2"),
        ("assistant", "use token 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c for the api"),
        ("user", "password is letmein"),
        ("assistant", "never print the password")]
PLAIN = ("Sommer2026!Berlin", "Zima2026!Moskva", "hunter2", "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "letmein")


def _blob(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (data / "index.sqlite3", data / "index.sqlite3-wal") if p.exists())


def test_an_index_redacted_with_version_5_patterns_is_redacted_again(tmp_path: Path) -> None:
    session = write_pi_session(tmp_path / "sessions" / "old.jsonl", tmp_path, ROWS, "old")
    data = tmp_path / "data"
    conn = open_index(data)
    with transaction(conn):
        insert_plaintext_session(conn, "old", session, ROWS)
        redaction.save_state(conn, redaction.RedactionState(version=5, phase="done"))
    conn.close()
    assert b"hunter2" in _blob(data)
    conn = open_index(data)
    state = redaction.load_state(conn)
    assert (state.version, state.phase, state.changed) == (redaction.VERSION, "done", 5)
    assert [r[0] for r in conn.execute("SELECT text FROM messages ORDER BY id")] == [
        "Das Passwort für den SMTP-Server lautet [REDACTED:password_phrase]",
        "пароль от сервера [REDACTED:password_phrase]",
        "login: admin / [REDACTED:credential_pair]",
        "use token [REDACTED:secret_assignment] for the api",
        "password is [REDACTED:password_in_prose]",
        "never print the password",
    ]
    conn.close()
    assert [value for value in PLAIN if value.encode() in _blob(data)] == []
