"""How well capture's supersession check (:mod:`pi_memory.semantic.supersession`) tells a real contradiction
from a retirement a mistaken model asked for, on the labelled pairs of ``supersession_check_data.py``.

Prints each pair's verdict and, per label, how many were decided right: real contradictions (and refinements)
that still supersede, and wrong retirements that are refused (the old memory stays, the new fact is added).

    .venv/bin/python benchmarks/supersession_check.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from supersession_check_data import PAIRS  # noqa: E402

from pi_memory.semantic.supersession import SupersedeReason, refusal  # noqa: E402


def main() -> int:
    right = {True: 0, False: 0}
    total = {True: 0, False: 0}
    for event, old, new, reason, retire in PAIRS:
        why = refusal(event, old, new, SupersedeReason(**reason) if reason else None)
        allowed = why is None
        total[retire] += 1
        right[retire] += allowed == retire
        mark = "ok  " if allowed == retire else "MISS"
        verdict = "supersedes" if allowed else f"refused: {why}"
        print(f"{mark} {event:6} {old!r} -> {new!r}: {verdict}")
    print()
    print(f"real contradictions that still supersede: {right[True]}/{total[True]}")
    print(f"wrong retirements refused:               {right[False]}/{total[False]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
