"""Fixtures for driving the real pi CLI (installed by ``scripts/setup-e2e.sh``) offline.

Every test gets a fresh :class:`ScriptedLLM` on 127.0.0.1, a temp HOME whose pi settings point
at it, a temp project dir and a temp memory dir (``PI_MEMORY_DIR``). The pi-memory extension is
loaded from the source tree with ``-e``; the bridge runs on this interpreter (``PI_MEMORY_PYTHON``).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import pytest

from pi_memory.devtools.pi_runner import PI_VERSIONS, PiRun, PiSandbox, installed_pi_version, pi_launcher
from pi_memory.devtools.scripted_llm import ScriptedLLM
from pi_memory.integrations.pi import EXTENSION_DIR

COMMANDS_EXTENSION = Path(__file__).with_name("e2e_commands.ts")


@pytest.fixture(params=list(PI_VERSIONS), ids=lambda v: f"pi-{v}")
def pi_version(request: pytest.FixtureRequest) -> str:
    version = request.param
    if pi_launcher(version) is None:
        pytest.skip(f"pi {version} is not installed under .cache/e2e/; run `bash scripts/setup-e2e.sh` first")
    return version


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


def bridge_processes(memory_dir: Path) -> list[int]:
    """PIDs of live processes started with this test's PI_MEMORY_DIR (the bridge inherits pi's env)."""
    marker = f"PI_MEMORY_DIR={memory_dir}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().split(") ", 1)[1][:1]
        except (OSError, IndexError):
            continue
        if marker in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


class PiE2E:
    """A sandbox plus the pi-memory extension flags; ``run`` returns a :class:`PiRun`."""

    def __init__(self, sandbox: PiSandbox, version: str) -> None:
        self.sandbox = sandbox
        self.version = version
        self.llm = sandbox.llm

    @property
    def memory_file(self) -> Path:
        return self.sandbox.memory_dir / "MEMORY.md"

    def run(self, *prompts: str, args: Iterable[str] = (), env: Mapping[str, str] | None = None,
            commands: bool = False, timeout: float = 90, check: bool = True) -> PiRun:
        flags = ["-e", str(EXTENSION_DIR)]
        if commands:
            flags += ["-e", str(COMMANDS_EXTENSION)]
        result = self.sandbox.run(prompts, args=[*flags, *args], env=env, timeout=timeout)
        return result.check() if check else result

    def rpc_prompt(self, message: str, env: Mapping[str, str] | None = None, timeout: float = 60) -> list[dict]:
        """Run one prompt in ``pi --mode rpc`` (where ``ctx.hasUI`` is true) and return its stdout events.

        Reads until the run is over (``agent_settled`` on 1.x, ``agent_end`` on 0.73), then closes
        stdin, which makes pi shut down.
        """
        end = "agent_end" if self.version == "0.73.1" else "agent_settled"
        return self.rpc(message, lambda events, _reply: events[-1].get("type") == end, env=env, timeout=timeout)

    def rpc(self, message: str, on_event: Callable[[list[dict], Callable[[dict], None]], bool],
            env: Mapping[str, str] | None = None, timeout: float = 60) -> list[dict]:
        """Send ``message`` to ``pi --mode rpc`` and call ``on_event(events, reply)`` after each stdout event;
        ``reply(obj)`` writes one line to pi's stdin (an ``extension_ui_response``...). Stops when it returns
        true (or pi's output ends), then closes stdin, which makes pi shut down."""
        sandbox = self.sandbox
        cmd = [str(sandbox.launcher), "-e", str(EXTENSION_DIR), "--mode", "rpc"]
        proc = subprocess.Popen(cmd, cwd=sandbox.project, env=sandbox.env(env), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        def reply(obj: dict) -> None:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(obj) + "\n")
            proc.stdin.flush()

        threading.Thread(target=pump, daemon=True).start()
        events: list[dict] = []
        try:
            reply({"id": "e2e-1", "type": "prompt", "message": message})
            deadline = time.monotonic() + timeout
            while True:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
                if line is None:
                    break
                events.append(json.loads(line))
                if on_event(events, reply):
                    break
            assert proc.stdin is not None
            proc.stdin.close()
            assert proc.wait(timeout=20) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        return events

    def latest_session(self) -> list[dict]:
        files = self.sandbox.session_files()
        assert files, "pi wrote no session file"
        return self.sandbox.read_session(max(files, key=lambda p: p.stat().st_mtime_ns))


@pytest.fixture
def pi(pi_version: str, llm: ScriptedLLM, tmp_path: Path) -> Iterator[PiE2E]:
    sandbox = PiSandbox(tmp_path, llm, pi_launcher(pi_version), python=sys.executable)
    yield PiE2E(sandbox, pi_version)
    # No bridge may outlive its pi process.
    deadline = time.monotonic() + 5
    while (left := bridge_processes(sandbox.memory_dir)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"bridge process(es) {left} outlived pi"


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = []
    for version in PI_VERSIONS:
        found = installed_pi_version(version)
        lines.append(f"pi {version}: {found or 'not installed (run scripts/setup-e2e.sh)'}")
    return lines
