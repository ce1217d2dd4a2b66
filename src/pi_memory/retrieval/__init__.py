"""Retrieval over conversation turns: keys, query expansion, fusion, re-ranking and a hybrid turn index.

* :mod:`.turns` -- :class:`Turn`, and the key text indexed per turn (:class:`KeySpec`: speaker, date, image
  caption, a context window of neighbouring turns);
* :mod:`.expand` -- :func:`expand_query`: content terms, named speakers, "when" questions, explicit dates;
  :func:`first_person`: a question about a speaker as that speaker would say it; rules only, no model;
* :mod:`.fusion` -- :func:`weighted_rrf` (Cormack et al. 2009) and :func:`convex_fuse`;
* :mod:`.rerank` -- :func:`blend`: re-scoring a candidate head with a second precomputed vector key;
  :func:`session_support`: a session's best candidate lifts its other candidates;
* :mod:`.late` -- :func:`maxsim`: late-interaction (ColBERT-style) scoring with the embedder's token states;
* :mod:`.hybrid` -- :class:`TurnIndex` (exact numpy vectors + SQLite FTS5 BM25, fused) and
  :class:`HybridConfig`.

Measured on LoCoMo by ``benchmarks/locomo_recall.py`` (``--ablations`` prints each step's effect).
"""

from pi_memory.retrieval.expand import (
    STOP_WORDS,
    ExpandedQuery,
    expand_query,
    find_dates,
    first_person,
    is_temporal,
    light_stem,
)
from pi_memory.retrieval.fusion import RRF_K, convex_fuse, minmax, weighted_rrf
from pi_memory.retrieval.hybrid import HybridConfig, Mode, TurnHit, TurnIndex
from pi_memory.retrieval.late import maxsim, maxsim_ranking, token_matrix
from pi_memory.retrieval.rerank import blend, rescore, session_support
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
    "first_person",
    "format_date",
    "is_temporal",
    "key_fields",
    "light_stem",
    "maxsim",
    "maxsim_ranking",
    "minmax",
    "rescore",
    "session_support",
    "time_cue",
    "token_matrix",
    "turn_key",
    "weighted_rrf",
]
