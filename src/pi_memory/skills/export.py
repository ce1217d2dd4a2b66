"""Make our skills visible to Claude Code and Codex, which read ``SKILL.md`` folders of their own.

Where they read skills (their documentation, checked 2026-12):

* Claude Code: personal ``~/.claude/skills/<name>/SKILL.md``, project ``<repo>/.claude/skills/<name>/``;
* Codex: user ``~/.agents/skills/<name>/`` and repository ``<repo>/.agents/skills/<name>/`` (the Agent Skills
  folders; older Codex releases read ``$CODEX_HOME/skills``, i.e. ``~/.codex/skills``). pi reads
  ``~/.agents/skills`` too, which is why :meth:`SkillStore.discoverable` leaves out a skill exported there.

Global skills go to the personal folder, the current project's skills to the repository's folder. Each is a
symlink to our folder (so later edits show up at once), or with ``copy=True`` (or where links cannot be made)
a copy marked with a ``.pi-memory-export`` file. Nothing of the user's is ever overwritten: a destination that
exists and is not our link or our marked copy is skipped and reported.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from pi_memory.skills.store import SkillStore

MARKER = ".pi-memory-export"
TARGETS = {"claude-code": Path(".claude") / "skills", "codex": Path(".agents") / "skills"}


@dataclass(frozen=True)
class ExportItem:
    """What happened to one skill: ``action`` is ``linked``, ``copied``, ``updated`` (our earlier copy
    refreshed), ``unchanged`` (already our link), ``skipped`` (``reason`` says why) or, in a dry run, the
    action it would take."""

    skill_id: str
    destination: str
    action: str
    reason: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


def destinations(target: str, home: Path, project_root: Path | None) -> dict[str, Path]:
    """``{scope: folder}`` the ``target`` host reads skills from."""
    rel = TARGETS[target]
    out = {"global": home / rel}
    if project_root is not None:
        out["project"] = project_root / rel
    return out


def _ours(dest: Path, source: Path, skill_id: str) -> str | None:
    """``"link"`` / ``"copy"`` when ``dest`` is our export of ``source``, else ``None``."""
    if dest.is_symlink():
        with contextlib.suppress(OSError):
            if dest.resolve() == source.resolve():
                return "link"
        return None
    marker = dest / MARKER
    with contextlib.suppress(OSError):
        if marker.is_file() and marker.read_text(encoding="utf-8").strip() == skill_id:
            return "copy"
    return None


def _copy(source: Path, dest: Path, skill_id: str) -> None:
    staging = dest.with_name(f".{dest.name}.pi-memory-tmp")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(source, staging)
    (staging / MARKER).write_text(skill_id + "\n", encoding="utf-8")
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(staging, dest)


def export_skills(store: SkillStore, target: str, home: Path, copy: bool = False, scope: str | None = None,
                  dry_run: bool = False) -> list[ExportItem]:
    """Export every readable skill (of ``scope``, default all) for ``target`` (``claude-code`` / ``codex``)."""
    if target not in TARGETS:
        raise ValueError(f"unknown export target {target!r}; use one of {', '.join(TARGETS)}")
    dests = destinations(target, home, store.project_root)
    items = []
    for skill in store.skills(scope):
        dest = dests[skill.scope] / skill.slug
        if skill.doc is None:
            items.append(ExportItem(skill.id, str(dest), "skipped", f"unreadable: {skill.error}"))
            continue
        ours = _ours(dest, skill.folder, skill.id) if (dest.exists() or dest.is_symlink()) else None
        if (dest.exists() or dest.is_symlink()) and ours is None:
            items.append(ExportItem(skill.id, str(dest), "skipped", "a skill of yours is already there; "
                                    "it was left untouched"))
            continue
        if ours == "link" and not copy:
            items.append(ExportItem(skill.id, str(dest), "unchanged"))
            continue
        action = "updated" if ours else ("copied" if copy else "linked")
        if not dry_run:
            dest.parent.mkdir(parents=True, exist_ok=True)
            if ours == "link":
                dest.unlink()
            if action == "linked":
                try:
                    dest.symlink_to(skill.folder.resolve(), target_is_directory=True)
                except OSError:
                    action = "copied"  # no symlinks here (Windows without the privilege): a marked copy
            if action != "linked":
                _copy(skill.folder, dest, skill.id)
        items.append(ExportItem(skill.id, str(dest), action))
    return items
