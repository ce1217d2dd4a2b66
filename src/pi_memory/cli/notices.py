"""The notice of an index opened for reading only, held back for a moment on the CLI's standard error.

Opening the index of a folder that cannot be written logs a warning for a person: what is wrong, that searches
still answer, that writes are skipped, what to do (:func:`pi_memory.index.read_only.open_read_only_index`). A
write command is then refused, and its refusal says the same thing: printed both, the person read the cause and
the fix twice in a row. So the CLI holds that one warning back: a refusal drops it (:meth:`HeldNotices.drop`);
otherwise it is printed when the command ends, or after ``DELAY_S`` for a command that keeps running (``ui``,
``serve``, ``mcp``: :data:`KEEPS_RUNNING`), whichever comes first. Other commands hold it until they end, however
long they take: with a timer for every command, a write refused after a slow start (the embedder loading on a busy
machine) printed both.
"""

from __future__ import annotations

import logging
import threading

DELAY_S = 0.5
KEEPS_RUNNING = frozenset({"ui", "serve", "mcp"})  # commands whose held notice is printed after DELAY_S
MARK = "read_only_notice"  # the ``extra`` key the index sets on the warning


def delay_for(args: list[str]) -> float | None:
    """How long the notice is held for the command line ``args``: ``DELAY_S`` for a command that keeps running
    (the command it names, :func:`pi_memory.cli.app.command_word`, is in :data:`KEEPS_RUNNING`), else ``None``
    (until the command ends)."""
    from pi_memory.cli.app import command_word

    return DELAY_S if command_word(args)[0] in KEEPS_RUNNING else None


class HeldNotices(logging.Filter):
    """A filter for the CLI's stderr handler: passes every record but the read-only notice, which it holds
    (``delay``: seconds before it is printed anyway; ``None``: until :meth:`release` or :meth:`drop`)."""

    def __init__(self, handler: logging.Handler, delay: float | None = DELAY_S) -> None:
        super().__init__()
        self.handler = handler
        self.delay = delay
        self.held: list[logging.LogRecord] = []
        self.settled = False  # released or dropped: later notices pass at once
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, MARK, False) or getattr(record, "_released", False):
            return True
        with self._lock:
            if self.settled:
                return True
            self.held.append(record)
            if self._timer is None and self.delay is not None:
                self._timer = threading.Timer(self.delay, self.release)
                self._timer.daemon = True
                self._timer.start()
        return False

    def release(self) -> None:
        """Print what is held (the command ended without a refusal, or keeps running)."""
        with self._lock:
            held, self.held, self.settled = self.held, [], True
        for record in held:
            record._released = True
            self.handler.handle(record)

    def drop(self) -> None:
        """Forget what is held: a refusal is being printed, which says it."""
        with self._lock:
            self.held, self.settled = [], True
            if self._timer is not None:
                self._timer.cancel()
