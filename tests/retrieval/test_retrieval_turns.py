"""Turn keys: speaker, date, caption and context windows; time cues."""

from __future__ import annotations

from datetime import date, datetime

from pi_memory.retrieval import KeySpec, Turn, build_keys, key_fields, time_cue, turn_key
from pi_memory.retrieval.turns import as_date

TURNS = [
    Turn("1:1", "Hi Bob!", speaker="Ann", when="2023-05-08T13:56:00Z", session="1"),
    Turn("1:2", "I adopted a puppy.", speaker="Bob", when="2023-05-08T13:56:00Z", session="1",
         caption="a small brown dog"),
    Turn("1:3", "Lovely, what is its name?", speaker="Ann", when="2023-05-08T13:56:00Z", session="1"),
    Turn("2:1", "Back from the trip.", speaker="Bob", when=date(2023, 6, 1), session="2"),
]


def test_plain_key_is_the_text_and_caption():
    assert turn_key(TURNS, 1, KeySpec()) == "I adopted a puppy. [image: a small brown dog]"
    assert turn_key(TURNS, 1, KeySpec(caption=False)) == "I adopted a puppy."


def test_speaker_and_date_fields():
    assert turn_key(TURNS, 1, KeySpec(speaker=True, date=True)) == \
        "[8 May 2023] Bob: I adopted a puppy. [image: a small brown dog]"
    assert turn_key(TURNS, 3, KeySpec(date=True, weekday=True)) == "[Thursday 1 June 2023] Back from the trip."


def test_window_stays_inside_the_session():
    spec = KeySpec.window(1)
    assert turn_key(TURNS, 2, spec) == \
        "[8 May 2023] Ann: Lovely, what is its name? | Bob: I adopted a puppy. [image: a small brown dog]"
    assert turn_key(TURNS, 3, spec) == "[1 June 2023] Bob: Back from the trip."  # 1:3 is another session
    own, context, meta = key_fields(TURNS, 1, spec)
    assert (own, meta) == ("I adopted a puppy. [image: a small brown dog]", "[8 May 2023] Bob:")
    assert context == "Ann: Hi Bob! | Ann: Lovely, what is its name?"


def test_asymmetric_window_and_clipping():
    spec = KeySpec(before=2, after=0, neighbour_chars=10, neighbour_speaker=False)
    assert key_fields(TURNS, 2, spec)[1] == "Hi Bob! | I adopted…"
    assert build_keys(TURNS, KeySpec()) == [turn_key(TURNS, i, KeySpec()) for i in range(4)]


def test_dates_and_missing_fields():
    assert as_date("2023-05-08T13:56:00Z") == date(2023, 5, 8)
    assert as_date(datetime(2023, 5, 8, 10)) == date(2023, 5, 8)
    assert as_date("yesterday") is None and as_date(None) is None
    assert turn_key([Turn("x", "  hello   world ")], 0, KeySpec.window(2)) == "hello world"


def test_time_cues():
    for text in ("I went there yesterday", "Last Friday was fun", "in 2022 we moved", "since May 3 I run",
                 "two weeks ago", "on 5/12 it rained"):
        assert time_cue(text), text
    for text in ("I like pizza", "maybe we should go", "the last of us"[:3] + " game"):
        assert not time_cue(text), text
