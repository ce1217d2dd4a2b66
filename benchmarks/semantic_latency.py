"""Hybrid recall latency of the embedded semantic backend (p50/p95, query embedding included) at 10k and 100k
memories, beside mem0 OSS (``mem0ai``, ``infer=False``, the same embedder) when it is installed somewhere.

What is timed: ``EmbeddedBackend.search(query, scope, top_k=5)`` -- embed the query with the bundled
all-MiniLM-L6-v2 int8 model, FTS5 BM25 keyword candidates, float32 vector candidates (exact up to 20k rows;
above, sign-bit Hamming candidates narrowed with an int8 copy and re-ranked by exact cosine:
``pi_memory.semantic.vectors``), reciprocal rank fusion, and reading the winning rows back from SQLite. Every
search embeds its query: the embedder's cache of recent query vectors is turned off here (``QUERY_CACHE = 0``,
also in the mem0 worker), since the same query is asked several times below.

Vector recall: the large-matrix search is not a full scan, so the share of the exact top 10 / top 50 (a full
float32 scan of the same matrix) it returns is printed for the memories and for the turns, over the timed
queries' vectors. With ``random`` vectors (the default above 20k) that is the hardest case for sign bits (no
structure: the true top 50 are barely above the rest); the MiniLM vectors of these texts (``--vectors real``,
20k memories and 20k turns) gave recall@50 0.998 / 0.995 and recall@10 1.0. The first search of
a scope loads its vectors into memory; that load is reported separately ("cold"), then ``--queries`` searches
are timed one after another; then each part is timed alone, in its own loop (embed / keyword / vector).

Data: synthetic memory-like facts ("Alice prefers pnpm for side projects since March (ticket OPS-4821).")
built from templates with a Zipf-distributed vocabulary, so some words are in a large share of memories and
identifiers are rare. All memories are in one scope (the worst case for a scope's matrix). Vectors: ``real``
embeds every text with the bundled model (about 600 texts/s on 2 cores, so about 3 minutes for 100k), ``random``
uses random unit vectors (the vector search costs the same; only the ranking is meaningless), ``auto`` = real up to
20k, random above.

Sessions (``--turns``, default 100,000; 0 skips it): after the figures above, the same database gets that many
session turns (synthetic texts from the same templates, seed 11, in one project's sessions, 20 turns a session)
with a vector each (``real`` up to 20k, else random, as above), its word index merged into one segment as the
session indexer's bulk pass leaves it (and as an import of memories leaves theirs: ``pi_memory.index.segments``;
before that the run measured 14 and 10 segments, about 5 ms more CPU per recall), and ``recall()`` is timed twice per query, as a
host calls it: ``semantic`` only, then ``semantic`` + ``sessions`` (keyword and vector lists of both, the query
embedded once and shared). The first recall with sessions loads the turn matrix ("turns cold").

mem0: pass ``--mem0-python`` (default ``$MEM0_PYTHON``, else ``/tmp/mem0-venv/bin/python`` when it exists), a
Python with ``mem0ai`` (plus ``onnxruntime`` and ``tokenizers`` for our embedder) installed -- never this
project's venv. A worker process builds ``Memory`` with its default local vector store (Qdrant local mode),
our embedder swapped in for mem0's, loads the same texts and vectors through ``vector_store.insert`` (mem0's
``add(infer=False)`` costs tens of milliseconds per memory, so it is timed on a small sample instead), and
times ``Memory.search(query, filters={"user_id": ...}, top_k=5)``. Without BM25 (``fastembed``) and spaCy,
both absent offline, mem0 2.x's search is vector-only. If mem0 is missing or fails, the reason is printed.

The machine's load average is printed with the results: the 2-core evaluation machine is shared, and the
matmul is memory-bandwidth bound, so concurrent jobs move the figures. ``total_cpu`` is the CPU time the process
spent per search (all its threads): on a busy machine it is closer to what an idle one would show as wall time
than the wall time itself is.

Usage: .venv/bin/python benchmarks/semantic_latency.py [--sizes 10000,100000] [--queries 200]
       [--vectors auto|real|random] [--turns 100000] [--mem0-python PATH | --no-mem0] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[1] / "src"
SUBJECTS = ["User", "The user", "Alice", "Bob", "The team", "The project", "Our CI", "The backend", "The frontend",
            "The API", "Maria", "The data team", "The mobile app", "Ops", "The billing service"]
VERBS = ["prefers", "uses", "dislikes", "deployed", "configured", "migrated to", "is learning", "tested", "replaced",
         "recommends", "switched to", "benchmarked", "pinned", "dropped", "is evaluating", "wrote a guide on"]
TAILS = ["for side projects", "in production", "on the staging cluster", "because it is faster", "after the outage",
         "at work", "when debugging", "for the release", "on weekends", "since the last sprint", "for new services",
         "in the monorepo", "for integration tests", "on Windows machines", "for the data pipeline"]
WHEN = ["in January", "in March", "last spring", "in 2024", "in 2025", "two weeks ago", "on Monday", "yesterday", ""]
QUESTIONS = ["which {o} setup does {s} prefer", "what do we use for {o}", "why did {s} move to {o}",
             "{o} in production", "how is {o} configured on staging", "what does {s} think about {o}",
             "ticket {t}", "{o}", "who {v} {o}"]


def _objects(rng: random.Random) -> list[str]:
    base = ["pnpm", "PostgreSQL", "Redis", "Kubernetes", "tabs", "vim", "VS Code", "Rust", "Go", "SQLite", "pytest",
            "ruff", "docker compose", "nginx", "GraphQL", "gRPC", "Tailwind", "React", "Svelte", "FastAPI", "Django",
            "terraform", "ansible", "GitHub Actions", "GitLab CI", "uv", "poetry", "Kafka", "ClickHouse", "Grafana"]
    made = [f"{rng.choice(['lib', 'svc', 'tool', 'db', 'mq'])}{rng.choice('abcdefghjkmnpqrstuvwxyz')}"
            f"{rng.choice(['io', 'ly', 'ex', 'er', 'os', 'ix'])}{n}" for n in range(2000)]
    return base + made


def make_texts(n: int, seed: int = 7) -> tuple[list[str], list[str]]:
    """``(memories, queries)``: ``n`` facts and 1,000 queries over the same vocabulary (Zipf, s = 1.1)."""
    rng = random.Random(seed)
    objects = _objects(rng)
    weights = [1 / (r + 1) ** 1.1 for r in range(len(objects))]
    pick = lambda: rng.choices(objects, weights)[0]  # noqa: E731
    texts = []
    for i in range(n):
        when = rng.choice(WHEN)
        texts.append(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {pick()} {rng.choice(TAILS)}"
                     f"{' ' + when if when else ''} (ticket OPS-{i:06d}).")
    queries = []
    for _ in range(1000):
        queries.append(rng.choice(QUESTIONS).format(o=pick(), s=rng.choice(SUBJECTS).lower(), v=rng.choice(VERBS),
                                                    t=f"OPS-{rng.randrange(n):06d}"))
    return texts, queries


def vectors_for(texts: list[str], mode: str, cache: Path) -> np.ndarray:
    if mode == "random":
        v = np.random.default_rng(0).standard_normal((len(texts), 384)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)
    path = cache / f"vectors-{len(texts)}.npy"
    if path.is_file():
        return np.load(path)
    from pi_memory.embed import get_embedder

    emb = get_embedder()
    start = time.perf_counter()
    out = np.concatenate([emb.embed(texts[i:i + 512]) for i in range(0, len(texts), 512)])
    print(f"  embedded {len(texts):,} texts in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, out)
    return out


def pct(values: list[float]) -> dict[str, float]:
    s = sorted(values)
    return {"p50": round(statistics.median(s), 2), "p95": round(s[min(len(s) - 1, int(0.95 * len(s)))], 2),
            "mean": round(statistics.fmean(s), 2)}


def add_turns(conn, texts: list[str], vecs: np.ndarray, project: str) -> float:
    """Store ``texts`` as session turns of ``project`` (20 a session) with ``vecs``; returns seconds taken."""
    from pi_memory.index import segments, transaction
    from pi_memory.index.indexer import insert_messages

    start = time.perf_counter()
    per = 20
    for first in range(0, len(texts), 10_000):
        with transaction(conn):
            for s in range(first, min(len(texts), first + 10_000), per):
                sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) "
                                   "VALUES ('pi', ?, '/w', ?, 'bench') RETURNING id", (f"s{s}", project)).fetchone()[0]
                fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES (?, ?, 0, 0) "
                                   "RETURNING id", (f"/s{s}.jsonl", sid)).fetchone()[0]
                insert_messages(conn, [(sid, fid, f"e{i}", None, i + 1, "2026-11-01T10:00:00.000Z",
                                        "user" if i % 2 == 0 else "assistant", "message", None, "active", texts[i])
                                       for i in range(s, min(len(texts), s + per))])
                ids = [r[0] for r in conn.execute("SELECT id FROM messages WHERE session_id = ? ORDER BY id", (sid,))]
                conn.executemany(
                    "INSERT INTO semantic_turn_vectors(message_id, model, project_id, dim, vector, created_at) "
                    "VALUES (?, 'all-MiniLM-L6-v2-int8', ?, 384, ?, '2026-11-01T10:00:00.000Z')",
                    [(mid, project, vecs[s + k].astype("<f4").tobytes()) for k, mid in enumerate(ids)])
    with transaction(conn):  # what the indexer's bulk pass ends with: the word index in one segment
        segments.optimize(conn, "messages_fts")
    return time.perf_counter() - start


def bench_sessions(backend, scope, turns: tuple[list[str], np.ndarray], sample: list[str]) -> dict:
    """``recall()`` semantic-only and with sessions, alternating per query (module docstring)."""
    from pi_memory.retrieval.engine import recall

    insert_s = add_turns(backend.conn, turns[0], turns[1], scope.project_id)
    both = ("semantic", "sessions")
    start = time.perf_counter()
    recall(backend, sample[0], scope=scope, include=both, conn=backend.conn)
    cold_ms = (time.perf_counter() - start) * 1000
    parts: dict[str, list[float]] = {"semantic": [], "semantic+sessions": [], "semantic+sessions_cpu": []}
    for q in sample:
        t0 = time.perf_counter()
        recall(backend, q, scope=scope, include=("semantic",), conn=backend.conn)
        parts["semantic"].append((time.perf_counter() - t0) * 1000)
        c0, t0 = time.process_time(), time.perf_counter()
        recall(backend, q, scope=scope, include=both, conn=backend.conn)
        parts["semantic+sessions"].append((time.perf_counter() - t0) * 1000)
        parts["semantic+sessions_cpu"].append((time.process_time() - c0) * 1000)
    return {"turns": len(turns[0]), "insert_s": round(insert_s, 1), "turns_cold_ms": round(cold_ms, 1),
            **{k: pct(v) for k, v in parts.items()}}


def vector_recall(matrix, qvs: list[np.ndarray], ks: tuple[int, ...] = (10, 50)) -> dict[str, float]:
    """Share of the exact top ``k`` (a full scan: ``search(exact=True)``) that ``matrix.search`` returns, mean
    over ``qvs`` (the module docstring)."""
    found = {k: 0.0 for k in ks}
    for qv in qvs:
        for k in ks:
            truth = {i for i, _ in matrix.search(qv, k, exact=True)}
            found[k] += len(truth & {i for i, _ in matrix.search(qv, k)}) / max(1, len(truth))
    return {f"recall@{k}": round(v / max(1, len(qvs)), 4) for k, v in found.items()}


def bench_ours(texts: list[str], vecs: np.ndarray, queries: list[str], n_queries: int,
               turns: tuple[list[str], np.ndarray] | None = None) -> dict:
    from pi_memory.embed import get_embedder
    from pi_memory.index import open_index
    from pi_memory.semantic.embedded import EmbeddedBackend
    from pi_memory.semantic.models import Scope

    tmp = Path(tempfile.mkdtemp(prefix="pi-sem-bench-"))
    try:
        emb = get_embedder()
        emb.embed_query("warm up")
        backend = EmbeddedBackend(open_index(tmp), emb)
        scope = Scope(user_id="alice", project_id="aaaaaaaaaaaa")
        start = time.perf_counter()
        for i in range(0, len(texts), 10_000):
            backend.add_many(texts[i:i + 10_000], scope=scope, vectors=vecs[i:i + 10_000])
        load_s = time.perf_counter() - start
        start = time.perf_counter()
        backend.search(queries[0], scope=scope)
        cold_ms = (time.perf_counter() - start) * 1000
        parts: dict[str, list[float]] = {"total": [], "total_cpu": [], "embed": [], "keyword": [], "vector": []}
        sample = queries[1:n_queries + 1]
        for q in sample:  # what a host sees: one search after another
            c0, t0 = time.process_time(), time.perf_counter()
            backend.search(q, scope=scope, top_k=5)
            parts["total"].append((time.perf_counter() - t0) * 1000)
            parts["total_cpu"].append((time.process_time() - c0) * 1000)
        qvs = []
        for q in sample:  # then each part alone, in its own loop
            t0 = time.perf_counter()
            qvs.append(emb.embed_query(q))
            parts["embed"].append((time.perf_counter() - t0) * 1000)
        for q in sample:
            t0 = time.perf_counter()
            backend.keyword_candidates(q, scope=scope)
            parts["keyword"].append((time.perf_counter() - t0) * 1000)
        for qv in qvs:
            t0 = time.perf_counter()
            backend.vector_candidates(qv, scope=scope)
            parts["vector"].append((time.perf_counter() - t0) * 1000)
        with backend.lock:
            memory_recall = vector_recall(backend._matrix(scope), qvs)
        sessions = bench_sessions(backend, scope, turns, sample) if turns else None
        if sessions:
            from pi_memory.semantic import sources

            turn_matrix = sources.matrix(backend.conn, "sessions", backend.model, len(qvs[0]), scope.project_id)
            sessions["vector_recall"] = vector_recall(turn_matrix, qvs)
        backend.conn.close()
        return {"insert_s": round(load_s, 1), "cold_first_search_ms": round(cold_ms, 1),
                **{k: pct(v) for k, v in parts.items()}, "vector_recall": memory_recall, "sessions": sessions}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


MEM0_WORKER = r'''
import json, os, sys, tempfile, time, types, hashlib, uuid, statistics, shutil, atexit
os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("OPENAI_API_KEY", "sk-unused-infer-false")
src, data_dir, n_queries = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, src)
import numpy as np
from pi_memory.embed.local_onnx import OnnxMiniLM
from mem0.embeddings.base import EmbeddingBase
from mem0.utils.factory import EmbedderFactory
import mem0
import pi_memory.embed.local_onnx as local_onnx
local_onnx.QUERY_CACHE = 0  # every query embedded as new, as on our side
emb = OnnxMiniLM()
emb.embed_query("warm up")
class Shared(EmbeddingBase):
    def embed(self, text, memory_action=None):
        return emb.embed_query(text).tolist()
    def embed_batch(self, texts, memory_action="add"):
        return emb.embed(list(texts)).tolist()
EmbedderFactory.create = classmethod(lambda cls, provider, config, vector_config: Shared())
from mem0 import Memory
tmp = tempfile.mkdtemp(prefix="mem0-bench-")
atexit.register(shutil.rmtree, tmp, True)
m = Memory.from_config({
    "embedder": {"provider": "openai", "config": {"embedding_dims": 384}},
    "vector_store": {"provider": "qdrant", "config": {"path": tmp + "/qdrant", "embedding_model_dims": 384,
                                                     "collection_name": "bench"}},
    "llm": {"provider": "openai", "config": {"api_key": "sk-unused-infer-false"}},
    "history_db_path": tmp + "/history.db"})
texts = json.load(open(os.path.join(data_dir, "texts.json")))
queries = json.load(open(os.path.join(data_dir, "queries.json")))
vecs = np.load(os.path.join(data_dir, "vectors.npy"))
t = time.perf_counter()
for i in range(0, len(texts), 2000):
    chunk = texts[i:i + 2000]
    payloads = [{"data": x, "hash": hashlib.md5(x.encode()).hexdigest(), "created_at": "2026-11-29T00:00:00+00:00",
                 "user_id": "alice", "role": "user"} for x in chunk]
    m.vector_store.insert(vectors=vecs[i:i + 2000].tolist(), payloads=payloads, ids=[str(uuid.uuid4()) for _ in chunk])
insert_s = time.perf_counter() - t
adds = []
for k in range(20):
    t = time.perf_counter()
    m.add(f"Sample memory number {k} added through add(infer=False).", user_id="alice", infer=False)
    adds.append((time.perf_counter() - t) * 1000)
t = time.perf_counter()
m.search(queries[0], filters={"user_id": "alice"}, top_k=5)
cold = (time.perf_counter() - t) * 1000
lat = []
for q in queries[1:n_queries + 1]:
    t = time.perf_counter()
    m.search(q, filters={"user_id": "alice"}, top_k=5)
    lat.append((time.perf_counter() - t) * 1000)
s = sorted(lat)
print(json.dumps({"version": getattr(mem0, "__version__", "?"), "insert_s": round(insert_s, 1),
                  "add_infer_false_ms_p50": round(statistics.median(adds), 1), "cold_first_search_ms": round(cold, 1),
                  "total": {"p50": round(statistics.median(s), 2), "p95": round(s[min(len(s) - 1, int(0.95 * len(s)))], 2),
                            "mean": round(statistics.fmean(s), 2)}}))
'''


def bench_mem0(python: str, texts: list[str], vecs: np.ndarray, queries: list[str], n_queries: int) -> dict:
    data = Path(tempfile.mkdtemp(prefix="mem0-bench-data-"))
    try:
        (data / "texts.json").write_text(json.dumps(texts))
        (data / "queries.json").write_text(json.dumps(queries))
        np.save(data / "vectors.npy", vecs)
        try:
            done = subprocess.run([python, "-c", MEM0_WORKER, str(SRC), str(data), str(n_queries)],
                                  capture_output=True, text=True, timeout=7200)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"error": f"could not run {python}: {exc}"}
        if done.returncode != 0:
            tail = (done.stderr or "").strip().splitlines()[-3:]
            return {"error": f"mem0 worker failed (exit {done.returncode}): {' | '.join(tail)}"}
        return json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--vectors", choices=("auto", "real", "random"), default="auto")
    ap.add_argument("--mem0-python", default=os.environ.get("MEM0_PYTHON")
                    or ("/tmp/mem0-venv/bin/python" if Path("/tmp/mem0-venv/bin/python").exists() else None))
    ap.add_argument("--no-mem0", action="store_true")
    ap.add_argument("--turns", type=int, default=100_000, help="session turns for the recall-with-sessions run")
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "pi-memory-bench-vectors"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from pi_memory.embed import local_onnx

    local_onnx.QUERY_CACHE = 0  # each timed call embeds its query (the module docstring)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    results = {"load_average_start": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(), "runs": []}
    for n in sizes:
        mode = args.vectors if args.vectors != "auto" else ("real" if n <= 20_000 else "random")
        texts, queries = make_texts(n)
        print(f"{n:,} memories ({mode} vectors)...", file=sys.stderr)
        vecs = vectors_for(texts, mode, Path(args.cache))
        turns = None
        if args.turns > 0:
            turn_mode = args.vectors if args.vectors != "auto" else ("real" if args.turns <= 20_000 else "random")
            turn_texts = make_texts(args.turns, seed=11)[0]
            turns = (turn_texts, vectors_for(turn_texts, turn_mode, Path(args.cache) / "turns"))
        run = {"memories": n, "vectors": mode, "ours": bench_ours(texts, vecs, queries, args.queries, turns)}
        if args.no_mem0:
            run["mem0"] = {"error": "skipped (--no-mem0)"}
        elif not args.mem0_python:
            run["mem0"] = {"error": "no Python with mem0ai given (--mem0-python or $MEM0_PYTHON); install it in a "
                                    "separate venv: python -m venv /tmp/mem0-venv && /tmp/mem0-venv/bin/pip install "
                                    "mem0ai onnxruntime tokenizers"}
        else:
            run["mem0"] = bench_mem0(args.mem0_python, texts, vecs, queries, args.queries)
        results["runs"].append(run)
    results["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"load average {results['load_average_start']} -> {results['load_average_end']} on {results['cpus']} CPUs")
    print(f"{'memories':>9} {'vectors':>7}  {'system':<26} {'p50 ms':>7} {'p95 ms':>7}  notes")
    for run in results["runs"]:
        o = run["ours"]
        note = (f"CPU p50 {o['total_cpu']['p50']} p95 {o['total_cpu']['p95']}; embed p50 {o['embed']['p50']}, "
                f"keyword {o['keyword']['p50']}, vector {o['vector']['p50']}; "
                f"cold {o['cold_first_search_ms']} ms; insert {o['insert_s']} s")
        print(f"{run['memories']:>9,} {run['vectors']:>7}  {'pi-memory hybrid (RRF)':<26} {o['total']['p50']:>7} "
              f"{o['total']['p95']:>7}  {note}")
        r = o["vector_recall"]
        print(f"{'':>9} {'':>7}  {'vector search vs full scan':<26} {'-':>7} {'-':>7}  memories recall@10 "
              f"{r['recall@10']}, recall@50 {r['recall@50']}" + (
                  f"; turns recall@10 {o['sessions']['vector_recall']['recall@10']}, recall@50 "
                  f"{o['sessions']['vector_recall']['recall@50']}" if o.get("sessions") else ""))
        t = o.get("sessions")
        if t:
            print(f"{'':>9} {'':>7}  {'recall(): semantic':<26} {t['semantic']['p50']:>7} {t['semantic']['p95']:>7}"
                  f"  same queries, alternating with the next line")
            print(f"{'':>9} {'':>7}  {'recall(): + ' + format(t['turns'], ',') + ' turns':<26} "
                  f"{t['semantic+sessions']['p50']:>7} {t['semantic+sessions']['p95']:>7}  CPU p50 "
                  f"{t['semantic+sessions_cpu']['p50']} p95 {t['semantic+sessions_cpu']['p95']}; turns cold "
                  f"{t['turns_cold_ms']} ms; insert {t['insert_s']} s")
        m = run["mem0"]
        if "error" in m:
            print(f"{'':>9} {'':>7}  {'mem0 OSS':<26} {'-':>7} {'-':>7}  {m['error']}")
        else:
            print(f"{'':>9} {'':>7}  {'mem0 ' + str(m['version']) + ' (vector only)':<26} {m['total']['p50']:>7} "
                  f"{m['total']['p95']:>7}  cold {m['cold_first_search_ms']} ms; add(infer=False) p50 "
                  f"{m['add_infer_false_ms_p50']} ms")


if __name__ == "__main__":
    main()
