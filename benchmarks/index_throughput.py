"""Indexing throughput (MB/s of session JSONL) and the cost of a pass over 1,000 unchanged files.

Corpus: at least ``--size-mb`` (default 1024) of pi session JSONL generated in a temp folder from the real
fixtures in ``../shared/fixtures`` (the long pi-real file and the pi 0.73/1.6 sessions). Every copy gets fresh
session and entry ids, timestamps shifted by whole days, and its text (message, tool call and tool result
text) passed through its own random substitution of the letters a-z: the same length, structure and letter
statistics as the real text, but different words and trigrams in every copy, so neither compression nor
deduplication can flatter the figure.

Printed, all in the same run:

* baseline: read every file and ``json.loads`` every line (the least any indexer must do);
* readers only: ``read_session`` on every file (parsing, record building), no database;
* ``index_paths`` into a fresh index (wall clock and CPU time; target >= 50 MB/s);
* a second ``index_paths`` over 1,000 small unchanged session files (target <= 100 ms), beside its own
  baseline: ``os.stat`` of the same 1,000 files.

``--variants`` also indexes 64 MB of the corpus three ways (as shipped; the first release's trigram index
instead of the word index; no FTS index) to show where the time goes, with the CPU time beside the wall-clock
figure.

Usage: .venv/bin/python benchmarks/index_throughput.py [--size-mb 1024] [--variants] [--json] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import string
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from pi_memory.index import index_paths, open_index
from pi_memory.index import writer as writermod
from pi_memory.index.readers import read_session

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
TEXT_KEYS = ("text", "summary", "command", "output")


def fixture_files() -> list[Path]:
    files = sorted(FIXTURES.rglob("*.jsonl"))
    if not files:
        sys.exit(f"No fixtures under {FIXTURES}; this benchmark needs ../shared/fixtures.")
    return files


def _vary(obj, table: dict, ids: dict, days: int, rng: random.Random):
    """Fresh ids, shifted timestamps and substituted letters, in place."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in ("id", "parentId", "toolCallId") and isinstance(value, str):
                if value not in ids:
                    ids[value] = "".join(rng.choice("0123456789abcdef") for _ in range(len(value)))
                obj[key] = ids[value]
            elif key == "timestamp" and isinstance(value, str) and len(value) >= 19:
                try:  # noqa: SIM105 (a bare try is cheaper per line than suppress)
                    moved = datetime.fromisoformat(value.replace("Z", "+00:00")) + timedelta(days=days)
                    obj[key] = moved.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moved.microsecond // 1000:03d}Z"
                except ValueError:
                    pass
            elif key in TEXT_KEYS and isinstance(value, str):
                obj[key] = value.translate(table)
            elif key == "arguments" and isinstance(value, dict):
                for k, v in value.items():
                    if isinstance(v, str):
                        value[k] = v.translate(table)
            else:
                _vary(value, table, ids, days, rng)
    elif isinstance(obj, list):
        for item in obj:
            _vary(item, table, ids, days, rng)


def make_copy(src_lines: list[bytes], dest: Path, n: int) -> int:
    rng = random.Random(n)
    letters = list(string.ascii_lowercase)
    shuffled = letters[:]
    rng.shuffle(shuffled)
    table = str.maketrans("".join(letters), "".join(shuffled))
    ids: dict[str, str] = {}
    out = []
    for raw in src_lines:
        try:
            obj = json.loads(raw)
        except ValueError:
            out.append(raw)
            continue
        if obj.get("type") == "session":
            obj["id"] = f"{rng.getrandbits(128):032x}"
            obj["cwd"] = f"/home/bench/project-{n % 7}"
            obj.pop("branchedFrom", None)
        _vary(obj, table, ids, n, rng)
        out.append(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode())
    data = b"\n".join(out) + b"\n"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return len(data)


def build_corpus(folder: Path, size_mb: float) -> tuple[list[Path], int]:
    sources = [(p, p.read_bytes().splitlines()) for p in fixture_files()]
    target = int(size_mb * 1024 * 1024)
    total, n, files = 0, 0, []
    while total < target:
        src, lines = sources[n % len(sources)]
        dest = folder / f"--home-bench-project-{n % 7}--" / f"2026-01-01T00-00-00-000Z_{n:06d}.jsonl"
        total += make_copy(lines, dest, n)
        files.append(dest)
        n += 1
    return files, total


def baseline_json(files: list[Path]) -> float:
    t0 = time.perf_counter()
    for p in files:
        with open(p, "rb") as fh:
            for line in fh:
                try:  # noqa: SIM105 (a bare try is cheaper per line than suppress)
                    json.loads(line)
                except ValueError:
                    pass
    return time.perf_counter() - t0


def readers_only(files: list[Path]) -> tuple[float, int]:
    t0 = time.perf_counter()
    records = sum(len(read_session(p).records) for p in files)
    return time.perf_counter() - t0, records


def unchanged_pass(folder: Path, db_dir: Path, runs: int = 7) -> dict:
    small = [p for p in fixture_files() if p.stat().st_size < 64 * 1024]
    files = []
    for n in range(1000):
        dest = folder / f"--home-bench-small-{n % 10}--" / f"s{n:04d}.jsonl"
        make_copy(small[n % len(small)].read_bytes().splitlines(), dest, 10_000 + n)
        files.append(dest)
    conn = open_index(db_dir)
    first = index_paths(conn, [folder])
    samples, stat_samples = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        stats = index_paths(conn, [folder])
        samples.append((time.perf_counter() - t0) * 1000)
        assert stats.files_unchanged == 1000 and stats.messages_added == 0, stats
        t0 = time.perf_counter()
        for p in files:
            os.stat(p)
        stat_samples.append((time.perf_counter() - t0) * 1000)
    conn.close()
    return {
        "files": 1000,
        "first_pass_s": round(first.seconds, 2),
        "unchanged_p50_ms": round(statistics.median(samples), 1),
        "unchanged_max_ms": round(max(samples), 1),
        "baseline_stat_p50_ms": round(statistics.median(stat_samples), 1),
        "target_ms": 100,
    }


def fts_variants(files: list[Path], root: Path, mb_limit: float = 64.0) -> dict:
    """index_paths on the first ``mb_limit`` MB of the corpus: as shipped (word index), with the first release's
    trigram index instead of the word index, and with no FTS index at all: where the indexing time goes."""
    subset, size = [], 0
    for p in files:
        if size >= mb_limit * 1e6:
            break
        subset.append(p)
        size += p.stat().st_size
    folder = root / "variant-corpus"
    for p in subset:
        dest = folder / p.parent.name / p.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.link(p, dest)
    out = {"mb": round(size / 1e6, 1)}
    for name in ("words", "trigram", "none"):
        conn = open_index(root / f"db-{name}")
        saved = writermod.index_ranges
        if name == "trigram":
            conn.execute("DROP TABLE messages_fts")
            conn.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='', columnsize=0, tokenize='trigram')")
        elif name == "none":
            writermod.index_ranges = lambda conn, ranges: None
        try:
            c0 = time.process_time()
            stats = index_paths(conn, [folder])
            cpu = time.process_time() - c0
        finally:
            writermod.index_ranges = saved
        out[f"{name}_mb_s"] = round(size / 1e6 / stats.seconds, 1)
        out[f"{name}_cpu_s"] = round(cpu, 2)
        conn.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=1024.0, help="corpus size in MiB (default 1024)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ap.add_argument("--keep", type=Path, help="build in this folder and keep it (default: a temp folder)")
    ap.add_argument("--variants", action="store_true",
                    help="also index 64 MB of the corpus with a trigram index and with no FTS index")
    args = ap.parse_args()

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pi-memory-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        files, size = build_corpus(root / "corpus", args.size_mb)
        gen_s = time.perf_counter() - t0
        mb = size / 1e6
        json_s = baseline_json(files)
        read_s, records = readers_only(files)
        conn = open_index(root / "db")
        cpu0 = time.process_time()
        stats = index_paths(conn, [root / "corpus"])
        cpu_s = time.process_time() - cpu0
        db_bytes = sum(p.stat().st_size for p in (root / "db").iterdir() if p.is_file())
        conn.close()
        unchanged = unchanged_pass(root / "small", root / "db-small")
        variants = fts_variants(files, root) if args.variants else None
        result = {
            "corpus_mb": round(mb, 1),
            "files": len(files),
            "records": records,
            "generate_s": round(gen_s, 1),
            "baseline_json_loads_mb_s": round(mb / json_s, 1),
            "readers_only_mb_s": round(mb / read_s, 1),
            "index_s": round(stats.seconds, 1),
            "of_which_optimize_s": round(stats.optimize_seconds, 1),
            "index_mb_s": round(mb / stats.seconds, 1),
            "index_cpu_mb_s": round(mb / cpu_s, 1),
            "messages_indexed": stats.messages_added,
            "index_db_mb": round(db_bytes / 1e6, 1),
            "target_mb_s": 50,
            "reindex_unchanged": unchanged,
            "fts_variants": variants,
            "cpus": os.cpu_count(),
            "load_avg_1m": round(os.getloadavg()[0], 2),
        }
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(result))
        return
    u = result["reindex_unchanged"]
    print(f"corpus: {result['corpus_mb']} MB in {result['files']} files ({result['records']:,} records), "
          f"generated in {result['generate_s']} s")
    print(f"  baseline read + json.loads   {result['baseline_json_loads_mb_s']:8.1f} MB/s")
    print(f"  readers only (no database)   {result['readers_only_mb_s']:8.1f} MB/s")
    print(f"  index_paths (wall clock)     {result['index_mb_s']:8.1f} MB/s   target >= 50  "
          f"({result['index_s']} s incl. {result['of_which_optimize_s']} s final FTS optimize, "
          f"{result['messages_indexed']:,} messages, db {result['index_db_mb']} MB)")
    print(f"  index_paths (CPU time)       {result['index_cpu_mb_s']:8.1f} MB/s")
    print(f"re-index of {u['files']} unchanged files: p50 {u['unchanged_p50_ms']} ms, max {u['unchanged_max_ms']} ms "
          f"(target <= 100 ms); baseline os.stat of the same files p50 {u['baseline_stat_p50_ms']} ms")
    if variants:
        print(f"same pipeline on {variants['mb']} MB (wall clock MB/s, CPU s of this process):")
        for name, label in (("words", "as shipped"), ("trigram", "trigram index (first release)"),
                            ("none", "no FTS index")):
            print(f"  {label:<30}{variants[name + '_mb_s']:8.1f} MB/s {variants[name + '_cpu_s']:8.2f} s")
    print(f"machine: {result['cpus']} CPUs, load average {result['load_avg_1m']}")


if __name__ == "__main__":
    main()
