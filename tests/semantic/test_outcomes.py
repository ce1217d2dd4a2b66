"""Job outcomes in the index (issue 9, item 10), status that says what capture really does, and the search floor
(item 11): what one process's capture did is visible from another, with exact counts."""

from __future__ import annotations

import json

import pytest
from semantic_helpers import alias_of, decide_with, make_service, why
from typer.testing import CliRunner

import pi_memory.cli.semantic  # noqa: F401  (registers the "semantic" sub-app)
from pi_memory.cli.app import app
from pi_memory.index import open_index
from pi_memory.index import outcomes as store

make = make_service


def test_a_malformed_decision_is_counted_and_visible_from_a_new_connection(project, tmp_path, embedder,
                                                                           chat_model, scripted):
    one = make(project, tmp_path, embedder, chat_model)
    scripted.extract.append({"facts": ["User deploys with make."]})
    scripted.decide.extend([{"decisions": [{"fact": 0, "memory_id": None}]}] * 2)  # no "event", twice
    failed = one.capture("I always deploy with make.", "Noted.", "2026-11-01T09:00:00Z")
    assert failed.status == "error" and "memory decision failed" in failed.errors[0]
    for user, assistant in [("thanks!", "You're welcome!"), ("/compact", "Compacted."), ("ok", "Done.")]:
        assert one.capture(user, assistant).status == "skipped"
    scripted.extract.append({"facts": ["User's editor is helix."]})
    ok = one.capture("I use helix as my editor.", "Noted.")
    assert ok.status == "ok" and ok.count("ADD") == 1
    one.close()

    conn = open_index(tmp_path / "data")  # another connection, as another process would open it
    try:
        counts = store.counts(conn, "capture")
        assert {k: counts.get(k) for k in ("runs", "ok", "error", "skipped", "skipped:acknowledgement",
                                           "skipped:command", "errors", "ADD")} == {
            "runs": 5, "ok": 1, "error": 1, "skipped": 3, "skipped:acknowledgement": 2, "skipped:command": 1,
            "errors": 1, "ADD": 1}
        assert counts["modelCalls"] == failed.model_calls + ok.model_calls
        [latest] = store.latest(conn, "capture", "error")
        assert latest.message == failed.errors[0] and "event" in latest.message
        assert [o.outcome for o in store.latest(conn, "capture", limit=10)] == ["ok", "error"]  # skips: counts only
    finally:
        conn.close()
    two = make(project, tmp_path, embedder)
    text = two.status()
    assert ("capture in every process: 5 turn(s): 1 ok, 1 failed, 3 skipped before any model call "
            "(2 acknowledgement, 1 command)") in text
    assert f"latest capture error ({latest.at}): {latest.message}" in text
    assert two.status_info()["jobs"]["latestError"]["message"] == latest.message


def test_refusals_and_unread_text_are_counted(project, tmp_path, embedder, chat_model, scripted):
    sem = make(project, tmp_path, embedder, chat_model, captureMaxInputTokens=3_000)
    old = sem.add("User works at the company.")[0]
    scripted.extract.append({"facts": ["User administers the company's GitHub org."]})
    scripted.decide.append(decide_with(lambda p: [{"fact": 0, "event": "DELETE", "memory_id": alias_of(p, old.text),
                                                   "reason": why("User", "role", "works at the company",
                                                                 "administers the company's GitHub org")}]))
    long_answer = "\n\n".join(f"Paragraph {i}: the deploy checklist item {i} is verified by hand." * 4
                              for i in range(200))
    report = sem.capture("I admin our GitHub org. Here is the deploy checklist.", long_answer)
    assert report.refused_decisions == 1 and report.unread_chars > 0
    counts = store.counts(sem.conn, "capture")
    assert counts["refusedDecisions"] == 1 and counts["partlyRead"] == 1
    assert counts["unreadChars"] == report.unread_chars
    text = sem.status()
    assert "1 UPDATE/DELETE refused (old memory kept)" in text
    assert f"1 long turn(s) not read to the end: {report.unread_chars:,} characters left unread" in text
    assert "turns read up to 3,000 input tokens (captureMaxInputTokens)" in text


def test_outcomes_keep_the_latest_rows_and_every_count(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "KEEP", 3)
    conn = open_index(tmp_path / "data")
    try:
        assert store.counts(conn, "capture") == {} and store.latest(conn) == []  # nothing yet, nothing migrated
        for i in range(5):
            assert store.record(conn, "capture", "error" if i % 2 else "ok", counts={"runs": 1, "error": i % 2},
                                message=f"m{i}")
        assert [o.message for o in store.latest(conn, "capture", limit=10)] == ["m4", "m3", "m2"]
        assert store.counts(conn, "capture") == {"error": 2, "runs": 5}
        assert [o.message for o in store.latest(conn, "capture", "error", limit=10)] == ["m3"]
    finally:
        conn.close()


def test_status_never_says_auto_capture_is_on_when_nothing_is_captured(project, tmp_path, embedder, chat_model):
    off = make(project, tmp_path, embedder)  # no chat model
    text = off.status()
    assert "autoCapture on but inactive: no chat model" in text and "capture off: no model given" in text
    assert off.status_info()["captureActive"] is False
    on = make(project, tmp_path, embedder, chat_model)
    assert "hybrid (autoCapture on, autoRecall on, toolEnabled on)" in on.status()
    assert on.status_info()["captureActive"] is True
    manual = make(project, tmp_path, embedder, memoryMode="active")
    assert "active (autoCapture off, autoRecall off, toolEnabled on)" in manual.status()


# --- search floor ----------------------------------------------------------------------------------------------
@pytest.fixture
def cli(tmp_path, monkeypatch, project):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["semantic", *args, "--dir", str(tmp_path / "data"),
                                             "--project", str(project)])


@pytest.mark.parametrize("query", ["🤖", "write a function that reverses a linked list", "???", "qqqq zzzz"])
def test_search_has_the_recall_floor(cli, query):
    for text in ("User prefers pnpm over npm.", "The CI runs on GitHub Actions.", "User's cat is called Miso."):
        assert cli("add", text).exit_code == 0
    data = json.loads(cli("search", query, "--json").stdout)
    assert data["count"] == 0 and data["results"] == [] and data["floor"] == 0.4
    r = cli("search", query)
    assert r.exit_code == 0 and r.stdout.startswith("No memory is related enough (similarity floor 0.4")
    every = json.loads(cli("search", query, "--no-floor", "--json").stdout)
    # a query the model cannot read ("🤖": only unknown pieces) has no vector, so even without a floor no memory
    # is near it; the others rank every memory by meaning
    assert every["count"] == (0 if query == "🤖" else 3) and every["floor"] is None


def test_search_still_finds_related_memories(cli):
    cli("add", "User prefers pnpm over npm.")
    cli("add", "The CI runs on GitHub Actions.")
    found = json.loads(cli("search", "which package manager does the user prefer", "--json").stdout)
    assert [h["memory"] for h in found["results"]] == ["User prefers pnpm over npm."]
    assert json.loads(cli("search", "GitHub Actions", "--json").stdout)["results"][0]["memory"] == (
        "The CI runs on GitHub Actions.")
