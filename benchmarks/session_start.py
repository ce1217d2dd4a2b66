"""Session start of the pi bridge with and without ``lazyInitialization`` (p50/p95 over ``--repeat`` starts).

Each start is a fresh bridge process (``python -m pi_memory.integrations.pi.bridge``, what the pi extension
spawns) on a disposable data root: MEMORY.md / USER.md with ``--entries`` entries each, an index holding
``--sessions-mb`` MB of generated pi sessions (``benchmarks/anchor_search.py``'s generator) and a few of those
files changed since, so the eager start has catch-up work. Policy mode in both variants (snapshot mode ignores
the option). Figures per start:

* ``hello``: from spawning the process to the ``hello`` answer (what pi waits for before its first prompt);
* ``prompt``: an ordinary prompt's requests (begin_turn, snapshot, run_context, recall, after_run);
* ``first search``: the first ``memory_search`` (lazy: it pays for the load);
* ``exit``: shutdown until the process has ended.

No model and no network: semantic memory is left at its defaults without a model (recall only).

Usage: .venv/bin/python benchmarks/session_start.py [--repeat 7] [--entries 40] [--sessions-mb 16]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from anchor_search import generate  # noqa: E402

from pi_memory.index import index_paths, open_index  # noqa: E402


class BridgeProcess:
    def __init__(self, env: dict, cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "pi_memory.integrations.pi.bridge"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1)
        self.next = 1

    def call(self, method: str, **params) -> dict:
        rid, self.next = self.next, self.next + 1
        self.proc.stdin.write(json.dumps({"id": rid, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']['message']}")
        return reply["result"]


def one_start(env: dict, cwd: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    start = time.perf_counter()
    bridge = BridgeProcess(env, cwd)
    bridge.call("hello", cwd=str(cwd))
    out["hello"] = time.perf_counter() - start
    t = time.perf_counter()
    bridge.call("begin_turn")
    bridge.call("snapshot")
    bridge.call("run_context")
    bridge.call("recall", prompt="what did we decide about the cache?", state={})
    bridge.call("after_run", userText="what did we decide?", assistantText="We use redis.")
    out["prompt"] = time.perf_counter() - t
    t = time.perf_counter()
    bridge.call("call_tool", name="memory_search", arguments={"query": "deploy"})
    out["first search"] = time.perf_counter() - t
    t = time.perf_counter()
    bridge.call("shutdown", wait=5)
    bridge.proc.wait(30)
    out["exit"] = time.perf_counter() - t
    return out


def prepare(root: Path, entries: int, sessions_mb: int) -> None:
    data = root / "data"
    data.mkdir(parents=True)
    for name in ("MEMORY.md", "USER.md"):
        (data / name).write_text("\n§\n".join(f"Note {i}: deploy with make release-{i}" for i in range(entries)) + "\n")
    sessions = root / "sessions"
    generate(sessions, sessions_mb, 1.0)
    conn = open_index(data)
    index_paths(conn, [str(sessions)])
    conn.close()
    for path in sorted(sessions.rglob("*.jsonl"))[:5]:  # changed since the last pass: catch-up work
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"type": "custom", "id": "x", "parentId": None}) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="starts per variant (default 7)")
    ap.add_argument("--entries", type=int, default=40, help="entries in MEMORY.md and USER.md (default 40)")
    ap.add_argument("--sessions-mb", type=int, default=16, help="MB of indexed sessions (default 16)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="pi-memory-start-"))
    try:
        prepare(root, args.entries, args.sessions_mb)
        agent = root / "agent"
        agent.mkdir()
        base = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "PI_MEMORY_DIR": str(root / "data"),
                "PI_CODING_AGENT_SESSION_DIR": str(root / "sessions"), "HOME": str(root / "home"),
                "PI_TIMING": "", "PI_MEMORY_TIMING": ""}
        results: dict[str, dict[str, list[float]]] = {}
        for variant in ("eager", "lazy"):
            block = {"memoryMode": "policy", "lazyInitialization": variant == "lazy"}
            (agent / "settings.json").write_text(json.dumps({"pi-memory": block}))
            runs = [one_start(base, root) for _ in range(args.repeat)]
            results[variant] = {k: [r[k] for r in runs] for k in runs[0]}
        print(f"{args.repeat} starts per variant, {args.entries} entries per store, {args.sessions_mb} MB indexed")
        print(f"{'step':<13}" + "".join(f"{v + ' p50':>12}{'p95':>9}" for v in results))
        for step in results["eager"]:
            row = f"{step:<13}"
            for variant in results:
                samples = sorted(results[variant][step])
                p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
                row += f"{statistics.median(samples) * 1000:>10.0f}ms{p95 * 1000:>7.0f}ms"
            print(row)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
