"""The search tools: ``session_search`` (past conversations) and ``memory_search`` (stored memories).

Both run over the index (:mod:`pi_memory.index`). Output is bounded by the index layer (limit ≤ 50, capped
snippets, ≤ 16 KiB in all). Credentials never reach a result: the index stores text redacted
(:mod:`pi_memory.index.redaction`) and cuts snippets from it; here each snippet, content and failure reason is
scanned once more before it goes into the model's context (a last net, never the only one: a key split by
highlight markers would not be recognised here).

Two readers (``for_model``). The tools a host serves (``runtime.Memory.tools``) are the model's: a hit whose
text trips the threat scanner (a past message saying "ignore previous instructions...", an image beacon, a
hand-edited hostile entry) comes back as a blocked marker with a ``Ref`` hash (:func:`pi_memory.safety.for_model`,
the rule of the curated stores), never verbatim, with ``blocked: true`` on the hit: a session snippet gets
:func:`pi_memory.safety.blocked_session_marker` (a transcript cannot be edited), a memory the store's own marker
(:func:`pi_memory.curated.sanitise.sanitise_entry`: the same text ``memory_read`` shows for that entry, so quoting
it to ``memory_remove`` works) in ``content`` and ``snippet``, its failure reason left out. The scan reads the
snippet without its ``**`` highlights, so a highlight cannot split a phrase past the scanner. A person's view
(``pi-memory session-search`` / ``memory-search`` without ``--json``, the inspector) is built with
``for_model=False`` and shows the raw text, escaped for the terminal; ``--json`` is for programs that read it as
a tool result, so it gets the model's copy (as ``--json`` of the store commands does).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from pi_memory import safety

if TYPE_CHECKING:
    from pi_memory.tools import ToolSpec


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SessionSearchArgs(_Args):
    query: str = Field(description="Words to look for; \"quoted phrases\" match exactly; OR/AND/NOT in capitals work.")
    limit: int | None = Field(default=None, ge=1, le=50, description="How many results (default 10, at most 50).")
    project: str | None = Field(
        default=None, description="Only sessions of this project: a folder path, or 'current' for this project."
    )
    role: Literal["user", "assistant", "tool", "summary"] | None = Field(default=None, description="Only this role.")
    since: str | None = Field(default=None, description="Only messages at or after this date/time (ISO 8601).")
    until: str | None = Field(default=None, description="Only messages before this date/time (ISO 8601).")


class AnchorSearchArgs(_Args):
    """``session_search`` in anchor mode (``sessionSearch.variant: "anchors"``, :mod:`pi_memory.index.anchors`).
    ``query`` is accepted too (its words join ``all``), so a call written for the default variant still works."""

    all_: list[str] | None = Field(default=None, alias="all", description="Terms that must all appear in a record.")
    any_: list[str] | None = Field(default=None, alias="any", description="Terms of which at least one must appear.")
    exclude: list[str] | None = Field(default=None, description="Terms that must not appear in the record.")
    query: str | None = Field(default=None, description="Words that must all appear (added to 'all').")
    from_: str | None = Field(default=None, alias="from",
                              description="Only records at or after this date/time (ISO 8601, or an age: 7d).")
    to: str | None = Field(default=None, description="Only records up to this date/time (a date includes that day).")
    cwd: str | None = Field(default=None, description="Only sessions started in this folder or below it; "
                            "'current' for this project.")
    limit: int | None = Field(default=None, ge=1, le=50, description="How many anchors (default 10, at most 50).")


class MemorySearchArgs(_Args):
    query: str = Field(description="Words to look for in saved memories.")
    limit: int | None = Field(default=None, ge=1, le=50, description="How many results (default 10, at most 50).")
    target: Literal["memory", "user", "project", "failure", "block"] | None = Field(
        default=None, description="Only this store ('block': only the memory blocks).")
    category: Literal["failure", "correction", "insight", "preference", "convention", "tool-quirk"] | None = Field(
        default=None, description="Only failure memories of this category."
    )
    project: str | None = Field(
        default=None, description="Global memories plus this project's: a folder path, or 'current'."
    )


def _redact(data: dict) -> dict:
    for hit in data.get("results", []):
        for key in ("snippet", "content", "failureReason"):
            if isinstance(hit.get(key), str) and safety.scan_secrets(hit[key]):
                hit[key] = safety.redact(hit[key])
    return data


def _plain(snippet: str) -> str:
    """A snippet without the search's ``**`` highlights (what the threat scanner must read)."""
    from pi_memory.index.results import highlight_parts

    return "".join(part for part, _bold in highlight_parts(snippet))


EntryName = Callable[[str, "str | None"], str]


def _default_entry_name(target: str, project: str | None) -> str:
    from pi_memory.curated.store import PROJECT_FILE, TARGET_FILES

    return TARGET_FILES.get(target) or (f"{PROJECT_FILE} of project {project}" if project else f"{target} store")


def _screen(data: dict, entry_name: EntryName) -> dict:
    """The model's copy of a search result (see the module docstring): hostile hits become blocked markers."""
    for hit in data.get("results", []):
        if hit.get("target") == "block":  # a memory block: the marker the prompt's <memory-blocks> shows for it
            _screen_block(hit)
            continue
        if data.get("kind") == "session":
            text = _plain(hit.get("snippet") or "")
            shown = safety.blocked(text, safety.blocked_session_marker)
            if shown is not None:
                hit.update(snippet=shown, blocked=True)
            continue
        name = entry_name(hit.get("target") or "", hit.get("project"))
        content = hit.get("content") or ""

        def marker(ids: list[str], name: str = name) -> str:
            return safety.blocked_marker(name, ids)

        # the entry's own marker (the text memory_read shows for it) when the entry is hostile, else the marker
        # for what tripped in its failure reason or snippet, with the entry's reference all the same
        shown = safety.blocked(content, marker)
        if shown is None:
            ids = [f.id for piece in (hit.get("failureReason") or "", _plain(hit.get("snippet") or ""))
                   for f in safety.scan_threats(piece)]
            if not ids:
                continue
            shown = safety.with_ref(marker(list(dict.fromkeys(ids))), content)
        hit.update(content=shown, snippet=shown, blocked=True)
        hit.pop("failureReason", None)
    return data


def _screen_block(hit: dict) -> None:
    """A block hit as a model may see it: the marker its hostile value gets in the prompt
    (:func:`pi_memory.blocks.shown_value`) in ``content`` and ``snippet``, else unchanged."""
    from pathlib import Path

    from pi_memory.blocks import Block, shown_value

    texts = (hit.get("content") or "", hit.get("description") or "", _plain(hit.get("snippet") or ""))
    if not any(safety.scan_threats(t) for t in texts):
        return
    marker = shown_value(Block(str(hit.get("block") or ""), str(hit.get("scope") or ""), Path(hit.get("file") or ""),
                               value="\n".join(texts)))
    hit.update(content=marker, snippet=marker, blocked=True)
    hit.pop("description", None)


def create_search_tools(
    conn_factory: Callable[[], sqlite3.Connection],
    current_project: str | None,
    repair: Callable[[], object] | None = None,
    session_variant: str = "legacy",
    session_roots: Callable[[], object] | None = None,
    *,
    for_model: bool = False,
    entry_name: EntryName | None = None,
    embedder: Callable[[], object] | None = None,
    blocks: Callable[[], object] | None = None,
    min_similarity: Callable[[], float] | None = None,
) -> list[ToolSpec]:
    """``session_search`` and ``memory_search`` over the index opened by ``conn_factory`` (called lazily).

    ``for_model``: the results are the model's (a host's tools): hostile hits come back as blocked markers (see
    the module docstring); ``False`` (a person's view: the CLI, the inspector) keeps the raw text. ``entry_name``:
    ``(target, project id) -> file name`` for a memory's marker (``MemoryStore.shown_name``), so it matches the
    one ``memory_read`` shows.

    ``session_variant`` ``"anchors"`` (the ``sessionSearch.variant`` setting): ``session_search`` reads the
    session files under ``session_roots()`` directly and answers in plain text with ``path:start-end`` anchors
    (:mod:`pi_memory.index.anchors`); it never opens the index.

    ``embedder``: called on each plain-words ``session_search``; the embedder it returns (or ``None``) lets the
    search fuse the turns nearest by meaning (:func:`pi_memory.retrieval.session_search`). ``min_similarity``:
    called with it, the cosine a turn found by meaning alone needs (the settings' ``recallMinSimilarity``, recall's
    floor); without it the engine's default.

    ``blocks``: called on each ``memory_search``; the memory blocks it returns are searched beside the stored
    memories (:mod:`pi_memory.retrieval.sources_blocks`).

    ``repair``: called once when a search meets a damaged database (damage deeper in a large index is not
    found at open); the search then runs again. Without it, or if the damage stays, the tool answers with an
    ``index_damaged`` error that says what to do.
    """
    from pi_memory.index import IndexUnavailableError, SearchInputError, is_corruption
    from pi_memory.index.file_guard import NotAnIndexError
    from pi_memory.retrieval import memory_search, session_search
    from pi_memory.storage import ReadOnlyDataError, UnreadableFileError
    from pi_memory.tools import ToolSpec

    def project_of(value: str | None) -> str | None:
        return current_project if value == "current" else value

    def damaged(exc: BaseException) -> dict:
        return {"success": False, "code": "index_damaged",
                "error": f"The search index is damaged ({exc}) and could not be repaired here. Run "
                         "`pi-memory reindex` to rebuild it from the session files and Markdown stores."}

    def run(fn, skipped: str | None = None) -> dict:
        try:
            try:
                result = fn()
            except sqlite3.DatabaseError as exc:
                if not is_corruption(exc) or repair is None:
                    raise
                repair()  # sets the damaged file aside, rebuilds (salvaging what it can), then one more try
                result = fn()
        except SearchInputError as exc:
            return {"success": False, "code": "invalid_arguments", "error": str(exc)}
        except IndexUnavailableError as exc:  # its message says what happened and what to do
            return {"success": False, "code": "index_damaged", "error": str(exc)}
        except ReadOnlyDataError as exc:  # a read-only index whose schema is older than this version's
            return {"success": False, "code": "read_only", "error": str(exc)}
        except (UnreadableFileError, NotAnIndexError) as exc:  # the index file: unreadable, or another program's
            return {"success": False, "code": exc.problem.kind,
                    "error": f"{exc} Retrying will not help; tell the user."}
        except sqlite3.DatabaseError as exc:
            if is_corruption(exc):
                return damaged(exc)
            raise
        data = _redact(result.model_dump(by_alias=True, exclude_none=True))
        if skipped:  # a part of the search that did not run: said beside what the search found
            data["note"] = f"{data['note']} {skipped}" if data.get("note") else skipped
        return {"success": True, **(_screen(data, entry_name or _default_entry_name) if for_model else data)}

    def sessions(a: SessionSearchArgs) -> dict:
        found, skipped = _embedder_of(embedder, for_model)
        floor = {"min_similarity": min_similarity()} if found is not None and min_similarity is not None else {}
        return run(lambda: session_search(
            conn_factory(), a.query, limit=a.limit or 10, project=project_of(a.project), role=a.role,
            since=a.since, until=a.until, embedder=found, **floor,
        ), skipped)

    def memories(a: MemorySearchArgs) -> dict:
        return run(lambda: memory_search(
            conn_factory(), a.query, limit=a.limit or 10, target=a.target, category=a.category,
            project=project_of(a.project), blocks=blocks() if blocks is not None else None,
        ))

    def invalid(error: str, arguments: dict) -> dict:
        return {"success": False, "code": "invalid_arguments", "error": error}

    session_tool = _anchor_tool(session_roots, current_project, invalid) if session_variant == "anchors" else None
    return [
        session_tool or ToolSpec(
            name="session_search",
            label="Search past sessions",
            description="Search every past conversation with coding agents on this machine (pi, Claude Code, "
            "Codex) by relevance. Use it when the user refers to earlier work ('what did we decide about…', "
            "'last week we…') or before redoing something that may have been solved before. Returns snippets "
            "with the session, file, line and time they came from.",
            args_model=SessionSearchArgs,
            handler=sessions,
            read_only=True,
            idempotent=True,
            on_invalid=invalid,
        ),
        ToolSpec(
            name="memory_search",
            label="Search memories",
            description="Search saved memories (notes, user profile, project notes, lessons from failures, "
            "memories kept beyond the prompt's size limit, and the memory blocks) by relevance. A block hit has "
            "target 'block' and its key in 'block' (the blockKey updateMemory takes).",
            args_model=MemorySearchArgs,
            handler=memories,
            read_only=True,
            on_invalid=invalid,
        ),
    ]


# What a session search says when semantic memory could not be opened because another process held the index
# (runtime.SEMANTIC_WAIT_S): the model's words say what it may do, a person's what they may do.
HELD_FOR_MODEL = ("Searched by keyword only: another process (an indexing pass or a rebuild) held the search index, "
                  "so the search by meaning was skipped; the same search a little later may find more.")
HELD_FOR_PERSON = ("Searched by keyword only: another process held the search index (an indexing pass or a "
                   "rebuild), so semantic memory was skipped; run the search again once it is done to search by "
                   "meaning too.")


def _embedder_of(getter: Callable[[], object] | None, for_model: bool) -> tuple[object | None, str | None]:
    """The search's embedder, or ``None`` when there is none or it cannot be opened (keyword-only then), and the
    sentence saying so when that is because another process held the index (``None`` otherwise: semantic memory
    off by the settings needs no word)."""
    from pi_memory.storage import is_locked

    if getter is None:
        return None, None
    try:
        return getter(), None
    except Exception as exc:  # noqa: BLE001 - semantic settings that do not open leave session_search keyword-only
        return None, (HELD_FOR_MODEL if for_model else HELD_FOR_PERSON) if is_locked(exc) else None


def _anchor_tool(roots: Callable[[], object] | None, current_project: str | None, invalid) -> ToolSpec:
    from pi_memory.index import SearchInputError, anchor_search
    from pi_memory.index.anchors import render
    from pi_memory.tools import ToolSpec

    def anchors(a: AnchorSearchArgs) -> dict:
        must = [*(a.all_ or []), *((a.query or "").split())]
        cwd = current_project if a.cwd == "current" else a.cwd
        if a.cwd == "current" and current_project is None:
            return {"success": False, "code": "invalid_arguments",
                    "error": "cwd 'current' needs a project, and this session is not in a git repository; give "
                             "a folder path."}
        try:
            result = anchor_search(roots() if roots is not None else {}, all_terms=must, any_terms=a.any_,
                                   exclude=a.exclude, since=a.from_, until=a.to, cwd=cwd, limit=a.limit)
        except SearchInputError as exc:
            return {"success": False, "code": "invalid_arguments", "error": str(exc)}
        return {"success": True, **result.to_dict()}

    return ToolSpec(
        name="session_search",
        label="Search past sessions",
        description="Find where something was said in past conversations with coding agents on this machine (pi, "
        "Claude Code, Codex), read from the session files. Give terms in 'all' (every one must appear), 'any' "
        "(at least one), 'exclude', and optionally from/to/cwd/limit. Answers with a count and "
        "path:startLine-endLine anchors with a short reason each; read those lines to see what was said.",
        args_model=AnchorSearchArgs,
        handler=anchors,
        read_only=True,
        idempotent=True,
        on_invalid=invalid,
        render=render,
    )
