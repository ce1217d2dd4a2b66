"""The TUI (driven in tmux): after a complex run the question is a follow-up turn of its own, and
/memory-skills opens pi's selector with the skills."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from pi_memory.devtools.scripted_llm import text_of
from pi_memory.integrations.pi import EXTENSION_DIR
from pi_memory.skills import SkillStore, render_body
from pi_memory.skills.nudge import NUDGE_TEXT

if TYPE_CHECKING:
    from conftest import PiE2E

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]


class Tmux:
    def __init__(self, pi: PiE2E) -> None:
        self.name = f"pm-{uuid.uuid4().hex[:8]}"
        sandbox = pi.sandbox
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sandbox.env().items())
        command = f"cd {shlex.quote(str(sandbox.project))} && env -i {env} {sandbox.launcher} -e {EXTENSION_DIR}"
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", "200", "-y", "60", command], check=True)

    def screen(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True).stdout

    def wait_for(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never showed; the screen was:\n{self.screen()}")

    def type(self, text: str, enter: bool = True) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)
        if enter:
            subprocess.run(["tmux", "send-keys", "-t", self.name, "Enter"], check=True)

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], stderr=subprocess.DEVNULL)


@pytest.fixture
def tui(pi: PiE2E) -> Iterator[Tmux]:
    session = Tmux(pi)
    try:
        session.wait_for("memory:")  # the status line: the extension is up
        yield session
    finally:
        session.close()


def test_tui_question_is_a_turn_of_its_own_and_the_manager_lists_skills(pi: PiE2E, tui: Tmux) -> None:
    SkillStore(pi.sandbox.memory_dir, project_root=pi.sandbox.project).create(
        "deploy staging", "Deploy the shop to staging", "global", render_body("x", ["ship"]))
    calls = " ".join(['[tool:bash] {"command": "echo s"}'] * 4 + ['[tool:memory_read] {"target": "memory"}'] * 4)
    tui.type("Complex task. " + calls)
    tui.wait_for("pi-memory asked the agent whether this procedure is worth saving as a skill.")
    tui.wait_for("Fake answer to: That was a complex task (8 tool calls with 2 different tools).")
    asked = [m for b in pi.llm.chat_requests[-1:] for m in b["messages"]
             if text_of(m.get("content")) == NUDGE_TEXT.format(calls=8, tools=2)]
    assert len(asked) == 1
    tui.type("/memory-skills")
    screen = tui.wait_for("[ ] [G] deploy-staging — Deploy the shop to staging")
    assert "Skills: 1 of 1 (pick one to select it)" in screen
    tui.keys("Escape")
