"""Merge a peer's ``STANDING.md`` (standing instructions) into ours, ``<data root>/STANDING.md``.

The format is the same on both sides: one rule per line; blank lines and ``#`` lines are skipped, a leading
``-``/``*``/``+`` bullet (or a ``1.``/``1)`` number) is stripped and whitespace collapsed; at most 20 rules and 2,000 characters (the rules
joined by newlines). A rule already pinned (case-insensitively) is "already there"; a rule that would break a
cap, or that the threat or secret scanner refuses, is skipped with the reason. New rules are appended after
ours (our comments and order are kept), under the file's lock, with an atomic write.

The standing-instructions capability reads the same file; this module parses it the same way only to merge.
"""

from __future__ import annotations

import re
from pathlib import Path

from pi_memory.curated.files import atomic_write_text, locked, read_bytes
from pi_memory.importers.curated import refusal
from pi_memory.importers.report import ImportReport

STANDING_FILE = "STANDING.md"
MAX_RULES = 20
MAX_CHARS = 2000


def parse_rules(text: str) -> list[str]:
    rules = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        rule = " ".join(re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", stripped).split())
        if rule:
            rules.append(rule)
    return rules


def _read(path: Path) -> str:
    raw = read_bytes(path)
    return raw.decode("utf-8", errors="replace") if raw else ""


def _merge(current: list[str], incoming: list[str], report: ImportReport | None) -> list[str]:
    """The rules of ``incoming`` to append to ``current``, reporting each decision when ``report`` is given."""
    rules, seen, new = list(current), {r.casefold() for r in current}, []
    for rule in incoming:
        note = (lambda *a, **k: None) if report is None else report.add
        if rule.casefold() in seen:
            note(STANDING_FILE, rule, "already")
            continue
        why = refusal(rule)
        if why:
            note(STANDING_FILE, rule, "skip", why)
            continue
        if len(rules) + 1 > MAX_RULES or len("\n".join([*rules, rule])) > MAX_CHARS:
            note(STANDING_FILE, rule, "skip", f"STANDING.md would exceed its {MAX_RULES} rules / {MAX_CHARS:,} "
                 "characters; remove a rule (pi-memory pin remove N) and pin this one yourself")
            continue
        rules.append(rule)
        seen.add(rule.casefold())
        new.append(rule)
        note(STANDING_FILE, rule, "add", to=STANDING_FILE)
    return new


def import_standing(report: ImportReport, data_dir: Path, source: Path, apply: bool, lock_timeout: float) -> None:
    if not source.is_file():
        return
    incoming = parse_rules(_read(source))
    ours = data_dir / STANDING_FILE
    new = _merge(parse_rules(_read(ours)), incoming, report)
    if not apply or not new:
        return
    with locked(ours, lock_timeout):
        text = _read(ours)
        fresh = _merge(parse_rules(text), new, None)  # the file may have changed since the plan
        if fresh:
            head = text if not text or text.endswith("\n") else text + "\n"
            atomic_write_text(ours, head + "".join(f"{rule}\n" for rule in fresh))
