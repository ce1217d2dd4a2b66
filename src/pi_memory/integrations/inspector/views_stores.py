"""Stores view: the curated stores, memory blocks and standing instructions, each with its usage bar; add, edit
and remove entries through :class:`pi_memory.curated.MemoryStore` and pins through
:class:`pi_memory.standing.StandingStore`, refusals shown as the CLI shows them (``MemoryResult.for_person``).
A memory block the blocks' budget (``blocksCharBudget``) leaves out of the prompt is marked with why, under a
warning naming them all (:mod:`pi_memory.blocks.budget`). Every text is shown redacted, escaped and cut to a bound with the scanners' notes (:mod:`.shown`); the edit and
remove forms name an entry by its key (a hash of its text), which this handler looks up among the store's current
entries (those past the first :data:`.shown.SHOWN_ENTRIES` too); an Unpin form names its standing rule the same way
(a number would name another rule once one before it is removed elsewhere)."""

from __future__ import annotations

from dataclasses import replace

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pi_memory import shown_text
from pi_memory.blocks.budget import left_out_reason, person_warning
from pi_memory.curated.store import FAILURE_CATEGORIES
from pi_memory.insights import store_usage
from pi_memory.integrations.inspector import shown
from pi_memory.standing import MAX_CHARS, MAX_RULES, StandingStore
from pi_memory.standing.store import RULE_GONE


def routes(memory, renderer) -> list[Route]:
    def standing() -> StandingStore:
        return StandingStore.in_data_dir(memory.settings.data_dir)

    def stores() -> dict:
        out = store_usage(memory, with_entries=True)
        for info in out.values():
            info["entries"], info["cut"] = shown.entries(info["entries"], info["file"])
            info["notice"] = shown_text.shown(info["notice"], shown.SHOWN_CHARS) if info["notice"] else None
        return out

    def card(target: str, result=None) -> Response:
        return renderer.fragment("_store.html", target=target, info=stores()[target],
                                 result=None if result is None else shown.result(result), categories=FAILURE_CATEGORIES)

    def pins(result=None) -> Response:
        return renderer.fragment("_standing.html", pins=shown.pins(result or standing().list()), max_rules=MAX_RULES,
                                 max_chars=MAX_CHARS, enabled=memory.settings.standing_enabled)

    def blocks() -> tuple[list[dict], dict]:
        """The blocks in effect for the page, each left out of the prompt by the blocks' budget marked with why,
        and the budget's figures (``warning``: what a person reads when some are left out)."""
        store = memory.blocks()
        listed = store.blocks()
        fitted = store.in_prompt(listed)
        left = {id(b) for b in fitted.left_out}
        return ([shown.block(b, left_out_reason(b, fitted) if id(b) in left else None) for b in listed],
                {"left_out": len(fitted.left_out), "warning": person_warning(fitted)})

    async def page(request: Request) -> Response:
        listed, budget = blocks()
        return renderer.page(request, "stores.html", "stores", stores=stores(), blocks=listed, budget=budget,
                             pins=shown.pins(standing().list()), max_rules=MAX_RULES, max_chars=MAX_CHARS,
                             enabled=memory.settings.standing_enabled, categories=FAILURE_CATEGORIES)

    def gone(target: str) -> dict:
        return {"success": False, "code": "not_found", "error": f"That entry is no longer in "
                f"{memory.store.name(target)}: it was changed or removed since this page was loaded. Nothing was "
                "changed; the entries below are the current ones."}

    async def change(request: Request) -> Response:
        target, action = request.path_params["target"], request.path_params["action"]
        store = memory.store
        if target not in store.targets or action not in ("add", "replace", "remove"):
            return Response(f"no such change: {action} on {target} (stores: {', '.join(store.targets)}; changes: "
                            "add, replace, remove)", status_code=404)
        form = await request.form()
        text, key = str(form.get("text", "")), str(form.get("key", ""))
        store.begin_turn()  # one person's action: the per-turn retry guard is for models
        if action == "add" and target == "failure":
            category = str(form.get("category") or "failure")
            result = store.add_failure(text, category if category in FAILURE_CATEGORIES else "failure",
                                       str(form.get("reason") or "") or None)
        elif action == "add":
            result = store.add(target, text)
        else:  # the entry the form's key names, as it is now (the page carries no entry's text)
            old = next((e for e in store.read(target).entries or [] if shown.entry_key(e) == key), None)
            if old is None:
                return card(target, gone(target))
            result = store.replace(target, old, text) if action == "replace" else store.remove(target, old)
        return card(target, result.for_person())

    async def pin(request: Request) -> Response:
        form = await request.form()
        if request.path_params["action"] not in ("add", "remove"):
            return Response("no such change (standing instructions: add, remove)", status_code=404)
        if request.path_params["action"] == "add":
            return pins(standing().add(str(form.get("text", ""))))
        # the rule the form's key names (a hash of its text), as the file holds it now: a page loaded before
        # another rule was removed names its rules by text, never by a number that now means another rule
        store, key = standing(), str(form.get("key", ""))
        rule = next((r for r in store.rules() if shown.entry_key(r) == key), None)
        if rule is None:
            return pins(replace(store.list(), success=False, code="gone", error=RULE_GONE))
        return pins(store.remove_rule(rule))

    return [Route("/stores", page), Route("/stores/{target}/{action:str}", change, methods=["POST"]),
            Route("/standing/{action:str}", pin, methods=["POST"])]
