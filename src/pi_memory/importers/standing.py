"""Merge a peer's ``STANDING.md`` (standing instructions) into ours, ``<data root>/STANDING.md``.

The format is the same on both sides (:mod:`pi_memory.standing`: one rule per line, ``#`` comments, at most
20 rules and 2,000 characters). Each of the peer's rules is pinned through
:meth:`pi_memory.standing.StandingStore.add` (its scan, duplicate check, caps, lock and atomic append), so an
import decides exactly as ``pi-memory pin add`` would: a rule already pinned is "already there"; one the
scanners refuse or that would break a cap is skipped with the store's reason. A dry run applies the same
checks to the rules in order without writing.
"""

from __future__ import annotations

from pathlib import Path

from pi_memory import safety
from pi_memory.curated.files import read_bytes
from pi_memory.importers.report import ImportReport
from pi_memory.standing import MAX_CHARS, MAX_RULES, StandingStore, joined_chars, parse_rules, rule_key

KIND = "STANDING.md"


def _planned(rule: str, rules: list[str]) -> tuple[str, str | None]:
    """``(action, reason)`` for pinning ``rule`` after ``rules`` (the store's checks, without writing)."""
    if rule_key(rule) in {rule_key(r) for r in rules}:
        return "already", None
    finding = safety.check_write(rule)
    if finding is not None:
        return "skip", safety.refusal_message(finding, "standing instructions")
    if len(rules) >= MAX_RULES or joined_chars([*rules, rule]) > MAX_CHARS:
        return "skip", (f"STANDING.md would exceed its {MAX_RULES} rules / {MAX_CHARS:,} characters; remove a "
                        "rule (pi-memory pin remove N) and pin this one yourself")
    return "add", None


def import_standing(report: ImportReport, data_dir: Path, source: Path, apply: bool, lock_timeout: float) -> None:
    raw = read_bytes(source) if source.is_file() else None
    if not raw:
        return
    store = StandingStore.in_data_dir(data_dir, lock_timeout)
    rules = store.rules()
    for rule in parse_rules(raw.decode("utf-8", errors="replace").lstrip("\ufeff")):
        action, reason = _planned(rule, rules)
        if apply and action == "add":
            result = store.add(rule)
            if not result.success:
                action, reason = ("already", None) if result.code == "duplicate" else ("skip", result.error)
        if action == "add":
            rules.append(rule)
        report.add(KIND, rule, action, reason, to=KIND if action != "skip" else None)
