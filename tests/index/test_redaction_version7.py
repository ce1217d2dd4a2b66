"""An index whose rows were redacted with the patterns of ``redaction.VERSION`` 6 is redacted again at open: a PIN,
a door code, a plain word after a password label of another language and a passphrase of several words were kept
in clear by them."""

from __future__ import annotations

from pathlib import Path

from readers_helpers import insert_plaintext_session

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import open_index, redaction, transaction

ROWS = [("user", "my bank PIN is 4821"),
        ("assistant", "the door code is 7731"),
        ("user", "mein Passwort ist sommerwiese"),
        ("assistant", "пароль: подсолнух"),
        ("user", "wifi password is correct horse battery staple"),
        ("assistant", "PIN codes are 4 digits; pin the version to 4.2.1")]
PLAIN = ("4821", "7731", "sommerwiese", "подсолнух", "horse battery")


def _blob(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (data / "index.sqlite3", data / "index.sqlite3-wal") if p.exists())


def test_an_index_redacted_with_version_6_patterns_is_redacted_again(tmp_path: Path) -> None:
    session = write_pi_session(tmp_path / "sessions" / "old.jsonl", tmp_path, ROWS, "old")
    data = tmp_path / "data"
    conn = open_index(data)
    with transaction(conn):
        insert_plaintext_session(conn, "old", session, ROWS)
        redaction.save_state(conn, redaction.RedactionState(version=6, phase="done"))
    conn.close()
    assert b"sommerwiese" in _blob(data)
    conn = open_index(data)
    state = redaction.load_state(conn)
    assert (state.version, state.phase, state.changed) == (redaction.VERSION, "done", 5)
    assert [r[0] for r in conn.execute("SELECT text FROM messages ORDER BY id")] == [
        "my bank PIN is [REDACTED:pin_code]",
        "the door code is [REDACTED:pin_code]",
        "mein Passwort ist [REDACTED:password_phrase]",
        "пароль: [REDACTED:password_phrase]",
        "wifi password is [REDACTED:password_in_prose]",
        "PIN codes are 4 digits; pin the version to 4.2.1",
    ]
    conn.close()
    assert [value for value in PLAIN if value.encode() in _blob(data)] == []
