"""No credential from a transcript or a store reaches a learning model: review, flush, the correction's
refinement, consolidation and the dream show messages redacted the one way the session index redacts them
(prompts.shown_message), so a review of a session file sends what a dream of the same session sends."""

from __future__ import annotations

import json
import re

from learning_helpers import cli, llm_block, write_settings

from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import index_paths
from pi_memory.learning import Turn, read_turns, refine_correction, review_session
from pi_memory.learning.consolidate import consolidate
from pi_memory.learning.dream import dream
from pi_memory.runtime import open_memory

AWS = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PASSWORD = "Hunter2!x9"
GITHUB = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
DB_URL_PASSWORD = "s3cr3tPass"
SECRETS = (AWS, AWS_SECRET, PASSWORD, GITHUB, DB_URL_PASSWORD)
CHAT = [
    ("user", f"The staging box uses the db password: {PASSWORD} for now"),
    ("assistant", "Noted, I will not write it anywhere."),
    ("user", f"Deploy with AWS key {AWS} and the token {GITHUB}"),
    ("assistant", "Run printenv AWS_SECRET_ACCESS_KEY"),
    ("user", AWS_SECRET),  # a bare value: a credential only by the message before it
    ("assistant", f"Connecting to postgresql://admin:{DB_URL_PASSWORD}@db.internal/app"),
    ("user", "I prefer tabs over spaces"),
    ("assistant", "Ok."),
]
MARKERS = ["password_in_prose", "aws_access_key_id", "github_token", "aws_secret_access_key", "url_credentials"]
MARKER = re.compile(r"\[REDACTED:([a-z_]+)\]")


def _bodies(llm) -> str:
    return "\n".join(json.dumps(body) for body in llm.chat_requests)


def _markers(llm) -> list[str]:
    return sorted(MARKER.findall("\n".join(m["content"] for b in llm.chat_requests for m in b["messages"])))


def test_review_of_a_session_file_sends_what_a_dream_of_it_sends(agent, llm, brain, project, monkeypatch):
    """The tester's case: `pi-memory review FILE` sent AKIAIOSFODNN7EXAMPLE and Hunter2!x9 to the model, while a
    dream over the same session sent [REDACTED:aws_access_key_id]."""
    write_settings(agent, llm_block(llm))
    path = write_pi_session(agent / "sessions" / "p" / "s1.jsonl", project, CHAT, session_id="s1")
    monkeypatch.chdir(project)
    code, data = cli("review", str(path), "--json")
    assert code == 0 and data["outcome"] == "nothing"
    review_body, review_markers = _bodies(llm), _markers(llm)
    assert not any(s in review_body for s in SECRETS)
    assert review_markers == sorted(MARKERS)
    llm.clear()
    code, data = cli("dream", "--force", "--json")
    assert code == 0 and data["outcome"] == "nothing" and data["calls"] == 1
    assert not any(s in _bodies(llm) for s in SECRETS)
    assert _markers(llm) == review_markers
    # the words around a credential reach the model as the session index keeps them
    assert "the db password: [REDACTED:password_in_prose] for now" in review_body
    assert "USER: [REDACTED:aws_secret_access_key]" in review_body


def test_flush_and_the_correction_refinement_send_no_credential(agent, llm, brain, project):
    write_settings(agent, llm_block(llm))
    memory = open_memory(project)
    learner = memory.learner()
    turns = [Turn(role, text) for role, text in CHAT]
    assert review_session(learner, turns, kind="flush", trigger="compaction", session_id=None).outcome == "nothing"
    saved = f"[correction] Use the key {AWS} — Failed: User corrected the agent"  # hand-written: not scanned
    assert refine_correction(learner, saved, turns, session_id=None).outcome == "nothing"
    assert len(llm.chat_requests) == 2 and not any(s in _bodies(llm) for s in SECRETS)
    flush, refine = ([m["content"] for m in b["messages"]] for b in llm.chat_requests)
    assert sorted(MARKER.findall(flush[-1])) == sorted(MARKERS)
    # the refinement reads the last 6 messages: the password phrase is older than those
    assert sorted(MARKER.findall(refine[-1])) == sorted(["aws_access_key_id", "aws_access_key_id", "github_token",
                                                         "aws_secret_access_key", "url_credentials"])


def test_a_long_message_is_redacted_in_the_head_and_tail_it_keeps(agent, llm, brain, project):
    write_settings(agent, llm_block(llm))
    learner = open_memory(project).learner()
    long = f"my key {AWS} " + "log line\n" * 8000 + f"and the token {GITHUB}"
    assert len(long) > 2_000 + 2 * 25_000  # scanned by windows, not whole
    assert review_session(learner, [Turn("user", long)], trigger="t", session_id=None).outcome == "nothing"
    [body] = llm.chat_requests
    text = body["messages"][-1]["content"]
    assert not any(s in json.dumps(body) for s in SECRETS)
    assert "USER: my key [REDACTED:aws_access_key_id] log line" in text
    assert text.endswith("log line\nand the token [REDACTED:github_token]")


def test_consolidation_shows_hand_edited_entries_redacted_in_its_usage_signals(agent, llm, brain, project):
    write_settings(agent, llm_block(llm))
    memory = open_memory(project)
    entries = [f"Deploy key {GITHUB}", f"AWS key {AWS} lives in the vault", "CI runs on GitHub Actions"]
    memory.store.path("memory").parent.mkdir(parents=True, exist_ok=True)
    memory.store.path("memory").write_text("\n§\n".join(entries) + "\n", encoding="utf-8")
    learner = memory.learner()
    learner.store.load_from_disk()
    usage = {e: (3, "2026-11-30") for e in entries}
    assert consolidate(learner, "memory", usage=usage).outcome == "no_shrink"  # the model changed nothing
    [body] = llm.chat_requests
    prompt = body["messages"][-1]["content"]
    assert not any(s in json.dumps(body) for s in SECRETS)
    assert "- hits 3, last used 2026-11-30: Deploy key [REDACTED:github_token]" in prompt
    assert "- hits 3, last used 2026-11-30: AWS key [REDACTED:aws_access_key_id] lives in the vault" in prompt


def test_read_turns_keeps_the_files_text_and_the_prompt_redacts_it(agent, project, tmp_path):
    """The turns are the file's own words (a person's `review` reads the real file); only what a model is
    shown is redacted, so the redaction is one step for every job instead of one per reader."""
    path = write_pi_session(tmp_path / "s.jsonl", project, CHAT[:3])
    _, turns, _ = read_turns(path)
    assert [t.text for t in turns] == [text for _, text in CHAT[:3]]


def test_the_dream_redacts_even_rows_the_index_kept_in_the_clear(agent, llm, brain, project):
    """A row indexed before the index's redaction migration caught up (or by patterns of an older version) is
    redacted on its way to the model all the same."""
    write_settings(agent, llm_block(llm))
    write_pi_session(agent / "sessions" / "p" / "s1.jsonl", project, CHAT, session_id="s1")
    memory = open_memory(project)
    learner = memory.learner()
    index_paths(learner.conn, None)
    learner.conn.execute("UPDATE messages SET text = ? WHERE text LIKE 'Deploy with AWS key%'", (CHAT[2][1],))
    assert learner.conn.execute("SELECT count(*) FROM messages WHERE text LIKE ?", (f"%{AWS}%",)).fetchone() == (1,)
    report = dream(learner, memory.settings.data_dir, model_named=True, force=True)
    assert report.outcome == "nothing" and report.calls == 1
    assert not any(s in _bodies(llm) for s in SECRETS) and _markers(llm) == sorted(MARKERS)
