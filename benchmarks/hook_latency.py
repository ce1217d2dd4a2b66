"""Cold-process latency of ``pi-memory hook <host> <event>`` per event, and of ``pi-memory mcp`` start-up
(process start to the ``initialize`` reply on stdio), p50 / p95.

Every sample is a fresh process of the installed console script (``.venv/bin/pi-memory``), Python start-up
included, in a temporary HOME and data root holding a few curated entries and semantic memories:

* ``session-start (cache hit)``: a new host session when memory did not change since the last one (the
  snapshot cache, :mod:`pi_memory.integrations.hooks.state`);
* ``session-start (after a write)``: MEMORY.md changed before each sample, so the snapshot is built again;
* ``session-start (resume)``: the same host session id again (the frozen copy);
* ``prompt (start-up: "ok")``: a prompt recall skips (a short acknowledgement): the process start-up, the
  hook's dispatch and the prompt handler up to where recall would begin; the issue's 300 ms target;
* ``prompt``: semantic recall for a prompt (opens the embedder and the index: the slow one), with a 30 s
  ceiling (the whole recall, vectors included);
* ``prompt (2 s ceiling)``: the same with the hook's real ceiling, where a query embedding not ready by
  1.2 s is skipped and the answer is keyword-only; the count of answers with vectors, keyword-only and
  empty follows the table;
* ``stop`` / ``pre-compact`` / ``session-end``: queue the detached indexing job and answer (the job's own
  run is not timed; it never delays the host);
* ``stop, baseline``: the same event through the full typer CLI (what the console script did before it
  dispatched ``hook`` first);
* ``mcp initialize`` / ``mcp tools/list``: process start to the ``initialize`` reply, and to the ``tools/list``
  reply a client asks for next, with the early answers (the default, after one start stored them) and with
  ``PI_MEMORY_MCP_QUICKSTART=0`` (the SDK answers after its imports).

Targets (issue 12): a hook's start-up path under 300 ms p95, MCP ``initialize`` under 1 s p95. The machine's
load is printed first: on a shared 2-core machine, other work moves every figure. Run::

    .venv/bin/python benchmarks/hook_latency.py [--runs 20] [--mcp-runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = str(Path(sys.executable).parent / "pi-memory")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def row(name: str, seconds: list[float]) -> str:
    ms = [s * 1000 for s in seconds]
    return f"{name:<44} p50 {statistics.median(ms):7.0f} ms   p95 {pct(ms, 0.95):7.0f} ms   (n={len(ms)})"


TYPER_PATH = [sys.executable, "-c", "import sys; sys.argv[0] = 'pi-memory'; from pi_memory.cli import main; main()"]


def hook(env: dict, host: str, event: str, payload: dict, command: list[str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([*(command or [SCRIPT]), "hook", host, event], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, timeout=60)
    return time.perf_counter() - started, done.stdout


def mcp_start(env: dict) -> tuple[float, float]:
    """Seconds from process start to the ``initialize`` reply and to the ``tools/list`` reply (sent, as clients
    do, once ``initialize`` is answered)."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
    started = time.perf_counter()
    proc = subprocess.Popen([SCRIPT, "mcp", "--index-interval", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    proc.stdin.write((json.dumps(request) + "\n").encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    initialized = time.perf_counter() - started
    if b'"result"' not in line:
        raise RuntimeError(f"no initialize reply: {line[:200]!r}")
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
                     b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
    proc.stdin.flush()
    line = proc.stdout.readline()
    listed = time.perf_counter() - started
    proc.stdin.close()
    proc.wait(30)
    if b'"tools"' not in line:
        raise RuntimeError(f"no tools/list reply: {line[:200]!r}")
    return initialized, listed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--mcp-runs", type=int, default=10)
    parser.add_argument("--no-bytecode", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE from the environment (no .pyc files: every process "
                             "compiles the sources again)")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} / {os.cpu_count()} CPUs; {SCRIPT}; bytecode cache "
          f"{'off (PYTHONDONTWRITEBYTECODE kept)' if args.no_bytecode else 'on'}")
    with tempfile.TemporaryDirectory(prefix="hook-bench-") as tmp:
        root = Path(tmp)
        project, data = root / "proj", root / "data"
        (project / ".git").mkdir(parents=True)
        data.mkdir()
        env = {**os.environ, "HOME": str(root / "home"), "PI_MEMORY_DIR": str(data),
               "PI_MEMORY_STATE_DIR": str(root / "state"), "PI_MEMORY_HOOK_CEILING_S": "30"}
        env.pop("PI_CODING_AGENT_DIR", None)
        # An installed package has its bytecode compiled at install time; with PYTHONDONTWRITEBYTECODE=1 (set in
        # some shells) every cold hook compiles ~90 of our modules again (0.2-0.5 s). Measure what users run,
        # unless --no-bytecode asks for the pessimistic case.
        if not args.no_bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        memory = data / "MEMORY.md"
        memory.write_text("Project uses uv, never pip\n§\nDeploys go through fly.io on Fridays\n", encoding="utf-8")
        (data / "USER.md").write_text("The user prefers short answers\n", encoding="utf-8")
        for fact in ("The staging database runs on port 6543", "CI runs on GitHub Actions", "Releases are tagged"):
            subprocess.run([SCRIPT, "semantic", "add", fact], cwd=project, env=env, capture_output=True, check=True)
        base = {"cwd": str(project), "transcript_path": str(root / "none.jsonl")}
        hook(env, "claude-code", "session-start", {**base, "session_id": "warm"})  # fills the snapshot cache
        results: dict[str, list[float]] = {}
        for i in range(args.runs):
            seconds, answer = hook(env, "claude-code", "prompt", {**base, "session_id": "warm", "prompt": "ok"})
            if answer.strip() != "{}":
                raise RuntimeError(f"the prompt hook answered a trivial prompt: {answer[:200]}")
            results.setdefault('prompt (start-up: "ok")', []).append(seconds)
            results.setdefault("session-start (cache hit)", []).append(
                hook(env, "claude-code", "session-start", {**base, "session_id": f"new-{i}"})[0])
            results.setdefault("session-start (resume)", []).append(
                hook(env, "claude-code", "session-start", {**base, "session_id": "warm", "source": "resume"})[0])
            memory.write_text(memory.read_text(encoding="utf-8") + f"§\nfact {i}\n", encoding="utf-8")
            results.setdefault("session-start (after a write)", []).append(
                hook(env, "claude-code", "session-start", {**base, "session_id": f"w-{i}"})[0])
            seconds, answer = hook(env, "codex", "prompt", {**base, "session_id": "p", "prompt": "which port does "
                                                            "the staging database use?"})
            if "UNTRUSTED MEMORY DATA" not in answer:
                raise RuntimeError(f"the prompt hook recalled nothing: {answer[:200]}")
            results.setdefault("prompt (recall)", []).append(seconds)
            for event in ("stop", "pre-compact", "session-end"):
                results.setdefault(event, []).append(
                    hook(env, "claude-code", event, {**base, "session_id": "s", "last_assistant_message": "ok"})[0])
            results.setdefault("stop, baseline: through the typer app", []).append(
                hook(env, "claude-code", "stop", {**base, "session_id": "s"}, TYPER_PATH)[0])
        ceiling_env = {k: v for k, v in env.items() if k != "PI_MEMORY_HOOK_CEILING_S"}  # the real 2 s ceiling
        log = root / "state" / "hooks.log"
        outcomes = {"with vectors": 0, "keyword only": 0, "empty": 0}
        for _ in range(args.runs):
            skipped = log.read_text(encoding="utf-8").count("vectors skipped") if log.exists() else 0
            seconds, answer = hook(ceiling_env, "claude-code", "prompt", {
                **base, "session_id": "c", "prompt": "which port does the staging database use?"})
            results.setdefault("prompt (recall, 2 s ceiling)", []).append(seconds)
            now = log.read_text(encoding="utf-8").count("vectors skipped") if log.exists() else 0
            kind = "empty" if "UNTRUSTED MEMORY DATA" not in answer else "keyword only" if now > skipped else (
                "with vectors")
            outcomes[kind] += 1
        for name, values in results.items():
            print(row(f"hook {name}", values))
        print("prompt answers under the 2 s ceiling: " + ", ".join(f"{k} {v}" for k, v in outcomes.items()))
        mcp_start(env)  # stores the SDK's answers for the early replies
        for label, mcp_env in (("early answers", env), ("SDK, quickstart off", {**env, "PI_MEMORY_MCP_QUICKSTART": "0"})):
            samples = [mcp_start(mcp_env) for _ in range(args.mcp_runs)]
            print(row(f"mcp initialize ({label})", [a for a, _ in samples]))
            print(row(f"mcp tools/list ({label})", [b for _, b in samples]))
        time.sleep(1)  # let the last detached jobs finish before the folder goes


if __name__ == "__main__":
    main()
