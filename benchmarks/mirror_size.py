"""Time to mirror a hand-edited MEMORY.md into the search index (``mirror_watch.sync_changed``), by file shape.

Shapes: entries of ~175 chars, one-number entries, one entry with no ``§``, entries full of credentials to redact,
random bytes. Sizes: 3,000 chars (just over the 2,200 limit), 256 KiB, 600 KiB (about 9,900 entries of
credentials: under the entry bound), 1 MiB (the byte bound) and 16 MiB. Each row is the first mirror of a fresh
index (imports done before timing) and what it did: entries added, or why the file was not mirrored.
``--unbounded`` lifts the bound of ``pi_memory.index.mirror`` to time mirroring the whole file (the behaviour before
the bound).

Usage: .venv/bin/python benchmarks/mirror_size.py [--unbounded] [--max-mib 16] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import tempfile
import time
from pathlib import Path

from pi_memory.index import mirror, open_index
from pi_memory.index.mirror_watch import sync_changed

SIZES = (3_000, 256 << 10, 600 << 10, 1 << 20, 16 << 20)


def shaped(shape: str, size: int) -> bytes:
    """About ``size`` bytes of a store file of ``shape``."""
    rng = random.Random(size)
    if shape == "binary":
        return rng.randbytes(size)
    if shape == "one entry":
        line = "notes about the build and the deploy of the service\n"
        return (line * (size // len(line) + 1)).encode()[:size]
    pieces, total, i = [], 0, 0
    while total < size:
        if shape == "entries":
            piece = f"Fact {i}: the service on port {8000 + i % 1000} is built with make target build-{i} " + "x" * 90
        elif shape == "tiny entries":
            piece = str(i)
        else:  # credentials
            key = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
            piece = f"deploy key {i}: AKIA{key} password: hunter{i}"
        pieces.append(piece)
        total += len(piece.encode()) + 4
        i += 1
    return ("\n§\n".join(pieces) + "\n").encode()[:size]


def run(shape: str, size: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        (data / "MEMORY.md").write_bytes(shaped(shape, size))
        conn = open_index(data)
        try:
            t0 = time.perf_counter()
            stats = sync_changed(conn, data)[str(data / "MEMORY.md")]
            seconds = time.perf_counter() - t0
        finally:
            conn.close()
    return {"shape": shape, "bytes": size, "seconds": round(seconds, 3), "added": stats.added,
            "notMirrored": stats.too_large or None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--unbounded", action="store_true", help="lift the size bound (the cost before it)")
    ap.add_argument("--max-mib", type=float, default=16, help="skip sizes above this many MiB")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.unbounded:
        mirror.MAX_BYTES, mirror.MAX_ENTRIES = 1 << 26, 1 << 62  # the file is read whole: 64 MiB is plenty
    logging.disable(logging.WARNING)  # the not-mirrored warnings: the table says it
    run("entries", 1_000)  # imports and first-use costs before any timing
    rows = [run(shape, size) for size in SIZES if size <= args.max_mib * (1 << 20)
            for shape in ("entries", "tiny entries", "one entry", "credentials", "binary")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'shape':14} {'bytes':>12} {'seconds':>8}  outcome")
    for r in rows:
        outcome = f"not mirrored: {r['notMirrored']}" if r["notMirrored"] else f"{r['added']:,} entr{'y' if r['added'] == 1 else 'ies'} added"
        print(f"{r['shape']:14} {r['bytes']:>12,} {r['seconds']:>8.2f}  {outcome}")


if __name__ == "__main__":
    main()
