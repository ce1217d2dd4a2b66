"""A review's mark lived only in the process running it: a pi session killed in the middle of a review (``kill -9``,
a machine that went down) lost the review of those messages, since the next session reads a new session file. The
review now keeps its mark in the index while it runs, holding the session file's lock, and the next session of the
project reviews what the killed one was reading; a review still running in another process is left alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from learning_helpers import llm_block, write_settings

from pi_memory.devtools.scripted_llm import Reply, ScriptedLLM, text_of
from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.index import open_index
from pi_memory.learning import pending
from pi_memory.session import AgentSession

TURNS = [("user", "Staging uses Postgres 16"), ("assistant", "Ok."), ("user", "It listens on port 6543"),
         ("assistant", "Ok."), ("user", "Good, carry on"), ("assistant", "Ok.")]
FACT = "The staging database is Postgres 16 on port 6543"
SRC = str(Path(__file__).resolve().parents[2] / "src")
SESSION = """
import sys
from pi_memory.session import AgentSession
session = AgentSession(sys.argv[1])
for n in range(3):
    session.after_run(sys.argv[2], f"turn {n}")
session.worker.drain(120)
"""


class Held:
    """The first call waits until ``release``; then it answers "nothing", the next ones add :data:`FACT`."""

    def __init__(self) -> None:
        self.first, self.go, self.calls = threading.Event(), threading.Event(), []

    def __call__(self, messages, tools) -> Reply:
        self.calls.append(next(text_of(m["content"]) for m in messages if m["role"] == "user"))
        if len(self.calls) == 1:
            self.first.set()
            self.go.wait(60)
            return Reply(text="{}")
        return Reply(text=json.dumps({"operations": [{"target": "memory", "action": "add", "content": FACT}]}))


def _rows(data: Path) -> list[tuple]:
    conn = open_index(data)
    try:
        return conn.execute("SELECT session_file, reviewed, reason FROM learning_pending").fetchall()
    finally:
        conn.close()


def test_a_review_killed_with_its_process_is_done_by_the_next_session(agent, project, tmp_path):
    model = Held()
    with ScriptedLLM(responder=model) as llm:
        write_settings(agent, llm_block(llm, nudgeInterval=3, autoCapture=False, dreaming={"enabled": False}))
        path = write_pi_session(project / "s.jsonl", project, TURNS)
        env = {**os.environ, "PYTHONPATH": SRC}
        proc = subprocess.Popen([sys.executable, "-c", SESSION, str(project), str(path)], env=env)
        try:
            assert model.first.wait(60), "the review never called the model"
            assert _rows(tmp_path / "data") == [(str(path), 0, "review")]
            held = pending.take(tmp_path / "data", str(path))
            assert held is None  # the running review holds the file's lock
            waiting = AgentSession(project)  # a session starting meanwhile leaves the running review alone
            waiting.start(catch_up=False)
            assert waiting.worker.drain(30)
            waiting.shutdown()
            assert len(model.calls) == 1
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(10) == -signal.SIGKILL
        finally:
            model.go.set()
            if proc.poll() is None:
                proc.kill()
        time.sleep(0.2)
        later = AgentSession(project)
        later.start(catch_up=False)
        assert later.worker.drain(60)
        job = later.learning_status()["jobs"][-1]
        later.shutdown()
    assert (job["kind"], job["outcome"]) == ("flush", "ok")
    assert len(model.calls) == 2
    assert "Staging uses Postgres 16" in model.calls[1] and "Good, carry on" in model.calls[1]
    assert (tmp_path / "data" / "MEMORY.md").read_text(encoding="utf-8") == FACT + "\n"
    assert _rows(tmp_path / "data") == []
