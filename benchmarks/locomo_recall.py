"""Turn-level evidence recall@k of ``session_search`` on LoCoMo, beside a plain SQLite FTS5 BM25 baseline.

Data: LoCoMo conversations (``--data``, e.g. ``../shared/bench-data/locomo-dev.json``; read in place, never
copied). Each LoCoMo session becomes a pi v3 session file (cwd ``/locomo/<sample_id>``, so each conversation
is its own project), each turn one message: ``entryId`` = the turn's ``dia_id``, text = ``"<speaker>: <text>"``
plus ``[image: <caption>]`` when the turn shared an image, timestamp = the session's date. The files go through
the real pipeline (readers, ``index_paths``) into a fresh index.

Questions of categories 1-4 (multi-hop, temporal, open-domain, single-hop) that have evidence are asked
through ``session_search(query=question, limit=max k, project=<the conversation>)``. Recall@k of a question =
share of its evidence turn ids (``D\\d+:\\d+`` found in the evidence strings) among the top k hits; the figure
is the mean over questions.

Baseline, same run: one plain FTS5 table (``unicode61``) per conversation holding the same texts, the question's
words ORed, ``ORDER BY bm25``.

``--mode bm25``: lexical search (the only mode today; vector and hybrid modes come with the semantic index).
``--ablations`` also runs our search with one query step switched off at a time.

Usage: .venv/bin/python benchmarks/locomo_recall.py --data ../shared/bench-data/locomo-dev.json --k 5,10,25 [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pi_memory.index import index_paths, open_index, session_search
from pi_memory.index import query as querymod
from pi_memory.index import search as searchmod

EVIDENCE = re.compile(r"D\d+:\d+")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def parse_date(text: str) -> datetime:
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        with contextlib.suppress(ValueError):
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
    return datetime(2023, 1, 1, tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def turn_text(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return text


def sessions_of(sample: dict) -> Iterator[tuple[int, datetime, list[dict]]]:
    conv = sample["conversation"]
    numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    for n in numbers:
        turns = conv.get(f"session_{n}") or []
        if turns:
            yield n, parse_date(conv.get(f"session_{n}_date_time", "")), turns


def write_sessions(samples: list[dict], folder: Path) -> None:
    for sample in samples:
        sid = sample["sample_id"]
        speaker_a = sample["conversation"]["speaker_a"]
        for n, when, turns in sessions_of(sample):
            lines = [{"type": "session", "version": 3, "id": f"{sid}-s{n}", "timestamp": iso(when),
                      "cwd": f"/locomo/{sid}"}]
            parent = None
            for i, turn in enumerate(turns):
                role = "user" if turn["speaker"] == speaker_a else "assistant"
                msg = {"role": role, "content": [{"type": "text", "text": turn_text(turn)}], "timestamp": 0}
                if role == "assistant":
                    msg["stopReason"] = "stop"
                lines.append({"type": "message", "id": turn["dia_id"], "parentId": parent,
                              "timestamp": iso(when + timedelta(seconds=i)), "message": msg})
                parent = turn["dia_id"]
            path = folder / f"--locomo-{sid}--" / f"{sid}-session-{n:02d}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")


def questions(samples: list[dict]) -> list[tuple[str, str, int, set[str]]]:
    out = []
    for sample in samples:
        for qa in sample.get("qa", []):
            cat = qa.get("category")
            evidence = {m for e in qa.get("evidence", []) for m in EVIDENCE.findall(str(e))}
            if cat in CATEGORIES and evidence:
                out.append((sample["sample_id"], qa["question"], cat, evidence))
    return out


def recall(ranked: list[str], evidence: set[str], k: int) -> float:
    return len(evidence & set(ranked[:k])) / len(evidence)


class Baseline:
    """Plain FTS5 (unicode61) + bm25, one table per conversation, question words ORed."""

    def __init__(self, samples: list[dict]):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(sample UNINDEXED, dia UNINDEXED, text)")
        rows = [(s["sample_id"], turn["dia_id"], turn_text(turn))
                for s in samples for _n, _w, turns in sessions_of(s) for turn in turns]
        self.db.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)

    def search(self, sample: str, question: str, k: int) -> list[str]:
        words = re.findall(r"\w+", question)
        if not words:
            return []
        expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.db.execute(
            "SELECT dia FROM t WHERE t MATCH ? AND sample = ? ORDER BY bm25(t) LIMIT ?", (expr, sample, k)
        )
        return [r[0] for r in rows]


def evaluate(search: Callable[[str, str, int], list[str]], qs: list, ks: list[int]) -> dict:
    per_k: dict[int, list[float]] = {k: [] for k in ks}
    per_cat: dict[int, dict[int, list[float]]] = {c: {k: [] for k in ks} for c in CATEGORIES}
    times = []
    kmax = max(ks)
    for sample, question, cat, evidence in qs:
        t0 = time.perf_counter()
        ranked = search(sample, question, kmax)
        times.append((time.perf_counter() - t0) * 1000)
        for k in ks:
            r = recall(ranked, evidence, k)
            per_k[k].append(r)
            per_cat[cat][k].append(r)
    return {
        "recall": {f"R@{k}": round(statistics.fmean(v), 4) for k, v in per_k.items()},
        "by_category": {
            CATEGORIES[c]: {f"R@{k}": round(statistics.fmean(v), 4) for k, v in d.items() if v}
            for c, d in per_cat.items()
        },
        "latency_p50_ms": round(statistics.median(times), 2),
    }


@contextlib.contextmanager
def ablation(name: str) -> Iterator[None]:
    """Switch one query step off (monkeypatching the modules) for the duration of the block."""
    saved = (querymod.STOP_WORDS, querymod.light_stem, querymod.plan_query, searchmod.plan_query)
    try:
        if name == "no stop words":
            querymod.STOP_WORDS = frozenset()
        elif name == "no stemming":
            querymod.light_stem = lambda word: word
        elif name == "no broadening (AND only)":
            original = querymod.plan_query

            def strict_only(q, operators=True):
                return querymod.QueryPlan(**{**original(q, operators).__dict__, "loose": ()})

            searchmod.plan_query = strict_only
        yield
    finally:
        querymod.STOP_WORDS, querymod.light_stem, querymod.plan_query, searchmod.plan_query = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (a list of samples)")
    ap.add_argument("--k", default="5,10,25", help="comma-separated cut-offs (default 5,10,25)")
    ap.add_argument("--mode", choices=["bm25"], default="bm25", help="retrieval mode (bm25: lexical FTS5)")
    ap.add_argument("--ablations", action="store_true", help="also run with one query step switched off")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    ks = sorted({int(k) for k in args.k.split(",") if k.strip()})
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    qs = questions(samples)

    root = Path(tempfile.mkdtemp(prefix="pi-memory-locomo-"))
    try:
        write_sessions(samples, root / "sessions")
        conn = open_index(root / "index")
        stats = index_paths(conn, [root / "sessions"])
        from pi_memory.project import project_id, project_root

        pids = {s["sample_id"]: project_id(project_root(Path(f"/locomo/{s['sample_id']}"))) for s in samples}

        def ours(sample: str, question: str, k: int) -> list[str]:
            r = session_search(conn, question, limit=min(k, 50), project=pids[sample], snippet_chars=40)
            return [h.entry_id for h in r.results]

        baseline = Baseline(samples)
        result = {
            "data": str(args.data),
            "mode": args.mode,
            "questions": len(qs),
            "turns_indexed": stats.messages_added,
            "ours": evaluate(ours, qs, ks),
            "baseline_fts5_bm25": evaluate(baseline.search, qs, ks),
        }
        if args.ablations:
            result["ablations"] = {}
            for name in ("no stop words", "no stemming", "no broadening (AND only)"):
                with ablation(name):
                    result["ablations"][name] = evaluate(ours, qs, ks)["recall"]
        conn.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)

    if args.json:
        print(json.dumps(result))
        return
    print(f"LoCoMo {args.data.name}: {result['questions']} questions (categories 1-4 with evidence), "
          f"{result['turns_indexed']} turns indexed, mode {args.mode}")
    header = "".join(f"{'R@' + str(k):>9}" for k in ks)
    print(f"  {'':<28}{header}{'p50 ms':>9}")
    for label, key in (("session_search", "ours"), ("baseline FTS5 bm25 (OR)", "baseline_fts5_bm25")):
        r = result[key]
        print(f"  {label:<28}" + "".join(f"{r['recall'][f'R@{k}']:>9.3f}" for k in ks) + f"{r['latency_p50_ms']:>9}")
    for cat in CATEGORIES.values():
        o, b = result["ours"]["by_category"][cat], result["baseline_fts5_bm25"]["by_category"][cat]
        print(f"    {cat:<26}" + "".join(f"{o[f'R@{k}']:>9.3f}" for k in ks)
              + "   baseline " + " ".join(f"{b[f'R@{k}']:.3f}" for k in ks))
    for name, rec in result.get("ablations", {}).items():
        print(f"  ablation: {name:<18}" + "".join(f"{rec[f'R@{k}']:>9.3f}" for k in ks))


if __name__ == "__main__":
    main()
