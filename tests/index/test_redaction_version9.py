"""An index whose rows were redacted with the patterns of ``redaction.VERSION`` 8 is redacted again at open: a password
in a table row with no header, a value under a heading, a capitalised word under a label, hex key material after a
label word the lists lacked, a wallet seed phrase, ``pw is toor``, a word people choose as a password and a door code
after an opening verb were kept in clear by them."""

from __future__ import annotations

from pathlib import Path

from readers_helpers import insert_plaintext_session

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import open_index, redaction, transaction

SEED = "hen melody bargain shed dumb capital dismiss clay sibling canyon year obscure"
HEX = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
ROWS = [("user", "Root credentials\n| prod-db | admin | Xk29!fpQ7zz |"),
        ("assistant", "## Password\nFq83!zLw0p"),
        ("user", "Office wifi\nPassword:\nSunflower"),
        ("assistant", f"the disk key was {HEX}"),
        ("user", f"seed phrase: {SEED}"),
        ("assistant", "ssh in as root, the pw is r00t."),
        ("user", "Passwort ist geheim"),
        ("assistant", "the office door opens with 7731"),
        ("user", f"| name | type |\n| user | string |\nthe content key is {HEX}; the pw is long enough")]
PLAIN = ("Xk29!fpQ7zz", "Fq83!zLw0p", "Sunflower", "melody bargain", "r00t", "geheim", "7731")


def _blob(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (data / "index.sqlite3", data / "index.sqlite3-wal") if p.exists())


def test_an_index_redacted_with_version_8_patterns_is_redacted_again(tmp_path: Path) -> None:
    session = write_pi_session(tmp_path / "sessions" / "old.jsonl", tmp_path, ROWS, "old")
    data = tmp_path / "data"
    conn = open_index(data)
    with transaction(conn):
        insert_plaintext_session(conn, "old", session, ROWS)
        redaction.save_state(conn, redaction.RedactionState(version=8, phase="done"))
    conn.close()
    assert b"Xk29!fpQ7zz" in _blob(data)
    conn = open_index(data)
    state = redaction.load_state(conn)
    assert (state.version, state.phase, state.changed) == (redaction.VERSION, "done", 8)
    assert [r[0] for r in conn.execute("SELECT text FROM messages ORDER BY id")] == [
        "Root credentials\n| prod-db | admin | [REDACTED:password_in_prose] |",
        "## Password\n[REDACTED:password_in_prose]",
        "Office wifi\nPassword:\n[REDACTED:password_in_prose]",
        "the disk key was [REDACTED:secret_assignment]",
        "seed phrase: [REDACTED:seed_phrase]",
        "ssh in as root, the pw is [REDACTED:password_in_prose].",
        "Passwort ist [REDACTED:password_phrase]",
        "the office door opens with [REDACTED:pin_code]",
        f"| name | type |\n| user | string |\nthe content key is {HEX}; the pw is long enough",
    ]
    conn.close()
    assert [value for value in PLAIN if value.encode() in _blob(data)] == []
