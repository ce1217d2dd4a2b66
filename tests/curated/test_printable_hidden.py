"""What a person's terminal is given of stored or model-written text (:func:`pi_memory.curated.entries.printable`):
control characters as ``\\xNN`` and the format characters that draw nothing or reorder a line as ``\\uXXXX``
(a right-to-left override printed ``ctrlname \u202e x`` reversed), except the joiners and marks a script is
spelled with, where that script is."""

from __future__ import annotations

import pytest

from pi_memory.curated.entries import content_problem, holds_control, printable
from pi_memory.terminal_text import holds_hidden


@pytest.mark.parametrize(("text", "shown"), [
    ("ctrlname \u202e x", "ctrlname \\u202e x"),  # right-to-left override
    ("zw\u200bname", "zw\\u200bname"),  # zero-width space in Latin
    ("a\u202ab\u202bc\u202cd\u202de", "a\\u202ab\\u202bc\\u202cd\\u202de"),  # embeddings, pop, override
    ("x\u2066y\u2067z\u2068w\u2069", "x\\u2066y\\u2067z\\u2068w\\u2069"),  # isolates
    ("\ufeffbom first", "\\ufeffbom first"),
    ("word\u2060joiner", "word\\u2060joiner"),
    ("abc\u200ddef", "abc\\u200ddef"),  # a joiner between ASCII letters joins nothing
    ("abc\u200cdef", "abc\\u200cdef"),
    ("left\u200eright", "left\\u200eright"),  # a bidi mark with no right-to-left text near
    ("x\u200fy", "x\\u200fy"),
    ("line\u2028sep", "line\\u2028sep"),
    ("hi\U000e0041\U000e0042", "hi\\U000e0041\\U000e0042"),  # tag characters outside a flag
    ("desc \x1b[2J", "desc \\x1b[2J"),  # control characters as before
    ("bell\x07 nul\x00 c1\x9b", "bell\\x07 nul\\x00 c1\\x9b"),
])
def test_hidden_and_control_characters_are_shown_as_escapes(text, shown):
    assert printable(text) == shown
    assert holds_hidden(text)


@pytest.mark.parametrize("text", [
    "می\u200cخواهم",  # Persian: ZWNJ between Arabic-script letters
    "क्\u200dष",  # Devanagari: ZWJ after a virama (a mark) before a letter
    "👩\u200d💻",  # an emoji ZWJ sequence
    "עברית \u200f123",  # RLM near Hebrew keeps a number in order
    "مرحبا\u061c 42",  # ALM near Arabic
    "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # the flag of Scotland
    "tab\tand newline\nstay",
    "plain ASCII and accents: café, naïve",
])
def test_a_script_s_own_joiners_and_marks_and_plain_text_are_left(text):
    assert printable(text) == text
    assert not holds_hidden(text)


def test_escaping_twice_changes_nothing():
    once = printable("a\u202eb\x1bc")
    assert once == "a\\u202eb\\x1bc" and printable(once) == once


def test_what_a_store_refuses_is_still_only_control_characters():
    """Storing is unchanged: a bidi character is the scanner's to refuse (it names the character); the store's
    own content rule and ``holds_control`` still mean C0/C1 controls only."""
    assert content_problem("ctrlname \u202e x") is None and not holds_control("zw\u200bname")
    assert content_problem("desc \x1b[2J") == "control" and holds_control("desc \x1b[2J")


def test_the_prompts_fences_escape_them_as_a_terminal_does():
    """Every fenced prompt part (snapshot, standing instructions, blocks) goes through ``neutralise_fence``, which
    escapes with the same function: the model reads ``\\u202e`` where a person's terminal shows it."""
    from pi_memory.curated.snapshot import neutralise_fence

    assert neutralise_fence("ship \u202e it \x1b[8m", "standing-instructions") == "ship \\u202e it \\x1b[8m"
    assert neutralise_fence("Persian می\u200cخواهم", "memory-blocks") == "Persian می\u200cخواهم"
