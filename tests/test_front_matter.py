"""The one safe reader of YAML frontmatter (:mod:`pi_memory.front_matter`). A tester's "billion laughs" in a block
file or a SKILL.md (``a: &a [lol x9]``, ``b: &b [*a x9]``... nine deep, ``description: *i``) made ``blocks list``
run past a minute, ``skills list`` take 2.5 GB and the Claude Code session-start hook answer nothing: the loader
built the value cheaply, every reader after it walked 387 million strings. Aliases are now refused before any
value is built, and so is a frontmatter past ``MAX_CHARS``."""

from __future__ import annotations

import time

import pytest

from pi_memory import front_matter
from pi_memory.front_matter import ALIASES, MAX_CHARS, FrontMatterError, FrontMatterRefused


def bomb(levels: int, where: str = "description") -> str:
    names = "abcdefghijklmnop"
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"{names[i]}: &{names[i]} [" + ",".join([f"*{names[i - 1]}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join([*lines, f"{where}: *{names[levels - 1]}"])


@pytest.mark.parametrize("text", [
    bomb(2), bomb(5), bomb(9), bomb(9, "name"), bomb(7, "notes"),
    "a: &a [*a]",  # an alias of itself
    "base: &base {limit: 10}\nblock:\n  <<: *base\n  description: merged",  # a merge key is an alias too
    "description: &d plain\nagain: *d",  # one harmless alias: refused all the same (one rule)
])
def test_every_alias_is_refused_before_a_value_is_built(text):
    started = time.perf_counter()
    with pytest.raises(FrontMatterRefused) as caught:
        front_matter.load(text)
    assert time.perf_counter() - started < 1.0
    assert str(caught.value) == ALIASES == (
        "its frontmatter uses YAML aliases (*name, repeating the value of an &name anchor), which pi-memory does not "
        "read: a few lines of them can stand for billions of values. Write each value out in full")


@pytest.mark.parametrize(("text", "value"), [
    ("description: &d plain\nlimit: 3", {"description": "plain", "limit": 3}),  # an anchor alone is read
    ("name: deploy\ntags: [a, b]\nmeta: {x: 1}", {"name": "deploy", "tags": ["a", "b"], "meta": {"x": 1}}),
    ("", None),
    ("- 1\n- 2", [1, 2]),
])
def test_plain_yaml_is_read_as_before(text, value):
    assert front_matter.load(text) == value


def test_a_frontmatter_past_its_length_is_refused_and_one_at_it_read():
    at = "description: " + "d" * (MAX_CHARS - len("description: "))
    assert front_matter.load(at) == {"description": "d" * (MAX_CHARS - 13)}
    with pytest.raises(FrontMatterRefused) as caught:
        front_matter.load(at + "d")
    assert str(caught.value) == ("its frontmatter has 131,073 characters, past the 131,072 pi-memory reads; keep it to "
                                 "a name, a one-line description and a few short keys")


@pytest.mark.parametrize(("text", "first"), [
    ("a: [1, 2", "while parsing a flow sequence"),
    ("k: *nowhere", "found undefined alias"),
    ("a: b: c", "mapping values are not allowed in this context"),
])
def test_yaml_that_cannot_be_read_is_an_error_that_is_not_a_refusal(text, first):
    with pytest.raises(FrontMatterError) as caught:
        front_matter.load(text)
    assert not isinstance(caught.value, FrontMatterRefused)
    assert str(caught.value) == f"its frontmatter is not valid YAML ({first})"


@pytest.mark.parametrize(("text", "split"), [
    ("---\nname: x\n---\nbody\n", ("\nname: x\n", "\nbody\n")),
    ("\ufeff---\nname: x\n---\n", ("\nname: x\n", "")),
    ("---\nname: x\nno end\n", (None, "---\nname: x\nno end\n")),
    ("text first\n---\na: 1\n---\n", (None, "text first\n---\na: 1\n---\n")),
])
def test_split_finds_the_frontmatter_between_the_first_two_dash_lines(text, split):
    assert front_matter.split(text) == split


@pytest.mark.parametrize(("key", "value", "said"), [
    ("description", ["a"], "its description is a list in the frontmatter, not plain text"),
    ("name", {"a": 1}, "its name is a mapping in the frontmatter, not plain text"),
])
def test_a_value_that_is_not_text_is_named_by_its_kind(key, value, said):
    assert front_matter.not_plain_text(key, value) == said
