"""``STANDING.md``: the user's standing instructions, one rule per line.

Reading (:func:`parse_rules`): blank lines and lines starting with ``#`` are skipped, a leading ``-``/``*``/``+``
bullet (or a ``1.``/``1)`` number) is stripped, runs of whitespace collapse to one space. The caps are
:data:`MAX_RULES` rules and :data:`MAX_CHARS` characters of the rules joined with ``"\\n"``.

Writing (:class:`StandingStore`): only the user writes this file, through ``pi-memory pin`` or pi's
``/memory-pin`` (or an editor). No tool, background job or recall path holds a :class:`StandingStore`; the
prompt assembly only reads the file. Every write takes the same cross-process lock as the curated stores,
re-reads the file under it and publishes atomically. Edits keep the user's comments and blank lines: ``add``
appends one line, ``remove N [N ...]`` drops the lines of those rules, ``clear`` drops every rule line and keeps comments
(the file as it was goes to ``<data root>/.trash/standing/`` first).
Every new rule goes through the threat and secret scanners, and one holding a control character (``ESC``, ``NUL``:
the curated stores' check, :func:`pi_memory.curated.entries.holds_control`) is refused; a duplicate (the same
:func:`~pi_memory.standing.reach.rule_key`: case and trailing punctuation aside) is refused, and so is a rule that
would take the file over either cap. A duplicate written by hand is marked in a listing. ``remove`` takes several
numbers at once (as the listing numbers them), so removing the duplicates a listing names is one command.

Showing (:meth:`PinResult.to_dict`, :func:`pi_memory.reports.pin_lines`): a file edited by hand can hold
anything, so a listing shows the first :data:`LISTED_RULES` rules (the agent is given no more) and how many more
there are, each redacted and with control characters escaped (:mod:`pi_memory.shown_text`), and says of each
rule whether the agent gets it and why not: :func:`pi_memory.standing.reach.reach`, the reading the prompt uses.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from pi_memory import safety
from pi_memory.config import DEFAULT_LOCK_TIMEOUT_S
from pi_memory.curated.entries import holds_control
from pi_memory.curated.files import StoreLockedError, atomic_write_text, locked, try_read_bytes
from pi_memory.curated.messages import not_written
from pi_memory.private_files import make_private_folder
from pi_memory.shown_text import shown
from pi_memory.standing.reach import (
    LISTED_RULES,
    MAX_CHARS,
    MAX_RULES,
    fitting,
    joined_chars,
    reach_data,
    rule_key,
)
from pi_memory.storage import data_write_problem

FILE_NAME = "STANDING.md"
_BULLET = re.compile(r"^(?:[-*+•]\s+|\d{1,3}[.)]\s+)")
_BULLET_START = "-*+•"
RULE_GONE = ("That rule is no longer pinned: it was changed or removed since this page was loaded. Nothing was "
             "removed; the rules below are the current ones.")


def normalise_rule(line: str) -> str:
    """The rule a line holds (``""`` for a blank or comment line)."""
    text = line.strip()
    if not text or text[0] == "#":
        return ""
    if text[0] in _BULLET_START or text[0].isdigit():  # the regular expression only where it can match
        text = _BULLET.sub("", text, count=1)
    return " ".join(text.split())  # runs of whitespace (str.isspace, as \s) collapse to one space


def parse_rules(text: str) -> list[str]:
    """Every rule of a ``STANDING.md`` text, in file order (caps not applied)."""
    return [rule for line in text.splitlines() if (rule := normalise_rule(line))]


@dataclass
class PinResult:
    """The outcome of a pin command: ``rules`` after it, and for a refusal ``code`` + ``error``."""

    success: bool
    code: str
    path: Path
    rules: list[str] = field(default_factory=list)
    message: str | None = None
    error: str | None = None
    problems: list[str] = field(default_factory=list)  # notes about the file as found (over the caps)

    @property
    def chars(self) -> int:
        return joined_chars(self.rules)

    def to_dict(self) -> dict:
        """The result as data: ``rules`` the first :data:`LISTED_RULES` (shown as a person is: redacted, escaped,
        at most :data:`MAX_CHARS` characters each), ``count`` all of them, ``more`` (when there are) how many are
        not listed, and what :func:`pi_memory.standing.reach.reach_data` says of the listed rules (``withheld``,
        ``redacted``, ``duplicates``, ``notGiven``, ``given``); a refusal carries no rules (``count`` still says how
        many there are)."""
        listed = self.rules[:LISTED_RULES] if self.success else []
        data = {"success": self.success, "code": self.code, "file": str(self.path),
                "rules": [shown(r, MAX_CHARS) for r in listed], "count": len(self.rules), "chars": self.chars,
                "maxRules": MAX_RULES, "maxChars": MAX_CHARS}
        if len(listed) < len(self.rules) and self.success:
            data["more"] = len(self.rules) - len(listed)
        if self.success:
            data.update(reach_data(self.rules))
        if self.message:
            data["message"] = shown(self.message, MAX_CHARS)
        if self.error:
            data["error"] = shown(self.error, MAX_CHARS)
        if self.problems:
            data["problems"] = list(self.problems)
        return data


class StandingStore:
    """Read and edit ``<data root>/STANDING.md``. Methods return :class:`PinResult`; they never raise for a
    refusal, a locked file or an unwritable folder."""

    def __init__(self, path: Path | str, lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
                 write_check: Callable[[], object] | None = None):
        self.path = Path(path)
        self.lock_timeout = lock_timeout
        self.write_check = write_check  # () -> StorageProblem | None: the data root open for reading only

    @classmethod
    def in_data_dir(cls, data_dir: Path | str, lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S) -> StandingStore:
        """``STANDING.md`` of data root ``data_dir``, refusing every edit while the folder cannot be written
        (:func:`pi_memory.storage.data_write_problem`)."""
        return cls(Path(data_dir) / FILE_NAME, lock_timeout, write_check=partial(data_write_problem, Path(data_dir)))

    def _text(self, strict: bool = False) -> str:
        """The file's text (``""`` when missing). ``strict`` (before a rewrite): bytes that are not UTF-8 raise
        :class:`_Refused`, so an edit never replaces them with U+FFFD."""
        raw = try_read_bytes(self.path)
        if raw is None:
            return ""
        if isinstance(raw, OSError):
            raise raw
        try:
            return raw.decode("utf-8").lstrip("\ufeff")
        except UnicodeDecodeError as exc:
            if strict:
                raise _Refused("not_utf8", f"{self.path} is not valid UTF-8 text (byte {exc.start}), so rewriting "
                               "it could damage it. Nothing was changed. Convert it to UTF-8 (for example "
                               "`iconv -f latin1 -t UTF-8`), then retry.") from exc
            return raw.decode("utf-8", errors="replace").lstrip("\ufeff")

    def rules(self) -> list[str]:
        """Every rule in the file (``[]`` when it is missing or unreadable)."""
        try:
            return parse_rules(self._text())
        except OSError:
            return []

    def list(self) -> PinResult:
        try:
            rules = parse_rules(self._text())
        except OSError as exc:
            return self._io_error(exc, [])
        return PinResult(True, "ok", self.path, rules, problems=self._problems(rules))

    @staticmethod
    def _problems(rules: list[str]) -> list[str]:
        shown = fitting(rules)
        if shown == len(rules):
            return []
        return [f"{len(rules) - shown:,} rule(s) after rule {shown} are over the cap of {MAX_RULES} rules / "
                f"{MAX_CHARS:,} characters and are not shown to the agent; remove some (pin remove N) or "
                "shorten them."]

    def add(self, text: str) -> PinResult:
        rule, refused = self._new_rule(text)
        if refused is not None:
            return refused

        def change(lines: list[str], rules: list[str]) -> tuple[list[str], str]:
            _fits(rule, rules)
            return [*lines, rule], f"Pinned as rule {len(rules) + 1}: {rule}"

        return self._edit(change)

    def check(self, text: str, rules: list[str]) -> PinResult | None:
        """The refusal :meth:`add` would give ``text`` with ``rules`` pinned (every check, nothing written), or
        ``None``: what a dry run says (an import's plan pins rule after rule)."""
        rule, refused = self._new_rule(text)
        if refused is not None:
            return refused
        try:
            _fits(rule, rules)
        except _Refused as refusal:
            return PinResult(False, refusal.code, self.path, list(rules), error=refusal.message)
        return None

    def _new_rule(self, text: str) -> tuple[str, PinResult | None]:
        """``(rule, refusal)``: the rule ``text`` pins, and why it cannot be pinned whatever else is pinned."""
        rule = normalise_rule(" ".join(text.split()))  # pasted lines become one rule
        if len(rule) > MAX_CHARS:  # can never fit: refused before any scan (a 50 MB rule took 2 min to be told so)
            return rule, self._refuse("too_long", f"The rule is {len(rule):,} characters long; all the standing "
                                      f"instructions together may take at most {MAX_CHARS:,}. Nothing was pinned. "
                                      "Shorten it to one short instruction.")
        if not rule:
            return rule, self._refuse("empty", "The rule is empty (or a # comment). Nothing was pinned. Write the "
                                      "instruction as plain text, e.g. pi-memory pin add \"never push to main\".")
        if safety.is_unreadable(rule):  # only undecodable bytes / lone surrogates, replaced at the edge
            return rule, self._refuse("invalid_content", f"The rule has no readable text: {safety.UNREADABLE}. "
                                      "Nothing was pinned. Retype the rule, or check the encoding of what was sent.")
        if holds_control(rule):
            return rule, self._refuse("invalid_content", "The rule holds control characters (terminal escape codes "
                                      "or similar), which can hide or change text on a screen showing it. Nothing "
                                      "was pinned. Remove them and pin plain text.")
        finding = safety.check_write(rule)
        if finding is None:
            return rule, None
        if finding.category == "secret":
            return rule, self._refuse("secret", safety.refusal_message(finding, "standing instructions"))
        return rule, self._refuse("threat", f"Not pinned: the rule matches the threat pattern {finding.id} "
                                  f"({finding.category}). Standing instructions go into every session's system "
                                  "prompt, so a rule must not try to override the agent's safeguards, hide text or "
                                  "send data away. Rephrase the rule without that wording.")

    def remove(self, *numbers: int) -> PinResult:
        """Remove the rules with these numbers (as a listing numbers them before this removal), all or none."""
        wanted = sorted(set(numbers), reverse=True)  # highest first: a removal never renumbers one still to go

        def change(lines: list[str], rules: list[str]) -> tuple[list[str], str]:
            if not rules:
                raise _Refused("empty", "No standing instructions are pinned; there is nothing to remove.")
            if not wanted:
                raise _Refused("out_of_range", "No rule number was given. Nothing was removed. See the numbers "
                               "with pi-memory pin list.")
            missing = [n for n in sorted(wanted) if not 1 <= n <= len(rules)]
            if missing:
                said = "There is no rule " + ", ".join(map(str, missing))
                raise _Refused("out_of_range", f"{said}: the rules are numbered 1 to {len(rules)}. Nothing was "
                               "removed. See them with pi-memory pin list.")
            at = [i for i, line in enumerate(lines) if normalise_rule(line)]  # the line of each rule
            kept = list(lines)
            for number in wanted:
                del kept[at[number - 1]]
            if len(wanted) == 1:
                return kept, f"Removed rule {wanted[0]}: {rules[wanted[0] - 1]}"
            removed = "; ".join(f"rule {n}: {rules[n - 1]}" for n in sorted(wanted))
            return kept, f"Removed {len(wanted)} rules ({removed}). The rules after them are renumbered."

        return self._edit(change)

    def remove_rule(self, rule: str) -> PinResult:
        """Remove the rule whose text is ``rule`` (as :func:`parse_rules` reads it; the first, if a hand edit wrote it
        twice), looked up under the lock: a page or script that names a rule by its text never removes another
        rule that took its number since. Refused (``gone``) when no rule has that text any more."""

        def change(lines: list[str], rules: list[str]) -> tuple[list[str], str]:
            if rule not in rules:
                raise _Refused("gone", RULE_GONE)
            at = [i for i, line in enumerate(lines) if normalise_rule(line)]
            number = rules.index(rule) + 1
            kept = list(lines)
            del kept[at[number - 1]]
            return kept, f"Removed rule {number}: {rule}"

        return self._edit(change)

    def clear(self) -> PinResult:
        """Drop every rule line (comments stay). The file as it was is kept first in ``<data root>/.trash/standing/``
        (private, as the rest of the data root), so a clear typed by mistake loses nothing: the message names
        the copy."""
        def change(lines: list[str], rules: list[str]) -> tuple[list[str], str]:
            if not rules:
                raise _Refused("empty", "No standing instructions are pinned; there is nothing to clear.")
            copy = self._keep_copy("\n".join(lines) + "\n")
            return [x for x in lines if not normalise_rule(x)], (
                f"Removed all {len(rules)} standing instruction(s). The file as it was is kept in {copy}: "
                "pin a rule again to bring it back.")

        return self._edit(change)

    def _keep_copy(self, text: str) -> Path:
        """Write ``text`` to a new file in ``<data root>/.trash/standing/`` and return its path (under the lock)."""
        folder = self.path.parent / ".trash" / "standing"
        make_private_folder(folder)
        stem = f"{self.path.stem}-{time.strftime('%Y%m%d-%H%M%S')}"
        target, n = folder / f"{stem}.md", 1
        while target.exists():
            target, n = folder / f"{stem}-{n}.md", n + 1
        atomic_write_text(target, text)
        return target

    # ------------------------------------------------------------------ internals
    def _edit(self, change) -> PinResult:
        rules: list[str] = []
        if self.write_check is not None and (problem := self.write_check()) is not None:  # only a person pins
            return PinResult(False, "read_only", self.path, self.rules(),
                             error=not_written(f"Nothing was saved to {self.path.name}", problem, for_model=False))
        try:
            with locked(self.path, self.lock_timeout):
                lines = self._text(strict=True).splitlines()
                rules = parse_rules("\n".join(lines))
                new_lines, message = change(lines, rules)
                text = "\n".join(new_lines).strip("\n")
                atomic_write_text(self.path, text + "\n" if text else "")
        except _Refused as refusal:
            return PinResult(False, refusal.code, self.path, rules, error=refusal.message)
        except StoreLockedError as exc:
            return PinResult(False, "locked", self.path, rules, error=str(exc))
        except OSError as exc:
            return self._io_error(exc, rules)
        rules = parse_rules("\n".join(new_lines))
        return PinResult(True, "ok", self.path, rules, message=message, problems=self._problems(rules))

    def _refuse(self, code: str, error: str) -> PinResult:
        return PinResult(False, code, self.path, self.rules(), error=error)

    def _io_error(self, exc: OSError, rules: list[str]) -> PinResult:
        from pi_memory.storage import write_failure

        problem = write_failure(exc, self.path)
        if problem is not None:  # the words a curated write gets (only a person writes STANDING.md)
            return PinResult(False, "read_only", self.path, rules,
                             error=f"Nothing was saved to {self.path.name}: {problem.message[0].lower()}"
                                   f"{problem.message[1:]}")
        return PinResult(False, "io_error", self.path, rules,
                         error=f"Could not read or write {self.path} ({type(exc).__name__}: {exc}). Nothing was "
                         "changed. Check that the file and its folder are writable, then retry.")


def _fits(rule: str, rules: list[str]) -> None:
    """Raise :class:`_Refused` when ``rule`` is already pinned in ``rules`` or would break a cap."""
    if rule_key(rule) in {rule_key(r) for r in rules}:
        raise _Refused("duplicate", "That instruction is already pinned; nothing was changed.")
    if len(rules) >= MAX_RULES:
        raise _Refused("too_many", f"{len(rules)} instructions are pinned, the most allowed is "
                       f"{MAX_RULES}. Nothing was pinned. Remove one first (pi-memory pin list, then "
                       "pin remove N), or merge two into one.")
    total = joined_chars([*rules, rule])
    if total > MAX_CHARS:
        raise _Refused("too_long", f"With this rule the instructions would take {total:,} of "
                       f"{MAX_CHARS:,} characters. Nothing was pinned. Shorten it, or remove or "
                       "shorten another rule first.")


class _Refused(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message
