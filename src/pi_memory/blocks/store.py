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
:func:`pi_memory.curated.entries.holds_control`) is refused;
the write takes the curated stores' lock, re-reads the file under it and publishes it atomically with the
frontmatter text untouched. :meth:`BlockStore.create` (people: CLI, pi command) adds a block.

Lock files live in ``<data root>/locks/`` (``lock_dir``; :func:`pi_memory.curated.files.lock_file`: the
block's name and a hash of its real path), never beside a block: a project block is a file of the user's
repository, and a lock file there would be an untracked file in it. Global blocks follow the same rule, so one
block has one lock whatever folder it is in. Every process writing blocks of one data root shares these locks
(two data roots writing one project block do not; each re-reads the file under its own lock).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from pi_memory import safety
from pi_memory.config import DEFAULT_LOCK_TIMEOUT_S
from pi_memory.curated.entries import holds_control, printable, usage
from pi_memory.curated.files import StoreLockedError, atomic_write_text, locked, try_read_bytes
from pi_memory.curated.results import preview
from pi_memory.storage import write_failure

DEFAULT_LIMIT = 2000
MAX_LIMIT = 100_000
MAX_DESCRIPTION = 200  # characters of a description (it goes into every prompt, like the block's text)
PROJECT_FOLDER = Path(".pi") / "memory-blocks"
GLOBAL_FOLDER = "blocks"
LOCK_FOLDER = "locks"  # in the data root: the blocks' lock files
KEY_RULE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
DEFAULTS = {
    "user": "Facts about the user: name, role, preferences, how they like to work",
    "agent": "Your own role and context in this work: what you are helping with, conventions you follow",
}
_FENCE = "---"


@dataclass
class Block:
    key: str
    scope: str  # "project" | "global"
    path: Path
    description: str = ""
    limit: int = DEFAULT_LIMIT
    value: str = ""
    problems: list[str] = field(default_factory=list)  # frontmatter problems found on load
    shadowed: bool = False  # a project block with the same key hides this global one
    default: bool = False  # a default block no file holds yet: a session start creates it (default_preview)

    @property
    def chars(self) -> int:
        return len(self.value)

    @property
    def usage(self) -> str:
        return usage(self.chars, self.limit)

    def to_dict(self, with_value: bool = True) -> dict:
        data = {"key": self.key, "scope": self.scope, "file": str(self.path), "description": self.description,
                "limit": self.limit, "chars": self.chars, "usage": self.usage}
        if with_value:
            data["value"] = self.value
        if self.problems:
            data["problems"] = list(self.problems)
        if self.shadowed:
            data["shadowed"] = True
        if self.default:
            data["default"] = True
        return data


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
                data["currentValue"] = shown_value(self.block) if sanitised else self.block.value
        if self.available:
            data["availableBlocks"] = list(self.available)
        return data


def shown_value(block: Block) -> str:
    """What a model may see of a block: a blocked marker for a hostile value, else the value with secrets
    redacted and control characters (ESC, NUL, other C0/C1 but tab and newline) shown as ``\\xNN`` escapes,
    as ``pi-memory read`` shows them, so a hand-edited escape sequence cannot hide text. Scans are cached by
    text: a block unchanged since the last run costs a dictionary lookup."""
    return _shown(block.key, str(block.path), block.value)


def prompt_value(block: Block) -> str:
    """:func:`shown_value` counted against the block's limit: a hand-edited value over it is cut there, with
    a note saying how much is left out (the file's own ``limit`` is capped at :data:`MAX_LIMIT` on read)."""
    shown = shown_value(block)
    if block.chars <= block.limit or shown.startswith("[BLOCKED: "):
        return shown
    return (f"{shown[:block.limit]}\n[... {block.chars - block.limit:,} more characters not shown: the block is "
            f"over its limit of {block.limit:,}; shorten it (oldText + newText) or ask the user to.]")


def shown_description(block: Block) -> str:
    """What a prompt holds of a block's description: ``""`` for none, a withheld note for a hostile one, else
    redacted with control characters escaped, cut at :data:`MAX_DESCRIPTION` characters with ``…`` (a
    hand-written file's description has no other bound)."""
    return _description(block.description) if block.description else ""


@functools.lru_cache(maxsize=256)
def _description(text: str) -> str:
    if safety.scan_threats(text):
        return "[description withheld: it matched a threat pattern; the user can fix it in the file]"
    shown = text if len(text) <= MAX_DESCRIPTION else text[:MAX_DESCRIPTION] + "…"
    return printable(safety.redact(shown))


@functools.lru_cache(maxsize=256)
def _shown(key: str, path: str, value: str) -> str:
    threats = safety.scan_threats(value)
    if threats:
        ids = list(dict.fromkeys(f.id for f in threats))
        return (f"[BLOCKED: memory block {key!r} contains threat pattern(s): {', '.join(ids)}. It was kept out "
                f"of the prompt; the user can fix it in {path}.]")
    return printable(safety.redact(value))


def split_file(text: str) -> tuple[str | None, str]:
    """``(frontmatter text or None, body)`` of a block file (python-frontmatter's YAML handler, imported only
    for a file that starts with a ``---`` line: the host hooks read blocks on a tight time budget)."""
    text = text.lstrip("\ufeff")
    if text.startswith(_FENCE):
        import frontmatter

        handler = frontmatter.YAMLHandler()
        if handler.detect(text):
            try:
                fm, body = handler.split(text)
                return fm, body
            except ValueError:
                pass
    return None, text


def join_file(fm: str | None, value: str) -> str:
    head = f"---\n{fm.strip(chr(10))}\n---\n\n" if fm is not None else ""
    return head + (value + "\n" if value else "")


def parse_block(key: str, scope: str, path: Path, text: str) -> Block:
    fm, body = split_file(text)
    block = Block(key, scope, path, value=body.strip("\r\n").replace("\r\n", "\n"))
    if fm is None:
        return block
    meta = _frontmatter(fm)
    if isinstance(meta, str):
        block.problems.append(f"frontmatter is not valid YAML ({meta}); defaults used")
        return block
    if not isinstance(meta, dict):
        block.problems.append("frontmatter is not a mapping; defaults used")
        return block
    description = meta.get("description")
    if description is not None:
        block.description = " ".join(str(description).split())
    limit = meta.get("limit")
    if limit is not None:
        if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit <= MAX_LIMIT:
            block.limit = limit
        else:
            block.problems.append(f"limit {limit!r} is not a whole number from 1 to {MAX_LIMIT:,}; "
                                  f"{DEFAULT_LIMIT:,} used")
    return block


@functools.lru_cache(maxsize=256)
def _frontmatter(fm: str) -> object:
    """The parsed frontmatter (cached by its text: a block is read every run), or the parser's first error
    line as a string. libyaml's safe loader when present."""
    import yaml

    try:
        return yaml.load(fm, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}  # noqa: S506 - safe
    except yaml.YAMLError as exc:
        return str(exc).splitlines()[0]


class BlockStore:
    """The blocks of one project (``project_root``, may be ``None``) and the global folder ``global_dir``.

    ``project_trusted``: whether the project folder may be read (the composition root decides it with the rule
    project settings follow, ``pi-memory trust``): a cloned repository's ``.pi/memory-blocks/`` must not reach a
    prompt, or hide the user's own global blocks, before the user said so. Untrusted, the project folder is
    neither read nor written; :meth:`withheld` lists its files for a person."""

    def __init__(self, global_dir: Path | str, project_root: Path | str | None = None,
                 lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S, *, project_trusted: bool = False,
                 lock_dir: Path | str | None = None):
        self.global_dir = Path(global_dir)
        # the data root's locks folder (the global folder is <data root>/blocks)
        self.lock_dir = Path(lock_dir) if lock_dir is not None else self.global_dir.parent / LOCK_FOLDER
        self.project_root = Path(project_root) if project_root is not None else None
        self.project_dir = self.project_root / PROJECT_FOLDER if self.project_root is not None else None
        self.lock_timeout = lock_timeout
        self.project_trusted = project_trusted

    @classmethod
    def from_settings(cls, settings, project_root: Path | str | None, project_trusted: bool) -> BlockStore:
        return cls(Path(settings.data_dir) / GLOBAL_FOLDER, project_root, settings.lock_timeout,
                   project_trusted=project_trusted, lock_dir=Path(settings.data_dir) / LOCK_FOLDER)

    # ------------------------------------------------------------------ read
    def folders(self) -> list[tuple[str, Path]]:
        """The folders read: the project's (only when trusted), then the global one."""
        pairs = [("project", self.project_dir)] if self.project_dir is not None and self.project_trusted else []
        return [*pairs, ("global", self.global_dir)]

    def withheld(self) -> list[Path]:
        """The block files of an untrusted project's folder, which are not read (names only, for a person)."""
        if self.project_trusted or self.project_dir is None or not self.project_dir.is_dir():
            return []
        return [p for p in sorted(self.project_dir.glob("*.md")) if KEY_RULE.match(p.stem) and p.is_file()]

    def all_blocks(self) -> list[Block]:
        """Every block file, project first, keys sorted; a global block hidden by a project one is marked."""
        found: list[Block] = []
        keys: set[str] = set()
        for scope, folder in self.folders():
            for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
                key = path.stem
                if not KEY_RULE.match(key) or not path.is_file():
                    continue
                raw = try_read_bytes(path)
                if raw is None or isinstance(raw, OSError):
                    continue
                block = parse_block(key, scope, path, raw.decode("utf-8", errors="replace"))
                block.shadowed = key in keys
                keys.add(key)
                found.append(block)
        return found

    def blocks(self) -> list[Block]:
        """The blocks in effect (no hidden globals)."""
        return [b for b in self.all_blocks() if not b.shadowed]

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
        if not KEY_RULE.match(key or ""):
            shown = safety.redact(key or "")  # an error message never repeats a credential
            return BlockResult(False, "invalid_key", shown, error=f"{safety.quoted_name(key or '')} is not a usable block key: use 1-64 "
                               "letters, digits, '-' or '_', starting with a letter or digit (it is the file name).")
        secrets = safety.scan_secrets(key)  # a key is a file name and is shown in every prompt: no credential
        if secrets:
            found = secrets[0].id
            return BlockResult(False, "secret", safety.redact(key),
                               error=f"Not created: the block key is a credential ({found}), and a key is the "
                               "block's file name, shown in every session's prompt. Name the block for what it "
                               "holds (e.g. deploy-notes).")
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
        path = folder / f"{key}.md"
        fm = yaml.safe_dump({"description": description, "limit": limit}, sort_keys=False,
                            allow_unicode=True, width=10_000)
        try:
            with locked(path, self.lock_timeout, self.lock_dir):
                if path.exists():
                    return BlockResult(False, "exists", key, error=f"A block {key!r} already exists at {path}; "
                                       "nothing was changed. Edit that file, or pick another key.")
                atomic_write_text(path, join_file(fm, value.strip()))
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

    def update(self, key: str, new_text: str, old_text: str | None = None) -> BlockResult:
        """Replace the one occurrence of ``old_text`` with ``new_text``, or append ``new_text`` when
        ``old_text`` is ``None`` (the ``updateMemory`` tool)."""
        block = self.get(key) if isinstance(key, str) else None
        if block is None:
            available = [b.key for b in self.blocks()]
            shown = safety.redact(str(key))
            return BlockResult(False, "unknown_block", shown, available=available,
                               error=f"There is no memory block {shown!r}. Nothing was changed. Use one of the "
                               f"existing blocks ({', '.join(available) or 'none yet'}); you cannot create "
                               "blocks, the user can.")
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

    def _update_locked(self, block: Block, new_text: str, old_text: str | None) -> BlockResult:
        raw = try_read_bytes(block.path)
        if raw is None or isinstance(raw, OSError):
            raise raw if isinstance(raw, OSError) else FileNotFoundError(block.path)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return BlockResult(False, "not_utf8", block.key, block=block, error=(
                f"{block.path} is not valid UTF-8 text (byte {exc.start}), so writing it back could damage it. "
                "Nothing was changed. Ask the user to convert the file to UTF-8."))
        fm, _ = split_file(text)
        fresh = parse_block(block.key, block.scope, block.path, text)
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
        if len(new_value) > fresh.limit and len(new_value) > len(value):
            return BlockResult(False, "over_limit", block.key, block=fresh, error=(
                f"{name} would hold {len(new_value):,} of its {fresh.limit:,} chars (now {fresh.usage}). Nothing "
                "was changed. Make room first: replace stale or wordy text with a shorter version (oldText + "
                "newText), then retry with a shorter newText."))
        if new_value != value:
            atomic_write_text(block.path, join_file(fm, new_value))
        fresh.value = new_value
        return BlockResult(True, "ok", block.key, block=fresh,
                           message=f"{verb} {name} ({fresh.usage}). It shows in the prompt from the next run on; "
                           "this change is complete, do not repeat it.")
