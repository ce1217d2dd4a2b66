"""Install the pi extension into a pi agent directory.

``install_pi_extension(agent_dir, python)`` copies the shipped extension folder (every ``.ts`` module and
``.json`` file of it, :func:`shipped_files`) to
``<agent_dir>/extensions/pi-memory/`` (where pi discovers it at startup) and writes
``pi-memory.json`` next to ``index.ts`` naming the Python interpreter that runs the bridge and the sha256 of
every file the install wrote. Re-running it replaces the installed copy, so upgrading pi-memory and
re-installing is enough.

What is already in that folder is never lost:

- a folder without our ``pi-memory.json`` (another extension of the same name, or anything a person keeps
  there) is not ours: install raises :class:`NotOurInstall` and changes nothing; ``uninstall`` does the same;
- a folder of ours that also holds a file the install did not write (a file added, or one of ours edited
  since: its sha256 differs from the one recorded) is moved whole to
  ``<agent_dir>/pi-memory-backups/pi-memory.bak.<unix-ts>/`` (outside ``extensions/``, so pi never loads it
  as a second extension) and kept; the result names that folder so the person is told. We move rather than
  refuse so an upgrade still works when a person (or a tool) put something there, and move the whole folder
  so a file is never separated from what it sat beside.

An install written before the sha256 record (``pi-memory.json`` with only ``python``) counts its top-level
``.ts`` and ``.json`` files as its own (that is what those installs copied); anything else there is kept.
Memories are never touched: they live in the data root, not in the extension.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pi_memory.integrations.pi import EXTENSION_DIR

INSTALL_NAME = "pi-memory"
CONFIG_NAME = "pi-memory.json"
BACKUP_DIR_NAME = "pi-memory-backups"
_SHIPPED_SUFFIXES = (".ts", ".json")  # the extension's modules, package.json and fallback-tools.json


@dataclass(frozen=True)
class PiChange:
    """What an install or uninstall did: ``folder`` is the extension folder it wrote or removed; ``kept`` the
    backup folder an earlier copy holding files we did not write was moved to (``None`` when none was)."""

    folder: Path
    kept: Path | None = None


class NotOurInstall(Exception):
    """``extensions/pi-memory`` exists but was not written by :func:`install_pi_extension`."""


def shipped_files() -> list[Path]:
    """Every file of the shipped extension folder that an install copies: each ``.ts`` module (``index.ts``
    imports its siblings, so a module missing from a hand-kept list would break pi's load) and the ``.json``
    files, never a ``pi-memory.json`` (the install writes its own)."""
    return sorted(p for p in EXTENSION_DIR.iterdir()
                  if p.is_file() and p.suffix in _SHIPPED_SUFFIXES and p.name != CONFIG_NAME)


def installed_extension_dir(agent_dir: Path) -> Path:
    return Path(agent_dir).expanduser() / "extensions" / INSTALL_NAME


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _foreign_entries(folder: Path) -> list[str]:
    """Names in ``folder`` (an install of ours: it holds ``pi-memory.json``) that the install did not write,
    sorted; raises :class:`NotOurInstall` when the folder is not ours."""
    if not folder.is_dir():
        raise NotOurInstall(f"{folder} is not a folder, so `pi-memory install pi` did not write it")
    try:
        config = json.loads((folder / CONFIG_NAME).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotOurInstall(f"{folder} has no {CONFIG_NAME}, so `pi-memory install pi` did not write it") from None
    except (OSError, ValueError):
        config = {}
    recorded = config.get("files") if isinstance(config, dict) else None
    foreign = []
    for entry in sorted(folder.iterdir()):
        if entry.name == CONFIG_NAME:
            continue
        if not entry.is_file() or entry.is_symlink():
            foreign.append(entry.name)
        elif isinstance(recorded, dict):
            if recorded.get(entry.name) != _sha256(entry):
                foreign.append(entry.name)
        elif entry.suffix not in _SHIPPED_SUFFIXES:
            foreign.append(entry.name)
    return foreign


def _keep_aside(agent_dir: Path, folder: Path) -> Path:
    """Move ``folder`` to a new ``<agent_dir>/pi-memory-backups/pi-memory.bak.<unix-ts>[-n]`` and return it."""
    backups = Path(agent_dir).expanduser() / BACKUP_DIR_NAME
    backups.mkdir(parents=True, exist_ok=True)
    stamp = int(time.time())
    kept = backups / f"{INSTALL_NAME}.bak.{stamp}"
    n = 1
    while kept.exists():
        kept = backups / f"{INSTALL_NAME}.bak.{stamp}-{n}"
        n += 1
    folder.rename(kept)
    return kept


def install_pi_extension(agent_dir: Path, python: str | None = None) -> PiChange:
    """Copy the extension to ``<agent_dir>/extensions/pi-memory/`` and record ``python``.

    ``python`` defaults to the interpreter running this code (the one pi-memory is installed in).
    The copy is staged next to the target and swapped in, so a failed install never leaves a half-written
    extension that pi would try to load. Raises :class:`NotOurInstall` (nothing changed) when the folder
    exists and is not ours; an earlier copy of ours holding files we did not write is kept (module doc).
    """
    python = python or sys.executable
    target = installed_extension_dir(agent_dir)
    foreign = _foreign_entries(target) if target.exists() or target.is_symlink() else []
    target.parent.mkdir(parents=True, exist_ok=True)
    # Stage outside extensions/ (same filesystem) so pi never discovers a half-copied folder.
    staging = Path(tempfile.mkdtemp(prefix=".pi-memory-install-", dir=target.parent.parent))
    kept = None
    try:
        files = {}
        for source in shipped_files():
            shutil.copy2(source, staging / source.name)
            files[source.name] = _sha256(staging / source.name)
        if not (staging / "index.ts").is_file():
            raise FileNotFoundError(f"extension source missing: {EXTENSION_DIR / 'index.ts'}")
        config = {"python": python, "files": files}
        (staging / CONFIG_NAME).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        old = None
        if target.exists():
            if foreign:
                kept = _keep_aside(agent_dir, target)
            else:
                old = Path(tempfile.mkdtemp(prefix=".pi-memory-old-", dir=target.parent.parent)) / INSTALL_NAME
                target.rename(old)
        staging.rename(target)
        if old is not None:
            shutil.rmtree(old.parent, ignore_errors=True)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return PiChange(target, kept)


def uninstall_pi_extension(agent_dir: Path) -> PiChange | None:
    """Remove ``<agent_dir>/extensions/pi-memory/``; what was done, or ``None`` when none was installed.

    Raises :class:`NotOurInstall` when the folder lacks our ``pi-memory.json`` (it is left as it is). A folder
    of ours holding files we did not write is moved to the backups folder instead of deleted (``kept``)."""
    target = installed_extension_dir(agent_dir)
    if not target.is_dir():
        return None
    if _foreign_entries(target):
        return PiChange(target, _keep_aside(agent_dir, target))
    shutil.rmtree(target)
    return PiChange(target)


def read_installed_python(agent_dir: Path) -> str | None:
    """The interpreter recorded by the last install, or ``None``."""
    try:
        data = json.loads((installed_extension_dir(agent_dir) / CONFIG_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("python") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None
