"""What the learning jobs cost: tokens in and out per review, flush, consolidation and dream (p50/p95), model calls
per job, and how long the agent's turn waits on any of it (the bridge's ``after_run`` + ``tool_calls`` path).

Sessions: the shared fixture transcripts (``tests/fixtures``: Claude Code and Codex files) and the LoCoMo
conversations (``--data``, read in place, never copied) written as pi sessions, one per LoCoMo session, the
first speaker as the user (the same mapping as ``benchmarks/locomo_recall.py``).

* review: every session is reviewed as the trigger would: after each ``nudgeInterval`` (10) user turns, over the
  messages since the previous review;
* flush: the messages after the last review of each session with at least ``flushMinTurns`` (6) user turns;
* consolidation: MEMORY.md filled to its 2,200-character limit with LoCoMo sentences, consolidated once per
  conversation;
* dream: one data root per LoCoMo conversation, all its sessions indexed, one dream.

The model is the scripted server on 127.0.0.1 (``pi_memory.devtools.scripted_llm``); it reports prompt tokens
as the request's JSON length / 4 and a fixed 12 completion tokens, so input figures are what a real provider
would be sent (within its tokenizer's difference) and output figures are not: a job's reply is capped at
1,200 (review, flush), 1,500 (consolidation) and 2,000 (dream) tokens, which bounds them.

Usage: .venv/bin/python benchmarks/learning_cost.py --data ../shared/bench-data/locomo-dev.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_recall import write_sessions  # noqa: E402

from pi_memory.devtools.scripted_llm import Reply, ScriptedLLM  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHRINK = {"operations": [{"target": "memory", "action": "remove", "oldText": "§FIRST§"}]}


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def responder(messages, tools):
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    if "is full" in system:
        first = messages[1]["content"].split("\n- ", 2)[1].split("\n")[0][:40]
        return Reply(text=json.dumps({"operations": [{"target": "memory", "action": "remove", "oldText": first}]}))
    return Reply(text=json.dumps({"operations": [], "note": "nothing to save"}))


def setup(root: Path, llm: ScriptedLLM) -> None:
    agent = root / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"pi-memory": {"llm": {
        "provider": "openai-compatible", "baseUrl": llm.base_url, "model": "fake-model"}}}))
    os.environ["PI_CODING_AGENT_DIR"] = str(agent)


def open_learner(data: Path):
    from pi_memory.runtime import open_memory

    os.environ["PI_MEMORY_DIR"] = str(data)
    memory = open_memory(data)
    return memory, memory.learner()


def row(name: str, reports: list) -> str:
    ins = [r.input_tokens for r in reports]
    outs = [r.output_tokens for r in reports]
    calls = [r.calls for r in reports]
    total = [r.input_tokens + r.output_tokens for r in reports]
    return (f"{name:<14}{len(reports):>6}{pct(ins, .5):>10,.0f}{pct(ins, .95):>10,.0f}{pct(outs, .5):>8,.0f}"
            f"{pct(outs, .95):>8,.0f}{pct(total, .95):>11,.0f}{max(total, default=0):>10,}{statistics.mean(calls or [0]):>7.2f}")


def session_turns(folder: Path):
    from pi_memory.learning import read_turns

    for path in sorted(folder.rglob("*.jsonl")):
        try:
            _, turns, _ = read_turns(path)
        except (OSError, ValueError):
            continue
        if turns:
            yield path, turns


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/bench-data/locomo-dev.json")
    parser.add_argument("--turns", type=int, default=300, help="after_run calls timed for the agent_end path")
    args = parser.parse_args(argv)
    samples = json.loads(Path(args.data).read_text(encoding="utf-8"))

    from pi_memory.index import index_paths
    from pi_memory.learning import review_session
    from pi_memory.learning.consolidate import consolidate
    from pi_memory.learning.dream import dream

    with tempfile.TemporaryDirectory() as tmp, ScriptedLLM(responder=responder) as llm:
        root = Path(tmp)
        setup(root, llm)
        sessions = root / "sessions"
        write_sessions(samples, sessions)
        memory, learner = open_learner(root / "data")
        reviews, flushes = [], []
        folders = [sessions, REPO / "tests" / "fixtures"]
        for folder in folders:
            for path, turns in session_turns(folder):
                since, users = [], 0
                for turn in turns:
                    since.append(turn)
                    users += turn.role == "user"
                    if users >= 10:
                        reviews.append(review_session(learner, since, trigger="bench", session_id=path.stem))
                        since, users = [], 0
                if users >= 6:
                    flushes.append(review_session(learner, since, kind="flush", trigger="bench",
                                                  session_id=path.stem))
        consolidations, dreams = [], []
        for sample in samples:
            data = root / f"data-{sample['sample_id']}"
            mem, lrn = open_learner(data)
            texts = [t["text"] for n in range(1, 40) for t in sample["conversation"].get(f"session_{n}", [])]
            for text in texts:
                if mem.store.add("memory", text[:120]).code == "over_limit":
                    break
            lrn.store.load_from_disk()
            consolidations.append(consolidate(lrn, "memory", dry_run=True))
            only = root / f"sessions-{sample['sample_id']}"
            write_sessions([sample], only)
            index_paths(lrn.conn, [str(p) for p in only.rglob("*.jsonl")])
            dreams.append(dream(lrn, data, model_named=True, force=True, dry_run=True))
        print(f"sessions: {sum(1 for _ in sessions.rglob('*.jsonl'))} LoCoMo + fixtures; model: scripted (input = "
              "request JSON / 4, output fixed at 12)")
        print(f"{'job':<14}{'runs':>6}{'in p50':>10}{'in p95':>10}{'out p50':>8}{'out p95':>8}{'total p95':>11}"
              f"{'max':>10}{'calls':>7}")
        for name, reports in (("review", reviews), ("flush", flushes), ("consolidate", consolidations),
                              ("dream", dreams)):
            print(row(name, reports))
        bad = [r for r in reviews + flushes + consolidations + dreams if r.outcome not in ("ok", "nothing", "dry_run")]
        if bad:
            print("jobs that did not finish:", sorted({(r.kind, r.outcome, r.message[:80]) for r in bad}))
        agent_end(root, next(sessions.rglob("*.jsonl")), args.turns)


def agent_end(root: Path, session_file: Path, n: int) -> None:
    """Time the bridge's handling of the two requests the extension sends at agent_end (not awaited by pi), with
    the learning triggers and, as the baseline, without them (``after_run`` as it was before learning)."""
    from pi_memory.integrations.pi.bridge import Bridge

    os.environ["PI_MEMORY_CATCH_UP"] = "0"
    for label, learning in (("with learning", True), ("baseline, no learning", False)):
        os.environ["PI_MEMORY_DIR"] = str(root / f"data-bridge-{learning}")
        bridge = Bridge()
        bridge.handle(json.dumps({"id": 0, "method": "hello", "params": {"cwd": str(root)}}))
        if not learning:
            bridge.session.learning = None
        pairs = []
        for i in range(n):
            text = "no, use pnpm not npm" if i % 7 == 0 else f"next question {i}"
            start = time.perf_counter()
            for method, params in (("tool_calls", {"count": 2}),
                                   ("after_run", {"sessionFile": str(session_file), "userText": text,
                                                  "assistantText": "ok"})):
                bridge.handle(json.dumps({"id": i, "method": method, "params": params}))
            pairs.append((time.perf_counter() - start) * 1000)
        print(f"agent_end path ({label}; tool_calls + after_run handled by the bridge, pi never awaits it), "
              f"{n} turns: p50 {pct(pairs, .5):.3f} ms, p95 {pct(pairs, .95):.3f} ms")
        bridge.shutdown(wait=30)


if __name__ == "__main__":
    main()
