"""Lockstep A/B of recall() latency between source trees (or settings), on ``recall_parity.py``'s database.

The evaluation machine's speed drifts by up to 1.8x within minutes (the same pure-Python loop took 387 ms and
215 ms half an hour apart, with nothing else running), so two runs one after the other can differ by more than
any change under test. Here each variant is a worker process of its own (a source tree, optionally with
environment variables), all load the same database, and every query is recalled by each variant in turn
(the order flips every query), so the drift falls on every variant alike. Prints wall and CPU (all threads)
p50 / p95 per variant, and how many recalls returned the same hits (kind, id, score) as the first variant.
Two variants of the same tree agree within about 0.3 ms at p50 on 200 queries.

Usage:
  .venv/bin/python benchmarks/recall_parity.py --db /tmp/rp-db --build      # once, about a minute
  git worktree add /tmp/before <commit>
  .venv/bin/python benchmarks/recall_ab.py --db /tmp/rp-db before=/tmp/before/src after=src
  .venv/bin/python benchmarks/recall_ab.py --db /tmp/rp-db a=src 'b=src:PYTHONHASHSEED=1'
A variant may read its own copy of the database (``RECALL_AB_DB=...`` among its settings): a tree whose schema
migration changes the index (a new SQL index) against one that never opened it:
  .venv/bin/python benchmarks/recall_ab.py --db /tmp/rp-db before=/tmp/before/src 'after=src:RECALL_AB_DB=/tmp/rp-db2'
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

WORKER = r"""
import json, os, sys, time
sys.path[:0] = [os.environ["RECALL_AB_SRC"], os.environ["RECALL_AB_BENCH"]]
import semantic_latency as sl
from pi_memory.embed import get_embedder, local_onnx
from pi_memory.index import open_index
from pi_memory.retrieval.engine import recall
from pi_memory.semantic.embedded import EmbeddedBackend
from pi_memory.semantic.models import Scope

local_onnx.QUERY_CACHE = 0
if os.environ.get("RECALL_AB_SWITCH_INTERVAL"):  # the interpreter's GIL switch interval, in seconds
    sys.setswitchinterval(float(os.environ["RECALL_AB_SWITCH_INTERVAL"]))
queries = sl.make_texts(100_000)[1]
emb = get_embedder()
emb.embed_query("warm up")
scope = Scope(user_id="alice", project_id="aaaaaaaaaaaa")
backend = EmbeddedBackend(open_index(os.environ["RECALL_AB_DB"]), emb)
both = ("semantic", "sessions")
for q in queries[1:4]:  # loads the matrices
    recall(backend, q, scope=scope, include=both, conn=backend.conn)
if os.environ.get("RECALL_AB_GC_FREEZE"):  # what a long-lived host may do once its stores are loaded
    import gc
    gc.freeze()
if os.environ.get("RECALL_AB_GC_THRESHOLD"):  # e.g. 50000/20/100
    import gc
    gc.set_threshold(*map(int, os.environ["RECALL_AB_GC_THRESHOLD"].split("/")))
print("ready", flush=True)
for line in sys.stdin:
    q = queries[int(line)]
    c0, t0 = time.process_time(), time.perf_counter()
    hits = recall(backend, q, scope=scope, include=both, conn=backend.conn)
    wall, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
    print(json.dumps([wall, cpu, [[h.kind, h.id, round(h.score, 9)] for h in hits]]), flush=True)
"""


def pct(values: list[float]) -> str:
    s = sorted(values)
    return f"p50 {statistics.median(s):5.1f} p95 {s[min(len(s) - 1, int(0.95 * len(s)))]:5.1f}"


def parse_variant(spec: str) -> tuple[str, str, dict[str, str]]:
    name, sep, rest = spec.partition("=")
    if not sep or not name or not rest:
        raise SystemExit(f"variant {spec!r}: write NAME=SRC or NAME=SRC:KEY=VALUE,...")
    src, _, settings = rest.partition(":")
    env = {}
    for pair in filter(None, settings.split(",")):
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"variant {spec!r}: {pair!r} is not KEY=VALUE")
        env[key] = value
    return name, str(Path(src).resolve()), env


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, required=True, help="a database built by recall_parity.py --build")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("variants", nargs="+", help="NAME=SRC or NAME=SRC:KEY=VALUE,... (two or more)")
    args = ap.parse_args()
    if len(args.variants) < 2:
        raise SystemExit("give two or more variants to compare")
    if not (args.db / "index.sqlite3").exists():
        raise SystemExit(f"{args.db} holds no index: build it with benchmarks/recall_parity.py --db {args.db} --build")
    workers = []
    for spec in args.variants:
        name, src, env = parse_variant(spec)
        env = {**os.environ, "RECALL_AB_SRC": src, "RECALL_AB_DB": str(args.db), "RECALL_AB_BENCH": str(HERE), **env}
        python = env.pop("RECALL_AB_PYTHON", sys.executable)  # another interpreter (its own venv) for this variant
        workers.append((name, subprocess.Popen([python, "-c", WORKER], stdin=subprocess.PIPE,
                                               stdout=subprocess.PIPE, text=True, env=env)))
    try:
        for name, proc in workers:
            if proc.stdout.readline().strip() != "ready":
                raise SystemExit(f"variant {name} did not start (see its error above)")
        results: dict[str, tuple[list[float], list[float], list]] = {name: ([], [], []) for name, _ in workers}
        for i in range(1, args.queries + 1):
            for name, proc in (workers if i % 2 else workers[::-1]):
                proc.stdin.write(f"{i}\n")
                proc.stdin.flush()
                wall, cpu, hits = json.loads(proc.stdout.readline())
                results[name][0].append(wall)
                results[name][1].append(cpu)
                results[name][2].append(hits)
    finally:
        for _, proc in workers:
            proc.stdin.close()
            proc.wait()
    first = workers[0][0]
    print(f"{args.queries} recalls per variant, lockstep; load {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    for name, (wall, cpu, hits) in results.items():
        same = sum(a == b for a, b in zip(hits, results[first][2], strict=True))
        print(f"  {name:<14} wall {pct(wall)}  cpu {pct(cpu)}  same hits as {first}: {same}/{args.queries}")


if __name__ == "__main__":
    main()
