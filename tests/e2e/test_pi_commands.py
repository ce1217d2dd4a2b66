"""End-to-end: pi-memory's slash commands and per-run prompt parts on the real pi CLIs (both versions).

pi runs extension commands in RPC mode (``prompt`` with ``/name args``), and ``ctx.ui`` calls become
``extension_ui_request`` lines there, so the commands are driven over RPC: notifications are read from stdout,
dialogs (``input``, ``confirm``) are answered on stdin. Memory blocks and standing instructions are checked in
what the scripted model received: present in every run's system prompt, rebuilt between runs, stable inside one.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import shutil
import subprocess
import threading
import time
from typing import TYPE_CHECKING

import pytest

from pi_memory.devtools.scripted_llm import prompt_of, system_prompt_of
from pi_memory.integrations.pi import EXTENSION_DIR

if TYPE_CHECKING:
    from conftest import PiE2E

pytestmark = pytest.mark.e2e


class RpcPi:
    """``pi --mode rpc`` with the extension; :meth:`command` runs one slash command and returns its
    notifications, answering dialogs from ``answers`` (``None`` cancels)."""

    def __init__(self, pi: PiE2E) -> None:
        sandbox = pi.sandbox
        self.proc = subprocess.Popen([str(sandbox.launcher), "-e", str(EXTENSION_DIR), "--mode", "rpc", "--no-session"],
                                     cwd=sandbox.project, env=sandbox.env(), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.n = 0
        self.dialogs: list[dict] = []

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, obj: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()

    def command(self, text: str, answers: list | None = None, timeout: float = 60) -> list[dict]:
        self.n += 1
        rid = f"cmd-{self.n}"
        self.send({"id": rid, "type": "prompt", "message": text})
        answers = list(answers or [])
        notes: list[dict] = []
        deadline = time.monotonic() + timeout
        while True:
            line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, "pi exited"
            event = json.loads(line)
            if event.get("type") == "response" and event.get("id") == rid:
                assert event["success"], event
                return notes
            if event.get("type") != "extension_ui_request":
                continue
            method = event.get("method")
            if method == "notify":
                notes.append(event)
            elif method in ("input", "confirm", "select", "editor"):
                self.dialogs.append(event)
                answer = answers.pop(0) if answers else None
                reply: dict = {"type": "extension_ui_response", "id": event["id"]}
                if answer is None:
                    reply["cancelled"] = True
                elif method == "confirm":
                    reply["confirmed"] = bool(answer)
                else:
                    reply["value"] = answer
                self.send(reply)

    def text(self, command: str, **kwargs) -> str:
        notes = self.command(command, **kwargs)
        assert len(notes) == 1, notes
        return notes[0]["message"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            assert self.proc.wait(timeout=20) == 0
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def rpc(pi: PiE2E):
    session = RpcPi(pi)
    yield session
    session.close()


def test_commands_run_in_rpc_mode(pi: PiE2E, rpc: RpcPi) -> None:
    assert rpc.text("/memory-pin never run find / or other root-wide searches").startswith(
        "Pinned as rule 1: never run find / or other root-wide searches")
    assert rpc.text("/memory-pin add use uv, never pip").endswith("  2. use uv, never pip")
    listing = rpc.command("/memory-pin")[0]
    assert listing["message"].splitlines()[0] == "Standing instructions (2/20 rules, 62/2,000 chars):"
    refused = rpc.command("/memory-pin add USE UV, never pip")[0]
    assert refused["notifyType"] == "warning" and "already pinned" in refused["message"]
    assert (pi.sandbox.memory_dir / "STANDING.md").read_text() == (
        "never run find / or other root-wide searches\nuse uv, never pip\n")

    memory = rpc.text("/memory").splitlines()
    assert memory[0] == "Memory blocks" and "Stores" in memory
    assert "user (global) [░░░░░░░░░░░░░░░░░░░░] 0% — 0/2,000 chars" in memory  # defaults created at start
    status = rpc.text("/memory status").splitlines()
    assert status[0] == f"data dir: {pi.sandbox.memory_dir}" and "MEMORY.md: 0 entries, 0% — 0/2,200 chars — ok" in status

    answers = ["Ada", "backend developer", "Python with uv", None]  # Esc on the 4th question
    notes = rpc.command("/memory-interview", answers=answers)
    assert [d["title"] for d in rpc.dialogs][:2] == ["What should the agent call you?",
                                                     "What is your role, and what do you mostly work on?"]
    assert notes[-1]["message"].splitlines()[:3] == [
        "saved: The user's name is Ada.", "saved: Role and work: backend developer.",
        "saved: Preferred languages and tools: Python with uv."]
    assert (pi.sandbox.memory_dir / "USER.md").read_text().startswith("The user's name is Ada.\n§\n")

    insights = rpc.text("/memory-insights")
    assert insights.startswith("Memory insights") and "Standing instructions (2/20)\n  1. never run find /" in insights

    first = rpc.text("/memory-preview-context")  # long: one page per notification in RPC mode
    assert first.startswith("Prompt mode: snapshot. The system prompt gets ")
    pages = int(re.search(r"\(page 1 of (\d+), lines 1-30 of \d+ · next: /memory-preview-context --page 2\)$",
                          first).group(1))
    rest = [rpc.text(f"/memory-preview-context --page {n}") for n in range(2, pages + 1)]
    assert rest[-1].endswith(f"(page {pages} of {pages}, lines {30 * (pages - 1) + 1}-"
                             f"{30 * (pages - 1) + len(rest[-1].splitlines()) - 1} of "
                             f"{30 * (pages - 1) + len(rest[-1].splitlines()) - 1})")
    whole = "\n".join([first, *rest])
    for head in ("── memory · system prompt, frozen per session", "── memory blocks · system prompt, rebuilt every run",
                 "── standing instructions · system prompt, rebuilt every run", "1. never run find /"):
        assert head in whole

    assert rpc.text("/memory-switch-project").startswith("No project memories yet.")
    assert rpc.text("/memory-sync-markdown").startswith("Mirrored 3 Markdown store(s) into the search index:")
    assert rpc.text("/memory-index-sessions", timeout=120).startswith("Indexed sessions: ")

    assert rpc.text("/mem0 status").splitlines()[0].startswith("semantic memory: ")
    assert rpc.text("/mem0 add The staging database is called orca").startswith("Stored ")
    assert rpc.text("/mem0 add The staging database is called orca").startswith("Already stored as ")
    assert "The staging database is called orca" in rpc.text("/mem0 search staging database")
    assert rpc.text("/mem0 profile").startswith("1 memories in this scope:")
    assert rpc.text("/mem0 dedup --apply", answers=[False]) == "Nothing was removed."
    assert rpc.dialogs[-1]["method"] == "confirm"
    assert rpc.text("/mem0 dedup").endswith("0 duplicate(s) (preview: /mem0 dedup --apply removes them); 0 ambiguous group(s).")


def test_blocks_and_standing_reach_every_run_and_update_memory_edits_a_block(pi: PiE2E) -> None:
    printed = pi.run("/memory-pin never push to main")  # -p: no UI, the pin is still written
    assert (pi.sandbox.memory_dir / "STANDING.md").read_text() == "never push to main\n"
    if pi.version != "0.73.1":  # 1.x tells the extension it runs in print mode: the text is printed
        assert "Pinned as rule 1: never push to main" in printed.stderr
    call = '[tool:updateMemory] {"blockKey": "user", "newText": "Name is Ada; prefers tabs."}'
    pi.run(f"first run {call}", "second run")
    first = {system_prompt_of(b) for b in pi.llm.chat_requests if "first run" in (prompt_of(b) or "")}
    second = {system_prompt_of(b) for b in pi.llm.chat_requests if "second run" in (prompt_of(b) or "")}
    assert len(first) == 1 and len(second) == 1, "the system prompt changed inside a run"
    before, after = first.pop() or "", second.pop() or ""
    for text in (before, after):
        assert "<memory-blocks>" in text and "<standing-instructions>" in text and "1. never push to main" in text
        assert text.index("</memory-blocks>") < text.index("<standing-instructions>")
    assert "## user [0/2,000 chars]" in before and "Name is Ada" not in before
    assert "## user [26/2,000 chars]\nFacts about the user" in after and "Name is Ada; prefers tabs." in after
    block = (pi.sandbox.memory_dir / "blocks" / "user.md").read_text()
    assert block.endswith("---\n\nName is Ada; prefers tabs.\n")


def test_long_output_pages_in_the_tui(pi: PiE2E, tmp_path) -> None:
    """The interactive TUI, driven in tmux: a long command output opens the pager, space pages, q closes."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    sandbox = pi.sandbox
    from pi_memory.standing import StandingStore

    store = StandingStore.in_data_dir(sandbox.memory_dir)
    for i in range(15):
        assert store.add(f"rule number {i} for the pager").success
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sandbox.env().items())
    name = f"pi-memory-e2e-{os.getpid()}-{pi.version}".replace(".", "_")  # tmux turns dots into "_"
    script = tmp_path / "run-tui.sh"
    script.write_text(f"cd {shlex.quote(str(sandbox.project))} && exec env -i {env} {shlex.quote(str(sandbox.launcher))} "
                      f"-e {shlex.quote(str(EXTENSION_DIR))} --no-session\n")

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=10).stdout

    def screen_until(marker: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = tmux("capture-pane", "-t", name, "-p")
            if re.search(marker, text):
                return text
            time.sleep(0.3)
        raise AssertionError(f"{marker!r} never showed; screen:\n{text}")

    tmux("new-session", "-d", "-s", name, "-x", "100", "-y", "30", f"bash {shlex.quote(str(script))}")
    try:
        screen_until(r"memory: 0 entries", timeout=120)  # a loaded machine starts pi slowly
        tmux("send-keys", "-t", name, "-l", "/memory-preview-context")
        time.sleep(0.5)
        tmux("send-keys", "-t", name, "Enter")
        first = screen_until(r"/memory-preview-context · lines 1-\d+ of \d+ · ↑↓ line · space/b page")
        assert "Prompt mode: snapshot." in first
        tmux("send-keys", "-t", name, "Space")
        last = screen_until(r"lines \d+-(\d+) of \1 ·")  # the last page
        assert "</standing-instructions>" in last
        tmux("send-keys", "-t", name, "q")
        closed = screen_until(r"^(?![\s\S]*/memory-preview-context · lines)[\s\S]*memory: 0 entries")  # pager gone
        assert "/memory-preview-context · lines" not in closed
        tmux("send-keys", "-t", name, "-l", "/quit")  # a clean exit: pi shuts the bridge down
        time.sleep(0.5)
        tmux("send-keys", "-t", name, "Enter")
        deadline = time.monotonic() + 30
        while name in tmux("list-sessions", "-F", "#{session_name}") and time.monotonic() < deadline:
            time.sleep(0.3)
    finally:
        tmux("kill-session", "-t", name)
