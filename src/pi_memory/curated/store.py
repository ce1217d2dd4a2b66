"""``MemoryStore``: the two curated Markdown stores (``memory`` -> MEMORY.md, ``user`` -> USER.md).

Every mutation runs the same way: validate and scan the new content (before any lock), take the file's
cross-process lock, re-read the file from disk, refuse if it has drifted (backup first), apply the change to the
fresh entries, check the budget, publish atomically, release. Live lists (what ``entries()`` returns) are
refreshed from what was written. Nothing is cached across mutations, so two processes never overwrite each
other's acknowledged writes (a read that finds the bytes it read last time reuses their parse). The rules of one
batch over the entries (what an operation may hold, what it matches, merges or skips) are :mod:`.edits`; this
class is the transaction around them.

A file store's write says what bytes it replaced and published (:class:`.layout.Published`: the file's own layout,
when it was not the store's format); a learning undo can ask for those bytes back (``apply(..., restore=)``).

Per-turn loop guard (:mod:`.retry_guard`): a host calls :meth:`MemoryStore.begin_turn` when an agent run starts
(one user prompt). After ``max_failures_per_turn`` (3) failures of the same call in that run, that call returns
a terminal ``retry_limit`` result without touching the file; any other call is carried out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pi_memory.config import DEFAULT_LOCK_TIMEOUT_S, DEFAULT_MEMORY_CHAR_LIMIT, DEFAULT_USER_CHAR_LIMIT
from pi_memory.curated import edits, team_client
from pi_memory.curated import entries as fmt
from pi_memory.curated import messages as msg
from pi_memory.curated.edits import Refused
from pi_memory.curated.entries import FAILURE_CATEGORIES, FailureCategory, failure_entry  # noqa: F401
from pi_memory.curated.files import (
    StoreLockedError,
    atomic_write_text,
    backup,
    locked,
    read_bytes,
    try_read_bytes,
)
from pi_memory.curated.give_back import GiveBack
from pi_memory.curated.layout import Published, Restore, sha256
from pi_memory.curated.operations import Operation
from pi_memory.curated.results import MemoryResult
from pi_memory.curated.retry_guard import RetryGuard, call_key, invalid_key
from pi_memory.curated.sanitise import sanitise_entry

TARGET_FILES = {"memory": "MEMORY.md", "user": "USER.md", "failure": "FAILURES.md"}
PROJECT_FILE = "MEMORY.md"
TARGETS = ("memory", "user", "project", "failure")
LIMIT_SETTINGS = {"memory": "memoryCharLimit", "user": "userCharLimit", "project": "projectCharLimit",
                  "failure": "failureCharLimit"}  # the setting holding each store's limit
Target = Literal["memory", "user", "project", "failure"]

log = logging.getLogger(__name__)


class MemoryStore:
    """The curated stores under ``dir``.

    Targets: ``memory`` (MEMORY.md), ``user`` (USER.md), ``failure`` (FAILURES.md: lessons, each entry
    ``[category] text — Failed: reason``) and, when ``project_root`` is given, ``project``
    (``projects/<name>-<id>/MEMORY.md``, one per git repository root; see :mod:`pi_memory.project`).

    ``*_char_limit``: budget in characters of all entries joined with ``\\n§\\n`` (failure defaults to twice
    the memory limit, as pi-hermes-memory does); ``enforce_limits=False`` (policy mode) lets a store pass it.
    ``lock_timeout``: seconds to wait for another writer before refusing with ``code="locked"``.
    ``on_change(target, entries)`` is called after every successful write (the search index
    mirrors the stores through it; an exception there is logged, never fails the write). All public methods return a
    :class:`MemoryResult`; only programming errors raise.
    """

    keeps_bytes = True  # a file store: its writes report the bytes they replaced (a subclass keeping rows: False)

    def __init__(
        self,
        dir: Path | str,
        memory_char_limit: int = DEFAULT_MEMORY_CHAR_LIMIT,
        user_char_limit: int = DEFAULT_USER_CHAR_LIMIT,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
        max_failures_per_turn: int = 3,
        project_root: Path | str | None = None,
        project_char_limit: int = DEFAULT_MEMORY_CHAR_LIMIT,
        failure_char_limit: int | None = None,
        on_change: Callable[[str, list[str]], None] | None = None,
        on_overflow: Callable[[MemoryStore, str, str, MemoryResult], MemoryResult] | None = None,
        enforce_limits: bool = True,
        team_project=None,
    ):
        self.dir = Path(dir).expanduser()
        self.limits = {
            "memory": memory_char_limit,
            "user": user_char_limit,
            "failure": failure_char_limit or 2 * memory_char_limit,
            "project": project_char_limit,
        }
        self.files = {t: self.dir / name for t, name in TARGET_FILES.items()}
        self.names = dict(TARGET_FILES)
        self.project_root: Path | None = None
        self.project_id: str | None = None
        self.project_name: str | None = None
        if project_root is not None:
            from pi_memory.project import project_folder, project_id, project_name

            self.project_root = Path(project_root)
            self.project_id, self.project_name = project_id(self.project_root), project_name(self.project_root)
            folder = project_folder(self.project_root)
            self.files["project"] = self.dir / "projects" / folder / PROJECT_FILE
            self.names["project"] = f"projects/{folder}/{PROJECT_FILE}"
        # teamProjectStore: the project target is a team server's shared store (a
        # :class:`pi_memory.curated.team_client.TeamProjectClient`); the server applies this class's rules
        self.team_project = team_project if "project" in self.files else None
        if self.team_project is not None:
            self.names["project"] = self.team_project.name
        self.lock_timeout = lock_timeout
        self.on_change = on_change
        self.write_check: Callable[[], object] | None = None  # () -> StorageProblem | None: see write_refused
        # Called with (store, target, content, refusal) when an add is refused as over the limit; returns the
        # result to give instead (:mod:`pi_memory.learning.consolidate`: fifo-evict, auto-consolidate).
        self.on_overflow = on_overflow
        # False in policy mode (nothing is injected, the index holds every entry): a store may grow past its
        # limit; a single entry still may not (a longer one would read as drift on the next load).
        self.enforce_limits = enforce_limits
        self._live: dict[str, list[str]] = {t: [] for t in self.files}
        self._drift: dict[str, fmt.Analysis | None] = {t: None for t in self.files}
        self._copies: dict[str, tuple[fmt.Copy, ...]] = {t: () for t in self.files}
        self._guard = RetryGuard(self.files, max_failures_per_turn)
        # Every entry text this store has read or written: replace/remove refuse once on an entry that changed
        # on disk since (an external append merged into it would otherwise vanish with the whole-entry swap).
        # Stores never loaded have no view to protect, so the check starts with the first load or read.
        self._seen: dict[str, set[str] | None] = {t: None for t in self.files}
        self._parsed = fmt.LastParse()  # a read of the bytes read last time is not parsed again

    @classmethod
    def from_settings(cls, settings, cwd: Path | str | None = None, **kwargs) -> MemoryStore:
        """A store configured from :class:`pi_memory.config.Settings`; ``cwd`` selects the project store."""
        root = None
        if cwd is not None:
            from pi_memory.project import project_root

            root = project_root(Path(cwd))
        return cls(
            settings.data_dir,
            memory_char_limit=settings.memory_char_limit,
            user_char_limit=settings.user_char_limit,
            lock_timeout=settings.lock_timeout,
            project_root=root,
            project_char_limit=settings.project_char_limit,
            failure_char_limit=settings.failure_char_limit,
            enforce_limits=getattr(settings, "prompt_mode", "snapshot") != "policy",
            team_project=team_client.from_settings(settings) if root is not None else None,
            **kwargs,
        )

    # ----------------------------------------------------------------- state
    @property
    def targets(self) -> tuple[str, ...]:
        """The targets this store serves (``project`` only when a project root was given)."""
        return tuple(t for t in TARGETS if t in self.files)

    def path(self, target: str) -> Path:
        return self.files[target]

    def name(self, target: str) -> str:
        """The store's file name as shown to people and models (relative to the data root)."""
        return self.names[target]

    def shown_name(self, target: str, project_id: str | None = None) -> str:
        """The file name in the blocked marker of an entry of ``target`` (of project ``project_id``, for a
        ``project`` entry found by a search): this store's own name, so the marker is the one ``memory_read``
        shows, or for another project's entry ``MEMORY.md of project <id>``."""
        if target == "project" and project_id and project_id != self.project_id:
            return f"{PROJECT_FILE} of project {project_id}"
        return self.names.get(target, f"{target} store")

    def limit(self, target: str) -> int:
        return self.limits[target]

    def entries(self, target: str) -> list[str]:
        """Live entries as last read or written by this store (raw, unsanitised)."""
        return list(self._live[target])

    def copies(self, target: str) -> tuple[fmt.Copy, ...]:
        """The exact duplicates the file held at the last read or write (:func:`.entries.copies`): the next write
        that changes the store merges them (what a dry run predicts)."""
        return self._copies.get(target, ())

    def drift(self, target: str) -> fmt.Analysis | None:
        """The drift analysis from the last load, or ``None`` when the file was clean."""
        return self._drift[target]

    def usage(self, target: str) -> str:
        return fmt.usage(fmt.joined_length(self._live[target]), self.limits[target])

    def load_from_disk(self) -> None:
        """Read every store file. Never raises: drift and unreadable files are recorded (see :meth:`drift`).

        Reading creates nothing; folders and files appear with the first write.
        """
        for target in self.files:
            self._load(target)

    # Where a store's text lives: its file, under the file's cross-process lock. A subclass may keep it
    # elsewhere (the team server's project stores: a PostgreSQL row, locked FOR UPDATE) and inherit every rule.
    def _locked(self, target: str):
        """A context manager held while a mutation reads, checks and publishes ``target``."""
        return locked(self.path(target), self.lock_timeout)

    def _read_locked(self, target: str) -> bytes | None:
        """The store's bytes under the lock (``None``: no store yet); ``OSError`` is reported as ``io_error``."""
        return read_bytes(self.path(target))

    def _read_unlocked(self, target: str) -> bytes | OSError | None:
        """The store's bytes for a read (an ``OSError`` returned, never raised)."""
        return try_read_bytes(self.path(target))

    def _publish(self, target: str, entries: list[str], text: str | None = None) -> None:
        """Write the new entries (under the lock); ``text``: the exact text to write for them (a learning undo's
        restored bytes: only ever passed when ``keeps_bytes``)."""
        atomic_write_text(self.path(target), fmt.serialise(entries) if text is None else text)

    def _load(self, target: str) -> fmt.Analysis:
        if target == "project" and self.team_project is not None:
            return team_client.load(self)
        analysis, new = self._parsed.analyse(target, self._read_unlocked(target), self.limits[target])
        self._live[target] = analysis.entries
        self._drift[target] = analysis if analysis.drift else None
        self._copies[target] = analysis.copies
        if new:  # the same bytes again: their entries are in _seen already
            self._seen[target] = (self._seen[target] or set()) | set(analysis.entries)
        return analysis

    def acknowledge(self, target: str, entries: list[str]) -> None:
        """Entries another writer of this process made (a background learning job): replace/remove treat them
        as seen, so the agent's first edit of such an entry is not refused as changed on disk."""
        if self._seen.get(target) is not None:
            self._seen[target].update(entries)

    def begin_turn(self) -> None:
        """Start a new agent run: reset the loop guard's failure counts."""
        self._guard.reset()

    # ------------------------------------------------------------- read side
    def read(self, target: str, sanitised: bool = False) -> MemoryResult:
        """Live entries from disk, count and usage. ``sanitised`` shows blocked markers instead of hostile
        entries and redacts secrets (what a model should see)."""
        if target not in self.files:
            return self._invalid_target(target)
        analysis = self._load(target)
        if analysis.drift == "unreadable":
            remote = target == "project" and self.team_project is not None  # the detail says it all
            error = analysis.detail if remote else msg.unreadable(self.names[target], self.path(target), analysis.detail)
            return self._result(target, False, "io_error", error=error)
        shown = [self._show(target, e, sanitised) for e in analysis.entries]
        notice = None
        cur, limit = fmt.joined_length(analysis.entries), self.limits[target]
        if analysis.drift:
            notice = msg.drift_notice(self.names[target], target, analysis, self.path(target))
        elif cur > limit:
            notice = msg.over_budget(self.names[target], cur, limit, max(map(len, analysis.entries)),
                                     LIMIT_SETTINGS[target])
        elif fmt.looks_like_plain_markdown(analysis.text) and len(analysis.entries) == 1:
            notice = msg.plain_markdown_notice(self.names[target], target, self.path(target))
        return MemoryResult(
            success=True,
            target=target,
            entries=shown,
            entry_count=len(shown),
            usage=self.usage(target),
            notice=notice,
        )

    def _show(self, target: str, entry: str, sanitised: bool) -> str:
        return sanitise_entry(self.names[target], entry) if sanitised else entry

    # ------------------------------------------------------------ mutations
    def add(self, target: str, content: str) -> MemoryResult:
        """Append ``content`` as a new entry. An exact duplicate succeeds without writing. Over the limit, the
        ``on_overflow`` hook (when set) decides what happens instead of the refusal."""
        result = self.apply(target, [Operation(action="add", content=content)], single=True)
        if result.code == "over_limit" and self.on_overflow is not None:
            return self.on_overflow(self, target, fmt.normalise_newlines(content).strip(), result)
        return result

    def replace(self, target: str, old_text: str, new_content: str) -> MemoryResult:
        """Swap the whole entry containing ``old_text`` for ``new_content``."""
        return self.apply(target, [Operation(action="replace", old_text=old_text, content=new_content)], single=True)

    def remove(self, target: str, old_text: str) -> MemoryResult:
        """Delete the entry containing ``old_text``."""
        return self.apply(target, [Operation(action="remove", old_text=old_text)], single=True)

    def apply(self, target: str, operations: list[Operation], single: bool = False,
              arrange: Callable[[list[str]], list[str] | None] | None = None,
              restore: Restore | None = None, give_back: GiveBack | None = None) -> MemoryResult:
        """Apply ``operations`` in order, all or nothing; the budget is checked on the final state only.

        In a batch an add of an entry that already exists is skipped, one with a ``place`` goes there; replace/remove
        need exactly one distinct matching entry (an entry's whole text names it, even inside a longer one). Nothing is
        written unless every step succeeds; a write merges the exact duplicates a file held (``duplicates_merged``).
        ``arrange(entries after)`` (a file store's, under the lock) may give the layout to write: the same entries,
        reordered or with exact copies (a learning undo gives back the duplicates a job's write merged).
        ``restore`` (a learning undo's): the bytes the file had before the job, written instead of the store's format
        when the file holds exactly what the job left and the entries after the batch are the ones it held then;
        the result's ``published`` says whether they were (:class:`.layout.Published`). ``give_back`` (a local
        learning undo's, :mod:`.give_back`): texts the job took out, not refused for control characters; a team
        server's project store is not given it (the server checks on its own).
        """
        if target not in self.files:
            return self._invalid_target(target)
        key = call_key(operations)
        if repeats := self._guard.failures(target, key):
            return msg.retry_limit(target, self.names[target], repeats)
        refused = self.write_refused(target) if operations else self._result(
            target, False, "invalid_arguments", error="The batch has no operations; nothing was changed.")
        if refused is not None:  # an empty batch, or a folder that cannot be written now
            self._guard.note(target, key)
            return refused
        try:
            name, team = self.names[target], target == "project" and self.team_project is not None
            limit = team_client.server_limit(self) if team else self.limits[target]  # too long: refused unscanned
            given = None if team else give_back
            prepared = [edits.prepare(op, name, edits.where(i, op, single), limit, given)
                        for i, op in enumerate(operations)]
            if team:  # checked here first: a credential or an injection never leaves for the server
                return team_client.apply(self, prepared, key)
            with self._locked(target):
                return self._apply_locked(target, prepared, single, arrange, restore)
        except Refused as refusal:
            self._guard.note(target, key, refusal.counts)
            return self._refused(target, refusal)
        except StoreLockedError as exc:
            self._guard.note(target, key)
            return self._result(target, False, "locked", error=str(exc))
        except OSError as exc:
            self._guard.note(target, key)
            return self._result(target, False, **msg.io_error(self.names[target], self.dir, exc))

    def check(self, target: str, operations: list[Operation], give_back: GiveBack | None = None,
              single: bool = False) -> MemoryResult | None:
        """The refusal ``apply`` would give ``operations`` on their own (content rules, threat and secret scans;
        not the entries they match), or ``None``: what a dry run says without writing. ``single``: worded as for
        one call's one operation (:meth:`add`), without the batch's ``Operation 1 (add):``."""
        given = None if target == "project" and self.team_project is not None else give_back
        try:
            for i, op in enumerate(operations):
                edits.prepare(op, self.names[target], edits.where(i, op, single), self.limits[target], given)
        except Refused as refusal:
            return self._refused(target, refusal)
        return None

    def write_refused(self, target: str) -> MemoryResult | None:
        """The refusal of a write to ``target`` before anything is touched, or ``None``: the problem ``write_check()``
        finds (the runtime's: the index a write is mirrored into is read-only now; :func:`.messages.write_refused`)."""
        if self.write_check is None or (problem := self.write_check()) is None:
            return None
        return self._result(target, False, **msg.write_refused(self.names[target], problem))

    def _apply_locked(self, target: str, ops: list[Operation], single: bool, arrange=None,
                      restore: Restore | None = None) -> MemoryResult:
        name, path = self.names[target], self.path(target)
        raw = self._read_locked(target)
        analysis = fmt.analyse(raw, self.limits[target])
        if analysis.drift:
            self._live[target] = analysis.entries
            self._drift[target] = analysis
            try:
                bak = str(backup(path, raw or b""))
            except OSError as exc:
                bak = f"(no backup: {exc}; the file is unchanged on disk)"
            raise Refused("drift", msg.drift_error(name, target, analysis, bak, path), drift_backup=bak)
        before = analysis.entries
        batch = edits.Batch.of(before)
        notes: list[str] = []
        for i, op in enumerate(ops):
            edits.step(batch, op, i + 1, name, self._seen[target], notes, edits.where(i, op, single))
        work = batch.work
        layout = order if arrange and (order := arrange(list(work))) and sorted(fmt.dedupe(order)) == sorted(work) else work
        work = fmt.dedupe(layout)  # a learning undo's layout may hold copies: the store reads them as one
        cur, limit = fmt.joined_length(work), self.limits[target]
        if cur > limit and fmt.joined_length(work) > fmt.joined_length(before) and (
                self.enforce_limits or any(op.content and len(op.content) > limit for op in ops)):
            raise Refused("over_limit", msg.over_limit(name, limit, fmt.joined_length(before), cur,
                                                       ops[0] if single else None, LIMIT_SETTINGS[target]),
                          current_entries=[self._show(target, e, True) for e in before])
        changed = work != before or layout != work
        merged = fmt.merged_copies(analysis.copies, layout) if changed else []
        published = None
        if changed:
            published = self._write(target, raw, layout, restore)
            if self._seen[target] is not None:
                self._seen[target].update(work)
            self._notify(target, work)
        self._live[target] = work
        self._drift[target] = None
        self._copies[target] = fmt.copies(layout) if changed else analysis.copies
        message = msg.with_merged(msg.success(ops, name, notes, single), name, len(merged))
        code = "duplicate" if single and work == before else "ok"
        result = self._result(target, True, code, message=message, done=True)
        return result.keep_merged(merged).keep_published(published)

    def _write(self, target: str, raw: bytes | None, layout: list[str], restore: Restore | None) -> Published | None:
        """Publish ``layout`` (under the lock) in the store's format, or as the bytes ``restore`` asks back when it
        may (:meth:`.layout.Restore.attempt`); what a file store replaced and wrote (``None``: not a file store)."""
        if not self.keeps_bytes:
            self._publish(target, layout)
            return None
        text, outcome = fmt.serialise(layout), None
        if restore is not None:
            outcome, data = restore.attempt(raw, layout)
            text = data.decode("utf-8") if data is not None else text
        self._publish(target, layout, text)
        return Published(raw, sha256(text.encode("utf-8")), outcome)

    # --------------------------------------------------------------- results
    def _result(self, target: str, success: bool, code: str, **fields) -> MemoryResult:
        return MemoryResult(success=success, code=code, target=target, entry_count=len(self._live[target]),
                            usage=self.usage(target), **fields)

    def _current(self, target: str, code: str, error: str) -> MemoryResult:
        """A refusal listing the live entries (as a model is shown them)."""
        shown = [self._show(target, e, True) for e in self._live[target]]
        return self._result(target, False, code, error=error, current_entries=shown)

    def _refused(self, target: str, refusal: Refused) -> MemoryResult:
        if refusal.live:
            return self._current(target, refusal.code, refusal.error)
        return self._result(target, False, refusal.code, error=refusal.error, **refusal.fields)

    def _notify(self, target: str, entries: list[str]) -> None:
        if self.on_change is None:
            return
        try:
            self.on_change(target, list(entries))
        except Exception as exc:  # the Markdown write already succeeded; the index can be rebuilt from it
            log.warning("%s", msg.not_mirrored(self.names[target], exc, self.dir),
                        exc_info=log.isEnabledFor(logging.DEBUG))

    def add_failure(self, content: str, category: str = "failure", reason: str | None = None) -> MemoryResult:
        """Add a lesson to the ``failure`` store (``category`` one of :data:`FAILURE_CATEGORIES`)."""
        if category not in FAILURE_CATEGORIES:
            return self.refuse_invalid(
                "failure", f"Unknown category {category!r}; use one of: {', '.join(FAILURE_CATEGORIES)}."
            )
        if not content.strip():
            return self.add("failure", "")
        return self.add("failure", failure_entry(content, category, reason))

    def refuse_invalid(self, target: str, error: str, arguments: dict | None = None) -> MemoryResult:
        """A tool call whose ``arguments`` failed validation (``error``): counted like a refused mutation of
        that call, answered with the current entries so the model can correct itself (a team project store's as
        this store last read them: nothing is sent to its server)."""
        key = invalid_key(error, arguments)
        if repeats := self._guard.failures(target, key):
            return msg.retry_limit(target, self.names[target], repeats)
        self._guard.note(target, key)
        if target != "project" or self.team_project is None:  # a team store: its entries as last read, without
            self._load(target)  # asking the server (an invalid call is answered at once, whatever the server does)
        return self._current(target, "invalid_arguments", error)

    def _invalid_target(self, target: str) -> MemoryResult:
        return MemoryResult(success=False, code="invalid_target", target=str(target),
                            error=msg.invalid_target(target, self.targets))

    # ------------------------------------------------------------- helpers
    def rewrite(self, target: str, new_entries: list[str]) -> Path | None:
        """Replace a store's whole content (``pi-memory split --apply``), backing up the old file first.

        Returns the backup path (``None`` when there was no file). The caller validates the entries and asks
        :meth:`write_refused` first (a refused write raises ``PermissionError``).
        """
        if (refused := self.write_refused(target)) is not None:
            raise PermissionError(refused.error)
        path = self.path(target)
        with locked(path, self.lock_timeout):
            raw = read_bytes(path)
            bak = backup(path, raw) if raw is not None else None
            atomic_write_text(path, fmt.serialise(fmt.dedupe(new_entries)))
        self._notify(target, self._load(target).entries)
        return bak
