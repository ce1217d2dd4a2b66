"""End-to-end on the real pi CLIs: skills reach pi through resources_discover, skill_manage writes them, a
complex run asks once whether to save a procedure, and /memory-skills manages them with pi's dialogs (RPC)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from pi_memory.devtools.scripted_llm import system_prompt_of, text_of
from pi_memory.skills import SkillStore, render_body
from pi_memory.skills.nudge import NUDGE_TEXT

if TYPE_CHECKING:
    from conftest import PiE2E

pytestmark = pytest.mark.e2e
BODY = render_body("When shipping", ["make deploy ENV=staging", "watch the dashboard"])
NUDGE_START = NUDGE_TEXT.split("(")[0]


def store_for(pi: PiE2E) -> SkillStore:
    return SkillStore(pi.sandbox.memory_dir, project_root=pi.sandbox.project)


def test_skills_reach_the_prompt_and_skill_manage_saves_one(pi: PiE2E) -> None:
    store = store_for(pi)
    store.create("deploy staging", "Deploy the shop to staging with make deploy", "global", BODY)
    store.create("run migrations", "Run this repository's database migrations safely", "project", BODY)
    create = {"action": "create", "name": "release notes", "scope": "project",
              "description": "Write release notes from git log", "procedure_steps": ["git log --oneline"]}
    pi.run("Save a skill.\n[tool:skill_manage] " + json.dumps(create))
    system = system_prompt_of(pi.llm.chat_requests[0]) or ""
    assert "Deploy the shop to staging with make deploy" in system
    assert "database migrations safely" in system, system[-1500:]
    assert str(store.roots["global"] / "deploy-staging" / "SKILL.md") in system
    saved = store.view("project:release-notes")
    assert saved["sections"] == {"procedure": "1. git log --oneline"}


def test_a_complex_run_asks_once_whether_to_save_a_skill(pi: PiE2E) -> None:
    """Print mode: the question rides along with the next prompt (a turn of its own would collide with it)."""
    steps = "\n".join(['[tool:bash] {"command": "echo step"}'] * 4 + ['[tool:memory_read] {"target": "memory"}'] * 4)
    pi.run("First complex task.\n" + steps, "Second complex task.\n" + steps)
    asked = [b for b in pi.llm.chat_requests
             if any(text_of(m.get("content")).startswith(NUDGE_START) for m in b.get("messages", []))]
    assert asked, "the agent was never asked"
    last = pi.llm.chat_requests[-1]
    nudges = [text_of(m.get("content")) for m in last.get("messages", [])
              if text_of(m.get("content")).startswith(NUDGE_START)]
    assert "Second complex task." in json.dumps(last)  # the whole session is in the last request
    assert nudges == [NUDGE_TEXT.format(calls=8, tools=2)]  # once per session, with the run's figures


def rpc_command(pi: PiE2E, message: str, answer: Callable[[dict], dict | None], done: Callable[[list], bool],
                timeout: float = 60) -> list[dict]:
    """Run ``message`` in ``pi --mode rpc``; ``answer(request)`` replies to each dialog (``None``: cancel)."""

    def on_event(events: list[dict], reply: Callable[[dict], None]) -> bool:
        event = events[-1]
        if event.get("type") == "extension_ui_request" and event.get("method") in ("select", "input", "confirm"):
            body = answer(event)
            reply({"type": "extension_ui_response", "id": event["id"], **({"cancelled": True} if body is None else body)})
        return done(events)

    return pi.rpc(message, on_event, timeout=timeout)


def notifications(events: list[dict]) -> list[str]:
    return [e["message"] for e in events if e.get("type") == "extension_ui_request" and e.get("method") == "notify"]


def test_memory_skills_manager_searches_selects_moves_and_deletes(pi: PiE2E) -> None:
    store = store_for(pi)
    store.create("deploy staging", "Deploy the shop to staging", "global", BODY)
    store.create("deploy production", "Ship the shop to production after staging", "global", BODY)
    store.create("flaky tests", "Fix flaky pytest runs", "global", BODY)
    script = iter([
        ("select", lambda o: next(x for x in o if x.startswith("Search:"))),
        ("input", "deploy"),
        ("select", lambda o: "Select all shown"),
        ("select", lambda o: next(x for x in o if x.startswith("Act on 2 selected"))),
        ("select", lambda o: next(x for x in o if x.startswith("Move to project"))),
        ("select", lambda o: next(x for x in o if "deploy-production" in x)),
        ("select", lambda o: next(x for x in o if x.startswith("Act on 1 selected"))),
        ("select", lambda o: "Delete"),
        ("confirm", True),
        ("select", lambda o: "Close"),
    ])
    seen: list[dict] = []

    def answer(request: dict) -> dict | None:
        seen.append(request)
        method, value = next(script)
        assert request["method"] == method, request
        if method == "select":
            return {"value": value(request["options"])}
        return {"confirmed": value} if method == "confirm" else {"value": value}

    events = rpc_command(pi, "/memory-skills", answer,
                         done=lambda ev: len([n for n in notifications(ev) if n.startswith(("Moved", "Deleted"))]) >= 2
                         and any(e.get("method") == "select" and "Close" in e.get("options", []) for e in seen[-1:])
                         and len(seen) == 10)
    texts = [n for n in notifications(events) if n.startswith(("Moved", "Deleted"))]
    assert texts == ["Moved 2 skill(s).\nRun /reload so pi sees the change.",
                     "Deleted 1 skill(s).\nRun /reload so pi sees the change."]
    assert [s.id for s in store.skills()] == ["global:flaky-tests", "project:deploy-staging"]
    assert seen[2]["title"] == 'Skills: 2 of 3 matching "deploy" (pick one to select it)'
