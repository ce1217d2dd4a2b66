"""The retrieval engine: every ranking of pi-memory lives here. The index (:mod:`pi_memory.index`) and semantic
memory (:mod:`pi_memory.semantic`) provide candidates and storage; this folder reads the query, fuses the
candidate lists of every source and re-scores them.

Public entries (what hosts, tools and benchmarks call):

* :func:`recall` -- what a host injects before a run: semantic memories, curated entries, session turns and
  skills, each a keyword and a vector list, fused and cut by the evidence floor (:mod:`.engine`; the fenced text:
  :func:`format_recall`; which prompts deserve a search: :func:`should_recall`);
* :func:`session_search` and :func:`memory_search` -- the model's and the CLI's searches over past sessions and
  stored memories (:mod:`.search`; a plain-words ``session_search`` ranks turns as recall does);
* :class:`TurnIndex` -- the library turn index over conversations given as :class:`Turn` lists (:mod:`.hybrid`),
  measured beside the host path by ``benchmarks/locomo_recall.py``.

Modules: :mod:`.bm25` (the word indexes' candidates and BM25), :mod:`.context` (a session turn's window of
neighbours), :mod:`.turns_in_context` (session turns: keyword and vector lists fused over one pool, window
cosine, priors), :mod:`.vector_lists` (vector lists of curated entries and turns), :mod:`.sources_skills` (skills in recall),
:mod:`.sources_blocks` (memory blocks in ``memory_search``), :mod:`.dates` (``as_of`` and
the date windows a prompt names; :mod:`.dates_cjk`: its Chinese, Japanese and Korean phrases), :mod:`.lang` (keyword evidence in every language), :mod:`.superseded`
(turns saying a replaced fact), :mod:`.fusion` (RRF and convex fusion), :mod:`.rerank`, :mod:`.late`,
:mod:`.expand`, :mod:`.turns` (keys, query reading and re-scoring of the turn index).

Names are imported on first use, so ``import pi_memory.retrieval.fusion`` (the backends' RRF) stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "recall": "engine", "RecallHit": "engine", "format_recall": "engine", "should_recall": "engine",
    "skip_reason": "engine", "DEFAULT_MIN_SIMILARITY": "engine",
    "session_search": "search", "memory_search": "search", "session_ranking": "search",
    "session_ranking_in_context": "search",
    "STOP_WORDS": "expand", "ExpandedQuery": "expand", "expand_query": "expand", "find_dates": "expand",
    "first_person": "expand", "is_temporal": "expand", "light_stem": "expand",
    "RRF_K": "fusion", "Fused": "fusion", "convex_fuse": "fusion", "minmax": "fusion", "rrf_fuse": "fusion",
    "weighted_rrf": "fusion",
    "HybridConfig": "hybrid", "Mode": "hybrid", "TurnHit": "hybrid", "TurnIndex": "hybrid",
    "maxsim": "late", "maxsim_ranking": "late", "token_matrix": "late",
    "blend": "rerank", "rescore": "rerank", "session_support": "rerank",
    "KeySpec": "turns", "Turn": "turns", "build_keys": "turns", "format_date": "turns", "key_fields": "turns",
    "time_cue": "turns", "turn_key": "turns",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_memory.retrieval' has no attribute {name!r}")
    return getattr(importlib.import_module(f"pi_memory.retrieval.{module}"), name)


__all__ = sorted(_EXPORTS)
