"""An index whose rows were redacted with the patterns of ``redaction.VERSION`` 10 is redacted again at open: a
password, token or login named with a qualifier between its label and its verb ("the api token for sentry is X",
"la contraseña del wifi es X", "login admin:X on grafana") and a quoted passphrase after "passphrase" were kept in
clear by them. Every value is made up."""

from __future__ import annotations

from pathlib import Path

from readers_helpers import insert_plaintext_session

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import open_index, redaction, transaction

HEX = "4f9c2a7e8b1d3f6a0c5e9b2d7f1a3c8e"
ROWS = [("user", f"the api token for sentry is {HEX}"),
        ("assistant", "la contraseña del wifi es Gato-Azul-77"),
        ("user", "creds for grafana are admin / Cat-Blue-80"),
        ("assistant", "login admin:Cat-Blue-81 on grafana"),
        ("user", "use passphrase 'purple monkey dishwasher 42' for the gpg key"),
        ("assistant", "the key for the office is at reception\nlogin admin on grafana to see the dashboards")]
PLAIN = (HEX, "Gato-Azul-77", "Cat-Blue-80", "Cat-Blue-81", "dishwasher")


def _blob(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (data / "index.sqlite3", data / "index.sqlite3-wal") if p.exists())


def test_an_index_redacted_with_version_10_patterns_is_redacted_again(tmp_path: Path) -> None:
    session = write_pi_session(tmp_path / "sessions" / "old.jsonl", tmp_path, ROWS, "old")
    data = tmp_path / "data"
    conn = open_index(data)
    with transaction(conn):
        insert_plaintext_session(conn, "old", session, ROWS)
        redaction.save_state(conn, redaction.RedactionState(version=10, phase="done"))
    conn.close()
    assert b"Gato-Azul-77" in _blob(data)
    conn = open_index(data)
    state = redaction.load_state(conn)
    assert (state.version, state.phase, state.changed) == (11, "done", 5)
    assert [r[0] for r in conn.execute("SELECT text FROM messages ORDER BY id")] == [
        "the api token for sentry is [REDACTED:secret_assignment]",
        "la contraseña del wifi es [REDACTED:password_phrase]",
        "creds for grafana are admin / [REDACTED:credential_pair]",
        "login admin:[REDACTED:credential_pair] on grafana",
        "use passphrase '[REDACTED:password_in_prose]' for the gpg key",
        "the key for the office is at reception\nlogin admin on grafana to see the dashboards",
    ]
    conn.close()
    assert [value for value in PLAIN if value.encode() in _blob(data)] == []
