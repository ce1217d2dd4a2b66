"""Where pi-memory's settings are read from, with the standard library only.

:mod:`pi_memory.config` parses and validates them (pydantic); a short-lived process that only needs to know
*which* files decide (to key a cache on their size and mtime: the hooks' snapshot cache, the MCP server's early
``tools/list`` answer) asks here and imports nothing heavy.
"""

from __future__ import annotations

import os
from pathlib import Path

TRUST_FILE_NAME = "pi-memory-trust.json"
# The home folder pi-memory's settings are read under, when it is not the process's own: the Claude Code / Codex
# hooks get it from a ``pi-memory`` MCP server entry whose ``env`` sets ``HOME`` (integrations/hooks/hook_env.py),
# so ``${HOME}`` and ``~`` in the settings (``dataDir``) mean in the hooks what they mean in that server.
SETTINGS_HOME = "PI_MEMORY_HOME"


def settings_home() -> Path:
    """The home folder ``${HOME}`` and ``~`` stand for in pi-memory's settings: ``$PI_MEMORY_HOME``, else this
    process's home."""
    env = os.environ.get(SETTINGS_HOME)
    return Path(env) if env and os.path.isabs(env) else Path.home()


def home_variable(name: str) -> str | None:
    """A variable as the settings read it: ``HOME`` is :func:`settings_home` when ``$PI_MEMORY_HOME`` is set."""
    if name == "HOME" and os.environ.get(SETTINGS_HOME):
        return str(settings_home())
    return os.environ.get(name)


def expand_home(path: str | Path) -> Path:
    """``path`` with a leading ``~`` (alone or before a ``/``) read as :func:`settings_home`; ``~user`` as the
    system says."""
    text = str(path)
    if text == "~" or text.startswith("~/"):
        return settings_home() / text[2:] if text != "~" else settings_home()
    return Path(text).expanduser()


def agent_dir() -> Path:
    """pi's agent folder: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent`` (``~``: :func:`settings_home`)."""
    env = os.environ.get("PI_CODING_AGENT_DIR")
    return expand_home(env) if env else settings_home() / ".pi" / "agent"


def trust_file() -> Path:
    return agent_dir() / TRUST_FILE_NAME


def settings_files(cwd: Path) -> list[Path]:
    """Every file the settings of a process in ``cwd`` are read from: the user's ``settings.json``, the trust
    list, and the project's ``.pi/settings.json`` (read only when the project is trusted)."""
    return [agent_dir() / "settings.json", trust_file(), cwd / ".pi" / "settings.json"]
