"""Make our skills visible to Claude Code and Codex, which read ``SKILL.md`` folders of their own.

Where they read skills (their documentation, checked 2026-12):

* Claude Code: personal ``~/.claude/skills/<name>/SKILL.md``, project ``<repo>/.claude/skills/<name>/``;
* Codex: user ``~/.agents/skills/<name>/`` and repository ``<repo>/.agents/skills/<name>/`` (the Agent Skills
  folders; older Codex releases read ``$CODEX_HOME/skills``, i.e. ``~/.codex/skills``). pi reads
  ``~/.agents/skills`` too, which is why :meth:`SkillStore.discoverable` leaves out a skill exported there.

Global skills go to the personal folder, the current project's skills to the repository's folder. A global skill
whose slug the project has too (a pair made by hand, or before one name in two scopes was refused) is not exported
(``skipped``, code ``project_wins``, an earlier export of it removed): the project's wins, as pi is handed it.

An export is a **copy, scanned when it is made**, never a link. Both hosts put a skill's description into their
own prompt and its body into the conversation, and nothing of ours stands between their folders and the model.
A link to our folder would make every later hand edit of ``SKILL.md`` live at once, unscanned; a copy holds
what passed :func:`pi_memory.skills.checks.problems` (the check behind pi's own list) when it was made: what a
host could not load as it is (a body past the body limit, a name or description that is not plain text: what
``pi-memory import`` refuses too), then the scanners. A skill that does not pass is not exported (``refused``),
and an earlier export of it is removed (``withdrawn``), each with the reason and what to do. Edits the agent
makes through the store (``skill_manage``: scanned before they are written) reach the copies at once
(:func:`refresh`, the store's ``after_change`` set by the runtime); a hand edit reaches them at the next export,
which scans it. Links an older version made are replaced by copies at the next export.

A folder of the hosts that cannot be written (a mode without write bits, honoured even when running as root, a
read-only file system, a full disk, no permission; for a folder not made yet, the folder it would be made in) is
refused before anything is written, in words naming that folder and what to do (:func:`folder_problem`): the CLI
stops with nothing exported, a skill whose own copy cannot be replaced is ``failed`` with the reason, and a copy
that fails while being made leaves the earlier copy as it was (the new one is made beside it and swapped in).

Each copy holds a ``.pi-memory-export`` file (:mod:`.marker`) naming its skill and its source folder. Nothing of
the user's is ever overwritten: a destination that exists and is not our copy (or an older link of ours) is
skipped and reported. After a ``move`` or ``delete`` the store's ``after_removal`` (:func:`prune_exports`, set by
the runtime) removes the copies and links of a skill that is gone; the next export does too.
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pi_memory.skills import checks, marker
from pi_memory.storage import write_blocker, write_failure

if TYPE_CHECKING:
    from pi_memory.skills.store import Skill, SkillStore

MARKER = marker.MARKER
TARGETS = {"claude-code": Path(".claude") / "skills", "codex": Path(".agents") / "skills"}
HOSTS = {"claude-code": "Claude Code", "codex": "Codex"}


@dataclass(frozen=True)
class ExportItem:
    """What happened to one skill: ``action`` is ``copied``, ``updated`` (our earlier copy or link replaced by a
    fresh copy), ``unchanged`` (our copy is already the skill as it is), ``skipped`` (``reason`` says why),
    ``refused`` (the skill trips the threat or secret scanner: ``reason`` says where and what to do),
    ``withdrawn`` (refused, and our earlier export of it removed), ``failed`` (its folder cannot be written:
    ``reason`` says which and what to do; an earlier copy is left as it was), ``removed`` (our export of a skill moved or
    deleted since) or, in a dry run, the action it would take. ``code``, for a skipped or refused skill, is the
    kind of reason (:data:`SKIP_CODES`, :data:`REFUSAL_CODES`), so a summary can count them. ``links``: the
    symbolic links inside the skill's folder (paths in it) that its copy leaves out (:data:`LINK_SKIP`)."""

    skill_id: str
    destination: str
    action: str
    reason: str | None = None
    code: str | None = None
    links: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        data = {k: v for k, v in asdict(self).items() if v is not None and k != "links"}
        if self.links:
            data["skippedFiles"] = [{"file": name, "code": "link"} for name in self.links]
        return data


SKIP_CODES = {  # why a skill was skipped: its SKILL.md cannot be read, or the destination is not ours
    "unreadable": "its SKILL.md cannot be read",
    "yours": "a skill of yours is already there",
    "other_data_folder": "another pi-memory data folder exported it there",
    "project_wins": "a project skill has its name, and the project's is the one exported",
}
# why a file of an exported skill was left out of its copy (ExportItem.links): a link's target was never scanned
LINK_SKIP = "a symbolic link inside a skill folder is not copied (what it points to was not scanned)"
REFUSAL_CODES = {  # why a skill was refused: the first kind its problems show (:func:`refusal_code`)
    "malformed": "a host could not load it as it is (too long, or a name or description that is not plain text)",
    "control": "control characters (terminal escape codes or similar) in its name, description or body",
    "unscannable": "files that cannot be scanned",
    "flagged": "a credential, or text that reads like an instruction to the model",
}


def refusal_code(found: list[checks.SkillProblem]) -> str:
    """The kind of reason ``found`` gives (a key of :data:`REFUSAL_CODES`)."""
    if any(p.invalid and not p.control for p in found):
        return "malformed"
    if any(p.control for p in found):
        return "control"
    return "unscannable" if any(p.unscanned for p in found) else "flagged"


def destinations(target: str, home: Path, project_root: Path | None) -> dict[str, Path]:
    """``{scope: folder}`` the ``target`` host reads skills from."""
    rel = TARGETS[target]
    out = {"global": home / rel}
    if project_root is not None:
        out["project"] = project_root / rel
    return out


def _roots(store: SkillStore) -> list[Path]:
    return [r.resolve() for r in store.roots.values()]


def _links_into(link: Path, roots: list[Path]) -> bool:
    """Whether the symlink ``link`` points into one of ``roots`` (its target may be gone)."""
    try:
        target = Path(os.path.normpath(link.parent / os.readlink(link)))
    except OSError:
        return False
    return marker.within(target, roots)


def _ours(dest: Path, skill_id: str, roots: list[Path]) -> str | None:
    """``"link"`` (an older export's link into our folders) / ``"copy"`` (our marked copy of ``skill_id``, made
    from one of ``roots``) when ``dest`` is our export, else ``None``."""
    if dest.is_symlink():
        return "link" if _links_into(dest, roots) else None
    found = marker.read(dest)
    if found and found.skill_id == skill_id and (found.source is None or marker.within(found.source, roots)):
        return "copy"
    return None


def _files(folder: Path) -> set[str]:
    """The files of a skill folder an export holds (:func:`.checks.skill_files`, ``SKILL.md`` included)."""
    return {str(p.relative_to(folder)) for p in checks.skill_files(folder, folder / MARKER)}


def _same(source: Path, dest: Path) -> bool:
    """Whether the copy ``dest`` holds exactly the files of ``source``, byte for byte, and says it came from
    there."""
    found = marker.read(dest)
    if found is None or found.source != source.resolve():
        return False
    names = _files(source)
    if names != _files(dest):
        return False
    _match, mismatch, errors = filecmp.cmpfiles(source, dest, sorted(names), shallow=False)
    return not mismatch and not errors


def _copy(source: Path, dest: Path, skill_id: str) -> None:
    """Copy exactly the files the scan read (:func:`.checks.skill_files`: no link is followed or copied). The copy
    is made beside ``dest`` and swapped in; an earlier copy is set aside first and put back when the swap fails,
    so a failed export leaves what was there."""
    staging = dest.with_name(f".{dest.name}.pi-memory-tmp")
    old = dest.with_name(f".{dest.name}.pi-memory-old")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        for name in sorted(_files(source)):
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / name, staging / name, follow_symlinks=False)
        marker.write(staging, skill_id, source.resolve())
        if dest.exists() or dest.is_symlink():
            _remove(old)
            os.replace(dest, old)
        try:
            os.replace(staging, dest)
        except OSError:
            if (old.exists() or old.is_symlink()) and not (dest.exists() or dest.is_symlink()):
                os.replace(old, dest)
            raise
        _remove(old)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _remove(dest: Path) -> None:
    if dest.is_symlink():
        dest.unlink()
    elif dest.exists():
        shutil.rmtree(dest)


def _orphans(dests: dict[str, Path], store: SkillStore, roots: list[Path], dry_run: bool) -> list[ExportItem]:
    """Our exports in ``dests`` whose skill was moved or deleted since: links pointing nowhere, and copies made
    from our folders naming a skill that no longer exists. Removed (unless ``dry_run``)."""
    ids = None
    items = []
    for folder in dests.values():
        for entry in sorted(folder.iterdir()) if folder.is_dir() else []:
            if entry.is_symlink():
                gone = not entry.exists() and _links_into(entry, roots)
            else:
                found = marker.read(entry)
                if found is None or found.source is None or not marker.within(found.source, roots):
                    continue  # not ours, or an older copy that does not say where it came from: left alone
                ids = ids if ids is not None else {s.id for s in store.skills()}
                gone = found.skill_id not in ids
            if gone:
                if not dry_run:
                    with contextlib.suppress(OSError):  # one that cannot go is tried again by the next export
                        _remove(entry)
                items.append(ExportItem(entry.name, str(entry), "removed", "its skill was moved or deleted"))
    return items


def prune_exports(store: SkillStore, home: Path) -> list[ExportItem]:
    """Remove, for every host, our exports of skills deleted or moved since (the store's ``after_removal``, set
    at the composition root), so a host never lists a skill that is gone."""
    items: list[ExportItem] = []
    for target in TARGETS:
        with contextlib.suppress(OSError):  # a host folder that cannot be read: the next export tries again
            items += _orphans(destinations(target, home, store.project_root), store, _roots(store), False)
    return items


def refusal(skill: Skill, found: list[checks.SkillProblem], target: str, withdrawn: bool, dry_run: bool) -> str:
    """Why ``skill`` is not exported, and what to do, for a person."""
    before = ""
    if withdrawn:
        before = "its earlier export would be removed: " if dry_run else "its earlier export was removed: "
    return (f"{before}not exported: {checks.summary(found)}. {HOSTS[target]} reads a skill's description into "
            f"its prompt and its body into the conversation. To export it, fix "
            f"{skill.folder if all(p.part.startswith('file:') for p in found) else skill.path}: "
            f"{checks.fix_hint(found)}; then export again. Or delete it: `pi-memory skills delete {skill.id}`.")


def folder_problem(folder: Path, host: str) -> tuple[str, str] | None:
    """Why nothing can be written into ``folder``, where ``host`` reads skills (one not made yet: the folder it
    would be made in), seen without writing (:func:`pi_memory.storage.write_blocker`): ``(kind, sentence for a
    person with what to do)``, or ``None``."""
    existing = folder
    while not existing.exists() and not existing.is_symlink() and existing != existing.parent:
        existing = existing.parent
    blocked = write_blocker(folder)
    if blocked is None:
        return None
    kind, detail = blocked
    place = f"{folder}" if existing == folder else f"{existing}, where {folder} would be made"
    if kind == "read_only":
        what, todo = f"{existing} is on a read-only file system", "Remount it read-write"
    elif kind == "disk_full":
        what, todo = f"the disk holding {existing} is full ({detail})", "Free some space on that disk"
    else:
        why = detail.replace(f"the mode of {existing}, where it would be created,", "its mode") if detail else \
            "this user may not write there"
        what, todo = (f"you have no permission to write in {place} ({why})",
                      f"Give your user write access to it (for example `chmod u+w {existing}`)")
    return kind, (f"The skills cannot be exported where {host} reads them: {what}. Nothing was exported or "
                  f"changed. {todo}, then run this command again.")


def _failed(skill: Skill, dest: Path, reason: str, code: str) -> ExportItem:
    return ExportItem(skill.id, str(dest), "failed", reason, code)


def _hidden(store: SkillStore, skill: Skill) -> str | None:
    """The id of the project skill that takes global ``skill``'s place (one slug in both scopes, a pair made by
    hand or before :meth:`~pi_memory.skills.places.SkillPlaces.other_scope` was refused), else ``None``. pi is
    handed the project's (``discoverable``); a host given both copies would list two skills of one name and pick
    one by its own rule, so only the project's is exported."""
    return store.other_scope("global", skill.slug) if skill.scope == "global" else None


def _not_exported(skill: Skill, dest: Path, roots: list[Path], winner: str, dry_run: bool) -> ExportItem:
    """``skill`` loses to ``winner`` (:func:`_hidden`): skipped, and our earlier export of it removed."""
    ours = _ours(dest, skill.id, roots) if dest.exists() or dest.is_symlink() else None
    if ours and not dry_run:
        _remove(dest)
    removed = ("; its earlier export would be removed" if dry_run else "; its earlier export was removed") if ours \
        else ""
    return ExportItem(skill.id, str(dest), "skipped", f"the project skill {winner} has its name and is exported in "
                      f"its place{removed}", "project_wins")


def _export_one(skill: Skill, dest: Path, roots: list[Path], target: str, dry_run: bool) -> ExportItem:
    if skill.doc is None:
        return ExportItem(skill.id, str(dest), "skipped", f"unreadable: {skill.error}", "unreadable")
    present = dest.exists() or dest.is_symlink()
    ours = _ours(dest, skill.id, roots) if present else None
    if present and ours is None:
        found = marker.read(dest)
        if found is not None and found.skill_id == skill.id:
            return ExportItem(skill.id, str(dest), "skipped", f"another pi-memory data folder exported it there "
                              f"(from {found.source}); it was left untouched", "other_data_folder")
        return ExportItem(skill.id, str(dest), "skipped", "a skill of yours is already there; it was left untouched",
                          "yours")
    problems = checks.problems(skill)
    if problems:
        if ours and not dry_run:
            _remove(dest)
        return ExportItem(skill.id, str(dest), "withdrawn" if ours else "refused",
                          refusal(skill, problems, target, bool(ours), dry_run), refusal_code(problems))
    links = tuple(checks.skill_links(skill.folder))  # left out of the copy: said, never silently
    if ours == "copy" and _same(skill.folder, dest):
        return ExportItem(skill.id, str(dest), "unchanged", links=links)
    for folder in (dest.parent, dest) if ours == "copy" else (dest.parent,):  # refused before anything changes
        if (problem := folder_problem(folder, HOSTS[target])) is not None:
            return _failed(skill, dest, problem[1], problem[0])
    if not dry_run:
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            _copy(skill.folder, dest, skill.id)
        except OSError as exc:  # the earlier copy, if any, is left as it was: the new one is swapped in whole
            problem = write_failure(exc, dest, "folder")
            return _failed(skill, dest, f"not exported: {problem.message if problem else exc}",
                           problem.kind if problem else "io_error")
    return ExportItem(skill.id, str(dest), "updated" if ours else "copied", links=links)


def export_skills(store: SkillStore, target: str, home: Path, scope: str | None = None,
                  dry_run: bool = False) -> list[ExportItem]:
    """Export every readable, clean skill (of ``scope``, default all) for ``target`` (``claude-code`` /
    ``codex``) as scanned copies (see the module docstring)."""
    if target not in TARGETS:
        raise ValueError(f"unknown export target {target!r}; use one of {', '.join(TARGETS)}")
    dests = destinations(target, home, store.project_root)
    roots = _roots(store)
    items = _orphans(dests, store, roots, dry_run)
    for skill in store.skills(scope):
        dest = dests[skill.scope] / skill.slug
        if (winner := _hidden(store, skill)) is not None:
            items.append(_not_exported(skill, dest, roots, winner, dry_run))
            continue
        items.append(_export_one(skill, dest, roots, target, dry_run))
    return items


def refresh(store: SkillStore, home: Path, skill_id: str) -> list[ExportItem]:
    """Bring our exports of ``skill_id`` up to date after a write through the store (the store's
    ``after_change``, set at the composition root): each host that has our copy (or an older link) of it gets
    the new copy, or loses it when the skill no longer passes the scan. Hosts it was never exported to are left
    alone."""
    skill = store.find(skill_id)
    if isinstance(skill, dict):
        return []
    roots = _roots(store)
    items = []
    for target in TARGETS:
        dest = destinations(target, home, store.project_root).get(skill.scope)
        if dest is None:
            continue
        with contextlib.suppress(OSError):  # a host folder that cannot be written: the next export tries again
            if not _ours(dest / skill.slug, skill.id, roots):
                continue
            if (winner := _hidden(store, skill)) is not None:
                items.append(_not_exported(skill, dest / skill.slug, roots, winner, False))
            else:
                items.append(_export_one(skill, dest / skill.slug, roots, target, False))
    return items


def listed_by(store: SkillStore, target: str, home: Path, skills: list | None = None) -> set[str]:
    """Ids of our skills (``skills``, default the store's) that ``target`` already lists by itself: exported
    into its folders (our copy, or an older link). Recall leaves them out for that host, whose own skill list
    names them already."""
    if target not in TARGETS:
        return set()
    dests = destinations(target, home, store.project_root)
    roots = _roots(store)
    out = set()
    for skill in store.skills() if skills is None else skills:
        dest = dests.get(skill.scope)
        if dest is not None and (dest / skill.slug / "SKILL.md").is_file() and _ours(
                dest / skill.slug, skill.id, roots):
            out.add(skill.id)
    return out


def recalled_for(store: SkillStore, host: str | None, home: Path) -> list:
    """The skills recall ranks for ``host`` (``None``: pi, the CLI): every skill of ``store`` except those the
    host already lists by itself (:func:`listed_by`) and a global skill whose slug the project has too (a pair
    made by hand or before: the project's is the one pi is handed and the one exported, so recall names that one
    only)."""
    skills = store.skills()
    local = {s.slug for s in skills if s.scope == "project"}
    skills = [s for s in skills if s.scope != "global" or s.slug not in local]
    listed = listed_by(store, host, home, skills) if host else set()
    return [s for s in skills if s.id not in listed]
