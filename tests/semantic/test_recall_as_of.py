"""Recall "as of" a moment: nothing dated later is returned, and the prompt's dates become windows that boost
and keep the candidates inside them (pi_memory.retrieval.dates)."""

from __future__ import annotations

from datetime import date

import pytest
from semantic_helpers import ALICE, insert_turns

from pi_memory.retrieval import session_search
from pi_memory.retrieval.dates import as_of_iso, date_windows, in_windows, is_after
from pi_memory.retrieval.engine import recall

AS_OF = "2026-12-01T10:00:00.000Z"  # a Tuesday


@pytest.mark.parametrize(("prompt", "window", "rest"), [
    ("what did we decide yesterday?", (date(2026, 11, 29), date(2026, 12, 1)), "what did we decide ?"),
    ("the build broke two days ago", (date(2026, 11, 28), date(2026, 11, 30)), "the build broke"),
    ("what did we do last week?", (date(2026, 11, 22), date(2026, 11, 30)), "what did we do ?"),
    ("in May we moved the database", (date(2026, 4, 30), date(2026, 6, 1)), "we moved the database"),
    ("the meeting on May 8", (date(2026, 5, 7), date(2026, 5, 9)), "the meeting"),
    ("notes from 2023-05-08 about kafka", (date(2023, 5, 7), date(2023, 5, 9)), "notes from about kafka"),
    ("what broke last Monday", (date(2026, 11, 29), date(2026, 12, 1)), "what broke"),
    ("kafka issues last month", (date(2026, 10, 31), date(2026, 12, 1)), "kafka issues"),
    ("the outage in October", (date(2026, 9, 30), date(2026, 11, 1)), "the outage"),
    ("the outage in December", (date(2026, 11, 30), date(2026, 12, 1)), "the outage"),
])
def test_date_windows_read_against_as_of(prompt, window, rest):
    assert date_windows(prompt, AS_OF) == ([window], rest)


@pytest.mark.parametrize("prompt", ["May I ask how to rebase?", "this may break the build", "run the linter",
                                    "what did we decide?"])
def test_prompts_without_dates_have_no_window(prompt):
    assert date_windows(prompt, AS_OF) == ([], prompt)


def test_as_of_forms_and_comparisons():
    assert as_of_iso("2026-11-25") == "2026-11-25T23:59:59.999Z"
    assert as_of_iso("2026-11-25T08:00:00+02:00") == "2026-11-25T06:00:00.000Z"
    assert is_after("2026-11-26T00:00:00.000Z", "2026-11-25T23:59:59.999Z")
    assert not is_after("2026-11-25T10:00:00Z", "2026-11-25T23:59:59.999Z")
    assert not is_after("", AS_OF) and not is_after("garbage", AS_OF)
    assert in_windows("2026-11-30T12:00:00Z", [(date(2026, 11, 29), date(2026, 12, 1))])
    assert not in_windows("2026-11-20", [(date(2026, 11, 29), date(2026, 12, 1))]) and not in_windows("", [])
    with pytest.raises(ValueError):
        as_of_iso("next tuesday-ish")


def _turns(conn, rows):
    insert_turns(conn, ALICE.project_id, rows)


def test_nothing_dated_after_as_of_is_returned(backend, conn):
    _turns(conn, [("e1", "2026-11-20T10:00:00.000Z", "we pinned the kafka client to version 3.4 for now"),
                  ("e2", "2026-11-28T10:00:00.000Z", "we moved the kafka client to version 3.7 today")])
    backend.add("The kafka client is pinned in requirements.txt.", scope=ALICE)  # created now
    before = recall(backend, "kafka client version", scope=ALICE, include=("semantic", "sessions"), conn=conn,
                    as_of="2026-11-25")
    assert [h.id for h in before] == ["s1#e1"]
    now = recall(backend, "kafka client version", scope=ALICE, include=("semantic", "sessions"), conn=conn)
    assert {h.id for h in now if h.kind == "session"} == {"s1#e1", "s1#e2"} and len(now) == 3
    found = session_search(conn, "kafka client", as_of="2026-11-25")
    assert [h.entry_id for h in found.results] == ["e1"]
    assert [h.entry_id for h in session_search(conn, "kafka client", as_of="2026-11-29").results] == ["e2", "e1"]
    assert session_search(conn, "kafka client", as_of="2026-11-01").count == 0


def test_a_turn_inside_the_prompts_window_is_boosted_and_passes_the_floor(backend, conn):
    _turns(conn, [("e1", "2026-11-10T10:00:00.000Z", "the staging deploy failed because the disk was full"),
                  ("e3", "2026-11-12T10:00:00.000Z", "the staging deploy script needs a retry flag"),
                  *((f"f{i}", "2026-11-20T10:00:00.000Z", f"lunch plans for friday number {i}") for i in range(3)),
                  ("e2", "2026-11-26T10:00:00.000Z", "staging was down again, someone filled the volume")])
    prompt = "what went wrong with the staging deploy last week?"
    floor_only = recall(backend, "what went wrong with the staging deploy?", scope=ALICE, include=("sessions",),
                        conn=conn, as_of=AS_OF)
    assert "s1#e2" not in [h.id for h in floor_only]  # one term of three: no evidence without a date
    hits = recall(backend, prompt, scope=ALICE, include=("sessions",), conn=conn, as_of=AS_OF)
    assert hits[0].id == "s1#e2" and hits[0].dated and "dates" in hits[0].ranks
    assert [h.id for h in hits if h.dated] == ["s1#e2"]
    early = recall(backend, prompt, scope=ALICE, include=("sessions",), conn=conn, as_of="2026-11-20")
    assert "s1#e2" not in [h.id for h in early]


def test_the_service_passes_the_turns_time(project, tmp_path, embedder):
    from semantic_helpers import make_service

    service = make_service(project, tmp_path, embedder)
    service.backend.add("The kafka client is pinned in requirements.txt.", scope=service.scope)
    now = service.recall_for_prompt("where is the kafka client pinned?", {})
    assert now.text and "requirements.txt" in now.text
    before = service.recall_for_prompt("where is the kafka client pinned?", {}, as_of="2020-01-01T00:00:00Z")
    assert before.text is None and before.reason == "no matches"


@pytest.mark.parametrize("as_of", ["0001-01-01", "0999-06-01", "9999-12-31"])
def test_recall_at_the_ends_of_the_calendar_reads_what_it_can_and_never_crashes(backend, conn, as_of):
    moment = as_of_iso(as_of)
    windows, _ = date_windows("what did we decide today, three years ago, last week and in May?", moment)
    assert windows and all(a <= b for a, b in windows)
    assert all(b <= date.fromisoformat(moment[:10]) for _, b in windows)
    assert recall(backend, "what did we decide today, three years ago and last week?", scope=ALICE,
                  include=("semantic", "sessions"), conn=conn, as_of=as_of) == []


@pytest.mark.parametrize(("prompt", "holds"), [
    ("what did we decide today?", True), ("this week's deploys", True),
    # a month or date named outright asks about that time, even when the day asked on is inside it
    ("the outage in December", False), ("notes from December 2026", False), ("2026年12月的部署", False),
    ("kafka issues this year", True), ("今天的部署", True), ("오늘 배포", True), ("今月のリリース", True),
    ("what did we decide yesterday?", False), ("what did we do last week?", False),
    ("in May we moved the database", False), ("the build broke two days ago", False), ("上周的部署", False),
    ("지난달 배포", False),
])
def test_a_window_says_whether_it_holds_the_day_asked_on(prompt, holds):
    windows, _ = date_windows(prompt, AS_OF)
    assert [w.holds_today for w in windows] == [holds]


def test_a_day_alone_passes_the_floor_in_a_past_window_but_not_in_today(backend, conn, embedder):
    from pi_memory.semantic import turn_vectors

    _turns(conn, [("y1", "2026-11-29T09:00:00.000Z", "lunch plans for friday, the thai place again"),
                  ("d1", "2026-12-01T09:00:00.000Z", "lunch plans for saturday, the noodle bar")])
    turn_vectors.backfill(conn, embedder)  # both are vector candidates of every prompt, with a low cosine

    def ids(prompt):
        return {h.id for h in recall(backend, prompt, scope=ALICE, include=("sessions",), conn=conn, as_of=AS_OF)}

    # two days ago is asked about as past, but its turn says nothing of signing keys (no keyword, cosine under half
    # the floor): the day alone no longer lets it in ("Did the Lakers win yesterday?" injected yesterday's turns)
    assert ids("what went wrong with the signing key two days ago?") == set()
    assert "s1#y1" in ids("where did we go for lunch two days ago?")  # a keyword beside the day
    # a window holding today says when the question is asked, not what about: no turn there is about the key
    assert ids("what went wrong with the signing key today?") == set()
    assert ids("how do I rotate the signing key this week?") == set()
    # nothing but the day to go on: the day's turns are the answer
    assert ids("what did we do today?") == {"s1#d1"}
    assert ids("what happened this week?") == {"s1#d1", "s1#y1"}


def test_an_earlier_as_of_never_hides_newer_rows_from_later_recalls(backend, conn, embedder):
    # the vector lists' read-back once filtered by as_of, and a row it did not return was taken for a deleted
    # one and left the in-memory matrix: asked as of Nov 20, the Nov 28 turn vanished from every later recall
    from pi_memory.semantic import turn_vectors

    _turns(conn, [("e1", "2026-11-10T10:00:00.000Z", "we pinned the kafka client to version 3.4"),
                  ("e2", "2026-11-28T10:00:00.000Z", "we moved the kafka client to version 3.7")])
    turn_vectors.backfill(conn, embedder)

    def ids(as_of):
        return sorted(h.id for h in recall(backend, "kafka client version", scope=ALICE, include=("sessions",),
                                           conn=conn, as_of=as_of, min_similarity=0))

    assert ids(AS_OF) == ["s1#e1", "s1#e2"]
    assert ids("2026-11-20") == ["s1#e1"]
    assert ids(AS_OF) == ["s1#e1", "s1#e2"]
    from pi_memory.retrieval.vector_lists import _turn_hits

    qvec = embedder.embed_query("kafka client version")
    for as_of, want in ((AS_OF, 2), ("2026-11-20", 1), (None, 2)):  # the vector list alone, in the same order
        assert len(_turn_hits(conn, embedder.model_name, len(qvec), ALICE.project_id, qvec, 10, as_of)) == want


@pytest.mark.parametrize("prompt", [
    "Explain the error code 2026", "fix ticket 2026", "Listen on port 2026", "Fix JIRA-2026 please",
    "upgrade to 2023.5", "May the force be with you", "May be worth checking the logs",
    "Ask June about the API keys", "March through the list", "convert dec 10 to binary", "sep 2",
])
def test_numbers_and_words_that_only_look_like_dates_open_no_window(prompt):
    assert date_windows(prompt, AS_OF) == ([], prompt)


@pytest.mark.parametrize(("prompt", "window"), [
    ("how many times in 2023?", (date(2022, 12, 31), date(2024, 1, 1))),
    ("since 2019 we use kafka", (date(2018, 12, 31), date(2020, 1, 1))),
    ("the 2023年 plan", (date(2022, 12, 31), date(2024, 1, 1))),
    ("what happened in June", (date(2026, 5, 31), date(2026, 7, 1))),
    ("the meeting on Dec 10", (date(2025, 12, 9), date(2025, 12, 11))),
])
def test_a_year_with_its_cue_and_a_capitalised_month_are_still_dates(prompt, window):
    assert date_windows(prompt, AS_OF)[0] == [window]


@pytest.mark.parametrize(("prompt", "asks"), [
    ("how are you today?", False), ("Hi, how is it going today?", False), ("What's up today?", False),
    ("What should I do today?", False), ("오늘 어때?", False), ("今日はどう？", False),
    ("what did we do today?", True), ("what did we do earlier today?", True), ("summarize this week", True),
    ("what's new today?", True), ("anything new this week?", True), ("what did I get done today?", True),
    ("今天有什么进展？", True), ("本周我们做了哪些工作？", True), ("오늘 무슨 일이 있었어?", True), ("今日何があった？", True),
    ("what did we do about the kafka lag today?", False),
    # "what did we decide" asks for the day's decisions, whatever words they were written in (it kept "decide" as
    # its topic, and the day's turns, which said "let's use Redis", had none of it)
    ("what did we decide today?", True), ("what did we agree on this week?", True), ("what did you say today?", True),
    ("what did we decide about caching today?", False), ("what should I decide today?", False),
])
def test_a_prompt_asking_only_what_went_on_lets_the_day_pass(prompt, asks):
    from pi_memory.retrieval.dates import floor_windows, what_went_on
    from pi_memory.retrieval.lang import evidence_terms

    windows, rest = date_windows(prompt, AS_OF)
    left = what_went_on(rest)
    bare = left is not None and not evidence_terms(left)
    assert bare is asks
    assert floor_windows(windows, AS_OF, bare=bare) == ([(windows[0][0], windows[0][1])] if asks else [])


@pytest.mark.parametrize("prompt", ["Did the Lakers win yesterday?", "what was the score of the match last week?",
                                    "what did I eat for dinner yesterday?", "昨日の晩ご飯は何がいい？"])
def test_a_date_with_an_unrelated_topic_injects_nothing(backend, conn, embedder, prompt):
    """The tester's prompts: each named a past day and injected that day's turns about a database upgrade."""
    from pi_memory.semantic import turn_vectors

    _turns(conn, [("u1", "2026-11-30T09:00:00.000Z", "The PostgreSQL 16 upgrade of production is done, pg_upgrade "
                                                     "took 40 minutes."),
                  ("u2", "2026-11-26T09:00:00.000Z", "Used the Stripe key for the billing test; all green.")])
    turn_vectors.backfill(conn, embedder)
    assert recall(backend, prompt, scope=ALICE, include=("sessions",), conn=conn, as_of=AS_OF) == []
    # the same days with the topic named, and a prompt asking only what went on, still find them
    for asked, found in (("how long did the postgres upgrade take yesterday?", "s1#u1"),
                         ("what did we do yesterday?", "s1#u1"), ("which billing test passed last week?", "s1#u2")):
        assert found in [h.id for h in recall(backend, asked, scope=ALICE, include=("sessions",), conn=conn,
                                              as_of=AS_OF)], asked


def test_a_date_counts_twice_in_keyword_evidence(backend, conn, embedder):
    """A turn outside the window holding the one other word of the prompt had half its keywords ("what did we decide
    in May?" recalled December's "we decided" turns); the date phrase now weighs two units."""
    from pi_memory.semantic import turn_vectors

    _turns(conn, [("m1", "2026-05-14T09:00:00.000Z", "Agreed: we decided to drop the Elasticsearch cluster"),
                  ("n1", "2026-11-24T09:00:00.000Z", "We decided to switch the rate limiter to a token bucket"),
                  ("n2", "2026-11-24T09:05:00.000Z", "Let's use Redis with a 5 minute TTL for the catalog cache")])
    turn_vectors.backfill(conn, embedder)

    def ids(prompt):
        return {h.id for h in recall(backend, prompt, scope=ALICE, include=("sessions",), conn=conn, as_of=AS_OF)}

    assert ids("what did we decide in May?") == {"s1#m1"}
    assert ids("what did we decide on 2026-11-24?") == {"s1#n1", "s1#n2"}


def test_a_turn_written_days_apart_in_its_session_lends_no_evidence(backend, conn, embedder):
    """A session resumed 11 days later: its older turn about a game lent yesterday's database turns its keywords and
    its cosine (the window's evidence), and "what was the score of the match yesterday?" injected them."""
    from pi_memory.semantic import turn_vectors

    _turns(conn, [("g1", "2026-11-19T10:00:00.000Z", "did you see the score of the match"),
                  ("m1", "2026-11-30T10:00:00.000Z", "we upgraded the production database to postgres 16"),
                  ("m2", "2026-11-30T11:00:00.000Z", "the migration took 40 minutes and the replicas caught up")])
    turn_vectors.backfill(conn, embedder)
    for prompt in ("what was the score of the match yesterday?", "did you see the score of the match yesterday?"):
        ids = [h.id for h in recall(backend, prompt, scope=ALICE, include=("sessions",), conn=conn, as_of=AS_OF)]
        assert "s1#m1" not in ids and "s1#m2" not in ids, (prompt, ids)
    # written within hours of each other, a turn still carries the evidence of the one next to it
    ids = [h.id for h in recall(backend, "how long did the postgres upgrade take?", scope=ALICE, include=("sessions",),
                                conn=conn, as_of=AS_OF)]
    assert set(ids[:2]) == {"s1#m1", "s1#m2"}, ids


def test_a_past_windows_margin_never_lets_the_day_asked_on_pass_by_date(backend, conn, embedder):
    from pi_memory.semantic import turn_vectors

    _turns(conn, [("y1", "2026-11-30T09:00:00.000Z", "lunch plans for monday, the thai place again"),
                  ("d1", "2026-12-01T09:00:00.000Z", "lunch plans for tuesday, the noodle bar"),
                  ("o1", "2026-11-02T09:00:00.000Z", "we deployed the hotfix today, all green")])
    turn_vectors.backfill(conn, embedder)

    def ids(prompt, as_of=AS_OF):
        return {h.id for h in recall(backend, prompt, scope=ALICE, include=("sessions",), conn=conn, as_of=as_of)}

    assert ids("what did we do yesterday?") == {"s1#y1"}  # the window's margin reaches Dec 1: no day alone there
    assert ids("I fixed my bike yesterday, now write a haiku about autumn") == set()  # a past window, no topic
    assert "s1#y1" in ids("what were the lunch plans yesterday?")
    assert ids("how are you today?") == set() and ids("What should I do today?") == set()
    # "today" in a text written weeks ago is no evidence for a question about today
    assert ids("is it cold today?") == set()
    assert ids("what did we deploy today?", as_of="2026-11-02T18:00:00.000Z") == {"s1#o1"}


@pytest.mark.parametrize(("prompt", "asks"), [
    ("what did we end up deciding about caching", True), ("which database did we choose", True),
    ("what did we agree on for the logo", True), ("what was the decision on retries", True),
    ("что мы решили про кэш", True), ("我们决定用什么缓存", True), ("Did the Lakers win", False),
    ("what did I eat for dinner", False), ("what went wrong with the signing key", False),
])
def test_a_prompt_asking_what_was_decided(prompt, asks):
    from pi_memory.retrieval.dates import asks_decision

    assert asks_decision(prompt) is asks


@pytest.mark.parametrize(("text", "states"), [
    ("we agreed to drop redis and keep an in-process LRU", True), ("let's go with pnpm for the monorepo", True),
    ("we'll keep the old bucket until March", True), ("going with option B, it is simpler", True),
    ("we switched to uv last sprint", True), ("Decision: retries back off exponentially", True),
    ("lunch plans for friday, the thai place again", False), ("flaky test is the websocket reconnect one", False),
    ("the migration locked the orders table for minutes", False), ("let's see what the logs say", False),
])
def test_a_turn_recording_a_decision(text, states):
    from pi_memory.retrieval.dates import states_decision

    assert states_decision(text) is states


def test_a_decision_asked_about_a_past_window_recalls_its_answer_in_other_words(backend, conn, embedder):
    """recall_floor.py's first dated prompt: its answer shares no word with it and sits at cosine 0.15, under half
    the floor and under the lunch plans' 0.20, and the floor dropped it. A turn of the window recording a decision
    passes by its day; the others do not."""
    from pi_memory.semantic import turn_vectors

    _turns(conn, [("a0", "2026-11-24T09:00:00.000Z", "we agreed to drop redis and keep an in-process LRU for the hot "
                                                     "keys"),
                  ("a1", "2026-11-26T09:00:00.000Z", "flaky test is the websocket reconnect one, it sleeps 200ms"),
                  ("a2", "2026-11-27T09:00:00.000Z", "lunch plans for friday, the thai place again")])
    turn_vectors.backfill(conn, embedder)

    def ids(prompt, as_of=AS_OF):
        return [h.id for h in recall(backend, prompt, scope=ALICE, include=("sessions",), conn=conn, as_of=as_of)]

    assert ids("what did we end up deciding about caching last week?") == ["s1#a0"]
    assert ids("which database did we choose last week?") == ["s1#a0"]  # last week's one decision
    assert ids("what did we decide about caching?") == []  # no window: no day to pass by
    assert "s1#a0" not in ids("Did the caching change land last week?")  # not a question about a decision
    assert ids("what did we decide about caching last week?", as_of="2030-06-15") == []  # the window holds no turn
