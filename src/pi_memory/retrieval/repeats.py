"""Near-duplicate memories in one recall: a memory saying what a better-ranked recalled memory says goes after the
others, so the ``top_k`` holds different facts before it holds the same one twice.

Explicit writes (``mem0_memory`` add, ``pi-memory semantic add``) store any text that is not an exact repeat, so
paraphrases pile up ("The user prefers pnpm over npm for all JavaScript projects." and three rewordings): a prompt
about JavaScript recalled four of them in its top 5. Capture after a turn asks the model about similar memories
first, so it rarely adds one.

A repeat: a semantic memory whose stored vector has a cosine of at least :data:`NEAR_DUPLICATE_COSINE` with a
memory kept before it in this recall. Measured with the bundled model: rewordings of one fact 0.946-0.992, facts
that differ in one value 0.81-0.89 ("port 8080" / "port 9090" 0.881, PostgreSQL 15 / 16 0.893, "on Thursdays" /
"on Fridays" 0.880, the production / staging database 0.836). A repeat is moved, not dropped: it still fills a
slot that nothing else would, and a misjudged one is only lower in the list. Backends without stored vectors
(remote servers) are left as they rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

NEAR_DUPLICATE_COSINE = 0.94


class Repeats:
    """The vectors of the memories one recall has kept so far; :meth:`split` sorts the next ones."""

    def __init__(self, backend: Any, scope: Any) -> None:
        self._read = getattr(backend, "vectors_of", None)
        self._scope = scope
        self._kept: list[np.ndarray] = []

    def split(self, hits: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        """``(new, repeated)``: ``hits`` (in order) that say something not kept yet, and the repeats."""
        ids = [h.id for h in hits if h.kind == "semantic"]
        vectors = self._read(ids, scope=self._scope) if self._read is not None and ids else {}
        new, repeated = [], []
        for hit in hits:
            vec = vectors.get(hit.id) if hit.kind == "semantic" else None
            if vec is not None and self._kept and float(np.max(np.stack(self._kept) @ vec)) >= NEAR_DUPLICATE_COSINE:
                repeated.append(hit)
                continue
            if vec is not None:
                self._kept.append(vec)
            new.append(hit)
        return new, repeated
