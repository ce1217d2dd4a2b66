"""Late-interaction re-scoring (MaxSim) with the bundled bi-encoder's own token outputs.

ColBERT (Khattab and Zaharia, "ColBERT: Efficient and Effective Passage Search via Contextualized Late
Interaction over BERT", SIGIR 2020) scores a document by summing, over the query's tokens, each one's best
cosine with any token of the document. ColBERT trains a projection for it; we use MiniLM's last hidden
states as they are (no new weights), which works as a soft, contextual term match: it finds "violin" for
"instruments" and a turn's one relevant clause inside a long turn whose mean-pooled vector is diluted.

Two adjustments make untrained states usable:

* **centring**: BERT-style hidden states share a large common direction (they are anisotropic; Ethayarajh,
  "How Contextual are Contextualized Word Representations?", EMNLP 2019), so every pair of tokens looks
  alike. Each group's mean document token state is subtracted (from query tokens too) before normalising;
* **which tokens count**: ``[CLS]``, ``[SEP]`` and punctuation never count; query word pieces that are stop
  words (:data:`pi_memory.retrieval.expand.STOP_WORDS`) do not either. The score is the *mean* over the
  query tokens kept (the sum of ColBERT divided by their count, so queries of any length share a scale).

Cost: the token states of every turn are kept (float16, about 0.8 KB per token: about 25 KB for a
30-token turn), and a search scores only its candidate pool (a few hundred small matrix products, 2-4 ms
for a 200-turn pool on 2 cores). The query's states come from the same model call as its vector.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import numpy as np

from pi_memory.retrieval.expand import STOP_WORDS

__all__ = ["SKIP", "TokenMatrix", "keep_tokens", "maxsim", "maxsim_ranking", "pooled", "token_matrix"]

#: Word pieces that never take part: the special tokens and single punctuation marks.
SKIP = frozenset({"[CLS]", "[SEP]", "[PAD]", "[UNK]"}) | frozenset(string.punctuation)

#: A text's kept token states, L2-normalised rows, ``(n, dim)`` (float16 when stored).
TokenMatrix = np.ndarray


def keep_tokens(tokens: Sequence[str], *, drop_stop_words: bool) -> list[int]:
    """Indices of the word pieces that take part (module docstring); all of them when none would."""
    kept = [
        i for i, t in enumerate(tokens) if t not in SKIP and not (drop_stop_words and t.lower() in STOP_WORDS)
    ]
    return kept or list(range(len(tokens)))


def token_matrix(
    tokens: Sequence[str],
    states: np.ndarray,
    centre: np.ndarray | None = None,
    *,
    drop_stop_words: bool = False,
    dtype: type = np.float32,
) -> TokenMatrix:
    """The kept rows of ``states`` (``(len(tokens), dim)``), minus ``centre`` when given, L2-normalised.
    Raises ``ValueError`` when the shapes disagree."""
    states = np.asarray(states, dtype=np.float32)
    if states.ndim != 2 or states.shape[0] != len(tokens):
        raise ValueError(f"expected {len(tokens)} rows of token states, got shape {states.shape}")
    rows = states[keep_tokens(tokens, drop_stop_words=drop_stop_words)]
    if centre is not None:
        rows = rows - centre
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.maximum(norms, 1e-9)).astype(dtype)


def pooled(states: np.ndarray) -> np.ndarray:
    """Mean of a text's token states, L2-normalised: the text's sentence vector (MiniLM's mean pooling)."""
    vector = np.asarray(states, dtype=np.float32).mean(axis=0)
    return vector / max(float(np.linalg.norm(vector)), 1e-9)


def maxsim(query: TokenMatrix, document: TokenMatrix) -> float:
    """Mean over the query's rows of the best cosine with any document row (both unit rows); 0 when empty."""
    if not len(query) or not len(document):
        return 0.0
    sims = np.asarray(document, dtype=np.float32) @ np.asarray(query, dtype=np.float32).T
    return float(sims.max(axis=0).mean())


def maxsim_ranking(
    query: TokenMatrix, documents: Sequence[TokenMatrix], rows: Sequence[int]
) -> list[tuple[int, float]]:
    """``(row, MaxSim)`` for the candidate ``rows`` (indices into ``documents``), best first; ties keep the
    order of ``rows``. One matrix product over the candidates' stacked token rows (same values as
    :func:`maxsim` on each)."""
    if not len(rows):
        return []
    mats = [documents[row] for row in rows]
    lengths = np.array([len(m) for m in mats])
    scores = np.zeros(len(rows), dtype=np.float64)
    full = np.flatnonzero(lengths > 0)
    if len(full) and len(query):
        stacked = np.concatenate([mats[i] for i in full]).astype(np.float32)
        sims = stacked @ np.asarray(query, dtype=np.float32).T  # (all tokens, query tokens)
        starts = np.concatenate(([0], np.cumsum(lengths[full])[:-1]))
        scores[full] = np.maximum.reduceat(sims, starts, axis=0).mean(axis=1)
    order = np.argsort(-scores, kind="stable")
    return [(int(rows[i]), float(scores[i])) for i in order]
