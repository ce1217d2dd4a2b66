"""Latency of ``session_search`` and ``memory_search`` (p50/p95) at 10k, 100k and 1M messages.

Data: synthetic messages drawn from a realistic vocabulary -- the words of the real pi session in
``../shared/fixtures/pi-real`` (its message, tool call and tool result text) and of the LoCoMo conversations in
``../shared/bench-data`` (read in place), with their observed frequencies (Zipf-like: "the", "session", "error" are in a
large share of messages, most words are rare), 3-300 words per message (log-normal, median about 35),
and 3% Chinese messages. The index grows in place: 10k, then 100k, then 1M messages; each size is measured.

Queries (20 per class, each run 3 times after one warm-up): ``common`` (one of the 40 most frequent words),
``medium`` (rank 200-2,000), ``rare`` (rank over 5,000, of about 8,000), ``two words``, ``three words`` (mixed ranks),
``identifier`` (hyphenated or dotted names), ``cjk`` (3-4 Chinese characters), and ``short`` (2 letters: a
whole word in the word index; it was a LIKE scan with the first, trigram, index).

The index is built in batches of 1,000 messages and then optimized, the state a bulk ``index_paths`` pass
leaves (small passes keep a few segments through bounded merges: ``pi_memory.index.segments``); ``--as-built`` skips the optimize and measures
the many-segment state (13 segments at 1M: p50 about 1.5-2x higher).

Baseline, same run, same data: a plain FTS5 table (``unicode61``) queried with SQLite's ``bm25()``, terms
ANDed, ``ORDER BY rank LIMIT 10`` -- what a straightforward implementation does.

memory_search is measured on ``--memory-sizes`` memories (default 10k, 100k, 1M: curated stores hold tens of
entries, the extended store thousands).

Usage: .venv/bin/python benchmarks/search_latency.py [--sizes 10000,100000,1000000] [--json]
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import os
import random
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from pi_memory.index import open_index
from pi_memory.index.db import transaction
from pi_memory.index.indexer import insert_messages
from pi_memory.index.readers import read_session
from pi_memory.retrieval import memory_search, session_search

SHARED = Path(__file__).resolve().parents[2] / "shared"
FIXTURE = SHARED / "fixtures" / "pi-real" / "before-compaction.jsonl"
LOCOMO = SHARED / "bench-data" / "locomo-dev.json"
CJK_WORDS = ["服务端", "配置", "数据库", "缓存", "连接池", "修改", "部署", "测试", "日志", "错误", "用户", "接口",
             "性能", "内存", "线程", "请求", "超时", "重试", "版本", "依赖", "构建", "脚本", "文件", "目录"]
ROLES = ["user", "assistant", "tool", "assistant", "tool"]


class Vocab:
    def __init__(self) -> None:
        if not FIXTURE.is_file():
            sys.exit(f"Missing {FIXTURE}; this benchmark needs ../shared/fixtures.")
        counts: collections.Counter = collections.Counter()
        for record in read_session(FIXTURE).records:  # the conversation's text, JSON escapes decoded
            counts.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9_-]{2,20}", record.text))
        if LOCOMO.is_file():  # everyday conversation words, so the vocabulary has a long tail of rare words
            for sample in json.loads(LOCOMO.read_text(encoding="utf-8")):
                for key, turns in sample["conversation"].items():
                    if key.startswith("session_") and isinstance(turns, list):
                        for turn in turns:
                            counts.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]{2,20}", turn["text"]))
        self.ranked = [w for w, _ in counts.most_common(20000)]
        self.cum = list(itertools.accumulate(c for _, c in counts.most_common(20000)))

    def message(self, rng: random.Random) -> str:
        if rng.random() < 0.03:
            return "".join(rng.choice(CJK_WORDS) for _ in range(rng.randint(4, 30)))
        n = min(300, max(3, int(rng.lognormvariate(3.5, 0.9))))
        return " ".join(rng.choices(self.ranked, cum_weights=self.cum, k=n))


def queries(vocab: Vocab, rng: random.Random) -> dict[str, list[str]]:
    r = vocab.ranked
    ids = [w for w in r[:3000] if "-" in w or "_" in w][:200] or r[:20]
    return {
        "common": rng.sample(r[:40], 20),
        "medium": rng.sample(r[200:2000], 20),
        "rare": rng.sample(r[5000:], 20),
        "two words": [f"{rng.choice(r[:300])} {rng.choice(r[300:5000])}" for _ in range(20)],
        "three words": [" ".join([rng.choice(r[:100]), rng.choice(r[100:2000]), rng.choice(r[2000:10000])])
                        for _ in range(20)],
        "identifier": rng.sample(ids, min(20, len(ids))),
        "cjk": [rng.choice(CJK_WORDS) + rng.choice(CJK_WORDS)[:1] for _ in range(20)],
        "short": [w[:2] for w in rng.sample(r[:500], 20)],
    }


def add_messages(conn: sqlite3.Connection, base: sqlite3.Connection, vocab: Vocab, start: int, count: int,
                 rng: random.Random) -> None:
    per_session = 1000
    for s0 in range(start, start + count, per_session):
        n = min(per_session, start + count - s0)
        with transaction(conn):
            sid = conn.execute(
                "INSERT INTO sessions(source, session_key, cwd, project_id, project_name) VALUES "
                "('pi', ?, ?, ?, ?) RETURNING id",
                (f"bench-{s0}", f"/home/bench/p{s0 % 5}", f"{s0 % 5:012x}", f"p{s0 % 5}"),
            ).fetchone()[0]
            fid = conn.execute(
                "INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES (?, ?, 0, 0) RETURNING id",
                (f"/bench/{s0}.jsonl", sid),
            ).fetchone()[0]
            rows = []
            for i in range(n):
                k = s0 + i
                # dated in the past, as a real index is (2026 dates fell after "now" as the calendar moved on,
                # and session_search then adds its as_of condition: retrieval/search.py _session_filters)
                ts = f"2025-{1 + (k * 12 // 1_000_000) % 12:02d}-{1 + (k // 1000) % 28:02d}T10:00:{k % 60:02d}.000Z"
                rows.append((sid, fid, f"e{k}", None, i + 2, ts, ROLES[k % 5], "message", None, "active",
                             vocab.message(rng)))
            insert_messages(conn, rows)
        base.execute("BEGIN")
        base.executemany("INSERT INTO plain(text) VALUES (?)", [(r[-1],) for r in rows])
        base.execute("COMMIT")


def add_memories(conn: sqlite3.Connection, vocab: Vocab, count: int, rng: random.Random) -> None:
    with transaction(conn):
        conn.executemany(
            "INSERT INTO memories(scope, project, target, content, source, created) "
            "VALUES ('global', NULL, 'memory', ?, 'extended', '2026-01-01T00:00:00.000Z')",
            [(f"{i}: " + " ".join(vocab.message(rng).split()[:25]),) for i in range(count)],
        )


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(fn, items: list[str], runs: int = 3) -> dict:
    samples = []
    for q in items:
        fn(q)  # warm-up
        for _ in range(runs):
            t0 = time.perf_counter()
            fn(q)
            samples.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": round(pct(samples, 0.5), 2), "p95_ms": round(pct(samples, 0.95), 2), "n": len(samples)}


def baseline_query(base: sqlite3.Connection, q: str) -> list:
    terms = [t for t in re.findall(r"\w+", q)]
    if not terms:
        return []
    expr = " ".join('"' + t.replace('"', '""') + '"' for t in terms)
    return base.execute(
        "SELECT rowid, bm25(plain) FROM plain WHERE plain MATCH ? ORDER BY rank LIMIT 10", (expr,)
    ).fetchall()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--memory-sizes", default="10000,100000,1000000")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--as-built", action="store_true",
                    help="measure the word index as the 1,000-row batches left it (many FTS segments), not optimized")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    msizes = [int(s) for s in args.memory_sizes.split(",") if s]

    vocab = Vocab()
    rng = random.Random(7)
    qs = queries(vocab, random.Random(11))
    root = Path(tempfile.mkdtemp(prefix="pi-memory-search-"))
    out: dict = {"sessions": [], "memories": [], "cpus": os.cpu_count()}
    try:
        conn = open_index(root / "idx")
        base = sqlite3.connect(root / "baseline.sqlite3", isolation_level=None)
        base.execute("PRAGMA journal_mode = WAL")
        base.execute("CREATE VIRTUAL TABLE plain USING fts5(text)")
        have = 0
        for size in sizes:
            t0 = time.perf_counter()
            add_messages(conn, base, vocab, have, size - have, rng)
            build_s = time.perf_counter() - t0
            have = size
            if not args.as_built:  # the state index_paths leaves: a bulk pass optimizes, small passes merge
                conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
            segments = conn.execute("SELECT count(DISTINCT segid) FROM messages_fts_idx").fetchone()[0]
            row = {"messages": size, "build_s": round(build_s, 1), "fts_segments": segments, "classes": {}}
            for cls, items in qs.items():
                ours = timed(lambda q: session_search(conn, q, limit=10), items)
                plain = timed(lambda q: baseline_query(base, q), items)
                row["classes"][cls] = {"ours": ours, "baseline_bm25": plain}
            every = [q for c in qs for q in qs[c]]
            row["all"] = {
                "ours": timed(lambda q: session_search(conn, q, limit=10), every, runs=1),
                "baseline_bm25": timed(lambda q: baseline_query(base, q), every, runs=1),
            }
            out["sessions"].append(row)
            if not args.json:
                print_row(row)
        have = 0
        for size in msizes:
            add_memories(conn, vocab, size - have, rng)
            have = size
            items = qs["medium"] + qs["two words"] + qs["common"]
            m = timed(lambda q: memory_search(conn, q, limit=10, record_use=False), items)
            out["memories"].append({"memories": size, "memory_search": m})
            if not args.json:
                print(f"memory_search at {size:>9,} memories: p50 {m['p50_ms']} ms, p95 {m['p95_ms']} ms")
        conn.close()
        base.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out["load_avg_1m"] = round(os.getloadavg()[0], 2)
    if args.json:
        print(json.dumps(out))
    else:
        print(f"machine: {out['cpus']} CPUs, load average {out['load_avg_1m']}; target: session_search p95 <= 10 ms at 1M")


def print_row(row: dict) -> None:
    print(f"\nsession_search at {row['messages']:,} messages (index built in {row['build_s']} s, "
          f"{row['fts_segments']} FTS segment(s))")
    print(f"  {'query class':<14}{'ours p50':>10}{'ours p95':>10}{'bm25 p50':>11}{'bm25 p95':>11}")
    for cls, r in row["classes"].items():
        b = r["baseline_bm25"]
        bs = f"{b['p50_ms']:>11}{b['p95_ms']:>11}" if b else f"{'-':>11}{'-':>11}"
        print(f"  {cls:<14}{r['ours']['p50_ms']:>10}{r['ours']['p95_ms']:>10}{bs}")
    a = row["all"]
    print(f"  {'ALL':<14}{a['ours']['p50_ms']:>10}{a['ours']['p95_ms']:>10}"
          f"{a['baseline_bm25']['p50_ms']:>11}{a['baseline_bm25']['p95_ms']:>11}")


if __name__ == "__main__":
    main()
