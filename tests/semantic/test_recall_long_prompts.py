"""A long prompt (a pasted log or file) is read by its two ends, and reading its dates grows with its length only.

Before: recall read a 100 KB prompt whole in every step (0.4-0.5 s), and the date reader compared every date
phrase with every earlier one, so a paste full of timestamps took 16-49 s before each run."""

from __future__ import annotations

from datetime import date

import pytest
from semantic_helpers import ALICE

from pi_memory.retrieval.dates import date_windows
from pi_memory.retrieval.engine import recall
from pi_memory.retrieval.expand import find_dates
from pi_memory.retrieval.search import MAX_QUERY_CHARS
from pi_memory.semantic.prompt_gate import RECALL_CHARS, recall_text

AS_OF = "2026-12-04T12:00:00.000Z"


def test_a_prompt_up_to_the_limit_is_read_whole():
    text = "word " * (RECALL_CHARS // 5)
    assert len(text) == RECALL_CHARS
    assert recall_text(text) is text
    assert recall_text("") == ""


def test_a_longer_prompt_is_read_by_its_first_and_last_words():
    text = "alpha " * 300 + "middle " * 1000 + "omega " * 300
    got = recall_text(text)
    head, tail = got.split("\n")
    assert head == " ".join(["alpha"] * 83)  # 500 characters hold 83 whole "alpha " and a cut word
    assert tail == " ".join(["omega"] * 83) + " "
    assert "middle" not in got


def test_a_long_prompt_without_white_space_is_cut_where_it_must():
    text = "a" * 1500 + "b" * 1500
    assert recall_text(text) == "a" * 500 + "\n" + "b" * 500


def test_the_session_keyword_search_reads_all_that_recall_reads():
    assert RECALL_CHARS == MAX_QUERY_CHARS  # else it would cut the tail (the question after a paste) away again


@pytest.mark.parametrize("unit, window", [
    ("what did we do 3 days ago? ", (date(2026, 11, 30), date(2026, 12, 2))),
    ("we shipped on 2023-05-08. ", (date(2023, 5, 7), date(2023, 5, 9))),
    ("что мы делали вчера? ", (date(2026, 12, 2), date(2026, 12, 4))),
    ("上周五 ", (date(2026, 11, 26), date(2026, 11, 28))),
])
def test_one_date_phrase_said_thousands_of_times_is_one_window(unit, window):
    text = unit * (100_000 // len(unit))
    windows, _rest = date_windows(text, AS_OF)
    assert [tuple(w) for w in windows] == [window]


def test_every_copy_of_a_date_phrase_leaves_the_keyword_text():
    windows, rest = date_windows("deploy on 2023-05-08. " * 5000, AS_OF)
    assert [tuple(w) for w in windows] == [(date(2023, 5, 7), date(2023, 5, 9))]
    assert rest == " ".join(["deploy on ."] * 5000)


def test_find_dates_reads_each_date_once_in_a_long_text():
    unit = "it was 8 May 2023, then 2023-06-01. "
    assert find_dates(unit) == [(date(2023, 6, 1), date(2023, 6, 1)), (date(2023, 5, 8), date(2023, 5, 8))]
    assert find_dates(unit * 4000) == find_dates(unit)
    assert find_dates("2023年5月8日 " * 4000) == [(date(2023, 5, 8), date(2023, 5, 8))]


def test_a_year_cue_must_stand_right_before_the_number():
    assert [tuple(w) for w in date_windows("we moved in 2019", AS_OF)[0]] == [(date(2018, 12, 31), date(2020, 1, 1))]
    assert date_windows("we moved 2019 files", AS_OF)[0] == []
    assert date_windows("x" * 5000 + " in 2019", AS_OF)[0] != []  # the cue is found however long the text before


def test_a_long_prompt_is_recalled_for_as_its_two_ends_are(backend):
    backend.add("The staging Redis listens on port 6380, not the default.", scope=ALICE)
    backend.add("Bob reviews every database migration.", scope=ALICE)
    ends = "Which port does the staging Redis listen on? "
    prompt = ends + "lorem " * 20_000 + ends
    assert len(prompt) > 100_000
    got = recall(backend, prompt, scope=ALICE)
    assert [h.to_public() for h in got] == [h.to_public() for h in recall(backend, recall_text(prompt), scope=ALICE)]
    assert [h.text for h in got] == ["The staging Redis listens on port 6380, not the default."]


def test_the_middle_of_a_long_paste_is_not_read(backend):
    backend.add("The staging Redis listens on port 6380, not the default.", scope=ALICE)
    filler = "lorem ipsum dolor sit amet " * 200
    question = "Which port does the staging Redis use? "
    assert [h.id for h in recall(backend, question, scope=ALICE)] != []
    assert recall(backend, filler + question + filler, scope=ALICE) == []


@pytest.mark.parametrize("prompt", [
    "we deployed on 2023-05-08 and reverted on 2023-05-08",
    "8 May 2023 went fine, 8 May 2023 evening did not",
    "May 8, 2023 and again May 8, 2023",
])
def test_a_date_said_twice_is_that_day_only(prompt):
    # the second copy was left untaken, so vaguer patterns read "May 2023" and "2023" from it: the whole year
    assert [tuple(w) for w in date_windows(prompt, AS_OF)[0]] == [(date(2023, 5, 7), date(2023, 5, 9))]


LOG = "\n".join(f"2026-11-{d % 28 + 1:02d}T10:00:00Z INFO worker {d} finished batch" for d in range(3000))


@pytest.mark.parametrize(("prompt", "read"), [
    (LOG + "\n\nWhat is the staging database host?", "What is the staging database host?"),  # a fresh tester's case
    (LOG + "\nWhat is the staging database host?", "What is the staging database host?"),  # a line of its own
    ("Which host does staging use?\n\n" + LOG, "Which host does staging use?"),  # asked first
    ("Refactor this into a class, please\n\n" + "def f():\n    return 1\n\n" * 200 + "thanks",
     "Refactor this into a class, please"),  # the last paragraph is too short to ask
    ("Can you explain this?\n\n" + "step one of the build\n\n" * 100, "Can you explain this?"),  # "?" first
])
def test_a_long_prompt_is_read_by_the_paragraph_or_line_that_asks(prompt, read):
    assert recall_text(prompt) == read


TRACE = "Traceback (most recent call last):\n" + "  File \"app.py\", line 12, in main\n" * 60 + (
    "ConnectionError: could not reach pg-staging-01 on port 5432")


@pytest.mark.parametrize("prompt", [
    "Fix this:\n" + TRACE,  # a tester's case: the trace's last line was read as if it asked
    "Fix this:\n\n" + TRACE,
    TRACE + "\nwhy?",
    TRACE + "\n\nWhat failed?",
    "Explain：\n" + TRACE,
])
def test_a_short_ask_about_a_paste_reads_the_paste_by_its_ends(prompt):
    read = recall_text(prompt)
    assert read.startswith(prompt[:9])
    assert read.endswith(prompt[-20:])
    assert "\n" in read and len(read) <= RECALL_CHARS + 1


def test_a_short_word_without_an_ask_still_leaves_the_question_at_the_other_end():
    prompt = "Which host does staging use?\n\n" + TRACE + "\n\nthanks"
    assert recall_text(prompt) == "Which host does staging use?"


def test_the_question_after_a_pasted_log_is_recalled(backend):
    backend.add("The staging database host is pg-staging-01.internal", scope=ALICE)
    backend.add("Bob reviews every database migration.", scope=ALICE)
    question = "What is the staging database host?"
    alone = [h.text for h in recall(backend, question, scope=ALICE)]
    assert alone[:1] == ["The staging database host is pg-staging-01.internal"]
    for prompt in (LOG + "\n\n" + question, question + "\n\n" + LOG):
        assert [h.text for h in recall(backend, prompt, scope=ALICE)] == alone
