"""``SkillStore``: the agent's saved procedures, one ``SKILL.md`` folder each, global or per project.

Locations (under the data root, beside the curated stores):

* global: ``<data root>/skills/<slug>/SKILL.md``;
* project: ``<data root>/projects/<name>-<id>/skills/<slug>/SKILL.md``, the folder of the project's curated
  store (:func:`pi_memory.project.project_folder`, keyed by the git root, so worktrees share it).

Ids are ``global:<slug>`` and ``project:<slug>`` (``project:<name>:<slug>``, the peer's form, is accepted);
a bare slug is accepted when only one scope has it, and so is the skill's own name as its ``SKILL.md`` spells it
(case and spacing aside). An id is never slugified or cut to fit: every action (view, patch, update, delete,
move) acts only on a skill that exists as named, so ``'!!!EVIL!!!'`` does not reach ``global:evil``.

Every write: validate and scan every field (:mod:`.fields`) before any lock, then under the
one skills lock (``<data root>/.skills.lock``, filelock) re-check what exists and publish ``SKILL.md``
atomically (:func:`pi_memory.curated.files.atomic_write_text`). A delete moves the folder (supporting files
too) to ``<data root>/.trash/skills/`` instead of erasing it. Create refuses, in this order: a slug already
used in that scope (``duplicate``) or in the other one (``other_scope``: pi would be handed two skills of one name
and keep the first, a bare id would name both, and an export would put the name in two hosts' folders; a move onto
a taken name is refused too, ``exists``), a name too close to a skill of that scope (``similar`` /
``name-collision``, :mod:`.similarity`; the peer checked global skills only, we check both scopes because two
near-identical project skills confuse the agent just as much), and a slug that one of pi's own skill folders
(or an Agent Skills folder pi also reads) already has (``shadowed``): pi keeps the first skill of a name it
finds, so ours would never be seen. After a write the hosts' exported copies are refreshed, after a delete or
move removed (``after_change`` / ``after_removal``, set by the runtime to :mod:`.export`'s functions).

Results are plain dicts ``{"success", "message", "code", ...}`` (:func:`.fields.ok` / :func:`.fields.no`)
written for the model; the CLI and the pi manager read the structured fields and word things for a person.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pi_memory import safety
from pi_memory.config import DEFAULT_LOCK_TIMEOUT_S
from pi_memory.curated.files import StoreLockedError, atomic_write_text, locked
from pi_memory.curated.messages import not_written
from pi_memory.private_files import make_private_folder
from pi_memory.skills import document as fmt
from pi_memory.skills import fields
from pi_memory.skills.fields import no as _no
from pi_memory.skills.fields import ok as _ok
from pi_memory.skills.places import SkillPlaces
from pi_memory.skills.similarity import find_clash
from pi_memory.storage import data_write_problem, refuse_read_only_folder, write_failure

SCOPES = ("global", "project")
_TRASH = Path(".trash") / "skills"


@dataclass
class Skill:
    """One skill folder as found on disk; ``doc`` is ``None`` (and ``error`` says why) when unreadable."""

    slug: str
    scope: str
    folder: Path
    doc: fmt.SkillDoc | None
    error: str | None = None

    @property
    def id(self) -> str:
        return f"{self.scope}:{self.slug}"

    @property
    def path(self) -> Path:
        return self.folder / fmt.SKILL_FILE

    def summary(self) -> dict:
        out = {"id": self.id, "scope": self.scope, "slug": self.slug, "path": str(self.path)}
        if self.doc is None:
            out["error"] = self.error
        else:
            out.update(name=self.doc.name, description=self.doc.description, version=self.doc.version,
                       updated=self.doc.updated)
        return out


class SkillStore(SkillPlaces):
    """Skills under ``data_dir`` (global) and, with ``project_root``, that project's folder.

    ``foreign_dirs``: folders where pi or Agent Skills hosts read skills (``<agentDir>/skills``,
    ``<project>/.pi/skills``, ``~/.agents/skills``...): a slug present there is refused (it would be shadowed)
    unless it links back into this store (an export). ``clock()`` gives today's date (``YYYY-MM-DD``).
    """

    def __init__(self, data_dir: Path | str, project_root: Path | str | None = None,
                 foreign_dirs: Iterable[Path] = (), lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
                 clock: Callable[[], str] = fmt.today, write_check: Callable[[], object] | None = None):
        self.data_dir = Path(data_dir).expanduser()
        self.write_check = write_check  # () -> StorageProblem | None: the data root open for reading only
        self.roots: dict[str, Path] = {"global": self.data_dir / "skills"}
        self.project_root = Path(project_root) if project_root is not None else None
        self.project_name: str | None = None
        if self.project_root is not None:
            from pi_memory.project import project_folder, project_name

            self.project_name = project_name(self.project_root)
            self.roots["project"] = self.data_dir / "projects" / project_folder(self.project_root) / "skills"
        self.foreign_dirs = tuple(Path(p) for p in foreign_dirs)
        self.lock_timeout = lock_timeout
        self.clock = clock
        # after a skill's folder moved away (delete, move): the composition root sets it to drop the exports the
        # hosts would otherwise list for a skill that is gone (skills.export.prune_exports)
        self.after_removal: Callable[[], object] | None = None
        # after a skill was written (create, patch, update; given its id): the composition root sets it to bring
        # the hosts' copies of it up to date (skills.export.refresh)
        self.after_change: Callable[[str], object] | None = None

    @classmethod
    def from_settings(cls, settings, cwd: Path | str | None = None, home: Path | None = None) -> SkillStore:
        """The store for ``settings`` (:class:`pi_memory.config.Settings`) in ``cwd``'s project, with pi's own
        skill folders and the Agent Skills folders pi reads (pi's docs, skills.md) as ``foreign_dirs``. No
        project outside a folder that has one, nor in the home folder or ``/`` (nothing to scope to)."""
        from pi_memory.project import project_root as find_root

        home = home or Path.home()
        foreign = [settings.agent_dir / "skills", home / ".agents" / "skills"]
        root = None
        if cwd is not None:
            candidate = find_root(Path(cwd))
            if candidate not in (home.resolve(), Path(candidate.anchor)):
                root = candidate
                foreign += [root / ".pi" / "skills", root / ".agents" / "skills"]
        return cls(settings.data_dir, project_root=root, foreign_dirs=foreign, lock_timeout=settings.lock_timeout,
                   write_check=partial(data_write_problem, settings.data_dir))

    # ------------------------------------------------------------------ reading
    @property
    def scopes(self) -> tuple[str, ...]:
        return tuple(s for s in SCOPES if s in self.roots)

    def folder(self, scope: str, slug: str) -> Path:
        return self.roots[scope] / slug

    def skills(self, scope: str | None = None) -> list[Skill]:
        """Every skill folder of ``scope`` (default: all scopes), sorted by scope then slug. Unreadable files
        are listed with their ``error``."""
        out = []
        for sc in [scope] if scope else self.scopes:
            root = self.roots.get(sc)
            if root is None or not root.is_dir():
                continue
            for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
                if (folder / fmt.SKILL_FILE).is_file():
                    out.append(self._load(sc, folder))
        return out

    def _load(self, scope: str, folder: Path) -> Skill:
        try:
            return Skill(folder.name, scope, folder, fmt.read(folder / fmt.SKILL_FILE))
        except (fmt.SkillFormatError, OSError) as exc:
            return Skill(folder.name, scope, folder, None, f"{folder / fmt.SKILL_FILE} cannot be read: {exc}")

    def find(self, skill_id: str) -> Skill | dict:
        """The skill named by ``skill_id`` (see the module docstring), or a refusal dict."""
        text = (skill_id or "").strip()
        scope, _, rest = text.partition(":")
        if scope in SCOPES and rest:
            if scope == "project" and ":" in rest:
                rest = rest.rsplit(":", 1)[1]  # project:<name>:<slug>
            scopes = [scope]
        else:
            scopes, rest = list(self.scopes), text
        if "project" in scopes and "project" not in self.roots:
            if scopes == ["project"]:
                return _no("no_project", "There is no current project (the session is not inside a project "
                           "folder), so project skills are not available here.")
            scopes.remove("project")
        present = [skill for sc in scopes for skill in self.skills(sc)]
        found = [skill for skill in present if skill.slug == rest]
        if not found:  # the skill's own name, as its SKILL.md spells it ("Flaky Pytest"), never a cut or a slug of it
            wanted = " ".join(rest.split()).casefold()
            found = [skill for skill in present if skill.doc is not None and wanted
                     and wanted in {skill.doc.name.casefold(), str(skill.doc.extra.get("display_name", "")).casefold()}]
        if not found:
            return _no("not_found", f"No skill {safety.quoted_name(text)}. {self._known()}")
        if len(found) > 1:
            ids = [skill.id for skill in found]
            return _no("ambiguous", f"{' and '.join(ids)} both match; name one of them by its id.", matches=ids)
        return found[0]

    def _known(self, shown: int = 20) -> str:
        """The ids that exist (the first ``shown``) and how to list them, for a refusal."""
        ids = [skill.id for skill in self.skills()]
        if not ids:
            return "There are no skills yet."
        more = f" and {len(ids) - shown} more (action 'view' without an id lists them)" if len(ids) > shown else ""
        return f"Skills that exist: {', '.join(ids[:shown])}{more}. Give one of these ids exactly."

    # ----------------------------------------------------------------- checking
    def _check_scope(self, scope: str | None) -> dict | None:
        if scope not in SCOPES:
            return _no("invalid_arguments", "scope must be 'global' (a procedure that works anywhere) or "
                       "'project' (tied to this repository's paths, scripts or conventions).")
        if scope not in self.roots:
            return _no("no_project", "There is no current project, so a project skill cannot be saved here. "
                       "Use scope 'global', or start the session inside the project folder.")
        return None

    def _locked(self, step: Callable[[], dict | None], failed: str, path: Path | None = None) -> dict | None:
        """Run ``step`` under the one skills lock; its refusal, a ``locked`` / ``read_only`` / ``io_error``
        refusal (``failed``: what could not be done), or ``None``. A data root open for reading only
        (``write_check``) is refused before the lock; a write of ``path`` refused by a read-only mode (a ``0444``
        ``SKILL.md``, a ``0555`` folder) or the system is ``read_only`` (:func:`pi_memory.storage.write_failure`)."""
        if self.write_check is not None and (problem := self.write_check()) is not None:
            return _no("read_only", not_written(f"{failed}; nothing was changed", problem))
        try:
            with locked(self.data_dir / ".skills", self.lock_timeout):
                return step()
        except StoreLockedError as exc:
            return _no("locked", str(exc))
        except OSError as exc:
            if path is not None and (problem := write_failure(exc, path, "folder")) is not None:
                return _no("read_only", not_written(f"{failed}; nothing was changed", problem, label="folder"))
            return _no("io_error", f"{failed}: {exc}. Nothing was changed; check the folder's permissions and "
                       "free space, then retry.")

    def _write(self, path: Path, build: Callable[[], fmt.SkillDoc | dict]) -> dict | None:
        """Under the skills lock, ``build()`` (which re-reads what it needs) gives the document to publish at
        ``path`` or a refusal; returns the refusal, or ``None`` once written."""

        def step() -> dict | None:
            built = build()
            if isinstance(built, dict):
                return built
            atomic_write_text(path, built.render())
            return None

        return self._locked(step, f"Could not write {path}", path)

    # ---------------------------------------------------------------- mutations
    def create(self, name: str, description: str, scope: str | None, body: str) -> dict:
        """Save a new skill; ``body`` is the Markdown below the frontmatter."""
        name, description = (name or "").strip(), " ".join((description or "").split())
        refusal = self._check_scope(scope) or fields.check(name, description, body)
        if refusal:
            return refusal
        slug = fmt.slugify(name)
        if not slug:
            return _no("invalid_arguments", f"The name {name!r} has no letter or digit to make a folder name "
                       "from; give a short name such as 'deploy-staging'.")
        day = self.clock()
        extra = {} if name == slug else {"display_name": name}
        doc = fmt.SkillDoc(name=slug, description=description, body=body, created=day, updated=day, extra=extra)

        def build() -> fmt.SkillDoc | dict:
            if (self.folder(scope, slug) / fmt.SKILL_FILE).exists():
                taken = self._load(scope, self.folder(scope, slug))
                held = (str(taken.doc.extra.get("display_name") or taken.doc.name)) if taken.doc else slug
                if fields.name_words(held) != fields.name_words(name):  # another name, the same folder name
                    return _no("folder_taken", fields.folder_taken(name, held, f"{scope}:{slug}"),
                               skill_id=f"{scope}:{slug}")
                return _no("duplicate", f"A skill {scope}:{slug} already exists. Improve it with action 'patch' "
                           "(one section) or 'update' instead of creating a second one.", skill_id=f"{scope}:{slug}")
            if (other := self.other_scope(scope, slug)) is not None:
                return _no("other_scope", fields.other_scope(f"{scope}:{slug}", other), skill_id=other)
            others = [(s.id, s.doc.name, s.doc.description) for s in self.skills(scope) if s.doc]
            clash = find_clash(name, description, others)
            if clash:
                if clash.kind == "similar":
                    text = (f"{clash.skill_id} already covers this (names {clash.name_score:.2f} and descriptions "
                            f"{clash.description_score:.2f} alike). Improve it with 'patch' or 'update' instead.")
                else:
                    text = (f"The name is too close to {clash.skill_id} (name similarity {clash.name_score:.2f}) "
                            "for a different procedure; choose a clearer, distinct name.")
                return _no(clash.kind, text, skill_id=clash.skill_id)
            foreign = self.shadowed_by(slug)
            if foreign:
                return _no("shadowed", f"pi already has a skill {slug!r} at {foreign}; pi loads the first skill "
                           "of a name, so this one would never be seen. Choose another name.")
            return doc

        refusal = self._write(self.folder(scope, slug) / fmt.SKILL_FILE, build)
        if refusal:
            return refusal
        self._changed(f"{scope}:{slug}")
        return _ok(f"Saved skill {scope}:{slug}.", skill=self._load(scope, self.folder(scope, slug)).summary())

    def view(self, skill_id: str | None = None) -> dict:
        """One skill's full text (``content``), or the list of all of them without ``skill_id``."""
        if not skill_id:
            listed = [s.summary() for s in self.skills()]
            return _ok(f"{len(listed)} skill(s).", skills=listed, count=len(listed))
        skill = self.find(skill_id)
        if isinstance(skill, dict):
            return skill
        if skill.doc is None:
            return _no("invalid_content", skill.error or "unreadable", skill=skill.summary())
        return _ok(f"Skill {skill.id}.", skill=skill.summary(), content=skill.doc.body,
                   sections=skill.doc.sections())

    def patch(self, skill_id: str, section: str, content: str | list[str]) -> dict:
        """Replace one section (``when_to_use``, ``procedure``, ``pitfalls``, ``verification``)."""
        key = section.strip().lower().replace(" ", "_") if isinstance(section, str) else ""
        key = {"procedure_steps": "procedure", "verification_steps": "verification"}.get(key, key)
        if key not in fmt.SECTIONS:
            return _no("invalid_arguments", f"Unknown section {section!r}; use one of {', '.join(fmt.SECTIONS)}.")
        if isinstance(content, str) and content.strip().startswith("{"):
            return _no("invalid_arguments", "The section content is a JSON object; give Markdown text or a list "
                       "of steps.")
        text = fmt.render_field(key, content)
        if not text.strip():
            return _no("invalid_arguments", "The new section is empty; give its text.")
        raw = content if isinstance(content, str) else "\n".join(content)
        if any(line.lstrip("-*0123456789.) ").startswith("#") for line in (raw + "\n" + text).splitlines()):
            return _no("invalid_arguments", "The section content contains a Markdown heading; patch one section "
                       "at a time, without '#' headings.")
        return self._rewrite(skill_id, lambda doc: self._with_section(doc, key, text), {key: text})

    @staticmethod
    def _with_section(doc: fmt.SkillDoc, key: str, text: str) -> fmt.SkillDoc:
        sections = fmt.split_sections(doc.body)
        sections[key] = text
        doc.body = fmt.join_sections(sections)
        return doc

    def update(self, skill_id: str, description: str | None = None, body: str | None = None) -> dict:
        """Replace the description and/or the whole body."""
        if description is None and body is None:
            return _no("invalid_arguments", "Nothing to update: give a new description, the structured fields, "
                       "or content.")
        if description is not None:
            description = " ".join(description.split())
            if not description or len(description) > fmt.MAX_DESCRIPTION:
                return _no("invalid_arguments", f"The description must have 1 to {fmt.MAX_DESCRIPTION} characters.")
        if body is not None and not body.strip():
            return _no("invalid_arguments", "The new body is empty.")

        def change(doc: fmt.SkillDoc) -> fmt.SkillDoc:
            if description is not None:
                doc.description = description
            if body is not None:
                doc.body = body
            return doc

        return self._rewrite(skill_id, change, {"description": description or "", "body": body or ""})

    def _rewrite(self, skill_id: str, change: Callable[[fmt.SkillDoc], fmt.SkillDoc], scanned: dict) -> dict:
        refusal = fields.scan(scanned)
        if refusal:
            return refusal
        skill = self.find(skill_id)
        if isinstance(skill, dict):
            return skill
        holder: dict = {}

        def build() -> fmt.SkillDoc | dict:
            fresh = self._load(skill.scope, skill.folder)  # re-read under the lock: an edit since is kept
            if fresh.doc is None:
                return _no("invalid_content", f"{fresh.error}. Fix the file by hand first; nothing was changed.")
            before = fresh.doc.body
            doc = change(fresh.doc)
            too_long = fmt.body_problem(doc.body, before)
            if too_long:
                return _no("too_long", too_long)
            doc.version, doc.updated = doc.version + 1, self.clock()
            holder["doc"] = doc
            return doc

        refusal = self._write(skill.path, build)
        if refusal:
            return refusal
        self._changed(skill.id)
        return _ok(f"Updated skill {skill.id} (version {holder['doc'].version}).",
                   skill=self._load(skill.scope, skill.folder).summary())

    def delete(self, skill_id: str) -> dict:
        """Move the skill's folder to ``<data root>/.trash/skills/`` (restorable by moving it back)."""
        skill = self.find(skill_id)
        if isinstance(skill, dict):
            return skill
        trash = self.data_dir / _TRASH / f"{skill.scope}-{skill.slug}-{time.strftime('%Y%m%d-%H%M%S')}"
        where: list[Path] = []

        def step() -> dict | None:
            if not skill.folder.is_dir():
                return _no("not_found", f"{skill.id} was removed meanwhile.")
            target, n = trash, 1
            while target.exists():
                target, n = trash.with_name(f"{trash.name}-{n}"), n + 1
            _movable(skill.folder, target)
            make_private_folder(target.parent)  # .trash/skills: private, as the rest of the data root
            shutil.move(str(skill.folder), str(target))
            where.append(target)
            return None

        refusal = self._locked(step, f"Could not delete {skill.id}", skill.folder)
        if refusal:
            return refusal
        trash = where[0]
        self._removed()
        return _ok(f"Deleted skill {skill.id}.", skill_id=skill.id, trash=str(trash))

    def _removed(self) -> None:
        if self.after_removal is not None:
            self.after_removal()

    def _changed(self, skill_id: str) -> None:
        if self.after_change is not None:
            self.after_change(skill_id)

    def move(self, skill_id: str, to_scope: str) -> dict:
        """Move a skill to the other scope; refused when the destination already has that slug."""
        refusal = self._check_scope(to_scope)
        if refusal:
            return refusal
        skill = self.find(skill_id)
        if isinstance(skill, dict):
            return skill
        if skill.scope == to_scope:
            return _ok(f"{skill.id} is already a {to_scope} skill.", skill=skill.summary(), moved=False)
        dest = self.folder(to_scope, skill.slug)

        def step() -> dict | None:
            if dest.exists():
                return _no("exists", fields.move_clash(skill.id, f"{to_scope}:{skill.slug}"), skill_id=skill.id,
                           existing=f"{to_scope}:{skill.slug}", existing_path=str(dest / fmt.SKILL_FILE))
            _movable(skill.folder, dest)
            make_private_folder(dest.parent)
            try:
                shutil.move(str(skill.folder), str(dest))
            except OSError:
                with contextlib.suppress(OSError):  # a half-done cross-device move: put it back
                    if dest.exists() and not skill.folder.exists():
                        shutil.move(str(dest), str(skill.folder))
                raise
            return None

        refusal = self._locked(step, f"Could not move {skill.id}", dest)
        if refusal:
            return refusal
        self._removed()
        return _ok(f"Moved {skill.id} to {to_scope}:{skill.slug}.", moved=True,
                   skill=self._load(to_scope, dest).summary())

    def adopt(self, scope: str, slug: str, source: Path | None = None, text: str | None = None) -> dict:
        """Bring in a skill made elsewhere (an import): copy the folder ``source`` (supporting files too), or
        write ``text`` as its ``SKILL.md``; refused (``exists``) when ``scope:slug`` is taken. The caller has
        checked and scanned it."""
        dest = self.folder(scope, slug)

        def step() -> dict | None:
            if dest.exists():
                return _no("exists", f"{scope}:{slug} already exists.")
            if (other := self.other_scope(scope, slug)) is not None:
                return _no("other_scope", fields.other_scope(f"{scope}:{slug}", other), skill_id=other)
            if source is None:
                atomic_write_text(dest / fmt.SKILL_FILE, text or "")
                return None
            make_private_folder(dest.parent)
            shutil.copytree(source, dest, ignore=shutil.ignore_patterns("*.lock"))
            return None

        refusal = self._locked(step, f"Could not write {dest}", dest / fmt.SKILL_FILE)
        if refusal:
            return refusal
        return _ok(f"Imported {scope}:{slug}.", skill=self._load(scope, dest).summary())


def _movable(folder: Path, dest: Path) -> None:
    """Raise :class:`~pi_memory.storage.ReadOnlyFolderError` when moving skill ``folder`` to ``dest`` would pass
    a folder whose mode has no write bit: the one it leaves, the one it goes into (or the folder that one would be
    made in), or the skill's own (its ``..`` entry changes). A user's ``chmod a-w`` binds root too, as every other
    write of pi-memory; the operating system alone lets root through."""
    for where in (folder.parent, dest.parent, folder):
        refuse_read_only_folder(where)
