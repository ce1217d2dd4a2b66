"""Snippet matching checks word boundaries per match instead of inside each term's pattern: the lookaround
class cost 7-20 ms to compile for every new term (most of a recall's snippet time). The spans must be exactly
the ones the lookaround patterns found, on texts written to catch the differences."""

from __future__ import annotations

import re

import pytest

from pi_memory.index.query import Term
from pi_memory.index.snippets import _matches, make_snippet
from pi_memory.index.words import CJK_RANGES, HAS_CJK

_BEFORE = f"(?<![^\\W_{CJK_RANGES}])"
_AFTER = f"(?![^\\W_{CJK_RANGES}])"


def lookaround_spans(text: str, term: Term) -> list[tuple[int, int]]:
    """What the earlier per-term pattern found (kept here as the reference), a prefix term's match running to
    the end of its word."""
    body = re.escape(term.text)
    if term.words:
        if term.text[:1].isalnum() and not HAS_CJK.match(term.text[:1]):
            body = _BEFORE + body
        if not term.prefix and term.text[-1:].isalnum() and not HAS_CJK.match(term.text[-1:]):
            body += _AFTER
        elif term.prefix:  # the whole word it starts (a tester's case: "**quokkaawsspac**ed")
            body += f"[^\\W_{CJK_RANGES}]*"
    return [m.span() for m in re.finditer(body, text, re.IGNORECASE)]


TEXTS = [
    "deploy the deployment; redeploy DEPLOY deploy_x deploy-y",
    "xa-a-a a-a-a a-a",  # a match that fails its boundary overlaps one that passes
    "aaa aa aaaa a",
    "数据库deploy机房deploy数据",  # CJK next to a Latin term is a boundary
    "Straße STRASSE straße",
    "données donnéesX Xdonnées (données)",
    "",
    "a",
    "_a_ a_ _a a",
    "ключ КЛЮЧ ключи ключ.",
]
TERMS = [Term("deploy", words=True), Term("deploy", words=True, prefix=True), Term("a-a", words=True),
         Term("aa", words=True), Term("a", words=True), Term("deploy"), Term("机房", words=True),
         Term("straße", words=True), Term("données", words=True), Term("ключ", words=True),
         Term("ключ", words=True, prefix=True), Term("-a", words=True), Term("a", words=False)]


@pytest.mark.parametrize("text", TEXTS)
def test_spans_are_the_lookaround_patterns_spans(text):
    for term in TERMS:
        assert list(_matches(text, term)) == lookaround_spans(text, term), (text, term)


def test_a_boundary_failure_is_retried_one_character_on():
    assert list(_matches("xa-a-a", Term("a-a", words=True))) == [(3, 6)]
    assert list(_matches("aaa aa", Term("aa", words=True))) == [(4, 6)]


def test_snippets_still_highlight_whole_words_only():
    text = "the data layer: a deploy, then redeploy and deployment"
    assert make_snippet(text, [Term("a", words=True), Term("deploy", words=True)], 300)[0] == (
        "the data layer: **a** **deploy**, then redeploy and deployment")
    assert make_snippet(text, [Term("deploy", words=True, prefix=True)], 300)[0] == (
        "the data layer: a **deploy**, then redeploy and **deployment**")
