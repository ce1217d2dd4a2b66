"""Make our skills visible to Claude Code and Codex, which read ``SKILL.md`` folders of their own.

Where they read skills (their documentation, checked 2026-12):

* Claude Code: personal ``~/.claude/skills/<name>/SKILL.md``, project ``<repo>/.claude/skills/<name>/``;
* Codex: user ``~/.agents/skills/<name>/`` and repository ``<repo>/.agents/skills/<name>/`` (the Agent Skills
  folders; older Codex releases read ``$CODEX_HOME/skills``, i.e. ``~/.codex/skills``). pi reads
  ``~/.agents/skills`` too, which is why :meth:`SkillStore.discoverable` leaves out a skill exported there.

Global skills go to the personal folder, the current project's skills to the repository's folder. Each is a
symlink to our folder (so later edits show up at once), or with ``copy=True`` (or where links cannot be made)
a copy marked with a ``.pi-memory-export`` file. Nothing of the user's is ever overwritten: a destination that
exists and is not our link or our marked copy is skipped and reported. After a ``move`` or ``delete`` the old
link would point nowhere: the store's ``after_removal`` (:func:`prune_links`, set by the runtime) removes it at
once, and the next export also removes such links and refreshes stale copies.
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
    """What happened to one skill: ``action`` is ``linked``, ``copied``, ``updated`` (our earlier copy or
    link refreshed), ``unchanged`` (already our link), ``skipped`` (``reason`` says why), ``removed`` (a link
    of ours to a skill moved or deleted since) or, in a dry run, the action it would take."""

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


def _links_into(link: Path, roots: list[Path]) -> bool:
    """Whether the symlink ``link`` points into one of ``roots`` (its target may be gone)."""
    try:
        target = Path(os.path.normpath(link.parent / os.readlink(link)))
    except OSError:
        return False
    return any(target == r or r in target.parents for r in roots)


def _ours(dest: Path, source: Path, skill_id: str, roots: list[Path]) -> str | None:
    """``"link"`` / ``"copy"`` when ``dest`` is our export (of ``source``, or a link into our folders left
    by an earlier export), else ``None``."""
    if dest.is_symlink():
        return "link" if _links_into(dest, roots) else None
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


def _dangling(dests: dict[str, Path], roots: list[Path], dry_run: bool) -> list[ExportItem]:
    """Links of ours in ``dests`` whose skill was moved or deleted since: removed (unless ``dry_run``)."""
    items = []
    for folder in dests.values():
        for link in sorted(folder.iterdir()) if folder.is_dir() else []:
            if link.is_symlink() and not link.exists() and _links_into(link, roots):
                if not dry_run:
                    with contextlib.suppress(OSError):  # one that cannot go is tried again by the next export
                        link.unlink()
                items.append(ExportItem(link.name, str(link), "removed", "its skill was moved or deleted"))
    return items


def prune_links(store: SkillStore, home: Path) -> list[ExportItem]:
    """Remove, for every host, the links of ours that point nowhere since a skill was deleted or moved (the
    store's ``after_removal``, set at the composition root), so a host never lists a skill that is gone."""
    roots = [r.resolve() for r in store.roots.values()]
    items: list[ExportItem] = []
    for target in TARGETS:
        with contextlib.suppress(OSError):  # a host folder that cannot be read: the next export tries again
            items += _dangling(destinations(target, home, store.project_root), roots, False)
    return items


def export_skills(store: SkillStore, target: str, home: Path, copy: bool = False, scope: str | None = None,
                  dry_run: bool = False) -> list[ExportItem]:
    """Export every readable skill (of ``scope``, default all) for ``target`` (``claude-code`` / ``codex``)."""
    if target not in TARGETS:
        raise ValueError(f"unknown export target {target!r}; use one of {', '.join(TARGETS)}")
    dests = destinations(target, home, store.project_root)
    roots = [r.resolve() for r in store.roots.values()]
    items = _dangling(dests, roots, dry_run)
    for skill in store.skills(scope):
        dest = dests[skill.scope] / skill.slug
        if skill.doc is None:
            items.append(ExportItem(skill.id, str(dest), "skipped", f"unreadable: {skill.error}"))
            continue
        ours = _ours(dest, skill.folder, skill.id, roots) if (dest.exists() or dest.is_symlink()) else None
        if (dest.exists() or dest.is_symlink()) and ours is None:
            items.append(ExportItem(skill.id, str(dest), "skipped", "a skill of yours is already there; "
                                    "it was left untouched"))
            continue
        if ours == "link" and not copy and dest.resolve() == skill.folder.resolve():
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


def listed_by(store: SkillStore, target: str, home: Path, skills: list | None = None) -> set[str]:
    """Ids of our skills (``skills``, default the store's) that ``target`` already lists by itself: exported
    into its folders (our link or our marked copy). Recall leaves them out for that host, whose own skill list
    names them already."""
    if target not in TARGETS:
        return set()
    dests = destinations(target, home, store.project_root)
    roots = [r.resolve() for r in store.roots.values()]
    out = set()
    for skill in store.skills() if skills is None else skills:
        dest = dests.get(skill.scope)
        if dest is not None and (dest / skill.slug / "SKILL.md").is_file() and _ours(
                dest / skill.slug, skill.folder, skill.id, roots):
            out.add(skill.id)
    return out


def recalled_for(store: SkillStore, host: str | None, home: Path) -> list:
    """The skills recall ranks for ``host`` (``None``: pi, the CLI): every skill of ``store`` except those the
    host already lists by itself (:func:`listed_by`)."""
    skills = store.skills()
    listed = listed_by(store, host, home, skills) if host else set()
    return [s for s in skills if s.id not in listed]
