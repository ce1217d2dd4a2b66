"""What is stored, gathered for people: ``pi-memory status`` / ``insights`` / ``projects`` and pi's ``/memory``,
``/memory status``, ``/memory-insights``, ``/memory-switch-project`` (one function per view, used by both hosts).

Nothing here writes; the index is opened (it is where the counts live) but nothing is indexed.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_memory.curated import entries as fmt
from pi_memory.curated.files import try_read_bytes
from pi_memory.standing import LISTED_RULES, MAX_CHARS, StandingStore, reach_data

if TYPE_CHECKING:
    from pi_memory.runtime import Memory

log = logging.getLogger(__name__)


def store_usage(memory: Memory, with_entries: bool = False) -> dict[str, dict[str, Any]]:
    """Each curated store: file, name, entries, chars, limit, usage, drift, notice, withheld, and
    ``notMirrored``: why the search index does not mirror the file (too large), else ``None``; a team project store
    that could not be read has ``problem``: what happened, for a person (:mod:`pi_memory.curated.team_problems`).
    Each store is read once."""
    store = memory.store
    out: dict[str, dict[str, Any]] = {}
    for target in store.targets:
        result = store.read(target)
        live = result.entries or []
        drift = store.drift(target)
        info: dict[str, Any] = {
            "name": store.name(target), "file": str(store.path(target)), "exists": store.path(target).exists(),
            "entryCount": result.entry_count or 0, "chars": fmt.joined_length(live), "limit": store.limit(target),
            "usage": result.usage, "drift": drift.drift if drift else None, "notice": result.notice,
        }
        if target == "project" and store.team_project is not None and drift is not None:  # the server's failure,
            from pi_memory.curated.team_problems import for_person_problem  # for a person: what to do

            info["problem"] = for_person_problem(store.team_project.last_error, store.team_project.url, drift.detail)
        info["overBudget"] = info["chars"] > info["limit"]
        info["notMirrored"] = _not_mirrored(store.path(target), info["entryCount"])
        # a file too large to mirror is not scanned entry by entry here either (6-38 s for 16 MB): its line says
        # to trim it, and the prompt shows only its ends, scanned (curated.snapshot.render_block)
        info["withheld"] = None if info["notMirrored"] else _withheld(store.name(target), live)
        if with_entries:
            info["entries"] = live
        out[target] = info
    return out


def _not_mirrored(path: Path, entries: int) -> str | None:
    """Why the file is too large for the search index to mirror (:func:`pi_memory.index.mirror.bound_problem`),
    or ``None``."""
    from pi_memory.index.mirror import bound_problem

    try:
        size = path.stat().st_size
    except OSError:  # missing or unreadable: said by the store's own health
        return None
    return bound_problem(size, entries) or None


def _withheld(name: str, entries: list[str]) -> int:
    """How many of ``entries`` the prompt shows as a blocked marker instead of their text (a threat pattern,
    or characters that could hide text): a person reading the status must know they do not reach the agent."""
    from pi_memory.curated.sanitise import is_our_marker, sanitise_entry

    return sum(1 for e in entries if is_our_marker(sanitise_entry(name, e)))


def status_data(memory: Memory, check: bool = False) -> dict[str, Any]:
    """``pi-memory status``: data root, whether it can be written now (``readOnly``, and why:
    ``readOnlyReason``; ``indexProblem`` ``{code, message}`` when the index cannot be used at all: not a file,
    unreadable, not a pi-memory index), settings sources, warnings, prompt mode, each store's usage and health;
    ``messagesNotSearchable``: past messages a rebuilt session word index has still to take back, else ``None``
    (:mod:`pi_memory.index.segments`); ``skippedBlocks`` (only when there are any): block files that are links
    leading out of their folder or whose frontmatter is refused, not read (:meth:`pi_memory.blocks.BlockStore.
    skipped`); ``blocksLeftOut`` (only when there are any): the blocks the prompt's budget leaves out, with the
    ``message`` for a person (:mod:`pi_memory.blocks.budget`); ``indexCheck``: with
    ``check``, what the page-by-page check of the index found (:meth:`pi_memory.index.integrity.IntegrityReport.
    to_dict`), else ``None``. Without ``check`` nothing here reads the index page by page, so the time it takes
    does not grow with the index."""
    from pi_memory.blocks.budget import person_warning
    from pi_memory.index import last_repair
    from pi_memory.index.file_guard import index_problem, write_problem
    from pi_memory.index.segments import messages_left

    s = memory.settings
    unusable = index_problem(s.data_dir)  # not a file, unreadable, not an index: nothing reads it either
    problem = unusable or write_problem(s.data_dir)
    data = {"dataDir": str(s.data_dir), "readOnly": problem is not None,
            "readOnlyReason": problem.notice if problem is not None else None, "settings": list(s.sources),
            "warnings": list(s.warnings), "promptMode": s.prompt_mode, "stores": store_usage(memory),
            "indexRepair": last_repair(s.data_dir) if unusable is None else None,
            "messagesNotSearchable": messages_left(s.data_dir) if unusable is None else None, "indexCheck": None}
    if check and unusable is None:
        from pi_memory.index.integrity import check_integrity

        data["indexCheck"] = check_integrity(s.data_dir).to_dict()
    if unusable is not None:
        data["indexProblem"] = {"code": unusable.kind, "message": unusable.message}
    blocks = memory.blocks()
    skipped = blocks.skipped()  # links out of a blocks folder: a person must know they are not read
    if skipped:
        data["skippedBlocks"] = [s.to_dict() for s in skipped]
    fitted = blocks.in_prompt()  # blocks past the budget reach no prompt: said as loudly
    if fitted.left_out:
        data["blocksLeftOut"] = {**fitted.to_dict(), "message": person_warning(fitted)}
    return data


def index_counts(conn) -> dict[str, int]:
    """Rows of the index: sessions, session files, messages, memories (the mirror) and extended memories."""
    one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
    return {"sessions": one("SELECT count(*) FROM sessions"), "sessionFiles": one("SELECT count(*) FROM session_files"),
            "messages": one("SELECT count(*) FROM messages"), "memories": one("SELECT count(*) FROM memories"),
            "extended": one("SELECT count(*) FROM memories WHERE source = 'extended'")}


def collect(memory: Memory, top: int = 5) -> dict[str, Any]:
    """``insights``: every store's entries, the blocks, the standing rules, index and semantic counts, and the
    entries ``memory_search`` recalled most.

    An overview, shown in pi's session too, of files a hand edit can fill: entries are redacted (``read``: raw),
    blocks shown as ``blocks show`` shows them (:func:`pi_memory.blocks.person.for_person`: redacted, a block
    past its limit cut), and ``standing`` holds the first :data:`~pi_memory.standing.LISTED_RULES` (20) rules
    shown as ``pin list`` shows them: the agent is given no more, and a hand-made file can hold thousands.
    ``standingInstructions`` says how many there are (``count``), how many are not listed (``more``), the
    file (``file``) that holds them all, and of each listed rule whether the agent gets it and why not, as
    ``pin list --json`` does (:func:`pi_memory.standing.reach_data`: ``reach``, ``given``, ``withheld``,
    ``redacted``, ``duplicates``): the reading the prompt itself uses."""
    from pi_memory.blocks.person import for_person
    from pi_memory.safety import redact
    from pi_memory.shown_text import shown

    stores = store_usage(memory, with_entries=True)
    for info in stores.values():
        info["entries"] = [redact(e) for e in info["entries"]]
    standing = StandingStore.in_data_dir(memory.settings.data_dir)
    rules = standing.rules()
    data: dict[str, Any] = {
        "stores": stores,
        "blocks": [for_person(b) for b in memory.blocks().blocks()],
        "standing": [shown(r, MAX_CHARS) for r in rules[:LISTED_RULES]],
        "standingInstructions": {"count": len(rules), "more": max(0, len(rules) - LISTED_RULES),
                                 "file": str(standing.path), **reach_data(rules)},
        "index": None, "recalled": [], "semantic": None,
    }
    try:
        conn = memory.index()
        data["index"] = index_counts(conn)
        rows = conn.execute("SELECT content, hit_count, last_used FROM memories WHERE hit_count > 0 "
                            "ORDER BY hit_count DESC, last_used DESC LIMIT ?", (top,)).fetchall()
        data["recalled"] = [{"content": c, "hits": h, "lastUsed": u} for c, h, u in rows]
    except Exception as exc:  # an unusable index: show what the Markdown files hold
        log.warning("insights without index counts: %s", exc)
    service = memory.semantic()
    backend = getattr(service, "backend", None)
    if backend is not None and hasattr(backend, "count"):
        data["semantic"] = backend.count(scope=service.scope, status="active")
    return data


def projects(memory: Memory) -> list[dict[str, Any]]:
    """Every project store under ``<data root>/projects/``, with its entry count; ``current`` marks this one."""
    root = Path(memory.settings.data_dir) / "projects"
    current = memory.store.path("project").parent if "project" in memory.store.targets else None
    found = []
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        path = folder / "MEMORY.md"
        if not path.is_file():
            continue
        analysis = fmt.analyse(try_read_bytes(path), memory.settings.project_char_limit)
        name = folder.name.rsplit("-", 1)[0] if "-" in folder.name else folder.name
        found.append({"name": name, "folder": str(folder), "entryCount": len(analysis.entries),
                      "usage": fmt.usage(fmt.joined_length(analysis.entries), memory.settings.project_char_limit),
                      "current": folder == current})
    return found
