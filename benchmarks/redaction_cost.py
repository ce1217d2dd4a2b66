"""What redaction at index time costs (issue 9, item 1): indexing throughput with and without it, and the time
migration 008 takes to redact an existing index in place.

Corpus: ``--size-mb`` (default 16) of generated pi sessions (no shared fixtures needed): user and assistant
turns of 10-200 words and tool results of 50-1,500 words drawn from this repository's README, one credential
line in every 50th tool result. Printed (median of ``--runs`` runs, CPU time beside wall clock, which a busy
machine inflates):

* ``index_paths`` into a fresh index, as shipped (redact, then cap);
* the same with redaction switched off (cap only): the baseline;
* migration 008 over an index of the same rows written without redaction (redact, optimize, VACUUM).

Usage: .venv/bin/python benchmarks/redaction_cost.py [--size-mb 16] [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from pi_memory.index import index_paths, indexer, open_index, redaction

REPO = Path(__file__).resolve().parents[1]
SECRET_LINE = "OPENAI_API_KEY=sk-proj-Qm4Tz8Lp2Vx7Nc3Rb9Wk5Hd1Jf6Gs0Ya"


def generate(root: Path, size_mb: float) -> int:
    rnd = random.Random(7)
    words = (REPO / "README.md").read_text(encoding="utf-8").split()
    size, k = 0, 0
    while size < size_mb * 1e6:
        lines = [{"type": "session", "version": 3, "id": f"s{k}", "timestamp": "2026-11-01T10:00:00.000Z", "cwd": "/w"}]
        parent = None
        for i in range(200):
            text = " ".join(rnd.choice(words) for _ in range(rnd.randint(10, 200)))
            if i % 4 == 2:
                msg = {"role": "assistant", "stopReason": "toolUse", "content": [
                    {"type": "toolCall", "id": f"c{i}", "name": "bash", "arguments": {"command": "cat .env"}}]}
            elif i % 4 == 3:
                body = " ".join(rnd.choice(words) for _ in range(rnd.randint(50, 1500)))
                if i % 200 == 3:
                    body += "\n" + SECRET_LINE
                msg = {"role": "toolResult", "toolCallId": f"c{i - 1}", "toolName": "bash",
                       "content": [{"type": "text", "text": body}]}
            else:
                msg = {"role": "user" if i % 4 == 0 else "assistant", "content": [{"type": "text", "text": text}]}
            lines.append({"type": "message", "id": f"e{i}", "parentId": parent,
                          "timestamp": "2026-11-01T10:00:00.000Z", "message": msg})
            parent = f"e{i}"
        data = "".join(json.dumps(x) + "\n" for x in lines)
        (root / f"s{k}.jsonl").write_text(data, encoding="utf-8")
        size, k = size + len(data), k + 1
    return size


def _timed(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def index_once(corpus: Path, redact: bool) -> tuple[float, float]:
    data = Path(tempfile.mkdtemp())
    original = indexer.prepare_text
    if not redact:
        indexer.prepare_text = lambda text, limit, context="": redaction.cap_text(text, limit)
    try:
        conn = open_index(data)
        result = _timed(lambda: index_paths(conn, [corpus]))
        conn.close()
    finally:
        indexer.prepare_text = original
        shutil.rmtree(data)
    return result


def migrate_once(corpus: Path) -> tuple[float, float, int]:
    data = Path(tempfile.mkdtemp())
    original = indexer.prepare_text
    indexer.prepare_text = lambda text, limit, context="": redaction.cap_text(text, limit)
    try:
        conn = open_index(data)
        index_paths(conn, [corpus])
        rows = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        conn.execute("DELETE FROM schema_migrations WHERE name = ?", (redaction.MIGRATION_NAME,))
        conn.close()
    finally:
        indexer.prepare_text = original
    holder: list = []
    wall, cpu = _timed(lambda: holder.append(open_index(data)))  # applies 008 and runs it to the end
    holder[0].close()
    shutil.rmtree(data)
    return wall, cpu, rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=float, default=16.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    corpus = Path(tempfile.mkdtemp())
    try:
        size = generate(corpus, args.size_mb)
        mb = size / 1e6
        out: dict = {"corpus_mb": round(mb, 1)}
        for name, redact in (("indexing, redacted", True), ("indexing, not redacted (baseline)", False)):
            runs = [index_once(corpus, redact) for _ in range(args.runs)]
            out[name] = {"MB/s wall": round(mb / statistics.median(r[0] for r in runs), 1),
                         "MB/s cpu": round(mb / statistics.median(r[1] for r in runs), 1)}
        runs = [migrate_once(corpus) for _ in range(args.runs)]
        out["migration 008"] = {"rows": runs[0][2], "s wall": round(statistics.median(r[0] for r in runs), 2),
                                "s cpu": round(statistics.median(r[1] for r in runs), 2)}
    finally:
        shutil.rmtree(corpus)
    if args.json:
        print(json.dumps(out))
        return
    print(f"corpus: {out.pop('corpus_mb')} MB of generated pi sessions")
    for name, figures in out.items():
        print(f"{name:36s} " + "  ".join(f"{v} {k}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
