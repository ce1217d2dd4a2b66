"""Session turns that say what a superseded memory said, for :func:`pi_memory.retrieval.engine.recall`.

When a semantic memory supersedes another ("Production runs PostgreSQL 15." -> "... 16."), past session turns
still say the old thing. :func:`mark_outdated` takes recall's passing hits, best first, and for every recalled
current fact reads the memories it replaced (embedded backend only: remote services do not expose them). A
session turn is *outdated* by a replacement when, compared word by word (case-folded words of any length, so
``15`` and ``16`` count; a word of 4+ letters also matches a longer one it starts, ``postgres`` ~ ``postgresql``):

* it holds more of the words only the old text has than of the words only the new text has, and
* it shares two of the words both texts say (one when they share only one): it is about the same thing -- a
  turn about "the deploy database url ...:5432" shares only "database" with "The staging database listens on
  port 5432" -> "... 6543", and is about another database; and
* it was written before the change: the replacement's time, or the start of the day the new fact was observed
  on when that is earlier (a fact recorded today as "since November 20 ..." changed on the 20th). A later turn
  saying the old thing is left alone: the replacement may be what is wrong.

An outdated turn is moved to just below its current fact and carries ``replaced_by`` / ``replaced_on``, which
:func:`pi_memory.retrieval.engine.render_line` prints as ``said before <day>, since replaced by <id>``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pi_memory.index.query import STOP_WORDS

_TOKENS = re.compile(r"[^\W_]+", re.UNICODE)
MIN_PREFIX = 4


def _words(text: str) -> set[str]:
    return {w for w in (t.casefold() for t in _TOKENS.findall(text or "")) if w not in STOP_WORDS}


def _has(words: set[str], word: str) -> bool:
    if word in words:
        return True
    return any(len(w) >= MIN_PREFIX and (word.startswith(w) or (len(word) >= MIN_PREFIX and w.startswith(word)))
               for w in words if not w.isdigit())


def outdated_by(turn: str, old: str, new: str) -> bool:
    """Whether ``turn`` says ``old`` rather than ``new`` (module docstring, first two rules)."""
    old_w, new_w, said = _words(old), _words(new), _words(turn)
    common = old_w & new_w
    only_old = sum(_has(said, w) for w in old_w - new_w)
    only_new = sum(_has(said, w) for w in new_w - old_w)
    shared = sum(_has(said, w) for w in common)
    return only_old > only_new and shared >= min(2, len(common)) and shared > 0


def predecessors(backend: Any, scope: Any, ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    """``current id -> [(old text, superseded_at)]`` of the scope's memories that ``ids`` replaced directly;
    ``{}`` for a backend without a local table (remote services)."""
    conn = getattr(backend, "conn", None)
    if not ids or conn is None or not hasattr(scope, "columns"):
        return {}
    out: dict[str, list[tuple[str, str]]] = {}
    # unary + on the scope columns keeps SQLite on the superseded_by index: with the scope index it read every
    # memory of the scope (313 ms a recall at 100k memories, benchmarks/semantic_latency.py)
    rows = conn.execute("SELECT superseded_by, text, superseded_at FROM semantic_memories WHERE superseded_by IN "
                        f"({','.join('?' * len(ids))}) AND status = 'superseded' AND +user_id = ? "
                        "AND +project_id = ? AND +agent_id = ? ORDER BY pk", (*ids, *scope.columns()))
    for new_id, text, at in rows:
        out.setdefault(new_id, []).append((text, at or ""))
    return out


def mark_outdated(backend: Any, scope: Any, hits: list[Any]) -> list[Any]:
    """``hits`` (recall's, best first) with outdated session turns marked and moved below their current fact
    (module docstring). The list is returned as it is when no recalled fact replaced another."""
    current = [h for h in hits if h.kind == "semantic"]
    replaced = predecessors(backend, scope, [h.id for h in current])
    if not replaced:
        return hits
    out = list(hits)
    for fact in current:
        moved = 0  # turns already placed below this fact keep their order
        for old, at in replaced.get(fact.id, []):
            observed = f"{fact.date[:10]}T00:00:00.000Z" if len(fact.date or "") >= 10 else ""
            changed = min(at, observed) if at and observed else at or observed
            for turn in [h for h in out if h.kind == "session" and not h.replaced_by]:
                said = turn.text.split(": ", 1)[-1]  # without the "user: " / "assistant: " role
                if (turn.when or "") >= changed or not outdated_by(said, old, fact.text):
                    continue
                turn.replaced_by, turn.replaced_on = fact.id, changed[:10]
                if out.index(turn) < out.index(fact):
                    out.remove(turn)
                    out.insert(out.index(fact) + 1 + moved, turn)
                    moved += 1
    return out
