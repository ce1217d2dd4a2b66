"""The BM25 term counter's probe (``_TermFreq.probe``): a text without it is skipped before counting, so the
probe must be inside every occurrence the counter counts -- the skip never changes a score."""

from __future__ import annotations

import pytest

from pi_memory.index import plan_query
from pi_memory.retrieval.bm25 import _TermFreq

TEXTS = ["we moved to PostgreSQL in May", "ticket OPS-4821 is open", "ops 4821 again", "the postgres preferred",
         "prefers pnpm", "ab, a b c", "数据库迁移完成了", "数据 库", "go go gopher", "", "Go-lang and go."]


@pytest.mark.parametrize("query", ["PostgreSQL", "OPS-4821", "prefers pnpm", "ab", "go", "数据库", "a b",
                                   "ops 4821 prefer", "\"moved to\""])
def test_probe_is_in_every_counted_occurrence(query):
    for term in plan_query(query, words=True, question=True).terms:
        freq = _TermFreq(term)
        for text in TEXTS:
            low = text.lower()
            if freq.probe not in low:
                assert freq(low) == 0, (query, term, text)
