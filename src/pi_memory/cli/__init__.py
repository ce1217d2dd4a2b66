"""``pi-memory`` command line: thin commands over the library.

Exit codes: 0 success; 1 the store refused (limit, threat, secret, drift, no match, lock); 2 usage error
(bad arguments, unreadable settings).
"""

from __future__ import annotations

from pi_memory.cli.app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
