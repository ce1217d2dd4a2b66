"""The host's side of ``locomo_recall.py --recall``: what a host injects before a run, as a ranked searcher.

Read in place from ``locomo_recall.py``; kept apart so that script stays one screenful per job."""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Callable


def product_recall(conn: sqlite3.Connection, embedder, pids: dict[str, str], as_of: dict[str, str] | None = None
                   ) -> tuple[Callable[[str, str, int], list[str]], Callable[[str, str, int], list[str]]]:
    """What a host injects before a run, ranked: :func:`pi_memory.semantic.recall.recall` with ``include=
    ("sessions",)`` over the indexed pi sessions (keyword list + turn-vector list, RRF); two searchers: evidence
    floor off (the ranking itself) and on, as shipped (``recallMinSimilarity`` default; what a floor drops counts
    as missed). Every turn is embedded first, as ``pi-memory semantic embed-sessions`` does."""
    from pi_memory.semantic import turn_vectors
    from pi_memory.semantic.embedded import EmbeddedBackend
    from pi_memory.semantic.models import Scope
    from pi_memory.semantic.recall import DEFAULT_MIN_SIMILARITY, recall

    backend = EmbeddedBackend(conn, embedder)  # creates the vector tables
    start = time.perf_counter()
    reports, _ = turn_vectors.backfill(conn, embedder)
    print(f"recall(): embedded {reports[-1].embedded} turns in {time.perf_counter() - start:.1f} s", file=sys.stderr)

    def searcher(floor: float) -> Callable[[str, str, int], list[str]]:
        def search(sample: str, question: str, k: int) -> list[str]:
            scope = Scope(user_id="locomo", project_id=pids[sample])
            hits = recall(backend, question, scope=scope, top_k=k, include=("sessions",), conn=conn,
                          min_similarity=floor, as_of=(as_of or {}).get(sample))
            return [h.id.rsplit("#", 1)[-1] for h in hits]

        return search

    return searcher(0.0), searcher(DEFAULT_MIN_SIMILARITY)
