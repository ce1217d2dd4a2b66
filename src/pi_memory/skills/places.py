"""Where a :class:`~pi_memory.skills.store.SkillStore`'s skills meet other places: pi's own skill folders and the
Agent Skills folders (a slug there shadows ours), the other scope (one slug in two scopes), and what a host may
hand to pi. A base class of the store, kept apart so the store stays one file of writes."""

from __future__ import annotations

from pathlib import Path

from pi_memory.skills import checks, marker
from pi_memory.skills import document as fmt


class SkillPlaces:
    """Needs ``roots`` (scope -> folder), ``foreign_dirs``, ``scopes``, ``folder(scope, slug)`` and ``skills()`` of
    the store."""

    def shadowed_by(self, slug: str) -> Path | None:
        """The foreign skill (folder or ``<slug>.md``) that has ``slug``, unless it is an export of this store
        (an older export's link into it, or a copy marked as made from it)."""
        ours = [r.resolve() for r in self.roots.values()]
        for base in self.foreign_dirs:
            for candidate in (base / slug, base / f"{slug}.md"):
                if not (candidate.is_dir() or candidate.is_file()):
                    continue
                copied = marker.read(candidate)
                if marker.within(candidate.resolve(), ours) or (
                        copied is not None and copied.source is not None and marker.within(copied.source, ours)):
                    continue
                return candidate
        return None

    def other_scope(self, scope: str, slug: str) -> str | None:
        """The id of a skill of another scope with ``slug`` (``None``: none): one name in two scopes gives pi two
        skills of one name (it keeps the first), a bare id that names both, and exports of one name in two hosts'
        folders, so a new skill never takes a slug the other scope has (a move onto one is refused too)."""
        return next((f"{sc}:{slug}" for sc in self.scopes if sc != scope
                     and (self.folder(sc, slug) / fmt.SKILL_FILE).exists()), None)

    # -------------------------------------------------------------- for hosts
    def discoverable(self) -> list[Path]:
        """Skill folders a host may hand to pi (``resources_discover``): readable, clean under the threat and
        secret scanners (a hand-edited hostile skill never reaches pi's prompt), and not already visible to pi
        under that slug elsewhere (an export into ``~/.agents/skills`` would make it appear twice)."""
        out = []
        for skill in self.skills():
            if skill.doc is None or skill.doc.name != skill.slug and self.shadowed_by(skill.doc.name):
                continue
            if checks.problems(skill):
                continue
            if self._visible_elsewhere(skill.slug):
                continue
            if skill.scope == "global" and self.other_scope("global", skill.slug):  # a pair made by hand or before
                continue  # other_scope was refused: pi keeps one skill of a name, the project's is the closer one
            out.append(skill.folder)
        return out

    def builtin_discoverable(self) -> list[Path]:
        """The skills shipped with pi-memory (:mod:`pi_memory.skills.builtin`) a host may hand to pi: each one
        unless a skill of the user's has its slug (here or in pi's own folders: the user's version wins)."""
        from pi_memory.skills.builtin import builtin_skill_folders

        own = {skill.slug for skill in self.skills()}
        return [p for p in builtin_skill_folders() if p.name not in own and not self._visible_elsewhere(p.name)]

    def _visible_elsewhere(self, slug: str) -> bool:
        return any((base / slug / fmt.SKILL_FILE).exists() for base in self.foreign_dirs)
