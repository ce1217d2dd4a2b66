"""Latency of anchor-mode ``session_search`` (the session files read directly) beside the index path.

Corpus: ``--size-mb`` (default 1024) of generated pi v3 session files in a temporary folder, files of about
``--file-mb`` (default 2) MB, messages of 20-200 words drawn from the words of this repository's README
(Zipf-like: the frequent words are in many messages), 30 days of timestamps, 20 project folders. Every
200th message carries a rare token (``marker<N>``) so rare queries have a few answers.

Queries (each run ``--repeat`` times after one warm-up; p50/p95 in ms):

* ``rare``: one ``marker<N>`` token in ``all`` (the raw pre-check skips almost every file);
* ``common``: two frequent words in ``all`` (nearly every file is parsed);
* ``any+exclude``: two words in ``any``, one in ``exclude``;
* ``recent``: a frequent word with ``from`` 3 days ago (files written earlier are not opened).

Index path, same corpus (skip with ``--no-index``): ``pi-memory index-sessions`` of the folder once (its time is
printed), then ``session_search`` of the same words (p50/p95).

Usage: .venv/bin/python benchmarks/anchor_search.py [--size-mb 1024] [--file-mb 2] [--repeat 5] [--no-index]
       [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pi_memory.index import anchor_search, index_paths, open_index
from pi_memory.retrieval import session_search

README = Path(__file__).resolve().parents[1] / "README.md"


def vocabulary() -> list[str]:
    words = re.findall(r"[a-z][a-z]{2,}", README.read_text(encoding="utf-8").lower())
    counts: dict[str, int] = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    return sorted(counts, key=lambda w: -counts[w])


def generate(folder: Path, size_mb: int, file_mb: float, seed: int = 7) -> tuple[int, int]:
    rng = random.Random(seed)
    vocab = vocabulary()
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    now = datetime.now(UTC)
    total, files, messages = 0, 0, 0
    target = size_mb * 1024 * 1024
    while total < target:
        day = now - timedelta(days=30 * files / max(1, size_mb / file_mb))
        project = f"/work/project-{files % 20}"
        path = folder / f"--work-project-{files % 20}--" / f"{day:%Y-%m-%dT%H-%M-%S}_{files:06d}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps({"type": "session", "version": 3, "id": f"s{files}", "timestamp": day.isoformat(),
                             "cwd": project})]
        size, parent, n = len(lines[0]), None, 0
        while size < file_mb * 1024 * 1024:
            n += 1
            messages += 1
            words = rng.choices(vocab, weights, k=rng.randint(20, 200))
            if messages % 200 == 0:
                words.insert(rng.randrange(len(words)), f"marker{messages // 200}")
            role = "user" if n % 2 else "assistant"
            stamp = (day + timedelta(seconds=n * 20)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
            msg = {"role": role, "content": [{"type": "text", "text": " ".join(words)}], "timestamp": 1}
            line = json.dumps({"type": "message", "id": f"e{n}", "parentId": parent, "timestamp": stamp,
                               "message": msg})
            parent = f"e{n}"
            lines.append(line)
            size += len(line) + 1
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        stamp = day.timestamp()
        os.utime(path, (stamp, stamp))
        total += size
        files += 1
    return files, messages


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def timed(fn, repeat: int) -> tuple[float, float, object]:
    out = fn()  # warm-up (page cache)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        samples.append((time.perf_counter() - start) * 1000)
    p50, p95 = percentiles(samples)
    return p50, p95, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=1024, help="corpus size in MB (default 1024)")
    ap.add_argument("--file-mb", type=float, default=2.0, help="size of one session file in MB (default 2)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per query (default 5)")
    ap.add_argument("--no-index", action="store_true", help="skip the index path")
    ap.add_argument("--keep", type=Path, help="generate into (or reuse) this folder and keep it")
    args = ap.parse_args()

    folder = args.keep or Path(tempfile.mkdtemp(prefix="pi-memory-anchors-"))
    try:
        sessions = folder / "sessions"
        start = time.perf_counter()
        if not sessions.exists():
            files, messages = generate(sessions, args.size_mb, args.file_mb)
            print(f"generated {files} files, {messages} messages, {args.size_mb} MB in "
                  f"{time.perf_counter() - start:.1f} s")
        vocab = vocabulary()
        since = (datetime.now(UTC) - timedelta(days=3)).strftime("%Y-%m-%d")
        queries = {
            "rare": ({"all_terms": ["marker42"]}, "marker42"),
            "common": ({"all_terms": [vocab[3], vocab[5]]}, f"{vocab[3]} {vocab[5]}"),
            "any+exclude": ({"any_terms": [vocab[40], vocab[60]], "exclude": [vocab[2]]},
                            f"{vocab[40]} OR {vocab[60]} NOT {vocab[2]}"),
            "recent": ({"all_terms": [vocab[10]], "since": since}, vocab[10]),
        }
        conn = None
        if not args.no_index:
            start = time.perf_counter()
            conn = open_index(folder / "data")
            stats = index_paths(conn, [str(sessions)])
            print(f"index path: indexed {stats.messages_added} messages in {time.perf_counter() - start:.1f} s")
        print(f"{'query':<12} {'anchors p50':>12} {'p95':>9} {'count':>6}   {'index p50':>10} {'p95':>9}")
        for name, (request, words) in queries.items():
            p50, p95, result = timed(lambda r=request: anchor_search([sessions], **r), args.repeat)
            row = f"{name:<12} {p50:>10.1f}ms {p95:>7.1f}ms {result.count:>6}"
            if conn is not None:
                until = request.get("since")
                i50, i95, _ = timed(lambda w=words, s=until: session_search(conn, w, limit=10, since=s), args.repeat)
                row += f"   {i50:>8.1f}ms {i95:>7.1f}ms"
            print(row)
        if conn is not None:
            conn.close()
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
