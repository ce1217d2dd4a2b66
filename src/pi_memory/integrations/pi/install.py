"""Install the pi extension into a pi agent directory.

``install_pi_extension(agent_dir, python)`` copies the shipped extension folder (every ``.ts`` module and
``.json`` file of it, :func:`shipped_files`) to
``<agent_dir>/extensions/pi-memory/`` (where pi discovers it at startup) and writes
``pi-memory.json`` next to ``index.ts`` naming the Python interpreter that runs the bridge.
Re-running it replaces the installed copy, so upgrading pi-memory and re-installing is enough.
``uninstall_pi_extension(agent_dir)`` removes that folder again (only when it holds the ``pi-memory.json`` an
install wrote, so a folder of the same name that someone else put there is left alone); memories are never
touched: they live in the data root, not in the extension.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from pi_memory.integrations.pi import EXTENSION_DIR

INSTALL_NAME = "pi-memory"
CONFIG_NAME = "pi-memory.json"
_SHIPPED_SUFFIXES = (".ts", ".json")  # the extension's modules, package.json and fallback-tools.json


def shipped_files() -> list[Path]:
    """Every file of the shipped extension folder that an install copies: each ``.ts`` module (``index.ts``
    imports its siblings, so a module missing from a hand-kept list would break pi's load) and the ``.json``
    files, never a ``pi-memory.json`` (the install writes its own)."""
    return sorted(p for p in EXTENSION_DIR.iterdir()
                  if p.is_file() and p.suffix in _SHIPPED_SUFFIXES and p.name != CONFIG_NAME)


def installed_extension_dir(agent_dir: Path) -> Path:
    return Path(agent_dir).expanduser() / "extensions" / INSTALL_NAME


def install_pi_extension(agent_dir: Path, python: str | None = None) -> Path:
    """Copy the extension to ``<agent_dir>/extensions/pi-memory/`` and record ``python``.

    ``python`` defaults to the interpreter running this code (the one pi-memory is installed in).
    Returns the installed folder. The copy is staged next to the target and swapped in, so a
    failed install never leaves a half-written extension that pi would try to load.
    """
    python = python or sys.executable
    target = installed_extension_dir(agent_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Stage outside extensions/ (same filesystem) so pi never discovers a half-copied folder.
    staging = Path(tempfile.mkdtemp(prefix=".pi-memory-install-", dir=target.parent.parent))
    try:
        for source in shipped_files():
            shutil.copy2(source, staging / source.name)
        if not (staging / "index.ts").is_file():
            raise FileNotFoundError(f"extension source missing: {EXTENSION_DIR / 'index.ts'}")
        config = {"python": python}
        (staging / CONFIG_NAME).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        old = None
        if target.exists():
            old = target.parent.parent / f".{INSTALL_NAME}-old-{os.getpid()}"
            if old.exists():
                shutil.rmtree(old)
            target.rename(old)
        staging.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


class NotOurInstall(Exception):
    """``extensions/pi-memory`` exists but was not written by :func:`install_pi_extension`."""


def uninstall_pi_extension(agent_dir: Path) -> Path | None:
    """Remove ``<agent_dir>/extensions/pi-memory/``; the removed folder, or ``None`` when none was installed.

    Raises :class:`NotOurInstall` when the folder lacks our ``pi-memory.json`` (it is left as it is)."""
    target = installed_extension_dir(agent_dir)
    if not target.is_dir():
        return None
    if not (target / CONFIG_NAME).is_file():
        raise NotOurInstall(f"{target} has no {CONFIG_NAME}, so `pi-memory install pi` did not write it")
    shutil.rmtree(target)
    return target


def read_installed_python(agent_dir: Path) -> str | None:
    """The interpreter recorded by the last install, or ``None``."""
    try:
        data = json.loads((installed_extension_dir(agent_dir) / CONFIG_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("python") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None
