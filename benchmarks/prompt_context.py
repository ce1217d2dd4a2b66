"""Latency of the prompt parts pi-memory builds: p50/p95 of the per-run parts (memory blocks + standing
instructions, read and scanned at the start of EVERY agent run) and of the whole context (the session-start
build, snapshot included).

Sizes: a small setup (2 default blocks, 3 rules) and a full one (10 blocks each at its 2,000-char limit, 20
rules at the 2,000-char cap, stores at their limits). Baseline in the same run: reading the same block and
rule files without parsing or scanning, so the table shows what frontmatter parsing, scanning and rendering add.

Usage: .venv/bin/python benchmarks/prompt_context.py [--runs 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from curated_ops import timed  # the same p50/p95 timing as the curated-store benchmark

from pi_memory.prompt import build_context, run_parts
from pi_memory.runtime import open_memory
from pi_memory.standing import StandingStore

WORDS = ["the", "service", "keeps", "its", "cache", "warm", "between", "deploys", "and", "logs", "every", "retry", "with", "the", "request", "id"]


def text(n: int, seed: int) -> str:
    out, i = [], seed
    while len(" ".join(out)) < n:
        out.append(WORDS[i % len(WORDS)])
        i += 7
    return " ".join(out)[:n]


def setup(root: Path, full: bool):
    os.environ["PI_CODING_AGENT_DIR"] = str(root / "agent")
    (root / "agent").mkdir(parents=True, exist_ok=True)
    (root / "agent" / "settings.json").write_text(json.dumps({"pi-memory": {"semantic": False}}))
    memory = open_memory(root, override_dir=root / "mem")
    blocks = memory.blocks()
    blocks.ensure_defaults()
    standing = StandingStore.in_data_dir(memory.settings.data_dir)
    for i in range(20 if full else 3):
        standing.add(f"rule {i}: " + text(85 if full else 40, i))
    if full:
        for i in range(8):
            blocks.create(f"notes{i}", f"Notes about area {i}")
        for b in blocks.blocks():
            blocks.update(b.key, text(1990, len(b.key)))
        for i in range(40):
            memory.store.add("memory", f"fact {i}: " + text(40, i))
    return memory


def baseline(memory) -> None:
    for path in sorted((Path(memory.settings.data_dir) / "blocks").glob("*.md")):
        path.read_bytes()
    (Path(memory.settings.data_dir) / "STANDING.md").read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = {}
    for name, full in (("small", False), ("full", True)):
        with tempfile.TemporaryDirectory() as tmp:
            memory = setup(Path(tmp), full)
            chars = len(build_context(memory).system_prompt)
            report[name] = {
                "systemPromptChars": chars,
                "baseline_read_files": timed(lambda _i, m=memory: baseline(m), args.runs),
                "per_run_parts": timed(lambda _i, m=memory: run_parts(m, preview=False), args.runs),
                "whole_context": timed(lambda _i, m=memory: build_context(m), max(20, args.runs // 4)),
            }
            memory.close()
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for name, r in report.items():
        print(f"{name}: system prompt addition {r['systemPromptChars']:,} chars")
        for key in ("baseline_read_files", "per_run_parts", "whole_context"):
            print(f"  {key:20s} p50 {r[key]['p50_ms']:8.3f} ms   p95 {r[key]['p95_ms']:8.3f} ms")


if __name__ == "__main__":
    main()
