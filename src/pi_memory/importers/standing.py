"""Merge a peer's ``STANDING.md`` (standing instructions) into ours, ``<data root>/STANDING.md``.

The format is the same on both sides (:mod:`pi_memory.standing`: one rule per line, ``#`` comments, at most
20 rules and 2,000 characters). Each of the peer's rules is pinned through
:meth:`pi_memory.standing.StandingStore.add` (its scan, duplicate check, caps, lock and atomic append), so an
import decides exactly as ``pi-memory pin add`` would: a rule already pinned is "already there"; one the
scanners refuse, that holds a control character or that would break a cap is skipped with the store's reason. A
dry run asks the same checks of the rules in order (:meth:`~pi_memory.standing.StandingStore.check`) without
writing.
"""

from __future__ import annotations

from pathlib import Path

from pi_memory.curated.files import read_bytes
from pi_memory.importers.report import ImportReport
from pi_memory.standing import StandingStore, parse_rules

KIND = "STANDING.md"


def _planned(store: StandingStore, rule: str, rules: list[str]) -> tuple[str, str | None]:
    """``(action, reason)`` for pinning ``rule`` after ``rules``: the store's own checks, without writing."""
    refused = store.check(rule, rules)
    if refused is None:
        return "add", None
    return ("already", None) if refused.code == "duplicate" else ("skip", refused.error)


def import_standing(report: ImportReport, data_dir: Path, source: Path, apply: bool, lock_timeout: float) -> None:
    raw = read_bytes(source) if source.is_file() else None
    if not raw:
        return
    store = StandingStore.in_data_dir(data_dir, lock_timeout)
    rules = store.rules()
    for rule in parse_rules(raw.decode("utf-8", errors="replace").lstrip("\ufeff")):
        action, reason = _planned(store, rule, rules)
        if apply and action == "add":
            result = store.add(rule)
            if not result.success:
                action, reason = ("already", None) if result.code == "duplicate" else ("skip", result.error)
        if action == "add":
            rules.append(rule)
        report.add(KIND, rule, action, reason, to=KIND if action != "skip" else None, refused=action == "skip")
