"""Memory blocks (Letta-style, the layout of seed 003): Markdown files with YAML frontmatter.

A block is ``<folder>/<key>.md``::

    ---
    description: Information about the user
    limit: 2000
    ---

    Prefers functional programming style.

Folders: the project's ``.pi/memory-blocks/`` (the seed's location, so existing blocks load as they are) and the
global ``<data root>/blocks/``. The project folder is read only when the caller says the project is trusted
(``project_trusted``; ``runtime`` decides it as for the project's settings). A project block hides a global block
with the same key. ``description`` tells the
model what the block is for; ``limit`` (default :data:`DEFAULT_LIMIT`) caps the characters of the value (the text
after the frontmatter, surrounding blank lines stripped). Other frontmatter keys are kept as they are.

Writes (:meth:`BlockStore.update`, the ``updateMemory`` tool) only change existing blocks: ``old_text`` given
replaces its one occurrence, left out appends ``new_text`` on a new line. Where the seed cut the value at the
limit without saying so, a write that would pass it is refused with the usage and what to do (a value already
over the limit, hand-edited, may still shrink). Every new text goes through the threat and secret scanners, and
one holding a control character (``ESC``, ``NUL``: the curated stores' check,
:func:`pi_memory.curated.entries.holds_control`) is refused; so is a write whose *resulting* value holds a
threat or credential the value did not hold before (:func:`introduced`: a token or an injection put together
from pieces, each clean on its own). The write takes the curated stores' lock, re-reads the file under it and
publishes it atomically with the frontmatter text untouched. :meth:`BlockStore.create` (people: CLI, pi command)
adds a block.

Which files count (:mod:`pi_memory.blocks.paths`): keys are ASCII (letters, digits, ``-``, ``_``); a block file
that is a link leading out of its folder, or a hard link, or a project folder leading out of the project, is
skipped (:meth:`BlockStore.skipped`, for a person) and never written through, as is a link to another block
file of the same folder (one text under two keys); other links that stay inside the folder are followed. A write reads the real path it checked without following a link and replaces it by a rename
(:func:`pi_memory.blocks.paths.open_block`). A Windows device name (``con``, ``LPT1``) is refused as a new key. A new key equal to an existing one apart from case is refused (one file on macOS and Windows).

Lock files live in ``<data root>/locks/`` (``lock_dir``; :func:`pi_memory.curated.files.lock_file`: the
block's name and a hash of its real path), never beside a block: a project block is a file of the user's
repository, and a lock file there would be an untracked file in it. Global blocks follow the same rule, so one
block has one lock whatever folder it is in. Every process writing blocks of one data root shares these locks
(two data roots writing one project block do not; each re-reads the file under its own lock).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from pi_memory import safety
from pi_memory.blocks.block import DEFAULT_LIMIT, MAX_LIMIT, Block, join_file, parse_block, split_file
from pi_memory.blocks.budget import DEFAULT_BUDGET, Fitted, fit, over_budget_error
from pi_memory.blocks.paths import (
    MAX_KEY_CHARS,
    LinkSwapped,
    Skipped,
    case_twin,
    file_escape,
    folder_escape,
    key_error,
    md_names,
    open_block,
    reserved_error,
    reserved_key,
    valid_key,
)
from pi_memory.blocks.shown import MAX_DESCRIPTION, prompt_value
from pi_memory.config import DEFAULT_LOCK_TIMEOUT_S
from pi_memory.curated.entries import holds_control
from pi_memory.curated.files import StoreLockedError, atomic_write_text, locked, try_read_bytes
from pi_memory.curated.messages import not_written
from pi_memory.curated.results import preview
from pi_memory.front_matter import FrontMatterRefused
from pi_memory.storage import data_write_problem, write_failure

PROJECT_FOLDER = Path(".pi") / "memory-blocks"
GLOBAL_FOLDER = "blocks"
LOCK_FOLDER = "locks"  # in the data root: the blocks' lock files
DEFAULTS = {
    "user": "Facts about the user: name, role, preferences, how they like to work",
    "agent": "Your own role and context in this work: what you are helping with, conventions you follow",
}


@dataclass
class BlockResult:
    success: bool
    code: str
    block_key: str
    message: str | None = None
    error: str | None = None
    block: Block | None = None
    available: list[str] = field(default_factory=list)

    def to_dict(self, sanitised: bool = True) -> dict:
        data: dict = {"success": self.success, "code": self.code, "blockKey": self.block_key}
        if self.message:
            data["message"] = self.message
        if self.error:
            data["error"] = self.error
        if self.block is not None:
            data["usage"] = self.block.usage
            data["chars"], data["limit"] = self.block.chars, self.block.limit
            if not self.success:  # what the model needs to retry: the block's current text
                data["currentValue"] = prompt_value(self.block) if sanitised else self.block.value
        if self.available:
            data["availableBlocks"] = list(self.available)
        return data


def introduced(before: str, after: str) -> safety.Finding | None:
    """The first threat or credential of ``after`` (a block's value after a write) that ``before`` did not
    hold: a threat id it had no hit of, a credential value it did not contain. Text a person put there by hand
    does not block every later write (it is blocked or redacted in the prompt already); a credential or
    instruction put together from pieces written one at a time is caught."""
    old_threats = {f.id for f in safety.scan_threats(before)}
    for finding in safety.scan_threats(after):
        if finding.id not in old_threats:
            return finding
    old_secrets = {(s.id, before[s.start:s.end]) for s in safety.secret_spans(before)}
    for s in safety.secret_spans(after):
        if (s.id, after[s.start:s.end]) not in old_secrets:
            return safety.Finding(s.id, "secret", (s.start, s.end))
    return None


class BlockStore:
    """The blocks of one project (``project_root``, may be ``None``) and the global folder ``global_dir``.

    ``project_trusted``: whether the project folder may be read (the composition root decides it with the rule
    project settings follow, ``pi-memory trust``): a cloned repository's ``.pi/memory-blocks/`` must not reach a
    prompt, or hide the user's own global blocks, before the user said so. Untrusted, the project folder is
    neither read nor written; :meth:`withheld` lists its files for a person."""

    def __init__(self, global_dir: Path | str, project_root: Path | str | None = None,
                 lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S, *, project_trusted: bool = False,
                 lock_dir: Path | str | None = None, write_check: Callable[[], object] | None = None,
                 budget: int = DEFAULT_BUDGET):
        self.global_dir = Path(global_dir)
        self.budget = budget  # characters of all blocks together in one prompt (blocksCharBudget: budget.py)
        # () -> StorageProblem | None: why no write may happen now (the data folder open for reading only), asked
        # before a write takes its lock; set from the settings by from_settings
        self.write_check = write_check
        # the data root's locks folder (the global folder is <data root>/blocks)
        self.lock_dir = Path(lock_dir) if lock_dir is not None else self.global_dir.parent / LOCK_FOLDER
        self.project_root = Path(project_root) if project_root is not None else None
        self.project_dir = self.project_root / PROJECT_FOLDER if self.project_root is not None else None
        self.lock_timeout = lock_timeout
        self.project_trusted = project_trusted

    @classmethod
    def from_settings(cls, settings, project_root: Path | str | None, project_trusted: bool) -> BlockStore:
        """The blocks of ``settings``' data root and ``project_root``; a write is refused while the data root
        cannot be written (:func:`pi_memory.storage.data_write_problem`): its locks live there, and a folder
        opened for reading only gets no write, also in its subfolders or a project's block folder."""
        data = Path(settings.data_dir)
        return cls(data / GLOBAL_FOLDER, project_root, settings.lock_timeout, project_trusted=project_trusted,
                   lock_dir=data / LOCK_FOLDER, write_check=partial(data_write_problem, data),
                   budget=settings.blocks_char_budget)

    # ------------------------------------------------------------------ read
    def folders(self) -> list[tuple[str, Path]]:
        """The folders read: the project's (only when trusted), then the global one."""
        pairs = [("project", self.project_dir)] if self.project_dir is not None and self.project_trusted else []
        return [*pairs, ("global", self.global_dir)]

    def withheld(self) -> list[Path]:
        """The block files of an untrusted project's folder, which are not read (names only, for a person)."""
        if self.project_trusted or self.project_dir is None or not self.project_dir.is_dir():
            return []
        return [p for p in sorted(self.project_dir.glob("*.md")) if valid_key(p.stem) and p.is_file()]

    def all_blocks(self) -> list[Block]:
        """Every block file, project first, keys sorted; a global block hidden by a project one is marked. A file
        (or project folder) that is a link leading out of its folder is left out (:meth:`skipped`)."""
        return self._scan()[0]

    def skipped(self) -> list[Skipped]:
        """The block files, and project folder, not read because a link leads out of their folder (for a
        person: ``blocks list``, ``status``; :mod:`pi_memory.blocks.paths`)."""
        return self._scan()[1]

    def _scan(self) -> tuple[list[Block], list[Skipped]]:
        found: list[Block] = []
        skipped: list[Skipped] = []
        keys: set[str] = set()
        for scope, folder in self.folders():
            if not folder.is_dir():
                continue
            if (away := folder_escape(scope, folder, self.project_root)) is not None:
                skipped.append(away)
                continue
            for path in sorted(folder.glob("*.md")):
                key = path.stem
                if not valid_key(key):
                    continue
                if (away := file_escape(scope, path, folder)) is not None:  # a link out, or a hard link
                    skipped.append(away)
                    continue
                if not path.is_file():
                    continue
                raw = try_read_bytes(path)
                if raw is None or isinstance(raw, OSError):
                    continue
                try:
                    block = parse_block(key, scope, path, raw.decode("utf-8", errors="replace"))
                except FrontMatterRefused as exc:  # YAML aliases, a frontmatter past its length: that file only
                    skipped.append(Skipped(scope, path, path, folder, key=key, refused=str(exc)))
                    continue
                block.shadowed = key in keys
                keys.add(key)
                found.append(block)
        for block in found:
            if (twin := case_twin(block.key, [b.key for b in found if b.scope == block.scope])) is not None:
                block.problems.append(f"its key differs from block {twin!r} only by case: on macOS and Windows "
                                      "the two are one file; rename one of them")
        return found, skipped

    def blocks(self) -> list[Block]:
        """The blocks in effect (no hidden globals)."""
        return [b for b in self.all_blocks() if not b.shadowed]

    def in_prompt(self, blocks: list[Block] | None = None) -> Fitted:
        """Which of ``blocks`` (default: :meth:`blocks`) a prompt shows within :attr:`budget`, and which it
        leaves out (:func:`pi_memory.blocks.budget.fit`)."""
        return fit(self.blocks() if blocks is None else blocks, self.budget)

    def get(self, key: str) -> Block | None:
        return next((b for b in self.blocks() if b.key == key), None)

    def ensure_defaults(self) -> list[Block]:
        """Create the default ``user`` and ``agent`` blocks in the global folder when no block exists anywhere
        (a host calls this at session start). Returns the blocks created."""
        if self.all_blocks():
            return []
        made = []
        for key, description in DEFAULTS.items():
            result = self.create(key, description, scope="global")
            if result.success and result.block:
                made.append(result.block)
        return made

    def default_preview(self) -> list[Block]:
        """The blocks a session would see: the existing ones, or the defaults :meth:`ensure_defaults` would
        create (not written; marked ``default``)."""
        return self.blocks() or self._defaults()

    def listed(self) -> list[Block]:
        """What ``blocks list`` shows: every block file (hidden globals marked), or, when there is none, the
        defaults a session start creates (marked ``default``): the blocks ``preview-context`` shows."""
        return self.all_blocks() or self._defaults()

    def _defaults(self) -> list[Block]:
        return [Block(k, "global", self.global_dir / f"{k}.md", description=d, default=True)
                for k, d in DEFAULTS.items()]

    # ----------------------------------------------------------------- write
    def create(self, key: str, description: str = "", limit: int = DEFAULT_LIMIT, scope: str = "global",
               value: str = "") -> BlockResult:
        if not valid_key(key):
            key = key if isinstance(key, str) else ""
            shown = safety.redact(key)  # an error message never repeats a credential
            return BlockResult(False, "invalid_key", shown, error=key_error(safety.quoted_name(key)))
        secrets = safety.scan_secrets(key)  # a key is a file name and is shown in every prompt: no credential
        if secrets:
            found = secrets[0].id
            return BlockResult(False, "secret", safety.redact(key),
                               error=f"Not created: the block key is a credential ({found}), and a key is the "
                               "block's file name, shown in every session's prompt. Name the block for what it "
                               "holds (e.g. deploy-notes).")
        if reserved_key(key):
            return BlockResult(False, "reserved_key", key, error=reserved_error(key))
        if scope not in ("global", "project"):
            return BlockResult(False, "invalid_scope", key, error=f"Unknown scope {scope!r}; use global or project.")
        if scope == "project" and self.project_dir is None:
            return BlockResult(False, "no_project", key, error="There is no project here (no git repository "
                               "above this folder), so a project block has nowhere to go. Use --global, or run "
                               "the command inside the project.")
        if scope == "project" and not self.project_trusted:
            return BlockResult(False, "untrusted", key, error=f"Not created: the project {self.project_root} is "
                               "not trusted, so its .pi/memory-blocks/ is not read into any prompt (a cloned "
                               "repository must not add to your prompts on its own). Run `pi-memory trust` in "
                               "the project first, or create a global block (--scope global).")
        if not isinstance(limit, int) or not 0 < limit <= MAX_LIMIT:
            return BlockResult(False, "invalid_limit", key, error=f"The limit must be a whole number from 1 to "
                               f"{MAX_LIMIT:,} characters, not {limit!r}.")
        if limit > self.budget:
            return BlockResult(False, "over_budget", key, error=over_budget_error(limit, self.budget))
        description = " ".join((description or "").split())
        if len(description) > MAX_DESCRIPTION:
            return BlockResult(False, "description_too_long", key, error=f"The description is "
                               f"{len(description):,} characters, over the maximum of {MAX_DESCRIPTION}: it goes "
                               "into every prompt. Nothing was created; say in a sentence what the block is for, "
                               "and put the details in the block's text.")
        value = (value or "").replace("\r\n", "\n")
        for what, text in (("description", description), ("initial text", value)):
            if holds_control(text):
                return BlockResult(False, "invalid_content", key, error=f"The {what} holds control characters "
                                   "(terminal escape codes or similar), which can hide or change text on a screen "
                                   "showing it. Nothing was created. Remove them and use plain text.")
            finding = safety.check_write(text) if text else None
            if finding is not None:
                return BlockResult(False, "secret" if finding.category == "secret" else "threat", key,
                                   error=safety.refusal_message(finding, "memory block"))
        if len(value) > limit:
            return BlockResult(False, "over_limit", key, error=f"The initial text is {len(value):,} characters, "
                               f"over the block's limit of {limit:,}. Shorten it or raise the limit.")
        import yaml

        folder = self.project_dir if scope == "project" else self.global_dir
        assert folder is not None
        path = folder / f"{key}.md"
        if (refused := self._clash(key, scope, path)) is not None:
            return refused
        if (problem := self._write_problem()) is not None:  # a person creates blocks: what to do, no "retry"
            return BlockResult(False, "read_only", key, error=not_written(f"Block {key!r} was not created at {path}",
                                                                          problem, for_model=False))
        fm = yaml.safe_dump({"description": description, "limit": limit}, sort_keys=False,
                            allow_unicode=True, width=10_000)
        try:
            with locked(path, self.lock_timeout, self.lock_dir):
                if (refused := self._clash(key, scope, path)) is not None:  # again under the lock
                    return refused
                atomic_write_text(path, join_file(fm, value.strip()), follow_links=False)  # a link put there: replaced
        except StoreLockedError as exc:
            return BlockResult(False, "locked", key, error=str(exc))
        except OSError as exc:
            if (problem := write_failure(exc, path, "folder")) is not None:
                return BlockResult(False, "read_only", key, error=f"Block {key!r} was not created at {path}: "
                                   f"{problem.message[0].lower()}{problem.message[1:]}")
            return BlockResult(False, "io_error", key, error=f"Could not write {path} ({exc.strerror or exc}). "
                               "Nothing was created; check that the folder is writable.")
        block = parse_block(key, scope, path, join_file(fm, value.strip()))
        return BlockResult(True, "ok", key, message=f"Created block {key!r} in {path}.", block=block)

    def _clash(self, key: str, scope: str, path: Path) -> BlockResult | None:
        """Why ``key`` cannot be created at ``path``: a file or link of that name is there (a dangling link
        would send the write to its target), the project folder leads out of the project, or a block's key
        differs only by case (one file on macOS and Windows; in the other scope, two blocks where one meant to
        hide the other)."""
        folder = path.parent
        if (away := folder_escape(scope, folder, self.project_root)) is not None:
            return BlockResult(False, "link_outside", key, error=f"Not created: {away.message}")
        if path.is_symlink() and (away := file_escape(scope, path, folder)) is not None:
            return BlockResult(False, "link_outside", key, error=f"Not created: {path} is a link to {away.target}, "
                               f"outside the blocks folder {away.inside}, and no block is written through such a "
                               "link. Delete the link first, or pick another key.")
        if path.is_symlink() or path.exists():
            return BlockResult(False, "exists", key, error=f"A block {key!r} already exists at {path}; nothing "
                               "was changed. Edit that file, or pick another key.")
        here = [k for k in md_names(folder) if valid_key(k)]
        if (twin := case_twin(key, here)) is not None:
            return BlockResult(False, "exists", key, error=f"Not created: block {twin!r} already exists in "
                               f"{folder}, and {key!r} differs from it only by case: on macOS and Windows the "
                               f"two are one file. Use {twin!r}, or pick a key that differs in more than case.")
        other = [b.key for b in self.all_blocks() if b.scope != scope]
        if (twin := case_twin(key, other)) is not None:
            which = "global" if scope == "project" else "project"
            hint = (f"To have the project block take the global one's place, create it as {twin!r}; otherwise "
                    "pick" if scope == "project" else "Pick")
            return BlockResult(False, "exists", key, error=f"Not created: there is a {which} block {twin!r}, and "
                               f"{key!r} differs from it only by case, so both would show in every prompt under "
                               f"nearly the same name. {hint} a key that differs in more than case.")
        return None

    def update(self, key: str, new_text: str, old_text: str | None = None) -> BlockResult:
        """Replace the one occurrence of ``old_text`` with ``new_text``, or append ``new_text`` when
        ``old_text`` is ``None`` (the ``updateMemory`` tool)."""
        block = self.get(key) if isinstance(key, str) else None
        if block is None:
            return self._unknown(key)
        if (problem := self._write_problem()) is not None:  # before any other check: retrying cannot help
            return BlockResult(False, "read_only", key, block=block,
                               error=not_written(f"Nothing was saved to block {key!r}", problem))
        new_text = (new_text or "").replace("\r\n", "\n")
        if old_text == "":  # an empty oldText is the same as leaving it out
            old_text = None
        if not new_text.strip() and old_text is None:
            return BlockResult(False, "empty", key, block=block, error="newText is empty, so there is nothing to "
                               "append. Nothing was changed. To delete text, pass it as oldText with an empty "
                               "newText.")
        if holds_control(new_text):
            return BlockResult(False, "invalid_content", key, block=block, error="newText holds control characters "
                               "(terminal escape codes or similar), which can hide text from a person reading the "
                               "block. Nothing was changed. Remove them and send plain text.")
        finding = safety.check_write(new_text) if new_text.strip() else None
        if finding is not None:
            return BlockResult(False, "secret" if finding.category == "secret" else "threat", key, block=block,
                               error=safety.refusal_message(finding, "memory block"))
        try:
            with locked(block.path, self.lock_timeout, self.lock_dir):
                return self._update_locked(block, new_text, old_text)
        except StoreLockedError as exc:
            return BlockResult(False, "locked", key, block=block, error=str(exc))
        except OSError as exc:
            if (problem := write_failure(exc, block.path, "folder")) is not None:
                return BlockResult(False, "read_only", key, block=block, error=f"Nothing was saved to block {key!r} "
                                   f"({block.path}): {problem.message[0].lower()}{problem.message[1:]}")
            return BlockResult(False, "io_error", key, block=block, error=f"Could not read or write {block.path} "
                               f"({type(exc).__name__}: {exc}). Nothing was changed. Check that the file is "
                               "writable, then retry.")

    def _write_problem(self):
        return self.write_check() if self.write_check is not None else None

    def _unknown(self, key: object, link: bool = False) -> BlockResult:
        """The refusal for a key no block in effect has: a file whose link leads out of its folder is named as
        such (without where it leads: this goes to the model), a key differing only by case gets the right
        spelling."""
        available = [b.key for b in self.blocks()]
        shown = _shown_key(key)
        away = next((s for s in self.skipped() if s.key == key), None)
        if away is not None and away.refused:
            return BlockResult(False, away.code, shown, available=available, error=(
                f"Memory block {shown!r} is not available: {away.refused}, so the file is neither read nor "
                "written. Nothing was changed. Tell the user; `pi-memory blocks list` shows them what to fix."))
        if away is not None and away.alias:
            return BlockResult(False, "link_outside", shown, available=available, error=(
                f"Memory block {shown!r} is not available: its file is a link to block {away.alias!r}, the same "
                f"text under another name. Nothing was changed. Change {away.alias!r} instead."))
        if link or away is not None:
            what = ("a link to a file outside the blocks folder" if away is not None and not away.links else
                    "a link, another name of a file that may lie outside the blocks folder")
            return BlockResult(False, "link_outside", shown, available=available, error=(
                f"Memory block {shown!r} is not available: its file is {what}, so it is neither read nor written. "
                "Nothing was changed. Tell the user; `pi-memory blocks list` shows them what to fix."))
        twin = case_twin(str(key), available) if isinstance(key, str) else None
        spelled = f" Block keys are case-sensitive: did you mean {twin!r}?" if twin else ""
        return BlockResult(False, "unknown_block", shown, available=available,
                           error=f"There is no memory block {shown!r}. Nothing was changed.{spelled} Use one of "
                           f"the existing blocks ({', '.join(available) or 'none yet'}); you cannot create "
                           "blocks, the user can.")

    def _update_locked(self, block: Block, new_text: str, old_text: str | None) -> BlockResult:
        folder = self.project_dir if block.scope == "project" else self.global_dir
        assert folder is not None
        if folder_escape(block.scope, folder, self.project_root) is not None:  # made a link since it was read
            return self._unknown(block.key)
        try:  # the real path once, opened without following a link: one swapped in later is not written through
            target, raw = open_block(block.path, folder)
        except LinkSwapped:
            return self._unknown(block.key, link=True)
        if raw is None:
            raise FileNotFoundError(block.path)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return BlockResult(False, "not_utf8", block.key, block=block, error=(
                f"{block.path} is not valid UTF-8 text (byte {exc.start}), so writing it back could damage it. "
                "Nothing was changed. Ask the user to convert the file to UTF-8."))
        fm, _ = split_file(text)
        try:
            fresh = parse_block(block.key, block.scope, block.path, text)
        except FrontMatterRefused:  # edited so since it was read
            return self._unknown(block.key)
        value, name = fresh.value, f"memory block {block.key!r}"
        if old_text is None:
            new_value = f"{value}\n{new_text.strip()}" if value else new_text.strip()
            verb = "Appended to"
        else:
            count = value.count(old_text)
            if count == 0:
                return BlockResult(False, "no_match", block.key, block=fresh, error=(
                    f"{name} does not contain {preview(old_text)!r}. Nothing was changed. Matching is exact and "
                    "case-sensitive: copy a short piece of currentValue and retry, or leave oldText out to "
                    "append."))
            if count > 1:
                return BlockResult(False, "ambiguous", block.key, block=fresh, error=(
                    f"{preview(old_text)!r} appears {count} times in {name}, so it is unclear which one you mean. "
                    "Nothing was changed. Retry with a longer piece of text that appears only once."))
            new_value = value.replace(old_text, new_text, 1).strip("\n")
            verb = "Updated"
        if (finding := introduced(value, new_value)) is not None:
            return BlockResult(False, "secret" if finding.category == "secret" else "threat", block.key,
                               block=fresh, error=safety.refusal_message(finding, "memory block") + (
                                   " The check covers the block's whole text after the change, not only "
                                   "newText: pieces that together make a credential or an instruction are "
                                   "refused too."))
        if len(new_value) > fresh.limit and len(new_value) > len(value):
            return BlockResult(False, "over_limit", block.key, block=fresh, error=(
                f"{name} would hold {len(new_value):,} of its {fresh.limit:,} chars (now {fresh.usage}). Nothing "
                "was changed. Make room first: replace stale or wordy text with a shorter version (oldText + "
                "newText), then retry with a shorter newText."))
        if new_value != value:
            atomic_write_text(target, join_file(fm, new_value), follow_links=False)
        fresh.value = new_value
        return BlockResult(True, "ok", block.key, block=fresh,
                           message=f"{verb} {name} ({fresh.usage}). It shows in the prompt from the next run on; "
                           "this change is complete, do not repeat it.")


def _shown_key(key: object) -> str:
    """A key no block has, as a refusal names it: redacted, and cut past the longest key a block can have (a 1 MB
    ``blockKey`` came back twice in the answer, 2 MB in the model's context)."""
    text = str(key)
    if len(text) <= MAX_KEY_CHARS:
        return safety.redact(text)
    return f"{safety.redact(text[:MAX_KEY_CHARS])}… ({len(text):,} characters)"
