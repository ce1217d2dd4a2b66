"""A model's note with a right-to-left override or a zero-width space: `review` and `learning log` show them as
escapes (``\\u202e``), as they show ``ESC`` as ``\\x1b``; a note logged before they were escaped is escaped when
`learning log` prints it."""

from __future__ import annotations

import sqlite3

from learning_helpers import cli, llm_block, write_settings
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index.db import index_path
from pi_memory.learning.log import clean_note

NOTE = "saved nothing \u202egnirts\u202c and zw\u200bsp \x1b[2J"
SHOWN = "saved nothing \\u202egnirts\\u202c and zw\\u200bsp \\x1b[2J"


def test_clean_note_escapes_bidi_and_invisible_characters():
    assert clean_note(NOTE) == SHOWN
    assert clean_note("Persian می\u200cخواهم stays") == "Persian می\u200cخواهم stays"


def test_review_and_learning_log_show_a_notes_hidden_characters_as_escapes(agent, llm, brain, project, monkeypatch):
    write_settings(agent, llm_block(llm))
    monkeypatch.chdir(project)
    path = write_pi_session(project / "s.jsonl", project, [("user", "I prefer tabs"), ("assistant", "ok")])
    brain.replies.append({"operations": [], "note": NOTE})
    result = CliRunner().invoke(app, ["review", str(path)])
    assert result.exit_code == 0 and result.stdout.startswith(f"review: nothing (job 1): {SHOWN}\n")
    assert "\u202e" not in result.stdout and "\u200b" not in result.stdout
    conn = sqlite3.connect(index_path(agent.parent / "data"))
    with conn:  # a row logged by an older version, which escaped only control characters
        conn.execute("UPDATE learning_jobs SET detail = ? WHERE id = 1", ("old note \u202eevil\u2066 x",))
    conn.close()
    code, text = cli("learning", "log")
    assert code == 0 and "\u202e" not in text and "\u2066" not in text
    assert [line for line in text.splitlines() if line.startswith("#1 ")][0].endswith(
        ": old note \\u202eevil\\u2066 x")
