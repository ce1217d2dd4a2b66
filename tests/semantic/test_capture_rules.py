"""Capture's rules against a scripted model on 127.0.0.1 (issue 9): turns with nothing durable cost no call (3),
an UPDATE/DELETE must name a contradiction that holds for the pair (4), long turns are read whole in windows
within captureMaxInputTokens (5), and dates are the user's (7)."""

from __future__ import annotations

import re

import pytest
from semantic_helpers import ALICE, DECIDE_MARK, EXTRACT_MARK, alias_of, decide_with, why

from pi_memory.retrieval.recall import estimate_tokens
from pi_memory.semantic.capture import capture_turn
from pi_memory.semantic.capture_gate import skip_rule
from pi_memory.semantic.capture_windows import plan, split_text
from pi_memory.semantic.supersession import SupersedeReason, refusal


def run(backend, chat_model, user, assistant="Noted.", *, observed_at="2026-03-14T10:00:00Z", **kw):
    return capture_turn(backend, chat_model, user_text=user, assistant_text=assistant, scope=ALICE,
                        observed_at=observed_at, source={"session_id": "s"}, **kw)


# --- 3. turns with nothing durable -----------------------------------------------------------------------------
@pytest.mark.parametrize("user,assistant,rule", [
    ("thanks!", "You're welcome!", "acknowledgement"),
    ("Thank you so much 🙏", "Glad I could help. Let me know if there's anything else!", "acknowledgement"),
    ("ok", "Done.", "acknowledgement"),
    ("lgtm 👍", "Merged.", "few content words"),
    ("/compact", "Compacted the conversation: 14,000 tokens summarised.", "command"),
    ("/model", "", "command"),
    ("", "Sure thing!", "acknowledgement"),
    ("hola", "¡Hola!", "few content words"),
    ("yes", "ok", "acknowledgement"),
    ("谢谢!", "不客气！", "acknowledgement"),
    ("ありがとう", "どういたしまして。", "acknowledgement"),
    ("merci !", "De rien !", "acknowledgement"),
])
def test_turns_without_durable_content_are_skipped(user, assistant, rule):
    assert skip_rule(user, assistant)[0] == rule


@pytest.mark.parametrize("user,assistant", [
    ("I use pnpm.", "Noted."),  # two content words are enough
    ("thanks", "You're welcome. By the way, your CI image still runs Node 18, which reaches end of life soon."),
    ("/plan move the build to pnpm", "ok"),  # a command with arguments is read
    ("yes", "I deployed the billing service to staging on port 8080."),
    ("我用pnpm", "好的"),
    ("Nope, we deploy on Thursdays now.", "Got it."),
    ("I'm on billing.", "Noted."),  # one content word on each side
    ("I need help with the build, it works locally", "Let me know the error."),
])
def test_turns_with_content_are_read(user, assistant):
    assert skip_rule(user, assistant) is None


def test_ten_thank_you_turns_make_no_model_call(backend, chat_model, scripted):
    turns = [("thanks!", "You're welcome!"), ("/compact", "Compacted."), ("ok", "👍"), ("great, thx", "Anytime!")]
    reports = [run(backend, chat_model, u, a) for u, a in turns * 3]
    assert {(r.status, r.model_calls) for r in reports} == {("skipped", 0)}
    assert scripted.llm.chat_requests == []
    assert reports[0].summary().startswith("capture skipped: the user's message is a short acknowledgement")


# --- 4. retiring a memory needs a contradiction ----------------------------------------------------------------
def test_a_delete_that_contradicts_nothing_adds_the_fact_and_keeps_the_old(backend, chat_model, scripted, caplog):
    """graphiti #1728: "administers the company's GitHub org" must not retire "works at the company"."""
    old = backend.add("User works at the company.", scope=ALICE)
    scripted.extract.append({"facts": ["User administers the company's GitHub org."]})
    scripted.decide.append(decide_with(lambda p: [{
        "fact": 0, "event": "DELETE", "memory_id": alias_of(p, old.text), "text": None,
        "reason": why("User", "role at the company", "works at the company",
                      "administers the company's GitHub org")}]))
    report = run(backend, chat_model, "I'm the admin of our GitHub org now.")
    assert report.status == "ok" and report.refused_decisions == 1
    [event] = report.events
    assert event.event == "ADD" and event.text == "User administers the company's GitHub org."
    assert event.reason.startswith("DELETE refused (the new text does not change 'role at the company'")
    assert backend.get(old.id, scope=ALICE).status == "active"
    assert sorted(m.text for m in backend.get_all(scope=ALICE)) == [
        "User administers the company's GitHub org.", "User works at the company."]
    assert report.refusals == [f"DELETE of {old.text!r} refused: the new text does not change 'role at the "
                               "company' of the old memory: it says something else about 'User'"]
    assert "1 UPDATE/DELETE refused (old memory kept)" in report.summary()
    assert report.to_public()["refusedDecisions"] == 1
    assert any("refused" in r.message for r in caplog.records)


def test_decisions_without_a_reason_or_with_one_that_is_not_in_the_texts_are_refused(backend, chat_model,
                                                                                        scripted):
    pets = backend.add("User has a cat named Miso.", scope=ALICE)
    city = backend.add("User lives in Berlin.", scope=ALICE)
    scripted.extract.append({"facts": ["User adopted a dog named Rex.", "User's sister lives in Munich."]})
    scripted.decide.append(decide_with(lambda p: [
        {"fact": 0, "event": "DELETE", "memory_id": alias_of(p, pets.text), "text": None},
        {"fact": 1, "event": "UPDATE", "memory_id": alias_of(p, city.text), "text": "User's sister lives in Munich.",
         "reason": why("User", "city", "Hamburg", "Munich")}]))
    report = run(backend, chat_model, "We got a dog, Rex. My sister moved to Munich.")
    assert report.refused_decisions == 2 and [e.event for e in report.events] == ["ADD", "ADD"]
    assert "no reason named the contradiction" in report.refusals[0]
    assert "the reason's old value 'Hamburg' is not in the old memory" in report.refusals[1]
    assert backend.count(scope=ALICE) == 4 and backend.count(scope=ALICE, status="superseded") == 0


def test_real_contradictions_still_supersede(backend, chat_model, scripted):
    home = backend.add("User lives in Lisbon.", scope=ALICE)
    job = backend.add("User works at Acme.", scope=ALICE)
    scripted.extract.append({"facts": ["User moved to Porto.", "User no longer works at Acme; they joined Globex."]})
    scripted.decide.append(decide_with(lambda p: [
        {"fact": 0, "event": "DELETE", "memory_id": alias_of(p, home.text), "text": None,
         "reason": why("User", "city of residence", "Lisbon", "Porto")},
        {"fact": 1, "event": "DELETE", "memory_id": alias_of(p, job.text), "text": None,
         "reason": why("User", "employer", "works at Acme", "joined Globex")}]))
    report = run(backend, chat_model, "Moved to Porto and left Acme for Globex.")
    assert report.refused_decisions == 0 and [e.event for e in report.events] == ["DELETE", "DELETE"]
    assert backend.get(home.id, scope=ALICE).status == "superseded"
    assert backend.get(job.id, scope=ALICE).status == "superseded"
    history = backend.history(report.events[0].id, scope=ALICE)
    assert any(e.reason == "capture: contradicted by a newer fact (User: city of residence 'Lisbon' → 'Porto')"
               for e in history)


@pytest.mark.parametrize("event,old,new,reason,allowed", [
    ("DELETE", "Service 0 runs on port 8000.", "Service 0 runs on port 9999.", ("Service 0", "port", "8000", "9999"),
     True),
    ("DELETE", "User's manager is Dana.", "User's manager is now Priya.", ("User's manager", "name", "Dana", "Priya"),
     True),
    ("DELETE", "User drinks coffee.", "User stopped drinking coffee.", ("User", "habit", "drinks coffee",
                                                                         "stopped drinking coffee"), True),
    ("UPDATE", "User has two cats.", "User has two cats, Miso and Tofu.", ("User", "cats", "two cats",
                                                                           "two cats, Miso and Tofu"), True),
    ("DELETE", "User prefers dark mode.", "User prefers dark mode everywhere.", ("User", "theme", "dark mode",
                                                                                 "dark mode"), False),
    ("DELETE", "The backend is written in Go.", "The frontend is written in TypeScript.",
     ("The backend", "language", "Go", "TypeScript"), False),
    ("UPDATE", "User's laptop is a ThinkPad X1.", "User bought a standing desk.",
     ("User", "equipment", "a ThinkPad X1", "a standing desk"), False),
    ("DELETE", "User plays guitar.", "User started piano lessons.", ("User", "instrument", "plays guitar",
                                                                     "started piano lessons"), False),
    ("DELETE", "用户住在里斯本。", "用户住在波尔图。", ("用户", "城市", "里斯本", "波尔图"), True),  # no spaces
    ("DELETE", "用户在公司工作。", "用户管理公司的GitHub组织。", ("用户", "职位", "在公司工作", "管理公司的GitHub组织"), False),
])
def test_the_check_against_the_pair(event, old, new, reason, allowed):
    subject, attribute, before, after = reason
    verdict = refusal(event, old, new, SupersedeReason(subject=subject, attribute=attribute, old_value=before,
                                                       new_value=after))
    assert (verdict is None) is allowed, verdict


# --- 5. long turns are read whole ------------------------------------------------------------------------------
TOPICS = ["Kafka", "Terraform", "Grafana", "Redis", "Nginx", "Vault", "Airflow", "Jenkins", "Celery", "Sentry"]


def long_turn() -> str:
    """About 120,000 characters: ten topics, each a distinctive fact sentence inside 12,000 characters of filler."""
    filler = "We looked at the logs and the build output again, line by line, without finding anything new. "
    parts = []
    for i, topic in enumerate(TOPICS):
        body = (filler * 70)[:5800]
        parts.append(f"{body}\n\nFACT: the team runs {topic} version {i + 1}.0 in production.\n\n{body}")
    return "\n\n".join(parts)


def facts_in(turn: str) -> dict:
    return {"facts": [f"The team runs {t} version {v}.0 in production."
                      for t, v in re.findall(r"FACT: the team runs (\w+) version (\d+)\.0", turn)]}


def test_a_long_turn_is_read_in_windows_and_every_fact_is_found(backend, chat_model, scripted):
    text = long_turn()
    assert 115_000 < len(text) < 125_000
    scripted.extract.extend([facts_in] * 10)
    report = run(backend, chat_model, "Here is everything about our stack.", assistant=text)
    assert report.status == "ok" and report.unread_chars == 0 and report.windows == report.windows_read == 6
    stored = sorted(m.text for m in backend.get_all(scope=ALICE))
    assert stored == sorted(f"The team runs {t} version {i + 1}.0 in production." for i, t in enumerate(TOPICS))
    bodies = [b["messages"][1]["content"] for b in scripted.bodies(EXTRACT_MARK)]
    assert len(bodies) == 6 and max(len(b) for b in bodies) < 25_000
    assert all("the start of the request): Here is everything about our stack." in b for b in bodies[1:])
    assert "assistant (part 2 of 6)" in bodies[1]
    assert len(scripted.bodies(DECIDE_MARK)) == 5  # the user window held no fact: no decision call


def test_what_the_budget_leaves_unread_is_said(backend, chat_model, scripted):
    text = long_turn()
    scripted.extract.extend([facts_in] * 10)
    report = run(backend, chat_model, "Stack notes.", assistant=text, max_input_tokens=14_000)
    assert report.windows_read == 3 and report.windows == 6  # the user's window and two of the answer
    sent = [b["messages"] for b in scripted.bodies(EXTRACT_MARK)]
    assert sum(estimate_tokens(m["content"]) for ms in sent for m in ms) <= 14_000
    assert report.unread_chars > 60_000 and report.unread_chars + sum(
        len(b["messages"][1]["content"]) for b in scripted.bodies(EXTRACT_MARK)) >= len(text)
    read = {f for b in scripted.bodies(EXTRACT_MARK) for f in facts_in(b["messages"][1]["content"])["facts"]}
    assert sorted(m.text for m in backend.get_all(scope=ALICE)) == sorted(read) and 3 <= len(read) <= 5
    assert (f"{report.unread_chars:,} of the turn's {report.turn_chars:,} characters were not read"
            in report.message)
    assert "captureMaxInputTokens (14,000) ran out" in report.message
    assert f"{report.unread_chars:,} of {report.turn_chars:,} characters not read" in report.summary()


def test_a_failed_window_counts_the_rest_as_unread(backend, chat_model, scripted):
    text = long_turn()
    scripted.extract.extend([facts_in, facts_in, "not json", "still not json"])  # json_retries=1: 2 attempts
    report = run(backend, chat_model, "Stack notes.", assistant=text)
    assert report.status == "error" and report.windows_read == 2 and report.unread_chars > 70_000
    assert "fact extraction failed" in report.errors[0]
    assert "(4 of 6 parts)" in report.message and "captureMaxInputTokens" not in report.message
    assert len(backend.get_all(scope=ALICE)) >= 1  # the facts of the window read stay stored


def test_a_failed_decision_counts_the_windows_after_it_as_unread(backend, chat_model, scripted):
    text = long_turn()
    scripted.extract.extend([facts_in] * 10)
    scripted.decide.extend(["not json", "still not json"])  # the first window with facts cannot be decided
    report = run(backend, chat_model, "Stack notes.", assistant=text)
    assert report.status == "error" and "memory decision failed" in report.errors[0]
    assert report.windows_read == 2 and report.windows == 6
    unread = sum(len(p) for p in split_text(text, 24_000)[1:])
    assert report.unread_chars == unread and backend.get_all(scope=ALICE) == []


def test_windows_cut_at_paragraphs_and_a_short_turn_is_one_window():
    text = ("alpha " * 300 + "\n\n") * 10
    pieces = split_text(text, 4000)
    assert "".join(pieces) == text and all(len(p) <= 4000 for p in pieces)
    assert all(p.endswith("\n\n") for p in pieces[:-1])
    assert split_text("x" * 9000, 4000) == ["x" * 4000, "x" * 4000, "x" * 1000]  # no break: a hard cut
    short = plan("I use pnpm.", "Noted.", prompt_tokens=400)
    assert [w.text for w in short.windows] == ["user: I use pnpm.\n\nassistant: Noted."] and short.unread_chars == 0


# --- 7. dates in the user's time zone --------------------------------------------------------------------------
@pytest.mark.parametrize("observed,day,weekday,yesterday,stored", [
    ("2026-03-15T00:30:00+09:00", "2026-03-15", "Sunday", "2026-03-14", "2026-03-15T00:30:00.000+09:00"),  # Tokyo
    ("2026-03-14T23:30:00-08:00", "2026-03-14", "Saturday", "2026-03-13", "2026-03-14T23:30:00.000-08:00"),  # LA
    ("2026-03-01T00:10:00+05:30", "2026-03-01", "Sunday", "2026-02-28", "2026-03-01T00:10:00.000+05:30"),  # Delhi
    ("2026-01-01T23:59:00-03:30", "2026-01-01", "Thursday", "2025-12-31", "2026-01-01T23:59:00.000-03:30"),
])
def test_yesterday_is_the_day_before_the_users_date(backend, chat_model, scripted, observed, day, weekday,
                                                      yesterday, stored):
    from datetime import date, timedelta

    def extract(turn: str) -> dict:
        seen = re.search(r"Observation date: (\d{4}-\d{2}-\d{2})", turn).group(1)
        return {"facts": [f"User started the new job on {date.fromisoformat(seen) - timedelta(days=1)}."]}

    scripted.extract.append(extract)
    report = run(backend, chat_model, "I started my new job yesterday!", observed_at=observed)
    system = scripted.bodies(EXTRACT_MARK)[0]["messages"][0]["content"]
    assert f"{day} ({weekday})" in system
    mem = backend.get(report.events[0].id, scope=ALICE)
    assert mem.text == f"User started the new job on {yesterday}."
    assert mem.observed_at == stored and mem.date == day


def test_without_a_time_capture_uses_this_machines_zone(backend, chat_model, scripted, monkeypatch):
    import time
    from datetime import datetime

    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14: the local date is ahead of UTC most of the day
    time.tzset()
    try:
        scripted.extract.append({"facts": ["User uses fish shell."]})
        report = run(backend, chat_model, "I use fish shell.", observed_at=None)
        mem = backend.get(report.events[0].id, scope=ALICE)
        assert mem.observed_at.endswith("+14:00")
        assert mem.date == datetime.now().astimezone().date().isoformat()
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
