"""Semantic memory end to end on the real pi CLI (issue #4, "Done when"): a fact stated in session 1 is
captured after the turn and recalled into session 2's injected user-channel message; a later contradicting
statement supersedes it, and history shows both. The model is the scripted server, answering capture's two
JSON calls with :mod:`pi_memory.devtools.scripted_memory`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pi_memory.devtools.pi_runner import PROVIDER
from pi_memory.devtools.scripted_llm import MODEL_ID, text_of
from pi_memory.devtools.scripted_memory import memory_responder

pytestmark = pytest.mark.e2e

FENCE = "[UNTRUSTED MEMORY DATA]"


def prompt_requests(llm, needle: str) -> list[dict]:
    """Chat requests of pi's agent (they carry tools) whose messages mention ``needle``."""
    return [b for b in llm.chat_requests if b.get("tools") and needle in json.dumps(b["messages"], ensure_ascii=False)]


def injected(body: dict) -> list[str]:
    return [text_of(m.get("content")) for m in body["messages"] if m.get("role") == "user" and FENCE in text_of(m.get("content"))]


def semantic_cli(pi, *args: str) -> dict | list:
    sandbox = pi.sandbox
    out = subprocess.run([sys.executable, "-m", "pi_memory", "semantic", *args, "--json"], cwd=sandbox.project,
                         env=sandbox.env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_capture_then_recall_then_supersede(pi) -> None:
    pi.llm.responder = memory_responder
    pi.sandbox.update_settings({"pi-memory": {"llm": {"fromPi": f"{PROVIDER}/{MODEL_ID}"}, "userId": "e2e-user"}})

    pi.run("Remember: The staging database is postgres 15")
    assert [m["memory"] for m in semantic_cli(pi, "list")["results"]] == ["The staging database is postgres 15"]

    pi.run("Which database does staging use?")
    [body] = prompt_requests(pi.llm, "Which database does staging use?")
    [block] = injected(body)
    assert '"The staging database is postgres 15"' in block
    assert FENCE not in text_of(body["messages"][0].get("content"))  # never in the system prompt

    pi.run("Remember: The staging database is postgres 16")
    pi.run("Tell me about the staging database")
    [body] = prompt_requests(pi.llm, "Tell me about the staging database")
    [block] = injected(body)
    assert "postgres 16" in block and "postgres 15" not in block

    items = semantic_cli(pi, "list")["results"]
    assert [m["memory"] for m in items] == ["The staging database is postgres 16"]
    history = semantic_cli(pi, "history", items[0]["id"])
    rows = json.dumps(history)
    assert "postgres 15" in rows and "postgres 16" in rows


def test_trivial_prompts_and_no_model_do_not_call_capture(pi) -> None:
    pi.llm.responder = memory_responder  # but no pi-memory.llm setting: capture is off
    pi.run("Remember: The build uses make")
    assert not [b for b in pi.llm.chat_requests if not b.get("tools")
                and "pick out the facts" in text_of(b["messages"][0].get("content"))]
    pi.run("ok")
    assert all(not injected(b) for b in pi.llm.chat_requests if b.get("tools"))


def test_the_turn_date_is_the_users_and_a_failed_capture_is_seen_by_status(pi) -> None:
    """Issue 9, items 7 and 10, in real pi: the extension sends local time with its offset (to after_run and, as
    recall's as_of, to recall), and a malformed
    decision reply (no ``event``) during capture is counted where another process sees it."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    pi.llm.responder = memory_responder
    pi.sandbox.update_settings({"pi-memory": {"llm": {"fromPi": f"{PROVIDER}/{MODEL_ID}", "jsonRetries": 0},
                                              "userId": "e2e-user"}})
    zone = "Pacific/Kiritimati"  # UTC+14: the local date differs from the UTC one for 14 hours a day
    log = pi.sandbox.root / "bridge-debug.log"
    pi.run("Remember: The release freeze starts on Monday",
           env={"TZ": zone, "PI_MEMORY_LOG_LEVEL": "debug", "PI_MEMORY_BRIDGE_LOG": str(log)})
    [item] = semantic_cli(pi, "list")["results"]
    assert item["observedAt"].endswith("+14:00")
    today = datetime.now(ZoneInfo(zone)).date().isoformat()
    assert item["observedAt"][:10] == today
    # recall got the turn's time (issue 13 item 3: as_of), in the user's zone
    [as_of] = [line.split("recall as of ", 1)[1] for line in log.read_text().splitlines() if "recall as of " in line]
    assert as_of.startswith(f"{today}T") and as_of.endswith("+14:00"), as_of
    extraction = [b for b in pi.llm.chat_requests if "pick out the facts" in text_of(b["messages"][0].get("content"))]
    assert f"Observation date: {item['observedAt'][:10]}" in text_of(extraction[-1]["messages"][1].get("content"))

    def no_event(messages, tools):
        reply = memory_responder(messages, tools)
        if reply is not None and '"decisions"' in reply.text:
            return type(reply)(text=json.dumps({"decisions": [{"fact": 0, "memory_id": None}]}))
        return reply

    pi.llm.responder = no_event
    pi.run("Remember: The CI runs on GitHub Actions")  # pi exits 0: capture runs in the background
    status = semantic_cli(pi, "status")
    assert status["jobs"]["capture"]["error"] == 1 and status["jobs"]["capture"]["ok"] == 1
    assert status["jobs"]["latestError"]["message"].startswith("memory decision failed:")
    assert "event" in status["jobs"]["latestError"]["message"]
