"""Semantic memories, Sessions and Recall preview: thin over the semantic service, the ``session_search`` tool and
:mod:`pi_memory.prompt` (the same calls as ``pi-memory semantic list|history|recall``, ``pi-memory session-search`` and
``pi-memory preview-context``)."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pi_memory.bounds import parse_row_number
from pi_memory.index import conversation_around, find_message
from pi_memory.integrations.inspector.team import explain_local
from pi_memory.prompt import build_context
from pi_memory.retrieval.engine import evidence_reasons

LIST_LIMIT = 200
EVENT_WORDS = {"ADD": "added", "UPDATE": "new version", "SUPERSEDE": "superseded", "DELETE": "deleted"}
SOURCE_KINDS = {"capture": "captured from a conversation turn", "tool": "saved by the agent (mem0_memory tool)",
                "cli": "added with the pi-memory CLI", "api": "added through the API (Python or the memory server)",
                "import": "imported", "inspector": "added in the memory inspector"}


TURN_WINDOW = 3  # messages shown on each side of a turn
MAX_TURN_WINDOW = 50  # a larger ?window= is taken as this (a huge one reached SQLite's LIMIT and failed)


def sources_of(svc, events: list, mem) -> dict[str, object]:
    """memory id -> that version's :class:`~pi_memory.semantic.models.MemorySource`, for every version a
    history names (each timeline step links to the turn its version came from)."""
    found = {mem.id: mem.source} if mem is not None else {}
    for event in events:
        if event.memory_id not in found:
            version = svc.get(event.memory_id)
            if version is not None:
                found[event.memory_id] = version.source
    return found


def routes(memory, renderer, team) -> list[Route]:
    """``team``: the :class:`~pi_memory.integrations.inspector.team.TeamLink`; when it is active every
    semantic view reads the team server for the token's user."""
    others: dict[str, object] = {}  # scope of another project folder -> its service (opened once)

    def service(project: str | None = None):
        """This project's service, or with ``project`` (a folder) that project's scope, as ``--project`` of
        ``pi-memory semantic``; ``(service | None, problem | None, team status | None)``."""
        folder = Path(project).expanduser() if project else None
        if folder is not None and not folder.is_dir():
            return None, (f"{project} is not a folder: memories are kept per project folder, so give an existing "
                          "folder of the project (or leave it empty for the project the inspector was started "
                          "in)."), None
        if team.active:
            svc, status = team.service(str(folder) if folder else None)
            return svc, status.problem, status
        if folder is None:
            return memory.semantic(), None, None
        key = str(folder.resolve())
        if key not in others:
            from pi_memory.semantic import open_semantic

            try:
                others[key] = open_semantic(cwd=folder, data_dir=memory.settings.data_dir,
                                            background_reembed=False, warm=False, model=None)
            except Exception as exc:  # unusable settings of that folder: say so in the page
                return None, f"semantic memory of {project} cannot be opened: {exc}", None
        return others[key], None, None

    def explain(exc: Exception) -> str:
        return team.explain(exc) if team.active else explain_local(exc)

    def status_text(svc, project: str) -> str:
        if project and not team.active:
            return "another project's scope"
        return svc.status() if team.active and svc is not None else memory.semantic_status

    async def semantic(request: Request) -> Response:
        q = request.query_params.get("q", "").strip()
        show_all = request.query_params.get("all") == "1"
        project = request.query_params.get("project", "").strip()
        svc, error, server = service(project)
        hits, mems = [], []
        if svc is not None:
            try:
                if q:
                    hits = svc.search(q, top_k=50, floor=request.query_params.get("floor") != "0")
                else:
                    mems = svc.list(limit=LIST_LIMIT, include_superseded=show_all)
            except Exception as exc:  # a backend that does not answer: say so in the page
                svc, error = None, explain(exc)
        return renderer.page(request, "semantic.html", "semantic", service=svc, status=status_text(svc, project),
                             q=q, show_all=show_all, hits=hits, mems=mems, error=error, project=project,
                             floor=svc.settings.recall_min_similarity if svc else None, server=server)

    async def history(request: Request) -> Response:
        project = request.query_params.get("project")
        svc, error, server = service(project)
        mid = request.path_params["memory_id"]
        events, mem, sources = [], None, {}
        if svc is not None:
            try:
                events, mem = svc.history(mid), svc.get(mid)
                sources = sources_of(svc, events, mem)
            except Exception as exc:
                error = explain(exc)
        return renderer.page(request, "history.html", "semantic", mem=mem, mid=mid, events=events, error=error,
                             project=project, server=server, sources=sources, kinds=SOURCE_KINDS,
                             steps=EVENT_WORDS)

    async def delete(request: Request) -> Response:
        svc, error, _ = service(request.query_params.get("project"))
        mid = request.path_params["memory_id"]
        ok = False
        if svc is not None:
            try:
                ok = svc.delete(mid, reason="deleted in the memory inspector")
            except Exception as exc:
                error = explain(exc)
        return renderer.fragment("_deleted.html", ok=ok, mid=mid, error=error)

    async def sessions(request: Request) -> Response:
        from pi_memory.tools.search import create_search_tools

        q = request.query_params.get("q", "").strip()
        only_here = request.query_params.get("here") == "1"
        result = None
        if q:
            current = str(memory.project_root) if memory.project_root else None
            spec = next(t for t in create_search_tools(memory.index, current, memory.repair_index)
                        if t.name == "session_search")
            args = {"query": q, "limit": 30, **({"project": "current"} if only_here and current else {})}
            result = spec.call(args).result
        return renderer.page(request, "sessions.html", "sessions", q=q, only_here=only_here, result=result)

    async def turn(request: Request) -> Response:
        p = request.query_params
        conn = memory.index()
        mid = find_message(conn, session=p.get("session"), entry_id=p.get("entry"), file=p.get("file"),
                           line=parse_row_number(p.get("line")))  # past SQLite's range: no such line
        window = min(max(parse_row_number(p.get("window")) or TURN_WINDOW, 1), MAX_TURN_WINDOW)
        rows = conversation_around(conn, mid, window=window) if mid is not None else []
        return renderer.page(request, "turn.html", "sessions", rows=rows, asked=dict(p))

    async def recall(request: Request) -> Response:
        prompt = request.query_params.get("prompt")
        ctx = build_context(memory)
        svc, error, server = service()
        preview = None
        if prompt is not None and svc is not None:
            try:
                preview = svc.recall_preview(prompt)
            except Exception as exc:
                error = explain(exc)
        floor = svc.settings.recall_min_similarity if svc else None
        rows = [{"hit": h, "why": evidence_reasons(h, floor)} for h in (preview or {}).get("hits", [])]
        return renderer.page(request, "recall.html", "recall", prompt=prompt, preview=preview, rows=rows,
                             error=error, floor=floor, ctx=ctx, status=memory.semantic_status, server=server,
                             settings=svc.settings if svc else None)

    return [Route("/semantic", semantic), Route("/semantic/{memory_id}", history),
            Route("/semantic/{memory_id}/delete", delete, methods=["POST"]),
            Route("/sessions", sessions), Route("/sessions/turn", turn), Route("/recall", recall)]
