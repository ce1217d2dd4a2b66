"""What one batch does to a store's entries, apart from the file: each operation checked before the lock, then
applied to the entries read under it. :class:`pi_memory.curated.store.MemoryStore` holds the transaction around
these rules (lock, re-read, drift guard, budget, publish) and turns a :class:`Refused` into its result.

* :func:`prepare`, before the lock (scanning is the slow part): newlines normalised, the texts stripped, the content
  rules (:func:`.entries.content_problem`), the threat and secret scans (:func:`pi_memory.safety.check_write`).
* :func:`step`, under the lock, on the entries just read (a :class:`Batch`): an add of an entry that is there is
  skipped (and noted), one with a ``place`` goes there (:func:`.entries.slot`); a replace or remove needs exactly
  one distinct matching entry (:func:`matches`; an entry's whole text names that entry even inside a longer one)
  among the entries as read, the ones the caller saw (:meth:`Batch.find`: a consolidation's merged text holds
  pieces of the entries it then removes, which matched against the batch's own result named two entries and
  refused good answers), and at most one step may change each of them; it is refused once on an entry that
  changed on disk since the store saw it, and a replace onto another entry's text merges the two.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pi_memory import safety
from pi_memory.curated import entries as fmt
from pi_memory.curated import messages as msg
from pi_memory.curated.give_back import GiveBack
from pi_memory.curated.operations import Operation
from pi_memory.curated.results import preview
from pi_memory.curated.sanitise import sanitise_entry


class Refused(Exception):
    """The store refuses the batch: the result's ``code``, ``error`` and other ``fields`` (``current_entries``,
    ``matches``, ``findings``, ``drift_backup``); ``live``: list the store's live entries as ``current_entries``;
    ``counts``: whether it counts toward the per-turn retry limit."""

    def __init__(self, code: str, error: str, *, live: bool = False, counts: bool = True, **fields):
        super().__init__(error)
        self.code, self.error, self.live, self.counts, self.fields = code, error, live, counts, fields


def where(index: int, op: Operation, single: bool) -> str:
    """How an error names the operation: nothing for a single call, ``Operation N (action): `` in a batch."""
    return "" if single else f"Operation {index + 1} ({op.action}): "


def prepare(op: Operation, name: str, at: str = "", limit: int | None = None,
            give_back: GiveBack | None = None) -> Operation:
    """``op`` normalised and checked on its own (not against the entries); raises :class:`Refused`. ``name``: the
    store's file name; ``at``: :func:`where`; ``limit``: the store's character limit, when known: content longer
    than all of it can never fit and is refused before the scans (a 10 MB ``memory_add`` took 16.5 s to be told
    so); ``give_back``: a local learning undo's texts, not refused for control characters or for holding nothing
    readable (:mod:`.give_back`; every other rule and both scans still apply)."""
    content = fmt.normalise_newlines(op.content or "").strip()
    old = fmt.normalise_newlines(op.old_text or "").strip()
    if op.action in ("replace", "remove") and not old:
        raise Refused("empty", at + msg.EMPTY_OLD_TEXT, live=True)
    if op.action in ("add", "replace") and limit is not None and len(content) > limit:
        raise Refused("over_limit", at + msg.entry_too_long(name, len(content), limit), live=True)
    if op.action in ("add", "replace"):
        problem = fmt.content_problem(content)
        if give_back is not None and give_back.allows(content, problem):
            problem = None
        if problem == "empty":
            raise Refused("empty", at + msg.empty_content(op.action), live=True)
        if problem == "delimiter":
            raise Refused("delimiter", at + msg.delimiter(name))
        if problem == "control":
            raise Refused("invalid_content", at + msg.CONTROL_CHARS)
        if problem == "unreadable":
            raise Refused("invalid_content", at + msg.UNREADABLE)
        finding = safety.check_write(content)
        if finding is not None:
            code = "secret" if finding.category == "secret" else "threat"
            raise Refused(code, at + safety.refusal_message(finding), findings=[finding.id])
    return Operation(action=op.action, content=content or None, old_text=old or None, place=op.place)


@dataclass
class Batch:
    """The entries of one batch: ``work``, as its steps leave them, and ``shown``, as they were read (what the
    caller saw: a model's ``oldText`` quotes that). ``origin[i]``: which entry of ``shown`` ``work[i]`` still is
    (``None``: added or rewritten by a step); ``changed``: entry of ``shown`` -> the number of the step that
    replaced or removed it."""

    shown: list[str]
    work: list[str]
    origin: list[int | None]
    changed: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, entries: list[str]) -> Batch:
        return cls(list(entries), list(entries), list(range(len(entries))))

    def find(self, name: str, old_text: str) -> tuple[str, int | list[str]]:
        """Which entry ``old_text`` names: ``("ok", index in work)``; ``("none", [])``; ``("ambiguous", entries)``;
        ``("conflict", index in shown)`` (an entry an earlier step changed). Matched against the entries as shown
        first, so a merged text that holds pieces of the entries it replaces does not make them ambiguous; only a
        piece found in none of them is looked for in what the batch wrote itself (add, then replace it)."""
        for pool, own in ((self.shown, True), (self.work, False)):
            idx = range(len(pool)) if own else [i for i, o in enumerate(self.origin) if o is None]
            hits = [i for i in idx if matches(name, pool[i], old_text)]
            hits = [i for i in hits if old_text in (pool[i], sanitise_entry(name, pool[i]))] or hits  # a whole
            # entry, given as stored or as shown (redacted, blocked), is that entry
            if not hits:
                continue
            if len({pool[i] for i in hits}) > 1:
                return "ambiguous", [pool[i] for i in hits]
            if not own:
                return "ok", hits[0]
            left = [j for j in hits if j not in self.changed]
            return ("ok", self.origin.index(left[0])) if left else ("conflict", hits[0])
        return "none", []

    def insert(self, at: int, content: str) -> None:
        self.work.insert(at, content)
        self.origin.insert(at, None)

    def remove(self, i: int, number: int) -> None:
        if (j := self.origin[i]) is not None:
            self.changed[j] = number
        del self.work[i], self.origin[i]

    def replace(self, i: int, content: str, number: int) -> None:
        if (j := self.origin[i]) is not None:
            self.changed[j] = number
        self.work[i], self.origin[i] = content, None


def step(batch: Batch, op: Operation, number: int, name: str, seen: set[str] | None, notes: list[str],
         at: str = "") -> None:
    """Apply one prepared ``op`` (the batch's step ``number``, from 1) to ``batch`` in place; raises
    :class:`Refused`. ``seen``: every entry text the store has read or written (``None``: it never read the file,
    so nothing is refused as changed on disk; a refused entry is added, so a retry goes through); ``notes``: what
    a success message adds."""
    work = batch.work
    if op.action == "add":
        if op.content in work:
            notes.append(msg.already_saved(name))
            return
        batch.insert(fmt.slot(work, op.place and op.place.model_dump()), op.content)
        return
    kind, found = batch.find(name, op.old_text)
    if kind == "none":
        raise Refused("no_match", at + msg.no_match(name, op.old_text),
                      current_entries=[sanitise_entry(name, e) for e in work])
    if kind == "ambiguous":
        raise Refused("ambiguous", at + msg.ambiguous(name, op.old_text, len(found)),
                      matches=[preview_entry(name, e) for e in found])
    if kind == "conflict":
        raise Refused("conflict", at + msg.changed_in_batch(preview_entry(name, batch.shown[found]),
                                                           batch.changed[found]))
    i = found
    if seen is not None and batch.origin[i] is not None and work[i] not in seen:
        seen.add(work[i])
        raise Refused("changed_on_disk", at + msg.changed_on_disk(name), counts=False,
                      current_entries=[sanitise_entry(name, work[i])])
    if op.action == "remove":
        batch.remove(i, number)
    elif op.content in work and work.index(op.content) != i:
        batch.remove(i, number)
        notes.append(msg.merged_duplicate(name))
    else:
        batch.replace(i, op.content, number)


def matches(name: str, entry: str, old_text: str) -> bool:
    """Plain, case-sensitive substring match on the raw entry or on what a model was shown for it."""
    return old_text in entry or old_text in sanitise_entry(name, entry)


def preview_entry(name: str, entry: str) -> str:
    """80-char preview of what a model may see; a blocked entry keeps its distinguishing ``Ref``."""
    shown = sanitise_entry(name, entry)
    if shown.startswith("[BLOCKED: ") and " Ref " in shown:
        return preview(shown, 40) + " " + shown[shown.rfind("Ref ") :]
    return preview(shown)
