"""The text report of ``benchmarks/locomo_recall.py`` (its ``--json`` result, printed as tables)."""

from __future__ import annotations

from pathlib import Path

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def print_report(result: dict, ks: list[int]) -> None:
    ti = result["turn_index"]
    print(f"LoCoMo {Path(result['data']).name}: {result['questions']} questions (categories 1-4 with evidence), "
          f"{result['turns_indexed']} turns, embedders {' + '.join(result['embedders'])}; load average "
          f"{'/'.join(str(x) for x in result['load_average'])} on {result['cpus']} CPUs")
    if "index_seconds" in ti:
        print(f"  turn index build: {ti['index_seconds']} s for {ti['embedded_texts']} key embeddings "
              f"({ti['embedded_texts_per_s']}/s)")
    if "query_embedding_p50_ms" in ti:
        print(f"  query embedding alone: p50 {ti['query_embedding_p50_ms']} ms, p95 {ti['query_embedding_p95_ms']} ms "
              "(included in the vector/hybrid latencies below)")
    if "ensemble_index_seconds" in ti:
        print(f"  ensemble index build (MiniLM + e5 keys): {ti['ensemble_index_seconds']} s")
    if "bm25_index_seconds" in ti:
        print(f"  turn index build without vectors (bm25 mode): {ti['bm25_index_seconds']} s")
    if result.get("embed_cache"):
        print("  embeddings read from --embed-cache where present: latencies leave the model out")
    header = "".join(f"{'R@' + str(k):>8}" for k in ks)
    print(f"  {'':<34}{header}{'p50 ms':>9}{'p95 ms':>9}")
    rows = list(result["rows"].items())
    for label, r in rows:
        print(f"  {label:<34}" + "".join(f"{r['recall'][f'R@{k}']:>8.3f}" for k in ks)
              + f"{r['latency_p50_ms']:>9.2f}{r['latency_p95_ms']:>9.2f}")
    print("  R@10 by category: " + "  ".join(CATEGORIES.values()))
    for label, r in rows:
        print(f"    {label:<32}" + "".join(f"{r['by_category'][c]['R@10']:>12.3f}" for c in CATEGORIES.values()))
    print("  R@10 per conversation | per half of the questions (even/odd)")
    for label, check in result["spread"].items():
        print(f"    {label:<32}" + " ".join(f"{v:.3f}" for v in check["conversations"].values())
              + "  | " + " ".join(f"{v:.3f}" for v in check["halves"]))
    if "ablations" in result:
        print("\n  ablations (turn index; each step adds to the row above; variants change one setting of the final)")
        print(f"  {'':<44}{'mode':>7}{header}{'dR@10':>8}   R@10 multi/temp/open/single")
        for row in result["ablations"]:
            delta = row.get("delta_R@10")
            d = "" if delta is None else f"{delta:+.3f}"
            cats = "/".join(f"{v:.2f}" for v in row["by_category_R@10"].values())
            print(f"  {row['label']:<44}{row['mode']:>7}" + "".join(f"{row[f'R@{k}']:>8.3f}" for k in ks)
                  + f"{d:>8}   {cats}")
        print("  generalisation: each step's R@10 change per conversation | per half of the questions (even/odd)")
        for row in result["ablations"]:
            check = row.get("delta_R@10_check")
            if check:
                convs = " ".join(f"{v:+.3f}" for v in check["conversations"].values())
                halves = " ".join(f"{v:+.3f}" for v in check["halves"])
                print(f"  {row['label']:<44}{convs}  | {halves}")
        print("  session_search with one query step off:")
        for name, rec in result["session_search_ablations"].items():
            print(f"  {name:<44}{'':>7}" + "".join(f"{rec[f'R@{k}']:>8.3f}" for k in ks))
