"""Learning log, Skills and Health: thin over :mod:`pi_memory.learning` (jobs, budget, undo), the skill store
and the index's own records (size, repairs, job outcomes), as ``pi-memory learning log|undo``, ``pi-memory
skills`` and ``pi-memory status`` / ``semantic status`` show them."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pi_memory.bounds import parse_row_number
from pi_memory.index import describe_repair, index_path, repairs
from pi_memory.index import outcomes as job_outcomes
from pi_memory.insights import index_counts
from pi_memory.integrations.inspector import shown
from pi_memory.integrations.inspector.render import day_chart
from pi_memory.learning import list_jobs, tokens_per_day, undo_job
from pi_memory.learning.runner import JobReport
from pi_memory.semantic import outcomes as semantic_outcomes
from pi_memory.skills.person import result_for_person

CHART_DAYS = 14
JOBS_SHOWN = 50
# learning_jobs.outcome of a job that did not do its work (a partial one: only some of it, the rest refused)
FAILED_OUTCOMES = ("error", "invalid_output", "budget", "partial")
COUNT_LABELS = {"sessionFiles": "session files", "memories": "curated entries (index mirror)",
                "extended": "extended store entries"}


def routes(memory, renderer, team) -> list[Route]:
    def learning_context(report=None) -> dict:
        learner = memory.learner()
        if learner is None:
            return {"learner": None, "status": memory.learning_status, "report": report}
        budget = learner.budget_status()
        days = tokens_per_day(learner.conn, CHART_DAYS)
        return {"learner": learner, "jobs": list_jobs(learner.conn, limit=JOBS_SHOWN), "budget": budget,
                "chart": day_chart(days, budget["dailyTokenBudget"]), "report": report,
                "status": memory.learning_status}

    async def learning(request: Request) -> Response:
        return renderer.page(request, "learning.html", "learning", **learning_context())

    async def undo(request: Request) -> Response:
        learner = memory.learner()
        if learner is None:
            return renderer.fragment("_jobs.html", **learning_context())
        job_id = parse_row_number(request.path_params["job_id"])  # read here: Starlette's int convertor raised
        if job_id is None:  # (a 5,000-digit id: HTTP 500); more digits than SQLite holds names no job either
            shown_id = request.path_params["job_id"][:24] + ("…" if len(request.path_params["job_id"]) > 24 else "")
            report = JobReport("undo", "refused", f"there is no learning job {shown_id}; `pi-memory learning log` "
                                                  "lists them")
        else:
            report = undo_job(learner, job_id)
        return renderer.fragment("_jobs.html", **learning_context(report))

    def skills_page(request: Request, result: dict | None = None, viewed: dict | None = None) -> Response:
        store = memory.skills()  # every text redacted, each skill with what the scanners found (.shown)
        return renderer.page(request, "skills.html", "skills", skills=[shown.skill(s) for s in store.skills()],
                             scopes=store.scopes,
                             result=None if result is None else shown.result(result_for_person(result)),
                             viewed=viewed)

    async def skills(request: Request) -> Response:
        viewed = None
        if request.query_params.get("id"):
            viewed = result_for_person(shown.skill_view(memory.skills(), request.query_params["id"]))
        return skills_page(request, viewed=viewed)

    async def skill_change(request: Request) -> Response:
        form = await request.form()
        store, skill_id = memory.skills(), str(form.get("id", ""))
        if request.path_params["action"] == "move":
            result = store.move(skill_id, str(form.get("scope", "")))
        elif request.path_params["action"] == "delete":
            result = store.delete(skill_id)
        else:
            return Response("no such change (skills: move, delete)", status_code=404)
        return skills_page(request, result=result)

    async def health(request: Request) -> Response:
        data_dir = memory.settings.data_dir
        path = index_path(data_dir)
        files = [path, path.with_name(path.name + "-wal")]  # WAL mode: recent writes live in the -wal file
        info: dict = {"path": str(path), "exists": path.exists(),
                      "size": sum(f.stat().st_size for f in files if f.exists()),
                      "counts": None, "error": None, "repairs": [], "errors": [], "semantic": None}
        try:
            conn = memory.index()
            info["counts"] = index_counts(conn)
            info["repairs"] = [{"record": r, "text": describe_repair(r)} for r in reversed(repairs(conn))][:5]
            info["errors"] = [o.to_public() for o in job_outcomes.latest(conn, outcome="error", limit=10)]
            info["semantic_outcomes"] = semantic_outcomes.summary(conn)
        except Exception as exc:  # an unusable index is what this page is for: say so
            info["error"] = f"{type(exc).__name__}: {exc}"
        learner = memory.learner()
        info["failed_jobs"] = [] if learner is None else [  # background learning jobs that failed, newest first
            j for j in list_jobs(learner.conn, limit=JOBS_SHOWN) if j["outcome"] in FAILED_OUTCOMES][:10]
        server = None
        if team.active:  # the team server's user and address, or what went wrong (never the token)
            service, server = team.service()
        else:
            service = memory.semantic()
        info["semantic"] = service.status_info() if service is not None else None
        model, info["model_status"] = memory.learning_model("review")
        if model is not None:
            model.close()
        return renderer.page(request, "health.html", "health", info=info, labels=COUNT_LABELS,
                             semantic_status=memory.semantic_status, settings=memory.settings, server=server)

    return [Route("/learning", learning), Route("/learning/{job_id:str}/undo", undo, methods=["POST"]),
            Route("/skills", skills), Route("/skills/{action:str}", skill_change, methods=["POST"]),
            Route("/health", health)]
