"""Memory blocks as a source of ``memory_search`` (the model's search tool, :mod:`pi_memory.retrieval.search`).

Blocks are no recall source: every host that recalls (pi, Claude Code, Codex) puts every block whole in the
system prompt at every run (:func:`pi_memory.prompt.run_parts`), so recalling one would inject it twice. A
model may still search what it was told, and a host without that injection (an MCP client) sees blocks only
through the tools; so ``memory_search`` ranks blocks beside the stored memories.

Ranking: the same BM25 engine as the memories (:mod:`pi_memory.retrieval.bm25`), over the same word index
rules (FTS5 ``unicode61`` with CJK spaced out, :mod:`pi_memory.index.words`) and the same query reading
(:func:`pi_memory.index.plan_query`: phrases, operators, broadening to any term). Blocks are files, not index
rows, and few (a handful, each at most its ``limit`` characters), so each search builds their word index in
an in-memory SQLite database (well under a millisecond for ten blocks). The memories' list and the blocks'
list are then merged by :func:`pi_memory.retrieval.fusion.rrf_fuse` (each hit keeps its own BM25 score):
the two corpora's BM25 scores are not comparable (document frequencies over ten blocks against thousands of
memories), their ranks are.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from pi_memory.index.results import MAX_MEMORY_CHARS, BlockHit
from pi_memory.index.snippets import make_snippet
from pi_memory.index.words import SQL_FTS_FORM, TOKENIZER, register
from pi_memory.retrieval.bm25 import Corpus, Ranked
from pi_memory.safety import redact
from pi_memory.shown_text import raw_prefix

BLOCKS = Corpus("blocks_fts", "blocks blk", "blk.id", "blk.text", "blk.time", words=True)


def _corpus(texts: Sequence[str]) -> sqlite3.Connection:
    """An in-memory database holding the blocks' searched ``texts`` (row id = position + 1) and their word
    index."""
    conn = sqlite3.connect(":memory:")
    register(conn)
    conn.executescript(
        "CREATE TABLE blocks (id INTEGER PRIMARY KEY, text TEXT NOT NULL, time TEXT);"
        f"CREATE VIRTUAL TABLE blocks_fts USING fts5(text, content='', columnsize=0, tokenize='{TOKENIZER}');")
    rows = [(i, text, "") for i, text in enumerate(texts, 1)]
    conn.executemany("INSERT INTO blocks(id, text, time) VALUES (?, ?, ?)", rows)
    conn.executemany(f"INSERT INTO blocks_fts(rowid, text) VALUES (?, {SQL_FTS_FORM}(?))",
                     [(i, text) for i, text, _ in rows])
    return conn


def _value(block: Any) -> str:
    """What a model was told of a block's value: the part within its limit (a prompt holds no more,
    :func:`pi_memory.blocks.prompt_value`); a 10 MB hand-made file is not indexed and redacted whole per search."""
    return raw_prefix(block.value, block.limit)


def block_hits(blocks: Iterable[Any], query: str | None, limit: int, snippet_chars: int) -> tuple[list[BlockHit],
                                                                                                    Ranked | None]:
    """The blocks matching ``query`` in their key, description or value, best first (at most ``limit``; ``rank``
    1..n among blocks), each with its BM25 ``score``, match kind and a highlighted snippet of its value, and the ranking they came from (``None``: no block).
    Credentials are redacted before anything is indexed or shown, as the index stores memories: a search for a
    token's value must not find the block holding it (a hit, or none for a guess one character off, would tell
    a model the secret it is never shown); the search tool screens what a model sees."""
    from pi_memory.retrieval.search import _run

    blocks = [b for b in blocks if not getattr(b, "shadowed", False)]
    if not blocks:
        return [], None
    shown = [(redact(b.description), redact(_value(b))) for b in blocks]  # each redacted once
    conn = _corpus(["\n".join(x for x in (b.key, d, v) if x) for b, (d, v) in zip(blocks, shown, strict=True)])
    try:
        ranked = _run(conn, BLOCKS, query, [], [], limit)[0]
    finally:
        conn.close()
    hits = []
    for rank, rid in enumerate(ranked.ids[:limit], 1):
        block, (description, value) = blocks[rid - 1], shown[rid - 1]
        snippet, _cut = make_snippet(value or description, ranked.terms, snippet_chars)
        hits.append(BlockHit(rank=rank, score=round(ranked.scores.get(rid, 0.0), 4), match=ranked.match[rid],
                             block=block.key, scope=block.scope, description=description,
                             content=value[:MAX_MEMORY_CHARS],
                             truncated=len(value) > MAX_MEMORY_CHARS or len(_value(block)) < len(block.value),
                             snippet=snippet, file=str(block.path)))
    return hits, ranked


def merged(memories: list[Any], blocks: list[BlockHit], limit: int) -> list[Any]:
    """Memory hits and block hits in one list, renumbered 1..n, at most ``limit``: the hits holding every term
    of the query first, then those holding only some (``match`` ``"any"``), as each ranking orders them; within
    each group, reciprocal rank fusion of the two rankings (ties: memories first). Fused by rank alone, a memory
    holding only "DB" came before the block holding "Staging DB" (both first of their lists)."""
    if not blocks:
        return memories
    from pi_memory.retrieval.fusion import rrf_fuse

    by_key = {**{("m", i): h for i, h in enumerate(memories)}, **{("b", i): h for i, h in enumerate(blocks)}}
    order = rrf_fuse({"memories": [("m", i) for i in range(len(memories))],
                      "blocks": [("b", i) for i in range(len(blocks))]})
    order = sorted(order, key=lambda f: by_key[f.key].match == "any")  # stable: the fused order within each
    return [by_key[f.key].model_copy(update={"rank": n}) for n, f in enumerate(order[:limit], 1)]
