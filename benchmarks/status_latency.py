"""``pi-memory status`` and ``pi-memory semantic status`` as a person waits for them (p50/p95), on stores built
once, the largest beside a baseline one.

Stores (built into ``--root``/``index-<N>mb`` on the first run, reused after): an index file of about N MB for
each of ``--sizes`` (default 1 and 16): generated pi sessions (``anchor_search.generate``, a fifth of N as
session text) indexed, a vector for every session turn, and semantic memories (``semantic_latency.make_texts``,
about 110 per MB) in the scope of the store's ``project`` folder, both with random unit vectors of the bundled
model's name and dimension (nothing is embedded: the build takes seconds); MEMORY.md and USER.md of 20 entries
each. ``--markdown-mb M`` adds ``markdown-<M>mb``: the same 1 MB index with a MEMORY.md of M MB (5,000 entries a
MB), a store grown by hand or by an import far past its limit, which status parses entry by entry.
``--memories N`` adds ``memories-<N>``: the 1 MB index with N semantic memories instead of 110 (``staleMemories``
is counted over every memory of every scope).

Figures per store and command, over ``--repeat`` runs after one warm-up:

* ``wall``: the command in a fresh process, from start to exit (Python start, imports, the command);
* ``cpu``: that process's CPU time (user + system); on a shared machine closer to what an idle one would show as
  wall time than the wall time itself;
* ``work``: the command run again in one process (``pi_memory.cli.main``), its modules imported by a first run:
  the command's own work, which is the part that could grow with the store.

The processes get ``PYTHONPYCACHEPREFIX=<root>/pycache`` and no ``PYTHONDONTWRITEBYTECODE``, as an installed
package has its ``.pyc`` files (without them every run compiles about a hundred modules first). ``--src`` picks
the source tree, so the tree of the commit before a change (``git archive`` unpacked in /tmp) runs on the same
stores. The load average is printed with the results.

Usage: .venv/bin/python benchmarks/status_latency.py [--root /tmp/status-bench] [--sizes 1,16] [--repeat 11]
       [--markdown-mb 16] [--memories 100000] [--src DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMANDS = {"status": ["status"], "semantic status": ["semantic", "status"]}


def pct(values: list[float]) -> tuple[float, float]:
    s = sorted(values)
    return statistics.median(s), s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]


def build(store: Path, index_mb: float, markdown_mb: float = 0.0, memories: int = 0) -> None:
    """The store described in the module docstring, in ``store`` (``data``, ``project``, ``sessions``)."""
    sys.path.insert(0, str(HERE))
    import numpy as np
    import semantic_latency as sl
    from anchor_search import generate

    from pi_memory.embed import DIM, MODEL_NAME
    from pi_memory.index import index_paths, open_index, transaction
    from pi_memory.semantic.config import default_user_id
    from pi_memory.semantic.embedded import EmbeddedBackend
    from pi_memory.semantic.models import Scope

    class Named:  # vectors are given: only the model's name and dimension are read
        model_name, dim = MODEL_NAME, DIM

    data, project = store / "data", store / "project"
    data.mkdir(parents=True)
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    for name in ("MEMORY.md", "USER.md"):
        (data / name).write_text("\n§\n".join(f"Note {i}: deploy with make release-{i}" for i in range(20)) + "\n")
    if markdown_mb:
        words = ["deploy", "cache", "redis", "postgres", "staging", "billing", "migration", "docker", "nginx",
                 "pytest", "ruff", "uv"]
        entries = [" ".join(words[(i + k) % len(words)] for k in range(30)) + f" #{i}"
                   for i in range(int(5000 * markdown_mb))]
        (data / "MEMORY.md").write_text("\n§\n".join(entries) + "\n")
    generate(store / "sessions", index_mb / 5, min(1.0, index_mb / 20))
    conn = open_index(data)
    index_paths(conn, [str(store / "sessions")])
    scope = Scope.for_project(default_user_id(), project)
    backend = EmbeddedBackend(conn, Named())  # creates the semantic tables
    ids = [row[0] for row in conn.execute("SELECT id FROM messages")]
    turns = np.random.default_rng(1).standard_normal((len(ids), DIM)).astype("<f4")
    with transaction(conn):
        conn.executemany("INSERT INTO semantic_turn_vectors(message_id, model, project_id, dim, vector, created_at) "
                         "VALUES (?, ?, ?, ?, ?, '2026-11-01T10:00:00.000Z')",
                         [(mid, MODEL_NAME, scope.project_id, DIM, turns[k].tobytes()) for k, mid in enumerate(ids)])
    texts = sl.make_texts(memories or max(1, int(110 * index_mb)))[0]
    backend.add_many(texts, scope=scope, vectors=sl.vectors_for(texts, "random", store))
    conn.close()


def work(store: Path, repeat: int) -> None:
    """``--work``: time each command run by :func:`pi_memory.cli.main` in this process (its modules imported
    by a first run) and print the samples as JSON."""
    import contextlib
    import io

    from pi_memory.cli import main as cli

    out = {}
    for name, words in COMMANDS.items():
        samples = []
        for i in range(repeat + 1):
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
                cli([*words, "--dir", str(store / "data")])
            if i:
                samples.append((time.perf_counter() - start) * 1000)
        out[name] = samples
    print(json.dumps(out))


def run(store: Path, args: argparse.Namespace, env: dict) -> dict[str, dict[str, list[float]]]:
    py = sys.executable
    found: dict[str, dict[str, list[float]]] = {}
    for name, words in COMMANDS.items():
        wall, cpu = [], []
        for i in range(args.repeat + 1):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([py, "-m", "pi_memory", *words, "--dir", str(store / "data")], env=env,
                           cwd=store / "project", stdout=subprocess.DEVNULL, check=True)
            elapsed = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if i:  # the first run is the warm-up
                wall.append(elapsed * 1000)
                cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
        found[name] = {"wall": wall, "cpu": cpu}
    timed = subprocess.run([py, str(Path(__file__).resolve()), "--work", str(store), "--repeat", str(args.repeat)],
                           env=env, cwd=store / "project", capture_output=True, text=True, check=True)
    for name, samples in json.loads(timed.stdout).items():
        found[name]["work"] = samples
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path("/tmp/status-bench"))
    ap.add_argument("--sizes", default="1,16", help="index sizes in MB (default 1,16)")
    ap.add_argument("--markdown-mb", type=float, default=0.0, help="also a store with a MEMORY.md of this many MB")
    ap.add_argument("--memories", type=int, default=0, help="also a 1 MB index with this many semantic memories")
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--src", default=str(HERE.parent / "src"))
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.work:
        work(args.work, args.repeat)
        return
    stores = [(f"index-{float(n):g}mb", float(n), 0.0, 0) for n in args.sizes.split(",") if n]
    if args.markdown_mb:
        stores.append((f"markdown-{args.markdown_mb:g}mb", 1.0, args.markdown_mb, 0))
    if args.memories:
        stores.append((f"memories-{args.memories}", 1.0, 0.0, args.memories))
    for name, index_mb, markdown_mb, memories in stores:
        if not (args.root / name / "data").is_dir():
            build(args.root / name, index_mb, markdown_mb, memories)
            print(f"built {args.root / name}", file=sys.stderr)
    env = {**os.environ, "PYTHONPATH": args.src, "PYTHONPYCACHEPREFIX": str(args.root / "pycache"),
           "PI_CODING_AGENT_DIR": str(args.root / "agent"), "HOME": str(args.root / "home")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PI_MEMORY_DIR", None)
    print(f"{args.repeat} runs per command after a warm-up; source {args.src}; load {os.getloadavg()[0]:.2f}")
    print(f"{'store':<16}{'index MB':>9}{'md MB':>7}  {'command':<16}"
          + "".join(f"{k + ' p50':>10}{'p95':>8}" for k in ("wall", "cpu"))
          + f"{'work p50':>10}{'p95':>10}")
    for name, *_ in stores:
        data = args.root / name / "data"
        sizes = [(data / f).stat().st_size / 1_048_576 for f in ("index.sqlite3", "MEMORY.md")]
        for command, figures in run(args.root / name, args, env).items():
            row = f"{name:<16}{sizes[0]:>9.1f}{sizes[1]:>7.1f}  {command:<16}"
            for kind in ("wall", "cpu", "work"):
                p50, p95 = pct(figures[kind])
                row += f"{p50:>8.0f}ms{p95:>6.0f}ms" if kind != "work" else f"{p50:>8.1f}ms{p95:>8.1f}ms"
            print(row)
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
