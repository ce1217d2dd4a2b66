"""What the threat and secret scanners find in a skill, part by part: the one check behind pi's skill list
(:meth:`pi_memory.skills.SkillStore.discoverable`), ``pi-memory skills export`` and the inspector's flags.

A skill is written through the store only after every field was scanned, but a ``SKILL.md`` edited by hand (or
made by another program) reaches no scanner on its way in. Whatever hands a skill's text on (to pi's prompt, to
Claude Code's or Codex's skill folder, to a person's page) asks :func:`problems` first. Each part is scanned on
its own, so the words can say which part to fix: ``folder`` (the folder's name, when it is not the skill's
name: a host names the copy after it), ``name``, ``description``, ``body``, and ``file`` for what only the whole
file shows (another frontmatter key, text across the frontmatter's end).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pi_memory import safety

if TYPE_CHECKING:
    from pi_memory.skills.store import Skill

PARTS = {"folder": "folder name", "name": "name", "description": "description", "body": "body", "file": "SKILL.md"}


@dataclass(frozen=True)
class SkillProblem:
    """One part of a skill (``part``: a key of :data:`PARTS`) and what the scanners found in it: threat pattern
    ids (``threats``) and credential ids (``secrets``), each in the order found."""

    part: str
    threats: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()

    def describe(self) -> str:
        """For a person: ``its description matches the threat pattern ignore_instructions (...)`` and/or ``holds
        a credential (password_phrase)``."""
        where = f"its {PARTS[self.part]}"
        said = []
        if self.threats:
            plural = "s" if len(self.threats) > 1 else ""
            said.append(f"matches the threat pattern{plural} {', '.join(self.threats)} (it reads like an "
                        "instruction to the model)")
        if self.secrets:
            plural = "s" if len(self.secrets) > 1 else ""
            said.append(f"holds a credential{plural} ({', '.join(self.secrets)})")
        return f"{where} {' and '.join(said)}"


def _scan(part: str, text: str) -> SkillProblem | None:
    threats = tuple(dict.fromkeys(f.id for f in safety.scan_threats(text)))
    secrets = tuple(dict.fromkeys(f.id for f in safety.scan_secrets(text)))
    return SkillProblem(part, threats, secrets) if threats or secrets else None


def problems(skill: Skill) -> list[SkillProblem]:
    """Every part of ``skill`` the scanners find something in (empty: clean, or unreadable: an unreadable file
    hands nothing on). The whole file is scanned too, and reported as ``file`` only when no part was."""
    if skill.doc is None:
        return []
    doc = skill.doc
    folder = _scan("folder", skill.slug) if skill.slug != doc.name else None
    found = [p for p in (folder, _scan("name", doc.name), _scan("description", doc.description),
                         _scan("body", doc.body)) if p is not None]
    if found:
        return found
    try:
        whole = skill.path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    extra = _scan("file", whole)
    return [extra] if extra is not None else []


def summary(found: list[SkillProblem]) -> str:
    """``found`` in one clause for a person: ``its description ...; its body ...``."""
    return "; ".join(p.describe() for p in found)


def fix_hint(found: list[SkillProblem]) -> str:
    """What a person does about ``found``: rename a folder named like an instruction, replace a secret with
    where it lives, rephrase or remove text that reads like an instruction."""
    steps = []
    if any(p.part == "folder" for p in found):
        steps.append("rename the skill's folder to its name")
    text = [p for p in found if p.part != "folder"]
    if any(p.secrets for p in text):
        steps.append("replace each credential with where it lives, e.g. \"the token is in ~/.config/gh/hosts.yml\"")
    if any(p.threats for p in text):
        steps.append("rephrase or remove the text that reads like an instruction to the model")
    return "; ".join(steps)
