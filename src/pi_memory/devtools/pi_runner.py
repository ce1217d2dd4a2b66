"""Run the real ``pi`` CLI in a throw-away HOME against a :class:`ScriptedLLM`.

Shared by ``pi-memory demo`` and the end-to-end tests. ``scripts/setup-e2e.sh`` installs the pi
versions under ``<repo>/.cache/e2e/``; each install has a ``run-pi`` launcher that pins the node
binary that version needs. ``PI_MEMORY_PI_BIN`` points at any other pi launcher.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_memory.devtools.scripted_llm import ScriptedLLM

# name -> (cache subdirectory, npm package) as laid out by scripts/setup-e2e.sh
PI_VERSIONS: dict[str, tuple[str, str]] = {
    "0.73.1": ("pi-0.73.1", "@mariozechner/pi-coding-agent"),
    "current": ("pi-current", "@earendil-works/pi-coding-agent"),
}
PROVIDER = "fakellm"
MODEL = "fake-model"


def find_repo_cache(start: Path | None = None) -> Path | None:
    """``.cache/e2e`` of the nearest checkout above ``start`` (default: this file, then the cwd)."""
    starts = [start] if start else [Path(__file__).resolve(), Path.cwd().resolve()]
    for base in starts:
        for folder in [base, *base.parents]:
            candidate = folder / ".cache" / "e2e"
            if candidate.is_dir():
                return candidate
    return None


def pi_launcher(version: str, cache: Path | None = None) -> Path | None:
    """The ``run-pi`` launcher of an installed version, or ``None`` when it is not installed."""
    cache = cache or find_repo_cache()
    if cache is None or version not in PI_VERSIONS:
        return None
    launcher = cache / PI_VERSIONS[version][0] / "run-pi"
    return launcher if launcher.is_file() and os.access(launcher, os.X_OK) else None


def installed_pi_version(version: str, cache: Path | None = None) -> str | None:
    cache = cache or find_repo_cache()
    if cache is None or version not in PI_VERSIONS:
        return None
    subdir, package = PI_VERSIONS[version]
    try:
        data = json.loads((cache / subdir / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    return data.get("version")


@dataclass
class PiRun:
    """One finished pi invocation."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False

    def check(self) -> PiRun:
        if self.returncode != 0 or self.timed_out:
            raise AssertionError(
                f"pi failed (rc={self.returncode}, timed_out={self.timed_out}) for {self.args}\n"
                f"--- stdout ---\n{self.stdout[-3000:]}\n--- stderr ---\n{self.stderr[-3000:]}"
            )
        return self


class PiSandbox:
    """A temp HOME with pi's models.json/settings.json pointing at ``llm``, a project dir, a memory dir."""

    def __init__(self, root: Path, llm: ScriptedLLM, launcher: Path, *, python: str | None = None,
                 settings: Mapping[str, Any] | None = None) -> None:
        self.root = Path(root)
        self.llm = llm
        self.launcher = Path(launcher)
        self.python = python
        self.home = self.root / "home"
        self.agent_dir = self.home / ".pi" / "agent"
        self.project = self.root / "project"
        self.memory_dir = self.root / "mem"
        for d in (self.agent_dir, self.project, self.memory_dir):
            d.mkdir(parents=True, exist_ok=True)
        (self.project / "README.md").write_text("# scratch project\n")
        self.write_models()
        self.settings: dict[str, Any] = {
            "defaultProvider": PROVIDER, "defaultModel": MODEL, "enableInstallTelemetry": False, "quietStartup": True,
        }
        self.update_settings(settings or {})

    def write_models(self) -> None:
        models = {"providers": {PROVIDER: {
            "baseUrl": self.llm.base_url, "api": "openai-completions", "apiKey": "sk-fake-local",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": MODEL, "name": "Fake Model", "contextWindow": 32000, "maxTokens": 4096}],
        }}}
        (self.agent_dir / "models.json").write_text(json.dumps(models, indent=2))

    def update_settings(self, changes: Mapping[str, Any]) -> None:
        """Merge ``changes`` into ``~/.pi/agent/settings.json`` (top-level keys replaced)."""
        self.settings.update(changes)
        (self.agent_dir / "settings.json").write_text(json.dumps(self.settings, indent=2))

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "NODE_OPTIONS"))}
        env.update({
            "HOME": str(self.home),
            "PI_OFFLINE": "1",
            "PI_TELEMETRY": "0",
            "PI_MEMORY_DIR": str(self.memory_dir),
            "NO_COLOR": "1",
        })
        if self.python:
            env["PI_MEMORY_PYTHON"] = self.python
        env.update(extra or {})
        return env

    def run(self, prompts: Iterable[str], *, args: Iterable[str] = (), env: Mapping[str, str] | None = None,
            timeout: float = 120) -> PiRun:
        """``pi [args] -p prompt...`` in the project dir; never raises on failure or timeout."""
        cmd = [str(self.launcher), *args, "-p", *prompts]
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=self.project, env=self.env(env), capture_output=True, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
            return PiRun(cmd, -1, out, err, time.monotonic() - started, timed_out=True)
        return PiRun(cmd, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)

    # --- session files ---------------------------------------------------------------------
    def session_files(self) -> list[Path]:
        return sorted((self.agent_dir / "sessions").rglob("*.jsonl"))

    @staticmethod
    def read_session(path: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    @staticmethod
    def active_branch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Entries on the path from the root to the last line (pi's current leaf)."""
        body = entries[1:]
        by_id = {e["id"]: e for e in body}
        out: list[dict[str, Any]] = []
        cur = body[-1]["id"] if body else None
        while cur:
            entry = by_id[cur]
            out.append(entry)
            cur = entry.get("parentId")
        return list(reversed(out))

    @staticmethod
    def snapshot_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [e for e in entries if e.get("type") == "custom" and e.get("customType") == "pi-memory-snapshot"]
