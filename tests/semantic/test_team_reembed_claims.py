"""Several `serve` processes on one database embed the queue between them (a gap left at the last stop: each
server's pass read the same queued rows and embedded them, one vector computed as many times as there were
servers). A pass claims its rows (`FOR UPDATE ... SKIP LOCKED` in the batch's transaction) until their vectors
are stored, so another server takes the next rows instead."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter

from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.backends.team_import import import_rows
from pi_memory.semantic.backends.team_reembed import ReembedLoop


class CountingEmbedder:
    """The real embedder, counting every text it embeds, slow enough (``pause`` a call) for passes to overlap."""

    def __init__(self, inner, counts: Counter, pause: float = 0.2) -> None:
        self.inner, self.counts, self.pause = inner, counts, pause
        self.model_name, self.dim = inner.model_name, inner.dim
        self._lock = threading.Lock()

    def embed(self, texts):
        with self._lock:
            self.counts.update(texts)
        time.sleep(self.pause)
        return self.inner.embed(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


def _row(mid: str, user: str, text: str) -> dict:
    return {"id": mid, "user_id": user, "text": text, "status": "active", "created_at": "2026-01-05T10:00:00.000Z",
            "updated_at": "2026-01-05T10:00:00.000Z", "observed_at": "2026-01-05T10:00:00.000Z"}


def test_two_servers_embed_each_queued_row_exactly_once(pg_url, embedder):
    from pg_fixture import own_database

    n = 24
    with own_database(pg_url, "claims") as url:
        pools = [open_pool(url, max_size=2) for _ in range(3)]
        counts = [Counter(), Counter()]
        servers = [PostgresBackend(pools[i], CountingEmbedder(embedder, counts[i])) for i in range(2)]
        user = "claim-" + uuid.uuid4().hex[:8]
        texts = [f"Service number {i} is deployed from the {i}th pipeline" for i in range(n)]
        report = import_rows(PostgresBackend(pools[2], embedder),
                             [(f"row {i}", _row(f"{user}-{i:02d}", user, t)) for i, t in enumerate(texts)])
        assert report.queued == n
        loops = [ReembedLoop(s, every=0.05, cap=4, busy_pause=0.05) for s in servers]
        try:
            for loop in loops:
                loop.start()
            deadline = time.monotonic() + 60
            while servers[0].queued_count() and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            for loop in loops:
                loop.stop()
        together = counts[0] + counts[1]
        assert servers[0].queued_count() == 0
        assert sorted(together.items()) == sorted((t, 1) for t in texts)  # every row once, by one server
        assert sum(counts[0].values()) > 0 and sum(counts[1].values()) > 0  # both servers took part
        with pools[2].connection() as conn:
            stored = conn.execute("SELECT memory_id, count(*) FROM semantic_vectors GROUP BY memory_id "
                                  "ORDER BY memory_id").fetchall()
        assert stored == [(f"{user}-{i:02d}", 1) for i in range(n)]
        for pool in pools:
            pool.close()
