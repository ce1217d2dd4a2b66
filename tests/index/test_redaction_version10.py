"""An index whose rows were redacted with the patterns of ``redaction.VERSION`` 9 is redacted again at open: a word
password under a known account in a table row with no header, ``pass: toor``, a one-letter password and BIP39 seed
phrases of another list, in capitals or in the middle of a sentence were kept in clear by them."""

from __future__ import annotations

from pathlib import Path

from readers_helpers import insert_plaintext_session

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import open_index, redaction, transaction

SPANISH = "nómina caimán arder asegurar árbol lluvia azúcar búho tomar fuga pleno bestia"
CAPITALS = "TILT WOOL MOUSE LAUNDRY SKILL HAWK DEFENSE PELICAN LOAD CANNON WHEAT VICIOUS"
MID = "excess enable volcano viable random naive private word include cube share forward"
ROWS = [("user", "| root | toor |\n| deploy | correct-horse |"),
        ("assistant", "ssh as root (pass: sesam)"),
        ("user", "pass = q"),
        ("assistant", f"semilla: {SPANISH}"),
        ("user", f"Write {CAPITALS} down"),
        ("assistant", f"I wrote {MID} on a card"),
        ("user", "| staging | eu-west-1 |\ntests pass: 42 of 42\nDas Passwort ist geheim.")]
PLAIN = ("toor", "correct-horse", "sesam", "= q", "caimán", "PELICAN", "volcano")


def _blob(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (data / "index.sqlite3", data / "index.sqlite3-wal") if p.exists())


def test_an_index_redacted_with_version_9_patterns_is_redacted_again(tmp_path: Path) -> None:
    session = write_pi_session(tmp_path / "sessions" / "old.jsonl", tmp_path, ROWS, "old")
    data = tmp_path / "data"
    conn = open_index(data)
    with transaction(conn):
        insert_plaintext_session(conn, "old", session, ROWS)
        redaction.save_state(conn, redaction.RedactionState(version=9, phase="done"))
    conn.close()
    assert "caimán".encode() in _blob(data)
    conn = open_index(data)
    state = redaction.load_state(conn)
    assert (state.version, state.phase, state.changed) == (redaction.VERSION, "done", 6)
    assert [r[0] for r in conn.execute("SELECT text FROM messages ORDER BY id")] == [
        "| root | [REDACTED:password_in_prose] |\n| deploy | [REDACTED:password_in_prose] |",
        "ssh as root (pass: [REDACTED:password_in_prose])",
        "pass = [REDACTED:password_in_prose]",
        "semilla: [REDACTED:seed_phrase]",
        "Write [REDACTED:seed_phrase] down",
        "I wrote [REDACTED:seed_phrase] on a card",
        "| staging | eu-west-1 |\ntests pass: 42 of 42\nDas Passwort ist geheim.",
    ]
    conn.close()
    assert [value for value in PLAIN if value.encode() in _blob(data)] == []
