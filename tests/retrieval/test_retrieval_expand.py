"""Query expansion without a model: terms, speakers, temporal questions, dates."""

from __future__ import annotations

from datetime import date

from pi_memory.retrieval import expand_query, find_dates, is_temporal, light_stem


def test_stop_words_and_fillers_are_dropped():
    q = expand_query("What kind of paintings did she make?", stem=False)
    assert q.terms == ("paintings", "make")


def test_stems_are_added_next_to_the_word():
    q = expand_query("Which hobbies is he studying?")
    assert q.terms == ("hobbies", "hobbi", "studying", "study")
    assert light_stem("painted") == "paint"
    assert light_stem("paintings") == "paint"
    assert light_stem("dogs") == "dogs"  # under 5 letters: kept
    assert light_stem("glass") == "glass"
    assert light_stem("bus") == "bus"
    assert light_stem("café") == "café"


def test_speakers_resolved_with_possessive_first_name_and_alias():
    speakers = ["Melanie Smith", "Caroline"]
    q = expand_query("What did Melanie's kids like?", speakers, stem=False)
    assert q.speakers == ("Melanie Smith",)
    assert "melanie" in q.terms  # names stay searchable
    q = expand_query("Did caroline and Mel go camping?", speakers, aliases={"Melanie Smith": ["Mel"]})
    assert q.speakers == ("Caroline", "Melanie Smith")
    assert expand_query("What did Bob say?", speakers).speakers == ()


def test_temporal_questions():
    assert is_temporal("When did Nate win his first tournament?")
    assert is_temporal("In what year did John move?")
    assert is_temporal("How long ago was the trip?")
    assert is_temporal("How many years has she painted?")
    assert not is_temporal("What does Nate like?")
    assert not is_temporal("Where did they meet when young?")  # 'when' not opening the question
    assert expand_query("When did Ann adopt a dog?").temporal


def test_dates_in_many_forms():
    assert find_dates("What happened on October 13, 2023?") == [(date(2023, 10, 13), date(2023, 10, 13))]
    assert find_dates("on 25 May, 2022 and 3rd of June 2022") == [
        (date(2022, 5, 25), date(2022, 5, 25)), (date(2022, 6, 3), date(2022, 6, 3))]
    assert find_dates("in May 2023") == [(date(2023, 5, 1), date(2023, 5, 31))]
    assert find_dates("in Sept. 2021") == [(date(2021, 9, 1), date(2021, 9, 30))]
    assert find_dates("back in 2022") == [(date(2022, 1, 1), date(2022, 12, 31))]
    assert find_dates("on 2024-02-29") == [(date(2024, 2, 29), date(2024, 2, 29))]
    assert find_dates("on February 30, 2023") == [(date(2023, 1, 1), date(2023, 12, 31))]  # bad day: the year
    assert find_dates("no date here, just 42 things") == []


def test_fts_expression_quotes_everything():
    q = expand_query('Did he say "hello" NEAR(xy zz) col:umn* O\'Neil?', stem=False)
    assert q.terms == ("say", "hello", "near", "xy", "zz", "col", "umn", "o'neil")
    assert q.fts == '"say" OR "hello" OR "near" OR "xy" OR "zz" OR "col" OR "umn" OR "o\'neil"'
    assert expand_query('a "quote', stem=False).fts == '"quote"'
    assert expand_query("").fts == ""
    assert expand_query("what is it?").terms == ()
    assert expand_query("it's what he'd've said", stem=False).terms == ("said",)
    assert expand_query("Why won't Jon's friends’ plans work?", stem=False).terms == ("won't", "jon", "friends", "plans", "work")
