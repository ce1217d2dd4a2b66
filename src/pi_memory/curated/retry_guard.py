"""The curated stores' loop guard: a model that repeats the same failing memory call is stopped.

Models sometimes loop on a memory call that cannot succeed (Hermes' runaway-retry reports, #42405): the same
remove of text that is in no entry, the same add of an over-long or hostile entry, the same arguments that
fail validation, each retry costing a tool round and, for a held lock, a wait. So after ``limit`` (3) failures
of one call in one agent turn, that call (the same store, the same operations or the same invalid arguments)
is answered with a terminal ``retry_limit`` result without touching the file.

Only repeats are stopped: a different call, and so any valid one, is always carried out, however many other
calls failed before it (a model that fixes its arguments after three typos must be able to save). The
counters reset at :meth:`RetryGuard.reset`, which the store calls at the start of an agent turn
(:meth:`pi_memory.curated.store.MemoryStore.begin_turn`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def call_key(operations: Iterable[Any]) -> str:
    """The identity of a batch of :class:`~pi_memory.curated.store.Operation` (action, old text, content)."""
    return json.dumps([[op.action, op.old_text, op.content] for op in operations], ensure_ascii=False)


def invalid_key(error: str, arguments: dict | None) -> str:
    """The identity of a call whose arguments failed validation: the arguments and the error."""
    return json.dumps(["invalid", error, arguments], ensure_ascii=False, sort_keys=True, default=repr)


class RetryGuard:
    """Failures per store and per call in the current turn (see the module docstring)."""

    def __init__(self, targets: Iterable[str], limit: int = 3) -> None:
        self.targets = list(targets)
        self.limit = limit
        self.reset()

    def reset(self) -> None:
        self._failed: dict[str, dict[str, int]] = {t: {} for t in self.targets}

    def failures(self, target: str, key: str) -> int:
        """How often this call failed in this turn when that reaches the limit (it is to be stopped), else 0."""
        count = self._failed.setdefault(target, {}).get(key, 0)
        return count if count >= self.limit else 0

    def note(self, target: str, key: str, count: int = 1) -> None:
        """One more failure (``count`` 0: a refusal that does not count) of this call."""
        if count:
            failed = self._failed.setdefault(target, {})
            failed[key] = failed.get(key, 0) + count
