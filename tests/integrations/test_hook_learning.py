"""Learning between turns in the Claude Code hooks, as pi has it: the ``stop`` hook's detached job counts the turn
and, when a trigger fires, runs the review pi runs (its budgets, call cap and settings), after it let the host
session go, so the next turn's job never waits for a model; a dead or nonsense model server is said in the hook log
and loses nothing; a job killed in the middle of a review leaves its mark in the index, and the session's next
``stop`` or the next session of the project reviews those messages again.

Every hook is a real ``python -m pi_memory hook claude-code ...`` process; the model is a scripted server on
127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from pi_memory.devtools.scripted_llm import Reply, ScriptedLLM, text_of

FACT = "The staging database is Postgres 16 on port 6543"
ADD = {"operations": [{"target": "memory", "action": "add", "content": FACT}]}
REVIEW_MARK = "decide what, if anything, is worth remembering"  # the review's system prompt says it
SRC = str(Path(__file__).resolve().parents[2] / "src")


class Model:
    """Answers the learning jobs: the queued replies in order (then "nothing to save"); with ``hold`` cleared, a
    review waits until it is set. ``prompts``: (system, user) of every call."""

    def __init__(self, *replies) -> None:
        self.replies = list(replies)
        self.prompts: list[tuple[str, str]] = []
        self.hold = threading.Event()
        self.hold.set()
        self.waiting = threading.Event()
        self.dropped = 0  # requests held then dropped (their job was killed): they take no reply

    def __call__(self, messages, tools) -> Reply:
        system = text_of(messages[0]["content"]) if messages and messages[0]["role"] == "system" else ""
        user = next((text_of(m["content"]) for m in messages if m["role"] == "user"), "")
        self.prompts.append((system, user))
        if not self.hold.is_set():
            dropped = self.dropped
            self.waiting.set()
            self.hold.wait(60)
            if self.dropped != dropped:
                return Reply(text="{}")
        reply = self.replies.pop(0) if self.replies else {"operations": [], "note": "nothing to save"}
        return Reply(text=reply if isinstance(reply, str) else json.dumps(reply))

    def reviews(self) -> list[str]:
        return [user for system, user in self.prompts if REVIEW_MARK in system]


class Host:
    """One Claude Code host session in ``proj``: its transcript, and the hooks a turn runs."""

    def __init__(self, root: Path, sid: str) -> None:
        self.root, self.sid = root, sid
        self.transcript = root / "home" / ".claude" / "projects" / "p" / f"{sid}.jsonl"
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        self.lines: list[dict] = []
        self.parent: str | None = None

    def env(self) -> dict:
        return {**os.environ, "HOME": str(self.root / "home"), "PI_MEMORY_DIR": str(self.root / "data"),
                "PI_MEMORY_STATE_DIR": str(self.root / "state"), "PI_CODING_AGENT_DIR": str(self.root / "agent"),
                "PI_MEMORY_HOOK_CEILING_S": "60", "PYTHONPATH": SRC}

    def hook(self, event: str, payload: dict) -> subprocess.CompletedProcess:
        body = {"session_id": self.sid, "cwd": str(self.root / "proj"), **payload}
        done = subprocess.run([sys.executable, "-m", "pi_memory", "hook", "claude-code", event],
                              input=json.dumps(body), env=self.env(), capture_output=True, text=True, timeout=90)
        assert (done.returncode, done.stdout.strip()[:1]) == (0, "{"), done.stderr
        return done

    def turn(self, user: str, assistant: str = "Noted.") -> None:
        """A turn as Claude Code runs it: the prompt hook, the turn written to the transcript, the stop hook."""
        self.hook("UserPromptSubmit", {"prompt": user})
        for role, text in (("user", user), ("assistant", assistant)):
            uid = str(uuid.uuid4())
            content = text if role == "user" else [{"type": "text", "text": text}]
            self.lines.append({"parentUuid": self.parent, "isSidechain": False, "type": role, "uuid": uid,
                               "message": {"role": role, "content": content}, "sessionId": self.sid,
                               "cwd": str(self.root / "proj"), "timestamp": "2026-12-05T10:00:00.000Z"})
            self.parent = uid
        self.transcript.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        self.hook("Stop", {"transcript_path": str(self.transcript), "last_assistant_message": assistant})

    def saved(self) -> dict:
        path = self.root / "state" / "hooks" / "claude-code" / f"{self.sid}.json"
        return json.loads(path.read_text(encoding="utf-8"))["learning"]


def log_text(root: Path) -> str:
    path = root / "state" / "hooks.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def finished_jobs(root: Path, sid: str) -> list[str]:
    return [line for line in log_text(root).splitlines() if f"claude-code stop: session {sid}: " in line
            and "file(s) indexed" in line]


def wait_for(check, seconds: float = 60.0, what: str = "") -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def wait_jobs(root: Path, sid: str, count: int, seconds: float = 60.0) -> list[str]:
    wait_for(lambda: len(finished_jobs(root, sid)) >= count, seconds, f"{count} finished job(s) of {sid}")
    return finished_jobs(root, sid)


def settings(root: Path, base_url: str, **extra) -> None:
    (root / "agent").mkdir(exist_ok=True)
    block = {"llm": {"provider": "openai-compatible", "baseUrl": base_url, "model": "fake-model",
                     "timeoutSeconds": 60}, "autoCapture": False, "autoRecall": False, "nudgeInterval": 3,
             "correctionDetection": False, "dreaming": {"enabled": False}, **extra}
    (root / "agent" / "settings.json").write_text(json.dumps({"pi-memory": block}), encoding="utf-8")


def pending_rows(root: Path) -> list[tuple]:
    from pi_memory.index import open_index

    conn = open_index(root / "data")
    try:
        return conn.execute("SELECT session_file, reviewed, reason FROM learning_pending").fetchall()
    finally:
        conn.close()


def jobs_of(root: Path) -> list[int]:
    """Pids of the background jobs of this test's state folder."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"pi_memory.integrations.hooks.background" in cmd and any(str(root).encode() in c for c in cmd):
                found.append(int(entry.name))
    return found


@pytest.fixture
def root(tmp_path) -> Path:
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path


@pytest.fixture
def model():
    brain = Model(ADD)
    with ScriptedLLM(responder=brain) as server:
        brain.server = server
        yield brain
    brain.hold.set()


def test_the_review_runs_between_turns_and_the_next_turn_never_waits_for_it(root, model):
    settings(root, model.server.base_url)
    host = Host(root, "S1")
    host.turn("Staging uses Postgres 16.")
    host.turn("It listens on port 6543.")
    wait_jobs(root, "S1", 2)
    assert model.prompts == []  # two turns: no trigger yet
    model.hold.clear()
    host.turn("Good, carry on.")  # the third turn fires the review (nudgeInterval 3), which the model holds
    wait_for(model.waiting.is_set, 60, "the review's request")
    host.turn("Now the API.")  # its job runs while the review waits for the model
    jobs = wait_jobs(root, "S1", 3, 25)  # before: it waited for the review's job, then gave up after 30 s
    assert "learning" not in jobs[2]  # the fourth turn's job, done while the third's review is still held
    assert "claude-code stop: session S1: a review of this session is still running; the turn is counted for the " \
           "next one" in log_text(root)  # never two reviews of one session at once
    assert not (root / "data" / "MEMORY.md").exists()
    model.hold.set()
    jobs = wait_jobs(root, "S1", 4)
    assert jobs[3].endswith("; learning: review ok") or "; learning: review ok" in jobs[3]
    assert (root / "data" / "MEMORY.md").read_text(encoding="utf-8") == FACT + "\n"
    [review] = model.reviews()  # once, over the three turns that fired it
    assert "Staging uses Postgres 16." in review and "Good, carry on." in review and "Now the API." not in review
    saved = host.saved()
    assert (saved["turn"], saved["turns"], saved["user_messages"], saved["reviewed"]) == (4, 1, 1, 6)
    assert pending_rows(root) == []


def test_a_dead_then_a_nonsense_model_server_is_logged_and_loses_nothing(root, model):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    settings(root, f"http://127.0.0.1:{dead}/v1")
    host = Host(root, "S2")
    for text in ("Staging uses Postgres 16.", "It listens on port 6543.", "Good, carry on."):
        host.turn(text)
    jobs = wait_jobs(root, "S2", 3)
    assert "; learning: review error (" in jobs[2]  # the model server could not be reached
    assert "learning review: error:" in log_text(root)
    assert host.saved()["reviewed"] == 0  # the mark did not move

    settings(root, model.server.base_url, learning={"maxCallsPerJob": 2})
    model.replies[:] = ["no json here"] * 5
    for text in ("Deploys go through Argo.", "Tabs for indentation.", "That is all."):
        host.turn(text)
    jobs = wait_jobs(root, "S2", 6)
    assert "; learning: review invalid_output (" in jobs[5]
    assert len(model.server.chat_requests) == 2  # exactly the call cap
    assert host.saved()["reviewed"] == 0

    model.replies[:] = [ADD]
    for text in ("One more.", "And another.", "Done for today."):
        host.turn(text)
    jobs = wait_jobs(root, "S2", 9)
    assert "; learning: review ok" in jobs[8]
    assert (root / "data" / "MEMORY.md").read_text(encoding="utf-8") == FACT + "\n"
    last = model.reviews()[-1]  # every message since the start: nothing was lost
    assert "Staging uses Postgres 16." in last and "Tabs for indentation." in last and "Done for today." in last
    assert host.saved()["reviewed"] == 18


def _kill_the_held_review(root, model, host) -> None:
    model.hold.clear()
    for text in ("Staging uses Postgres 16.", "It listens on port 6543.", "Good, carry on."):
        host.turn(text)
    wait_for(model.waiting.is_set, 60, "the review's request")
    [pid] = jobs_of(root)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not Path(f"/proc/{pid}").exists() or b"Z" in Path(f"/proc/{pid}/stat").read_bytes()
             .split(b")")[-1][:3], 10, "the job to die")
    assert pending_rows(root) == [(str(host.transcript), 0, "review")]  # its mark, kept in the index
    model.prompts.clear()
    model.waiting.clear()
    model.dropped += 1
    model.hold.set()


def test_a_review_killed_in_its_job_is_done_by_the_sessions_next_stop(root, model):
    settings(root, model.server.base_url)
    host = Host(root, "K1")
    _kill_the_held_review(root, model, host)
    assert not (root / "data" / "MEMORY.md").exists()
    host.turn("Now the API.")
    jobs = wait_jobs(root, "K1", 3)
    assert "; learning: review ok" in jobs[2]
    [review] = model.reviews()
    assert "Staging uses Postgres 16." in review and "Now the API." in review  # from the killed job's mark
    assert (root / "data" / "MEMORY.md").read_text(encoding="utf-8") == FACT + "\n"
    assert pending_rows(root) == []
    assert host.saved()["reviewed"] == 8


def test_a_review_killed_in_its_job_is_done_by_the_next_session_of_the_project(root, model):
    settings(root, model.server.base_url)
    killed = Host(root, "K2")
    _kill_the_held_review(root, model, killed)
    later = Host(root, "K3")  # the host died with the job: a new session of the same project
    later.turn("Hello again.")
    jobs = wait_jobs(root, "K3", 1)
    assert "; learning: flush ok" in jobs[0]
    [(system, user)] = model.prompts
    assert "Staging uses Postgres 16." in user and "Good, carry on." in user and "Hello again." not in user
    assert (root / "data" / "MEMORY.md").read_text(encoding="utf-8") == FACT + "\n"
    assert pending_rows(root) == []
