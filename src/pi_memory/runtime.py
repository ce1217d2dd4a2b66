"""One place that assembles pi-memory for a host: settings -> curated store + search index + tools.

Hosts (the pi bridge, the MCP server, the CLI) call :func:`open_memory` and use what it returns; none of them
wires capabilities together on its own. The index is opened lazily (the first search, the first mirrored
write), so a host that only reads curated memory never touches SQLite. Every curated write is mirrored into
the index at once through the store's ``on_change`` hook; a failed mirror is logged and repaired by
``pi-memory sync-markdown`` (Markdown stays the source of truth). A write the mirror could not keep (the index
open for reading only, or its folder read-only now) is refused before the Markdown file is touched, through
the store's ``write_check`` (:meth:`Memory.write_problem`).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pi_memory.config import Settings, SettingsError, load_settings
from pi_memory.curated import MemoryStore
from pi_memory.runtime_learning import LearningWiring
from pi_memory.storage import is_locked

if TYPE_CHECKING:
    from pi_memory.tools import ToolSpec

log = logging.getLogger(__name__)

REOPEN_CHECK_S = 5.0  # how often a host holding a read-only index asks whether its folder can be written again
# How long mirroring a Markdown store into the index waits for another process's lock on it (an indexing pass,
# a rebuild) before giving up: the Markdown file is already saved, and the next open of the index mirrors what
# changed (:func:`pi_memory.index.mirror_watch.sync_changed`), so a write need not wait the connection's 10 s
# (a `pi-memory add` on a locked index took 20 s: the open's mirror and the write's, 10 s each).
MIRROR_WAIT_S = 2.0
CLOSE_WAIT_S = 0.5  # how long closing waits for a call still using the index (a host's shutdown must be quick)
# How long opening semantic memory (:meth:`Memory.semantic`: its tables' migrations) waits for another process's
# lock on the index before giving up for now (a session search by keyword then waited 10 s); under the prompt
# hook's 2 s ceiling. After that, a host answers without it for SEMANTIC_RETRY_S before it tries again.
SEMANTIC_WAIT_S = 1.0
SEMANTIC_RETRY_S = 5.0


@dataclass
class Memory(LearningWiring):
    """The assembled system for one host process (one agent session, one CLI call, one MCP server)."""

    settings: Settings
    store: MemoryStore
    cwd: Path
    _conn: sqlite3.Connection | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _uses: list = field(default_factory=lambda: [0, threading.Condition()], repr=False)  # calls using the index
    _semantic: object | None = field(default=None, repr=False)
    _skills: object | None = field(default=None, repr=False)
    semantic_status: str = "semantic memory: not opened"
    learning: object | None = None  # pi_memory.learning.LearningSettings; None when its settings are invalid
    learning_status: str = ""
    _llm: tuple | None = field(default=None, repr=False)  # (spec or None, why), resolved once
    _llm_notes: list = field(default_factory=list, repr=False)  # what the provider cannot honour as asked
    # ``check`` for open_index: None = quick check of small files at open (the CLI); False = none at open (an
    # agent session checks in the background, ``quickCheckOnOpen``; a false setting skips it everywhere)
    index_check: bool | None = None
    # the host this process serves ("claude-code", "codex"; None: pi, the CLI, the MCP server): recall's
    # default sources depend on it (pi_memory.semantic.config.HOST_RECALL_SOURCES)
    host: str | None = None
    _reopen_after: float = field(default=0.0, repr=False)  # monotonic time of the next writable-again check
    mirrored: dict = field(default_factory=dict, repr=False)  # what mirror_hand_edits mirrored last, per file
    _semantic_held_until: float = field(default=0.0, repr=False)  # no new try before (0.0: the last was not held)
    semantic_wait: float = SEMANTIC_WAIT_S  # a host with less time (the prompt hook's ceiling) sets less

    @property
    def project_root(self) -> Path | None:
        return self.store.project_root

    def index(self) -> sqlite3.Connection:
        """The index connection, opened (and migrated, repaired if corrupt) on first use; opened again when it was
        opened for reading only and its folder can be written now (:meth:`_writable_again`)."""
        with self._lock:
            self._writable_again()
            if self._conn is None:
                from pi_memory import timing
                from pi_memory.index import open_index

                with timing.span("database.open"):
                    self._conn = open_index(self.settings.data_dir, check=self.index_check)
                self.mirror_hand_edits(self._conn)
            return self._conn

    def mirror_hand_edits(self, conn: sqlite3.Connection) -> None:
        """Mirror the Markdown stores edited by hand since the index last mirrored them
        (:func:`pi_memory.index.mirror_watch.sync_changed`), so ``memory_search`` finds what the files hold. Not
        on an index open for reading only; a busy or failing index leaves it to the next open or pass (logged)."""
        from pi_memory.index.mirror_watch import sync_changed
        from pi_memory.index.read_only import ReadOnlyConnection

        if isinstance(conn, ReadOnlyConnection):
            return
        from pi_memory.index import busy_wait

        try:
            with busy_wait(conn, MIRROR_WAIT_S):
                self.mirrored = sync_changed(conn, self.settings.data_dir)
        except (OSError, sqlite3.Error) as exc:  # said: a search now may miss what the files hold
            busy = is_locked(exc)
            why = ("the search index was busy with another write (an indexing pass of this or another process)"
                   if busy else f"mirroring them failed ({exc})")
            log.warning("The memory files changed since the search index last mirrored them, but %s, so "
                        "memory_search may not find those changes yet; the next pi-memory command or session "
                        "mirrors them (`pi-memory sync-markdown` does it now).", why)

    def _writable_again(self) -> None:
        """Drop the index connection and the semantic service when they were opened for reading only (a full
        disk, a read-only folder when the process started) and nothing stops a write in the folder now, so the
        next use opens them for writing: a long-running host (the MCP server, a pi session) no longer refuses
        every write until it is restarted once the user has fixed the folder. Asked at most every
        ``REOPEN_CHECK_S``; the caller holds the lock. The old objects are dropped, not closed: another thread
        may be reading through them (a read-only connection holds nothing a writer waits for)."""
        from pi_memory.index.read_only import ReadOnlyConnection

        backend = getattr(self._semantic, "backend", None) if self._semantic else None
        conns = [c for c in (self._conn, getattr(backend, "conn", None)) if isinstance(c, ReadOnlyConnection)]
        now = time.monotonic()
        if not conns or now < self._reopen_after:
            return
        self._reopen_after = now + REOPEN_CHECK_S
        from pi_memory.index.file_guard import write_problem

        if write_problem(self.settings.data_dir) is not None:
            return
        log.info("the data folder %s can be written again: the index is opened for writing",
                    self.settings.data_dir)
        self._conn = None
        if backend is not None and isinstance(getattr(backend, "conn", None), ReadOnlyConnection):
            self._semantic = None

    def repair_index(self) -> sqlite3.Connection:
        """Close the index and open it again with a full integrity check, which sets a damaged file aside and
        rebuilds it (:func:`pi_memory.index.open_index` with ``check=True``). For damage found after opening:
        a large index is not fully checked at every open."""
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None
            from pi_memory.index import open_index

            self._conn = open_index(self.settings.data_dir, check=True)
            return self._conn

    def write_problem(self):
        """Why a curated write must be refused before its Markdown file is written, or ``None``: the index it is
        mirrored into (opened here, as the mirror would open it next) is open for reading only or its folder
        cannot be written now (:func:`pi_memory.index.read_only.read_only`, asked again at every write), or the
        index cannot be used at all (unreadable, not a pi-memory index). Other failures to open it are left to
        the mirror, which logs them after the write (Markdown is the source of truth)."""
        from pi_memory.index.read_only import read_only
        from pi_memory.storage import StorageProblem

        try:
            return read_only(self.index())
        except (OSError, sqlite3.Error, RuntimeError) as exc:
            problem = getattr(exc, "problem", None)
            return problem if isinstance(problem, StorageProblem) else None

    def session_roots(self) -> dict:
        """Where the agents keep their transcripts (:func:`pi_memory.index.readers.default_roots`), read when a
        search runs (anchor-mode ``session_search``)."""
        from pi_memory.index.readers import default_roots

        return default_roots()

    def mirror(self, target: str, entries: list[str]) -> None:
        """Mirror one curated store into the index (the store's ``on_change`` hook)."""
        from pi_memory.index import busy_wait, sync_store
        from pi_memory.index.mirror_watch import note_mirrored

        scope = "project" if target == "project" else "global"
        project = self.store.project_id if target == "project" else None
        with self.using():
            conn = self.index()
            with busy_wait(conn, MIRROR_WAIT_S):
                sync_store(conn, scope, project, target, entries)
                if not (target == "project" and self.store.team_project is not None):  # a file of this machine
                    note_mirrored(conn, self.settings.data_dir, self.store.path(target))

    def semantic(self):
        """The semantic-memory service (:mod:`pi_memory.semantic`), or ``None`` when its settings are unusable
        (``semantic_status`` then says why). Opened once, on first use; ``None`` for now when another process held
        the index past ``semantic_wait`` (:attr:`semantic_held`), tried again after ``SEMANTIC_RETRY_S``."""
        with self._lock:
            self._writable_again()
            if self._semantic is None and time.monotonic() >= self._semantic_held_until:
                self._semantic = open_semantic_or_none(self, wait=self.semantic_wait)
                self._semantic_held_until = time.monotonic() + SEMANTIC_RETRY_S if self._semantic is None else 0.0
            return self._semantic or None

    @property
    def semantic_held(self) -> bool:  # not open because another process held the index at the last try
        return self._semantic is None and self._semantic_held_until > 0.0

    def search_embedder(self):
        """The embedder whose turn vectors ``session_search`` fuses with its keyword list: semantic memory's, when
        it is on and embedded in this index; ``None`` otherwise (the search is then keyword-only). Raises SQLite's
        "database is locked" when another process held the index (:attr:`semantic_held`): the search says so."""
        service = self.semantic()
        if service is None and self.semantic_held:
            raise sqlite3.OperationalError("database is locked (semantic memory was not opened)")
        return getattr(getattr(service, "backend", None), "embedder", None) if service is not None else None

    def search_floor(self) -> float:
        """The cosine a turn ``session_search`` finds by meaning alone needs: recall's floor, semantic memory's
        ``recallMinSimilarity`` (asked once :meth:`search_embedder` gave an embedder, so semantic memory is open)."""
        from pi_memory.retrieval.floors import DEFAULT_MIN_SIMILARITY

        service = self.semantic()
        return service.settings.recall_min_similarity if service is not None else DEFAULT_MIN_SIMILARITY

    def blocks(self):
        """The memory blocks of this project and the global folder (:class:`pi_memory.blocks.BlockStore`). The
        project folder is the git root's ``.pi/memory-blocks/`` (the cwd's when there is no repository, or when
        only the cwd has one, as seed 003 read it). That folder is read only when the project is trusted
        (``pi-memory trust``, the rule of the project's ``.pi/settings.json``): a repository you clone must not
        put text into your prompts, or hide your global blocks, by shipping block files."""
        from pi_memory.blocks import PROJECT_FOLDER, BlockStore
        from pi_memory.config import is_trusted

        root = self.project_root or self.cwd
        if root != self.cwd and (self.cwd / PROJECT_FOLDER).is_dir() and not (root / PROJECT_FOLDER).is_dir():
            root = self.cwd  # seed 003 read .pi/memory-blocks/ of the folder pi ran in
        return BlockStore.from_settings(self.settings, root, project_trusted=is_trusted(Path(root)))

    def skills(self):
        """The skills of this data root and the cwd's project (:class:`pi_memory.skills.SkillStore`)."""
        with self._lock:
            if self._skills is None:
                from pi_memory.skills import SkillStore

                self._skills = SkillStore.from_settings(self.settings, cwd=self.cwd)
                from pi_memory.skills.export import prune_exports, refresh

                store = self._skills
                store.after_removal = lambda: prune_exports(store, Path.home())  # the hosts' copies of it go too
                store.after_change = lambda skill_id: refresh(store, Path.home(), skill_id)  # and get its new text
            return self._skills

    def recall_skills(self) -> list:
        """The skills recall ranks: every skill of :meth:`skills` except those the host lists by itself (for
        Claude Code and Codex: the ones ``pi-memory skills export`` put in their folders)."""
        from pi_memory.skills.export import recalled_for

        return recalled_for(self.skills(), self.host, Path.home())

    def tools(self, describe_only: bool = False) -> list[ToolSpec]:
        """Every tool this host serves: the four curated tools, session_search and memory_search,
        ``updateMemory`` (memory blocks), ``skill_manage``, and ``mem0_memory`` when semantic memory's
        ``toolEnabled`` resolves to true. ``describe_only``: the same list for its names and schemas, opening
        nothing (semantic memory's settings are read, its store is not opened; ``mem0_memory``'s calls must
        then go to the tools of a loaded host)."""
        from pi_memory.tools import create_memory_tools
        from pi_memory.tools.blocks import create_block_tools
        from pi_memory.tools.skills import create_skill_tools

        injected = self.settings.prompt_mode != "policy"
        tools = create_memory_tools(self.store, injected) + self.search_tools(for_model=True)
        tools += create_block_tools(self.blocks())
        tools += create_skill_tools(self.skills())
        service = self._semantic_description() if describe_only else self.semantic()
        if service is None and self.semantic_held:  # listed by its settings, opened at a call (an MCP server's start)
            service = self._semantic_description()
        if service is not None:
            from pi_memory.tools.semantic import create_semantic_tools

            tools += create_semantic_tools(service, current=None if describe_only else self.semantic)
        return tools

    def search_tools(self, for_model: bool, session_variant: str | None = None) -> list[ToolSpec]:
        """``session_search`` and ``memory_search`` over every source they have: the index (sessions, the
        curated stores' mirror, the extended store), semantic memory's embedder for turn vectors, and the
        memory blocks in effect. The host's tools (:meth:`tools`, ``for_model=True``) and the CLI's
        ``session-search`` / ``memory-search`` (a person's view) are both built here, so they search the same
        things. ``session_variant``: the settings' ``sessionSearch.variant`` unless given (the CLI asks for
        the index search it can print)."""
        from pi_memory.tools.search import create_search_tools

        current = str(self.project_root) if self.project_root else None
        return create_search_tools(
            self.index, current, self.repair_index,
            session_variant=session_variant or self.settings.session_search_variant,
            session_roots=self.session_roots, for_model=for_model, entry_name=self.store.shown_name,
            embedder=self.search_embedder, blocks=lambda: self.blocks().blocks(), min_similarity=self.search_floor)

    def _semantic_description(self):
        """An object with the semantic settings only (what :func:`create_semantic_tools` reads to decide), or
        ``None`` when they are unusable (as :meth:`semantic` would then be)."""
        from types import SimpleNamespace

        try:
            from pi_memory.semantic.config import load_semantic_settings

            return SimpleNamespace(settings=load_semantic_settings(self.cwd, self.settings.agent_dir))
        except Exception:  # noqa: BLE001 - the loaded host reports why
            return None

    @contextlib.contextmanager
    def using(self):
        """Mark a call that may use the index connection from its own thread (a tool call, a curated write's
        mirror): :meth:`close` does not close the connection under it."""
        changed = self._uses[1]
        with changed:
            self._uses[0] += 1
        try:
            yield self
        finally:
            with changed:
                self._uses[0] -= 1
                changed.notify_all()

    def close(self, wait: float = CLOSE_WAIT_S) -> None:
        """Close the semantic service and the index connection. A call still using them from another thread (a
        tool call in a SQLite busy wait while a host shuts down) is waited for at most ``wait`` seconds; then they
        are dropped, not closed: closing a connection a statement runs on crashed the process (a segmentation
        fault), and the process is ending anyway."""
        changed = self._uses[1]
        with changed:
            idle = changed.wait_for(lambda: self._uses[0] == 0, timeout=wait)
        with self._lock:
            semantic, conn = self._semantic, self._conn
            self._semantic, self._conn = None, None
        if not idle:
            log.info("closing while a call still uses the index: its connection is left to the process's end")
            return
        if semantic:
            semantic.close()
        if conn is not None:
            conn.close()


HELD_STATUS = ("semantic memory not opened yet: another process held the search index (an indexing pass or a "
               "rebuild); it is tried again at the next use")


def open_semantic_or_none(memory: Memory, background_reembed: bool = True, wait: float | None = None):
    """Open the semantic service for ``memory``'s cwd; ``False`` (not ``None``: "tried") when it cannot be
    opened, with the reason in ``memory.semantic_status``; ``None`` (try again later) when another process held
    the index for longer than ``wait`` seconds (default: the connection's busy timeout)."""
    try:
        from pi_memory.semantic import open_semantic

        service = open_semantic(cwd=memory.cwd, data_dir=memory.settings.data_dir,
                                background_reembed=background_reembed, index_check=memory.index_check,
                                host=memory.host, skills=memory.recall_skills, migrate_wait=wait)
    except Exception as exc:  # unusable settings or backend: curated memory and search still work
        if is_locked(exc):  # not "off": said by what skipped it (a search's note), tried again later
            memory.semantic_status = HELD_STATUS
            log.info("%s", HELD_STATUS)
            return None
        memory.semantic_status = f"semantic memory off: {exc}"
        log.warning("%s", memory.semantic_status)
        return False
    memory.semantic_status = service.status()
    return service


def open_memory(cwd: Path | str | None = None, override_dir: Path | None = None, mirror: bool = True,
                load: bool = True, host: str | None = None, team_wait: float | None = None,
                one_shot: bool = False) -> Memory:
    """Settings for ``cwd`` (default: the process's), the curated store for its project, lazily the index.

    ``host``: the host this process serves (``"claude-code"``, ``"codex"``; ``None`` for pi, the CLI and the
    MCP server); it decides what recall includes when ``recallSources`` is not set
    (:data:`pi_memory.semantic.config.HOST_RECALL_SOURCES`).

    ``load=False`` reads no store (the curated files stay unread until a host loads them): for a host that only
    describes its tools and prompt before the first memory operation (``lazyInitialization``). ``team_wait``:
    the seconds a team project store (``teamProjectStore``) gets to answer that read, instead of its
    ``timeoutSeconds`` (a host's start: :data:`pi_memory.curated.team_client.START_WAIT_S`); later requests get
    ``timeoutSeconds``. ``one_shot``: a short command (the CLI's, not ``mcp`` / ``serve`` / ``ui``): a team server
    found down is not asked again by it (:func:`pi_memory.curated.team_client.ask_once`).

    Raises :class:`pi_memory.config.SettingsError` for unreadable or invalid settings.
    """
    where = Path(cwd) if cwd is not None else Path.cwd()
    settings = load_settings(where, override_dir=override_dir)
    for warning in settings.warnings:
        log.warning("%s", warning)
    memory = Memory(settings=settings, store=MemoryStore.from_settings(settings, cwd=where), cwd=where,
                    index_check=None if settings.quick_check_on_open else False, host=host)
    if mirror:
        memory.store.on_change = memory.mirror
        memory.store.write_check = memory.write_problem
    _open_learning(memory, where)
    if one_shot:
        from pi_memory.curated.team_client import ask_once

        ask_once(memory.store)
    if load:
        from pi_memory.curated.team_client import bounded

        with bounded(memory.store, team_wait):
            memory.store.load_from_disk()
    return memory


def _open_learning(memory: Memory, cwd: Path) -> None:
    """Parse the learning settings and hook the overflow strategy into the store. Invalid learning settings
    turn learning off with a status line (curated memory keeps working)."""
    from pi_memory.config import merged_block
    from pi_memory.learning.settings import LearningSettingsError, parse_learning

    try:
        block, where = merged_block(cwd)
        memory.learning = parse_learning(block, where)
    except (LearningSettingsError, SettingsError) as exc:  # the first says that learning jobs are off
        memory.learning = None
        memory.learning_status = str(exc) if isinstance(exc, LearningSettingsError) else f"learning off: {exc}"
        log.warning("%s", memory.learning_status)
        return
    strategy = memory.learning.memory_overflow_strategy
    if strategy != "reject":  # the consolidation job's module (its runner, prompts) only when a store uses it
        from pi_memory.learning.overflow import OverflowHandler

        memory.store.on_overflow = OverflowHandler(strategy, memory.learning.overflow_grace_ms,
                                                   memory._overflow_learner, model_status=memory._no_model,
                                                   budget_left=memory._learning_budget_left)
