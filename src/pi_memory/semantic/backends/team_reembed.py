"""The running team server embeds what waits in ``pi_memory_reembed``, without a restart.

Rows are queued there by ``serve import`` (a memory copied without a vector of the server's embedding model)
and by the sweep at a start (a text redacted in place: :mod:`.pg_sweep`). Until they get a vector a search
finds them by their words only. ``serve`` embeds the queue when it opens the store, and from then on
:class:`ReembedLoop` looks again every :data:`EVERY_S` seconds, so an import into the database of a running
server is embedded within that time (a tester's finding: they waited for the next restart).

Bounds (decision): a pass embeds at most :data:`CAP` memories (oldest first), so one pass holds the embedding
model for a few seconds at most, beside the requests that need it for their queries. A pass that found a full
cap is followed by the next one after :data:`BUSY_PAUSE_S` instead of :data:`EVERY_S`, so a large import is
worked through steadily with pauses for the requests. When embedding fails (an embedding server that is down)
the rows stay queued and the next pass tries again. Several servers on one database share the queue: a pass
claims each batch it embeds (:meth:`~.postgres.PostgresBackend.embed_queued`: ``FOR UPDATE ... SKIP LOCKED`` in
the batch's transaction), so another server's pass takes the next rows and no row is embedded twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

CAP = 256  # memories embedded per pass at most
EVERY_S = 30.0  # seconds between passes while the queue is empty (or the last pass took less than the cap)
BUSY_PAUSE_S = 1.0  # seconds between passes while each one finds a full cap


def embed_pass(backend: Any, cap: int = CAP) -> tuple[int, int]:
    """One bounded pass: ``(embedded now, still queued)``."""
    done = backend.embed_queued(limit=cap)
    return done, backend.queued_count() if done else 0


class ReembedLoop:
    """A daemon thread running :func:`embed_pass` every ``every`` seconds (``busy_pause`` after a full pass)
    until :meth:`stop`. ``report(done, left)``: told after each pass that embedded something (the server's
    output)."""

    def __init__(self, backend: Any, *, every: float = EVERY_S, cap: int = CAP, busy_pause: float = BUSY_PAUSE_S,
                 report: Callable[[int, int], None] | None = None) -> None:
        self.backend, self.every, self.cap, self.busy_pause, self.report = backend, every, cap, busy_pause, report
        self.passes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pi-memory-team-reembed", daemon=True)

    def start(self) -> ReembedLoop:
        self._thread.start()
        return self

    def _run(self) -> None:
        wait = self.every
        while not self._stop.wait(wait):
            try:
                done, left = embed_pass(self.backend, self.cap)
            except Exception as exc:  # noqa: BLE001 - the database may be down for a while: try again later
                log.warning("team store: embedding the queued memories failed, trying again in %g s: %s",
                            self.every, exc)
                done, left = 0, 0
            self.passes += 1
            if done and self.report is not None:
                self.report(done, left)
            wait = self.busy_pause if done >= self.cap else self.every

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)


__all__ = ["BUSY_PAUSE_S", "CAP", "EVERY_S", "ReembedLoop", "embed_pass"]
