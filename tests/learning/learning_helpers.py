"""Helpers shared by the learning tests: the scripted model's brain and settings writers."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from pi_memory.devtools.scripted_llm import Reply, ScriptedLLM, text_of


class Brain:
    """Queued replies for learning jobs: a dict (sent as JSON), a str (sent verbatim, e.g. malformed) or a
    :class:`Reply` (e.g. with its own ``usage``). An empty queue answers "nothing to save". ``prompts`` keeps
    (system, user) of every call."""

    def __init__(self) -> None:
        self.replies: deque[Any] = deque()
        self.prompts: list[tuple[str, str]] = []

    def __call__(self, messages: list[dict], tools: set[str]) -> Reply:
        system = text_of(messages[0]["content"]) if messages and messages[0]["role"] == "system" else ""
        user = next((text_of(m["content"]) for m in messages if m["role"] == "user"), "")
        self.prompts.append((system, user))
        reply = self.replies.popleft() if self.replies else {"operations": [], "note": "nothing to save"}
        if isinstance(reply, Reply):
            return reply
        return Reply(text=reply if isinstance(reply, str) else json.dumps(reply))


def write_settings(agent: Path, block: dict) -> None:
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"pi-memory": block}), encoding="utf-8")


def llm_block(llm: ScriptedLLM, **extra: Any) -> dict:
    return {"llm": {"provider": "openai-compatible", "baseUrl": llm.base_url, "model": "fake-model",
                    "timeoutSeconds": 10}, **extra}


def cli(*args: str) -> tuple[int, dict | str]:
    """``pi-memory ARGS`` in-process: the exit code and the JSON it printed (its text when not JSON)."""
    from pi_memory.cli.app import app

    result = CliRunner().invoke(app, list(args))
    try:
        return result.exit_code, json.loads(result.stdout)
    except ValueError:
        return result.exit_code, result.stdout
