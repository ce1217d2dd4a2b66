"""End-to-end on the real pi CLI: anchor-mode session search and lazy initialization (issue 16)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest

from pi_memory.devtools.scripted_llm import tool_results_of

if TYPE_CHECKING:
    from conftest import PiE2E

pytestmark = pytest.mark.e2e


def tool_result(pi: PiE2E, marker: str) -> tuple[str, str]:
    from pi_memory.devtools.scripted_llm import prompt_of

    found = [b for b in pi.llm.chat_requests if b.get("tools") and marker in (prompt_of(b) or "")]
    assert found, f"no request for a prompt containing {marker!r}"
    results = tool_results_of(found[-1])
    assert results, "the model never received a tool result"
    return results[-1]


def test_anchor_search_answers_with_line_anchors_from_the_session_files(pi: PiE2E) -> None:
    pi.sandbox.update_settings({"pi-memory": {"sessionSearch": {"variant": "anchors"}}})
    pi.run("We chose postgres for the job queue, remember that")
    earlier = pi.sandbox.session_files()
    assert len(earlier) == 1
    pi.run("Where did we talk about it? [tool:session_search] " + json.dumps({"all": ["postgres", "job queue"]}))
    name, text = tool_result(pi, "Where did we talk about it?")
    assert name == "session_search"
    lines = text.splitlines()
    # the earlier session's prompt, and this session's own prompt (pi wrote it before the tool ran)
    assert lines[0] == "count: 2", text
    earlier_lines = [line for line in lines[1:] if line.startswith(f"{earlier[0]}:")]
    assert len(earlier_lines) == 1, text
    # the prompt and the scripted model's echo of it: neighbours, one anchor
    assert re.fullmatch(rf"{re.escape(str(earlier[0]))}:\d+-\d+ user\+assistant \d{{4}}-\d\d-\d\d in "
                        rf"{re.escape(str(pi.sandbox.project))}: postgres, job queue", earlier_lines[0]), text
    schema = next(t for b in pi.llm.chat_requests for t in b.get("tools") or []
                  if t["function"]["name"] == "session_search")["function"]["parameters"]
    assert {"all", "any", "exclude", "from", "to", "cwd", "limit"} <= set(schema["properties"])


def test_lazy_start_opens_nothing_until_memory_is_used(pi: PiE2E) -> None:
    pi.sandbox.update_settings({"pi-memory": {"memoryMode": "policy-only", "lazyInitialization": True}})
    (pi.sandbox.memory_dir / "STANDING.md").write_text("- Always answer in English\n")
    plain = pi.run("Just say hello", env={"PI_MEMORY_TIMING": "1"})
    assert not (pi.sandbox.memory_dir / "index.sqlite3").exists()
    assert "pi-memory timing extension.session-start" in plain.stderr
    assert "pi-memory timing session-start.describe" in plain.stderr
    assert "memory-init.load" not in plain.stderr
    system = next(b for b in pi.llm.chat_requests if b.get("tools"))["messages"][0]["content"]
    assert "Always answer in English" in str(system)  # standing instructions at start
    from pi_memory.skills.builtin import BUILTIN_DIR

    assert str(BUILTIN_DIR / "learn-memory-tool" / "SKILL.md") in str(system)  # the shipped skill, discovered

    used = pi.run("Remember this. [tool:memory_add] " + json.dumps({"target": "memory", "content": "We use uv"}),
                  env={"PI_MEMORY_TIMING": "1"})
    assert pi.memory_file.read_text() == "We use uv\n"
    assert "pi-memory timing memory-init.load" in used.stderr
    assert (pi.sandbox.memory_dir / "index.sqlite3").exists()


def test_timing_is_silent_when_off(pi: PiE2E) -> None:
    run = pi.run("Just say hello")
    assert "pi-memory timing" not in run.stderr
