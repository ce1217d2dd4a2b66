"""Where to put recall's similarity floor: cosine scores of related and unrelated prompt/memory pairs with the
bundled all-MiniLM-L6-v2 int8 model, and what each candidate floor keeps and lets through.

Data (written for this measurement, in ``recall_floor_data.py`` beside this file): ``MEMORIES``, facts of the
kind capture stores ("The user prefers pnpm over npm."); ``RELATED``, prompts a user might type to which one
memory is relevant, each paired with that memory (paraphrases, questions, tasks that need the fact, with as
little word overlap as we could manage); ``UNRELATED``, prompts of a coding session that no memory is about.

Printed:

* ``related``: cos(prompt, its memory) for every related pair -- what a floor must keep;
* ``unrelated``: max over all memories of cos(prompt, memory) for every unrelated prompt -- the best wrong match
  recall would inject without a floor, which a floor must drop;
* for floors 0.15 .. 0.50, by cosine alone: related pairs kept and unrelated prompts whose best match passes;
* the same floors end to end: :func:`pi_memory.retrieval.engine.recall` (top 5, keyword evidence included) over
  an :class:`~pi_memory.semantic.embedded.EmbeddedBackend` holding the memories in a temporary index -- related
  prompts whose memory is recalled, and unrelated prompts that inject anything.

* other languages (``MULTILINGUAL``: Chinese, Japanese, Russian, German, Spanish, Persian), all memories in one
  index: the floor recall applies per script (``SCRIPT_FLOORS``), related prompts recalled and unrelated prompts
  injecting anything with the shipped floor, and the cosines the per-script floors were chosen from;
* date-phrased prompts over session turns (``DATED_PROMPTS``): the rank of the answering turn with the floor
  off, on, and on when the prompt's date window holds no turn (asked years later) -- the date evidence is what
  keeps those answers.

The default ``recallMinSimilarity`` (``pi_memory.retrieval.engine.DEFAULT_MIN_SIMILARITY``) was chosen from this
output: the result and the reasoning are in that constant's comment.

Usage: .venv/bin/python benchmarks/recall_floor.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from recall_floor_data import (  # noqa: E402
    AS_OF,
    DATED_PROMPTS,
    DATED_TURNS,
    MEMORIES,
    MULTILINGUAL,
    RELATED,
    UNRELATED,
)

from pi_memory.embed import OnnxMiniLM  # noqa: E402
from pi_memory.index.db import open_index  # noqa: E402
from pi_memory.retrieval.engine import DEFAULT_MIN_SIMILARITY, recall, script_floor  # noqa: E402
from pi_memory.semantic.embedded import EmbeddedBackend  # noqa: E402
from pi_memory.semantic.models import Scope  # noqa: E402

LATER = "2030-06-15T10:00:00.000Z"  # the dated prompts asked again: their windows hold no turn
FLOORS = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)


def _quantiles(values: np.ndarray) -> dict[str, float]:
    qs = np.quantile(values, [0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0])
    return {name: round(float(v), 3) for name, v in zip(("min", "p5", "p25", "p50", "p75", "p95", "max"), qs,
                                                         strict=True)}


def end_to_end(model: OnnxMiniLM) -> list[dict]:
    """Per floor: related prompts whose memory :func:`recall` returns (top 5), unrelated prompts it returns
    anything for."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        conn = open_index(Path(tmp))
        backend = EmbeddedBackend(conn, model)
        scope = Scope(user_id="bench")
        ids = [backend.add(text, scope=scope).id for text in MEMORIES]
        for floor in FLOORS:
            kept = sum(ids[i] in {h.id for h in recall(backend, p, scope=scope, min_similarity=floor)}
                       for p, i in RELATED)
            noisy = sum(bool(recall(backend, p, scope=scope, min_similarity=floor)) for p in UNRELATED)
            rows.append({"floor": floor, "related_recalled": kept, "unrelated_injecting": noisy})
        conn.close()
    return rows


def multilingual(model: OnnxMiniLM) -> list[dict]:
    """Per language of ``MULTILINGUAL``: cosines of its related pairs and of its unrelated prompts' best match
    (over every memory of every language, English included), the floor recall applies to its prompts, and end
    to end with the shipped floor (``recallMinSimilarity`` default): related prompts whose memory is recalled,
    unrelated prompts that inject anything. All memories share one index."""
    rows = []
    every = list(MEMORIES) + [m for d in MULTILINGUAL.values() for m in d["memories"]]
    vecs = model.embed(every)
    with tempfile.TemporaryDirectory() as tmp:
        conn = open_index(Path(tmp))
        backend = EmbeddedBackend(conn, model)
        scope = Scope(user_id="bench")
        ids = {text: backend.add(text, scope=scope).id for text in every}
        for lang, data in MULTILINGUAL.items():
            own = model.embed(data["memories"])
            related = [float(model.embed_query(p) @ own[i]) for p, i in data["related"]]
            unrelated = [float((vecs @ model.embed_query(p)).max()) for p in data["unrelated"]]
            recalled = [ids[data["memories"][i]] in {h.id for h in recall(backend, p, scope=scope)}
                        for p, i in data["related"]]
            injecting = [len(recall(backend, p, scope=scope)) for p in data["unrelated"]]
            rows.append({"lang": lang, "floor": script_floor(data["related"][0][0], DEFAULT_MIN_SIMILARITY),
                         "related_cos": [round(x, 3) for x in related],
                         "unrelated_best_cos": [round(x, 3) for x in unrelated],
                         "related_recalled": sum(recalled), "related": len(recalled),
                         "unrelated_injecting": sum(bool(n) for n in injecting), "unrelated": len(injecting),
                         "injected_by_unrelated": sum(injecting)})
        conn.close()
    return rows


def dated(model: OnnxMiniLM) -> list[dict]:
    """Per date-phrased prompt of ``DATED_PROMPTS`` over the session turns ``DATED_TURNS`` (asked at ``AS_OF``;
    turn vectors embedded): the rank of the answering turn in :func:`recall` (sessions, top 5) with the floor off
    and with the shipped floor, and whether the turn came in through the prompt's date window; and with the floor
    asked at ``LATER``, when every window falls years after the turns: the floor without date evidence."""
    from pi_memory.index.db import transaction
    from pi_memory.index.indexer import insert_messages
    from pi_memory.semantic import turn_vectors

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        conn = open_index(Path(tmp))
        backend = EmbeddedBackend(conn, model)
        with transaction(conn):
            sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) VALUES "
                               "('pi', 'bench', '/b', 'bbbbbbbbbbbb', 'bench') RETURNING id").fetchone()[0]
            fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES ('/b', ?, 0, 0) "
                               "RETURNING id", (sid,)).fetchone()[0]
            insert_messages(conn, [(sid, fid, f"t{i}", None, i, stamp, "user", "message", None, "active", text)
                                   for i, (stamp, text) in enumerate(DATED_TURNS)])
        turn_vectors.backfill(conn, model)
        scope = Scope(user_id="bench", project_id="bbbbbbbbbbbb")
        for prompt, index in DATED_PROMPTS:
            row = {"prompt": prompt}
            for name, floor, when in (("floor_off", 0.0, AS_OF), ("floor_on", DEFAULT_MIN_SIMILARITY, AS_OF),
                                      ("floor_on_no_window", DEFAULT_MIN_SIMILARITY, LATER)):
                hits = recall(backend, prompt, scope=scope, include=("sessions",), conn=conn, min_similarity=floor,
                              as_of=when)
                ids = [h.id.rsplit("#", 1)[-1] for h in hits]
                rank = ids.index(f"t{index}") + 1 if f"t{index}" in ids else None
                row[name] = rank
                if rank and name == "floor_on":
                    row["dated"] = hits[rank - 1].dated
            rows.append(row)
        conn.close()
    return rows


def measure() -> dict:
    """Cosine distributions and per-floor counts (module docstring)."""
    model = OnnxMiniLM()
    mem_vecs = model.embed(MEMORIES)
    related = np.array([float(model.embed_query(prompt) @ mem_vecs[index]) for prompt, index in RELATED])
    unrelated = np.array([float((mem_vecs @ model.embed_query(prompt)).max()) for prompt in UNRELATED])
    floors = [{"floor": f, "related_kept": int((related >= f).sum()), "related": len(related),
               "unrelated_injecting": int((unrelated >= f).sum()), "unrelated": len(unrelated)} for f in FLOORS]
    return {"model": model.model_name, "memories": len(MEMORIES), "related": _quantiles(related),
            "unrelated_best_match": _quantiles(unrelated), "floors": floors, "end_to_end": end_to_end(model),
            "multilingual": multilingual(model), "dated": dated(model),
            "lowest_related": sorted((round(float(s), 3), RELATED[i][0]) for i, s in enumerate(related))[:5],
            "highest_unrelated": sorted(((round(float(s), 3), UNRELATED[i]) for i, s in enumerate(unrelated)),
                                        reverse=True)[:5]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = measure()
    if args.json:
        print(json.dumps(data, indent=2))
        return
    print(f"model {data['model']}, {data['memories']} memories, {len(RELATED)} related pairs, "
          f"{len(UNRELATED)} unrelated prompts")
    for name in ("related", "unrelated_best_match"):
        print(f"{name:>22}: " + "  ".join(f"{k} {v:.3f}" for k, v in data[name].items()))
    print("\n floor  related kept  unrelated still injecting")
    for row in data["floors"]:
        print(f"  {row['floor']:.2f}  {row['related_kept']:>5}/{row['related']:<6} {row['unrelated_injecting']:>5}/"
              f"{row['unrelated']}")
    print("\nend to end (recall(), top 5, keyword evidence included)\n floor  related recalled  unrelated injecting")
    for row in data["end_to_end"]:
        print(f"  {row['floor']:.2f}  {row['related_recalled']:>8}/{len(RELATED):<8} {row['unrelated_injecting']:>5}/"
              f"{len(UNRELATED)}")
    print("\nother languages (recall(), top 5, shipped floor; every language's memories in one index)")
    print(" lang     floor  related recalled  unrelated injecting  related cos           unrelated best cos")
    for row in data["multilingual"]:
        print(f"  {row['lang']:<7} {row['floor']:.2f}  {row['related_recalled']:>8}/{row['related']:<8}"
              f" {row['unrelated_injecting']:>6}/{row['unrelated']:<12}"
              f" {' '.join(f'{c:.3f}' for c in row['related_cos']):<21} "
              + " ".join(f"{c:.3f}" for c in row["unrelated_best_cos"]))
    print(f"\ndate-phrased prompts over session turns (recall(), sessions, top 5, as of {AS_OF}): rank of the answer")
    print(f"  floor off  floor on  in the date window  floor on, asked {LATER[:10]} (no window)  prompt")
    for row in data["dated"]:
        print(f"  {row['floor_off'] or '-':>9}  {row['floor_on'] or '-':>8}  {str(row.get('dated', '-')):>18}  "
              f"{row['floor_on_no_window'] or '-':>36}  {row['prompt']}")
    print("\nlowest related pairs:", *(f"  {s:.3f}  {p}" for s, p in data["lowest_related"]), sep="\n")
    print("highest unrelated prompts:", *(f"  {s:.3f}  {p}" for s, p in data["highest_unrelated"]), sep="\n")


if __name__ == "__main__":
    main()
