"""Exact-duplicate cleanup within one scope: preview by default, apply on request, fail closed.

Two active memories are duplicates when their texts are equal after :func:`~pi_memory.semantic.models.
normalise_text` (Unicode NFC, ``casefold``, whitespace runs collapsed, ends stripped). In each group the newest
(``created_at``, then ``updated_at``) is kept and the others are marked deleted through the backend (history
kept, reason "duplicate of <id>").

Fail closed -- a group is *reported, not merged* -- when anything about it is ambiguous:

* members with different metadata, or from different scopes (a backend that returned a row of another scope
  is a bug we refuse to act on);
* a missing or unreadable timestamp, or a tie for the newest;
* an empty text, an id seen twice, or an id that is not a string.

The whole run refuses to apply when the listing may be incomplete (``get_all`` returned ``limit`` rows).
Deleting is one call per memory; a failed call is counted in ``failures`` and the rest go on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_memory.semantic.models import Scope, SemanticMemory, normalise_text, parse_iso

LIST_LIMIT = 10_000  # memories read per scope (the seed's embedded/platform limit)


@dataclass
class DuplicateGroup:
    """Memories with one normalised text. ``keep``: the id that stays (``None`` when ambiguous);
    ``remove``: ids to delete; ``problem``: why the group is not merged (``None`` when it can be)."""

    text: str
    ids: list[str]
    keep: str | None = None
    remove: list[str] = field(default_factory=list)
    problem: str | None = None

    def to_public(self) -> dict[str, Any]:
        return {"text": self.text, "ids": self.ids, "keep": self.keep, "remove": self.remove, "problem": self.problem}


@dataclass
class DedupReport:
    """``total``: active memories read; ``duplicates_found``: removable copies; ``removed``: deleted now;
    ``ambiguous``: groups left alone; ``failures``: deletions that failed; ``applied``: whether deletion ran."""

    scope: str
    total: int = 0
    groups: list[DuplicateGroup] = field(default_factory=list)
    duplicates_found: int = 0
    removed: int = 0
    ambiguous: int = 0
    failures: list[str] = field(default_factory=list)
    applied: bool = False
    refused: str | None = None

    def to_public(self) -> dict[str, Any]:
        return {"scope": self.scope, "total": self.total, "duplicatesFound": self.duplicates_found,
                "duplicatesRemoved": self.removed, "ambiguous": self.ambiguous, "deleteFailures": len(self.failures),
                "failures": self.failures, "applied": self.applied, "refused": self.refused,
                "groups": [g.to_public() for g in self.groups]}


def _problem(members: list[SemanticMemory], scope: Scope) -> str | None:
    if any(m.scope != scope for m in members):
        return "members belong to different scopes"
    if any(not isinstance(m.id, str) or not m.id for m in members):
        return "a member has an invalid id"
    if len({m.id for m in members}) != len(members):
        return "an id appears twice"
    first = members[0].metadata
    if any(m.metadata != first for m in members[1:]):
        return "members have different metadata"
    stamps = [(parse_iso(m.created_at), parse_iso(m.updated_at)) for m in members]
    if any(c is None or u is None for c, u in stamps):
        return "a member has a missing or unreadable timestamp"
    ordered = sorted(stamps, reverse=True)
    if len(ordered) > 1 and ordered[0] == ordered[1]:
        return "two members are equally new"
    return None


def find_duplicates(backend: Any, scope: Scope, *, limit: int = LIST_LIMIT) -> tuple[list[DuplicateGroup], int, bool]:
    """``(groups, total, complete)``: every group of two or more active memories with one normalised text,
    the number of memories read, and whether the listing is known to be complete (fewer than ``limit``).

    A backend whose server caps listings (a Mem0 server returns at most 1,000) says so with a ``list_limit``
    attribute; the lower of the two is asked for, so a capped listing is recognised as possibly incomplete."""
    limit = min(limit, int(getattr(backend, "list_limit", limit) or limit))
    memories = backend.get_all(scope=scope, limit=limit)
    complete = len(memories) < limit
    by_text: dict[str, list[SemanticMemory]] = {}
    for mem in memories:
        key = normalise_text(mem.text or "")
        by_text.setdefault(key, []).append(mem)
    groups: list[DuplicateGroup] = []
    for key, members in by_text.items():
        if len(members) < 2:
            continue
        group = DuplicateGroup(text=members[0].text, ids=[m.id for m in members])
        group.problem = "empty text" if not key else _problem(members, scope)
        if group.problem is None:
            newest = max(members, key=lambda m: (parse_iso(m.created_at), parse_iso(m.updated_at)))
            group.keep = newest.id
            group.remove = [m.id for m in members if m.id != newest.id]
        groups.append(group)
    return groups, len(memories), complete


def dedup(backend: Any, scope: Scope, *, apply: bool = False, limit: int = LIST_LIMIT) -> DedupReport:
    """Preview (default) or remove exact duplicates in ``scope``; see the module docstring."""
    limit = min(limit, int(getattr(backend, "list_limit", limit) or limit))
    groups, total, complete = find_duplicates(backend, scope, limit=limit)
    report = DedupReport(scope=scope.key, total=total, groups=groups)
    report.duplicates_found = sum(len(g.remove) for g in groups)
    report.ambiguous = sum(1 for g in groups if g.problem)
    if not apply:
        return report
    if not complete:
        report.refused = (f"the scope holds at least {limit:,} memories and only that many were read; dedup "
                          "refuses to delete from a listing that may be incomplete")
        return report
    report.applied = True
    for group in groups:
        if group.problem:
            continue
        for mid in group.remove:
            try:
                ok = backend.delete(mid, scope=scope, reason=f"duplicate of {group.keep}")
            except Exception as exc:  # noqa: BLE001 - one failed delete must not stop the others
                report.failures.append(f"{mid}: {exc}")
                continue
            if ok:
                report.removed += 1
            else:
                report.failures.append(f"{mid}: not found or no longer active")
    return report
