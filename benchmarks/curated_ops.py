"""Latency of curated-store operations: p50/p95 of add, replace, read and snapshot build.

Two store sizes: filled to the default limit (2,200 chars) and a hand-grown file at 100× that limit
(220,000 chars; over budget, as a user's store becomes when edited outside the tool). Baseline in the same
run: the bare cost of the file I/O the store must do anyway (read the file, split it, write it back without
lock or fsync), so the table shows what locking, scanning, drift checks and fsync add.

Usage: .venv/bin/python benchmarks/curated_ops.py [--runs 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from pi_memory.curated import MemoryStore, build_snapshot
from pi_memory.curated.entries import DELIMITER, parse

LIMIT = 2200


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(fn, runs: int) -> dict:
    samples = []
    for i in range(runs):
        t0 = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": round(pct(samples, 0.5), 3), "p95_ms": round(pct(samples, 0.95), 3),
            "mean_ms": round(statistics.fmean(samples), 3)}


def fill(folder: Path, chars: int) -> list[str]:
    entries, i = [], 0
    while len(DELIMITER.join(entries)) < chars - 80:
        entries.append(f"Fact {i}: the service on port {8000 + i} is built with make target build-{i}")
        i += 1
    (folder / "MEMORY.md").write_text(DELIMITER.join(entries) + "\n", encoding="utf-8")
    return entries


def bench_size(label: str, chars: int, limit: int, runs: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        entries = fill(folder, chars)
        store = MemoryStore(folder, memory_char_limit=limit)
        store.load_from_disk()
        size = (folder / "MEMORY.md").stat().st_size
        path = folder / "MEMORY.md"

        def baseline(i: int) -> None:
            items = parse(path.read_text(encoding="utf-8"))
            items[0] = items[0]
            path.write_text(DELIMITER.join(items) + "\n", encoding="utf-8")

        def add(i: int) -> None:
            r = store.add("memory", f"bench add {i}")
            if r.success:
                store.remove("memory", f"bench add {i}")

        def replace(i: int) -> None:
            old = entries[0] if i % 2 == 0 else entries[0] + " (v2)"
            new = entries[0] + " (v2)" if i % 2 == 0 else entries[0]
            store.replace("memory", old, new)
            store.begin_turn()

        result = {
            "label": label,
            "chars": len(DELIMITER.join(entries)),
            "entries": len(entries),
            "bytes": size,
            "baseline_read_split_write": timed(baseline, runs),
            "add": timed(lambda i: (add(i), store.begin_turn()), runs),
            "replace": timed(replace, runs),
            "read": timed(lambda i: store.read("memory"), runs),
            "read_sanitised": timed(lambda i: store.read("memory", sanitised=True), runs),
            "snapshot_build": timed(lambda i: build_snapshot(store), runs),
        }
        return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [
        bench_size("at limit (2,200 chars)", LIMIT, LIMIT, args.runs),
        bench_size("100x limit (220,000 chars)", 100 * LIMIT, 100 * LIMIT, max(20, args.runs // 5)),
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    ops = ["baseline_read_split_write", "add", "replace", "read", "read_sanitised", "snapshot_build"]
    for row in rows:
        print(f"\n{row['label']}: {row['entries']} entries, {row['bytes']:,} bytes")
        print(f"  {'operation':28} {'p50 ms':>9} {'p95 ms':>9}")
        for op in ops:
            print(f"  {op:28} {row[op]['p50_ms']:>9.3f} {row[op]['p95_ms']:>9.3f}")
        print("  (add = an accepted add plus the remove that undoes it; replace alternates two texts)")


if __name__ == "__main__":
    main()
