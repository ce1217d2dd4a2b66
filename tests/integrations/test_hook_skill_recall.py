"""Skills reach Claude Code and Codex through the prompt hook's recall (their default ``recallSources``), not pi
(which lists them already); a skill exported to the host is left out, since the host lists it itself."""

from __future__ import annotations

import json

from pi_memory.integrations import hooks
from pi_memory.session import AgentSession
from pi_memory.skills import SkillStore
from pi_memory.skills.export import export_skills

DEPLOY = "Deploy the web app to the staging cluster with helm and check the rollout"
LINE = ('- skill:global:deploy-staging: "deploy-staging: ' + DEPLOY + '" (a saved skill; its steps load with '
        'skill_manage {"action": "view", "skill_id": "global:deploy-staging"})')


def prompt(env, host: str, text: str) -> str:
    payload = json.dumps({"session_id": f"{host}-1", "cwd": str(env / "proj"), "prompt": text})
    answer = json.loads(hooks.run_hook(host, "prompt", payload, ceiling=60))  # behaviour, not speed
    return answer.get("hookSpecificOutput", {}).get("additionalContext") or ""


def test_the_prompt_hook_recalls_a_skill_for_claude_code_and_codex_not_for_pi(env):
    store = SkillStore(env / "data")
    assert store.create("deploy-staging", DEPLOY, "global", "## Procedure\n1. helm upgrade --install web")["success"]
    for host in ("claude-code", "codex"):
        assert LINE in prompt(env, host, "how do I deploy to staging?").splitlines()
        assert "skill:" not in prompt(env, host, "write a haiku about autumn leaves")
    pi = AgentSession(env / "proj")  # pi: no host named, the plain default (semantic memories only)
    try:
        assert pi.memory.semantic().settings.recall_sources == ["semantic"]
        assert pi.recall("how do I deploy to staging?").text is None
    finally:
        pi.memory.close()
    export_skills(store, "claude-code", env / "home")  # now Claude Code lists it by itself
    assert "skill:" not in prompt(env, "claude-code", "how do I deploy to staging?")
    assert LINE in prompt(env, "codex", "how do I deploy to staging?").splitlines()
