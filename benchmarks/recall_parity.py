"""Recall's results and timing over ``semantic_latency.py``'s data (100k memories, 100k turns), for checking that a
speed change returns the same thing: the ids, order, scores, ranks, keyword coverage and cosine of every hit of
200 recalls (semantic + sessions) are written with ``--dump`` and compared with ``--compare``.

The database is built once into ``--db`` (``--build``, about a minute; random vectors, as the benchmark above
20k) and reused; ``--src`` picks the source tree to import, so two trees (say ``git archive`` of the commit
before a change, unpacked in /tmp) run alternately on the same data under the same load. Prints the load
average, wall and CPU (all threads) p50 / p95 per recall; ``--cprofile FILE`` writes a profile of the calls.

Usage: .venv/bin/python benchmarks/recall_parity.py --db /tmp/rp-db --build
       .venv/bin/python benchmarks/recall_parity.py --db /tmp/rp-db [--src /tmp/before/src] --dump before.json
       .venv/bin/python benchmarks/recall_parity.py --db /tmp/rp-db --compare before.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def pct(values: list[float]) -> str:
    s = sorted(values)
    return f"p50 {statistics.median(s):.1f} p95 {s[min(len(s) - 1, int(0.95 * len(s)))]:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--src", default=str(HERE.parent / "src"))
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dump", type=Path)
    ap.add_argument("--compare", type=Path)
    ap.add_argument("--cprofile", type=Path)
    args = ap.parse_args()
    sys.path[:0] = [args.src, str(HERE)]
    import semantic_latency as sl

    from pi_memory.embed import get_embedder, local_onnx
    from pi_memory.index import open_index
    from pi_memory.retrieval.engine import recall
    from pi_memory.semantic.embedded import EmbeddedBackend
    from pi_memory.semantic.models import Scope

    local_onnx.QUERY_CACHE = 0
    texts, queries = sl.make_texts(100_000)
    emb = get_embedder()
    emb.embed_query("warm up")
    scope = Scope(user_id="alice", project_id="aaaaaaaaaaaa")
    if args.build:
        args.db.mkdir(parents=True, exist_ok=True)
        backend = EmbeddedBackend(open_index(args.db), emb)
        vecs = sl.vectors_for(texts, "random", args.db)
        for i in range(0, len(texts), 10_000):
            backend.add_many(texts[i:i + 10_000], scope=scope, vectors=vecs[i:i + 10_000])
        turns = sl.make_texts(100_000, seed=11)[0]
        sl.add_turns(backend.conn, turns, sl.vectors_for(turns, "random", args.db), scope.project_id)
        backend.conn.close()
        print(f"built {args.db}")
        return
    backend = EmbeddedBackend(open_index(args.db), emb)
    both = ("semantic", "sessions")
    sample = queries[1:args.queries + 1]
    for q in sample[:2]:  # loads the matrices
        recall(backend, q, scope=scope, include=both, conn=backend.conn)
    prof = None
    if args.cprofile:
        import cProfile

        prof = cProfile.Profile()
    wall, cpu, dump = [], [], []
    for q in sample:
        c0, t0 = time.process_time(), time.perf_counter()
        if prof:
            prof.enable()
        hits = recall(backend, q, scope=scope, include=both, conn=backend.conn)
        if prof:
            prof.disable()
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        dump.append([q, [[h.kind, h.id, round(h.score, 9), h.ranks, round(h.coverage, 6),
                          None if h.similarity is None else round(h.similarity, 5), h.text] for h in hits]])
    print(f"load {os.getloadavg()[0]:.2f} wall {pct(wall)} cpu {pct(cpu)} ms")
    if prof:
        prof.dump_stats(args.cprofile)
    if args.dump:
        args.dump.write_text(json.dumps(dump, indent=0))
    if args.compare:
        before = json.loads(args.compare.read_text())
        differ = [q for (q, a), (_, b) in zip(before, dump, strict=True) if a != b]
        print("identical" if not differ else f"{len(differ)} of {len(dump)} recalls differ, first: {differ[0]!r}")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
