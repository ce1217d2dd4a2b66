"""Where pi-memory's settings are read from, with the standard library only.

:mod:`pi_memory.config` parses and validates them (pydantic); a short-lived process that only needs to know
*which* files decide (to key a cache on their size and mtime: the hooks' snapshot cache, the MCP server's early
``tools/list`` answer) asks here and imports nothing heavy.
"""

from __future__ import annotations

import os
from pathlib import Path

TRUST_FILE_NAME = "pi-memory-trust.json"


def agent_dir() -> Path:
    """pi's agent folder: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    env = os.environ.get("PI_CODING_AGENT_DIR")
    return Path(env).expanduser() if env else Path.home() / ".pi" / "agent"


def trust_file() -> Path:
    return agent_dir() / TRUST_FILE_NAME


def settings_files(cwd: Path) -> list[Path]:
    """Every file the settings of a process in ``cwd`` are read from: the user's ``settings.json``, the trust
    list, and the project's ``.pi/settings.json`` (read only when the project is trusted)."""
    return [agent_dir() / "settings.json", trust_file(), cwd / ".pi" / "settings.json"]
