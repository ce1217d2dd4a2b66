"""Retrieval over conversation turns: keys, query expansion, fusion, re-ranking and a hybrid turn index.

* :mod:`.turns` -- :class:`Turn`, and the key text indexed per turn (:class:`KeySpec`: speaker, date, image
  caption, a context window of neighbouring turns);
* :mod:`.expand` -- :func:`expand_query`: content terms, named speakers, "when" questions, explicit dates;
  rules only, no model;
* :mod:`.fusion` -- :func:`weighted_rrf` (Cormack et al. 2009) and :func:`convex_fuse`;
* :mod:`.rerank` -- :func:`blend`: re-scoring a candidate head with a second precomputed vector key;
* :mod:`.hybrid` -- :class:`TurnIndex` (exact numpy vectors + SQLite FTS5 BM25, fused) and
  :class:`HybridConfig`.

Measured on LoCoMo by ``benchmarks/locomo_recall.py`` (``--ablations`` prints each step's effect).
"""

from pi_memory.retrieval.expand import (
    STOP_WORDS,
    ExpandedQuery,
    expand_query,
    find_dates,
    is_temporal,
    light_stem,
)
from pi_memory.retrieval.fusion import RRF_K, convex_fuse, minmax, weighted_rrf
from pi_memory.retrieval.hybrid import HybridConfig, Mode, TurnHit, TurnIndex
from pi_memory.retrieval.rerank import blend, rescore
from pi_memory.retrieval.turns import KeySpec, Turn, build_keys, format_date, key_fields, time_cue, turn_key

__all__ = [
    "RRF_K",
    "STOP_WORDS",
    "ExpandedQuery",
    "HybridConfig",
    "KeySpec",
    "Mode",
    "Turn",
    "TurnHit",
    "TurnIndex",
    "blend",
    "build_keys",
    "convex_fuse",
    "expand_query",
    "find_dates",
    "format_date",
    "is_temporal",
    "key_fields",
    "light_stem",
    "minmax",
    "rescore",
    "time_cue",
    "turn_key",
    "weighted_rrf",
]
