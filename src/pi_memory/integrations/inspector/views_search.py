"""Semantic memories, Sessions and Recall preview: thin over the semantic service, the ``session_search`` tool and
:mod:`pi_memory.prompt` (the same calls as ``pi-memory semantic list|history|recall``, ``pi-memory search`` and
``pi-memory preview-context``)."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pi_memory.index import conversation_around, find_message
from pi_memory.prompt import build_context
from pi_memory.retrieval.engine import evidence_reasons

LIST_LIMIT = 200


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


def routes(memory, renderer) -> list[Route]:
    others: dict[str, object] = {}  # scope of another project folder -> its service (opened once)

    def service(project: str | None = None):
        """This project's service, or with ``project`` (a folder) that project's scope, as ``--project`` of
        ``pi-memory semantic``; ``(service | None, problem | None)``."""
        if not project:
            return memory.semantic(), None
        folder = Path(project).expanduser()
        if not folder.is_dir():
            return None, (f"{project} is not a folder: memories are kept per project folder, so give an existing "
                          "folder of the project (or leave it empty for the project the inspector was started in).")
        key = str(folder.resolve())
        if key not in others:
            from pi_memory.semantic import open_semantic

            try:
                others[key] = open_semantic(cwd=folder, data_dir=memory.settings.data_dir,
                                            background_reembed=False, warm=False, model=None)
            except Exception as exc:  # unusable settings of that folder: say so in the page
                return None, f"semantic memory of {project} cannot be opened: {exc}"
        return others[key], None

    async def semantic(request: Request) -> Response:
        q = request.query_params.get("q", "").strip()
        show_all = request.query_params.get("all") == "1"
        project = request.query_params.get("project", "").strip()
        svc, error = service(project)
        hits, mems = [], []
        if svc is not None:
            try:
                if q:
                    hits = svc.search(q, top_k=50, floor=request.query_params.get("floor") != "0")
                else:
                    mems = svc.list(limit=LIST_LIMIT, include_superseded=show_all)
            except Exception as exc:  # a backend that does not answer: say so in the page
                error = f"The memory backend failed: {type(exc).__name__}: {exc}"
        return renderer.page(request, "semantic.html", "semantic", service=svc, status=memory.semantic_status,
                             q=q, show_all=show_all, hits=hits, mems=mems, error=error, project=project,
                             floor=svc.settings.recall_min_similarity if svc else None)

    async def history(request: Request) -> Response:
        svc, _ = service(request.query_params.get("project"))
        mid = request.path_params["memory_id"]
        events = svc.history(mid) if svc is not None else []
        mem = svc.get(mid) if svc is not None else None
        return renderer.page(request, "history.html", "semantic", mem=mem, mid=mid, events=events)

    async def delete(request: Request) -> Response:
        svc, _ = service(request.query_params.get("project"))
        mid = request.path_params["memory_id"]
        ok = svc is not None and svc.delete(mid, reason="deleted in the memory inspector")
        return renderer.fragment("_deleted.html", ok=ok, mid=mid)

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
                           line=_int(p.get("line")))
        rows = conversation_around(conn, mid, window=_int(p.get("window")) or 3) if mid is not None else []
        return renderer.page(request, "turn.html", "sessions", rows=rows, asked=dict(p))

    async def recall(request: Request) -> Response:
        prompt = request.query_params.get("prompt")
        ctx = build_context(memory)
        svc, _ = service()
        preview, error = None, None
        if prompt is not None and svc is not None:
            try:
                preview = svc.recall_preview(prompt)
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
        floor = svc.settings.recall_min_similarity if svc else None
        rows = [{"hit": h, "why": evidence_reasons(h, floor)} for h in (preview or {}).get("hits", [])]
        return renderer.page(request, "recall.html", "recall", prompt=prompt, preview=preview, rows=rows,
                             error=error, floor=floor, ctx=ctx, status=memory.semantic_status,
                             settings=svc.settings if svc else None)

    return [Route("/semantic", semantic), Route("/semantic/{memory_id}", history),
            Route("/semantic/{memory_id}/delete", delete, methods=["POST"]),
            Route("/sessions", sessions), Route("/sessions/turn", turn), Route("/recall", recall)]
