"""What the prompt hook's model preload (``pi_memory.integrations.hooks.preload``) saves: in fresh processes,
alternately, the recall stack's imports (``pi_memory.semantic.service``, ``pi_memory.session``,
``pi_memory.runtime``) and the bundled model's load (onnxruntime's session and the tokenizer) one after the
other, as the hook did, and side by side, the load on a thread of its own, as it does when a core is free.

Each figure is a fresh process's time from its first import of pi-memory to both being done (Python's own start
is left out: the same for both), p50 / p95 over ``--runs`` pairs. The load average is printed before and after:
on busy cores the two share the same CPU and the gain goes (which is why the hook preloads only with a core
free). Run::

    .venv/bin/python benchmarks/hook_preload_overlap.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

PROBE = """
import sys, threading, time
started = time.perf_counter()
def load():
    from pi_memory.embed import default_embedder
    default_embedder().load()
side_by_side = sys.argv[1] == "side"
if side_by_side:
    thread = threading.Thread(target=load)
    thread.start()
import pi_memory.runtime, pi_memory.semantic.service, pi_memory.session
if side_by_side:
    thread.join()
else:
    load()
print(time.perf_counter() - started)
"""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: .pyc files
    print(f"load average {os.getloadavg()[0]:.2f} / {os.cpu_count()} CPUs")
    found: dict[str, list[float]] = {"one after the other": [], "side by side": []}
    for i in range(args.runs + 1):
        for name, mode in (("one after the other", "after"), ("side by side", "side")):
            done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, env=env,
                                  check=True, timeout=120)
            if i:  # the first pair is the warm-up (bytecode, page cache)
                found[name].append(float(done.stdout) * 1000)
    for name, ms in found.items():
        print(f"{name:<22} p50 {statistics.median(ms):6.0f} ms   p95 {pct(ms, 0.95):6.0f} ms   (n={len(ms)})")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
