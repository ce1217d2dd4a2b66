"""Run the real Claude Code and Codex CLIs offline in a sandbox, with pi-memory installed into them.

:class:`HostSandbox` is a temporary HOME (plus a git project and a memory folder ``PI_MEMORY_DIR``) laid out
like :class:`pi_memory.devtools.pi_runner.PiSandbox` (``home/``, ``project/``, ``mem/``), so a pi sandbox on the
same root shares HOME, project and memory with both hosts. The CLIs come from ``.cache/e2e/`` (installed by
``scripts/setup-e2e.sh``: :data:`HOST_CLIS`); the model is a scripted server on 127.0.0.1
(:mod:`pi_memory.devtools.scripted_hosts`), and the environment holds the hosts' offline switches
(``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``, Codex's ``[features] plugins = false`` and ``[analytics]
enabled = false``), so nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from pi_memory.devtools.pi_runner import PiRun, find_repo_cache

# host -> (cache subdirectory, npm package, binary name) as laid out by scripts/setup-e2e.sh
HOST_CLIS: dict[str, tuple[str, str, str]] = {
    "claude-code": ("claude-code-2.1.332", "@anthropic-ai/claude-code", "claude"),
    "codex": ("codex-0.171.0", "@openai/codex", "codex"),
}
BACKGROUND_MODULE = b"pi_memory.integrations.hooks.background"


def host_cli(host: str, cache: Path | None = None) -> Path | None:
    """The installed CLI of ``host`` under ``.cache/e2e``, or ``None``."""
    cache = cache or find_repo_cache()
    if cache is None:
        return None
    subdir, _, binary = HOST_CLIS[host]
    path = cache / subdir / "node_modules" / ".bin" / binary
    return path if path.exists() and os.access(path, os.X_OK) else None


def console_script() -> str:
    return str(Path(sys.executable).parent / "pi-memory")


class HostSandbox:
    """``root/home`` (HOME), ``root/project`` (a git repository), ``root/mem`` (``PI_MEMORY_DIR``)."""

    def __init__(self, root: Path, host: str, server, cli: Path) -> None:
        self.root, self.host, self.server, self.cli = Path(root), host, server, Path(cli)
        self.home, self.project, self.memory_dir = self.root / "home", self.root / "project", self.root / "mem"
        for d in (self.home, self.project, self.memory_dir):
            d.mkdir(parents=True, exist_ok=True)
        if not (self.project / ".git").exists():
            subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        if host == "codex":
            self._write_codex_config()

    # --- environment -------------------------------------------------------------------------
    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PI_", "ANTHROPIC_", "CLAUDE", "CODEX_", "OPENAI_", "NODE_OPTIONS"))}
        env.update({"HOME": str(self.home), "PI_MEMORY_DIR": str(self.memory_dir), "NO_COLOR": "1",
                    "PI_OFFLINE": "1", "PI_TELEMETRY": "0",
                    # a cold hook process on a loaded 2-core machine: the tests assert what arrives, not speed
                    "PI_MEMORY_HOOK_CEILING_S": "30"})
        if self.host == "claude-code":
            env.update({"ANTHROPIC_BASE_URL": self.server.root_url, "ANTHROPIC_API_KEY": "sk-ant-fake-local",
                        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                        "DISABLE_TELEMETRY": "1", "ENABLE_TOOL_SEARCH": "false",
                        # a cold MCP server on a loaded machine (first start after an install compiles
                        # every module): Claude Code waits for it up to this many milliseconds
                        "MCP_TIMEOUT": "60000"})
        else:
            env["SCRIPTED_API_KEY"] = "sk-fake-local"
        env.update(extra or {})
        return env

    def _write_codex_config(self) -> None:
        config = self.home / ".codex" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            "# written by the e2e sandbox: a scripted model on loopback, offline switches\n"
            'model = "fake-model"\nmodel_provider = "scripted"\napproval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n\n'
            f'[model_providers.scripted]\nname = "scripted"\nbase_url = "{self.server.base_url}"\n'
            'wire_api = "responses"\nenv_key = "SCRIPTED_API_KEY"\n\n'
            "[features]\nplugins = false\n\n[analytics]\nenabled = false\n", encoding="utf-8")

    # --- pi-memory ---------------------------------------------------------------------------
    def pi_memory(self, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
        done = subprocess.run([console_script(), *args], cwd=self.project, env=self.env(), capture_output=True,
                              text=True, timeout=120, input=input)
        if check and done.returncode != 0:
            raise AssertionError(f"pi-memory {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done

    def warm_mcp(self, timeout: float = 120) -> None:
        """Start ``pi-memory mcp`` once (initialize, tools/list) and stop it: compiles what a code change left
        uncompiled and stores the early initialize answer. Claude Code 2.1.332 does not wait long for a slow MCP
        server: it sends its first request without the server's tools and offers ``WaitForMcpServers``."""
        lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                     "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "warm", "version": "1"}}},
                 {"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
        proc = subprocess.Popen([console_script(), "mcp", "--index-interval", "0"], cwd=self.project, env=self.env(),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            proc.stdin.write("".join(json.dumps(m) + "\n" for m in lines).encode())
            proc.stdin.flush()
            deadline = time.monotonic() + timeout
            answered = 0
            while answered < 2 and time.monotonic() < deadline:
                if not proc.stdout.readline():
                    break
                answered += 1
        finally:
            proc.stdin.close()
            proc.wait(30)

    def install(self) -> dict:
        extra = ["--codex-bin", str(self.cli)] if self.host == "codex" else []
        return json.loads(self.pi_memory("install", self.host, "--json", *extra).stdout)

    # --- the host CLI ------------------------------------------------------------------------
    def command(self, prompt: str, resume: str | None = None, args: Iterable[str] = ()) -> list[str]:
        if self.host == "claude-code":
            cmd = [str(self.cli), "-p", prompt, "--output-format", "json", "--allowedTools",
                   ",".join(f"mcp__pi-memory__{t}" for t in ("memory_add", "memory_read", "session_search")), *args]
            return [*cmd, "--resume", resume] if resume else cmd
        base = [str(self.cli), "exec", "--skip-git-repo-check", "--json", *args]
        return [*base, "resume", resume, prompt] if resume else [*base, prompt]

    def run(self, prompt: str, resume: str | None = None, args: Iterable[str] = (), timeout: float = 120) -> PiRun:
        """One non-interactive run in the project; waits for the background jobs its hooks started."""
        cmd = self.command(prompt, resume, args)
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=self.project, env=self.env(), capture_output=True, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            return PiRun(cmd, -1, str(exc.stdout or ""), str(exc.stderr or ""), time.monotonic() - started, True)
        self.wait_for_background()
        return PiRun(cmd, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)

    def session_id(self, run: PiRun) -> str:
        """The host session id of a finished run (from its JSON output)."""
        if self.host == "claude-code":
            return json.loads(run.stdout.strip().splitlines()[-1])["session_id"]
        for line in run.stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("type") == "thread.started":
                return event["thread_id"]
        raise AssertionError(f"no thread id in codex output:\n{run.stdout}")

    # --- background jobs ---------------------------------------------------------------------
    def background_jobs(self) -> list[int]:
        """PIDs of hook background jobs of this sandbox still running."""
        marker = f"PI_MEMORY_DIR={self.memory_dir}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                environ, cmdline = (entry / "environ").read_bytes(), (entry / "cmdline").read_bytes()
                alive = (entry / "stat").read_text().split(") ", 1)[1][:1] != "Z"
            except (OSError, IndexError):
                continue
            if alive and BACKGROUND_MODULE in cmdline and marker in environ.split(b"\0"):
                found.append(int(entry.name))
        return found

    def wait_for_background(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        time.sleep(0.3)  # a hook the host started last may still be spawning its job
        while self.background_jobs():
            if time.monotonic() > deadline:
                raise AssertionError(f"hook background jobs still running after {timeout} s")
            time.sleep(0.1)

    def hook_log(self) -> str:
        path = self.home / ".local" / "state" / "pi-memory" / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""
