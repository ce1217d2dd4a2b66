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
# The other files of a skill folder (scripts, references) go with it to a host and are read by the agent when the
# skill says so. Every one is scanned for credentials; those a model reads as text to follow (Markdown, plain
# text) for threat patterns too, while a script's own words ("curl ... | sh", "rm -rf") are what it is for.
# Part name ``file:<path in the folder>``. Not read: symbolic links, files over MAX_FILE_BYTES or past the first
# MAX_FILES, and files holding NUL bytes (binary: no text an agent follows).
READ_AS_TEXT = (".md", ".markdown", ".txt", ".rst")
MAX_FILE_BYTES = 1_000_000
MAX_FILES = 200
_SKIPPED = (".lock", ".pi-memory-export")


@dataclass(frozen=True)
class SkillProblem:
    """One part of a skill (``part``: a key of :data:`PARTS`) and what the scanners found in it: threat pattern
    ids (``threats``) and credential ids (``secrets``), each in the order found."""

    part: str
    threats: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """The part for a person: ``its description``, ``its file scripts/deploy.sh``."""
        return f"its file {self.part[5:]}" if self.part.startswith("file:") else f"its {PARTS[self.part]}"

    def describe(self) -> str:
        """For a person: ``its description matches the threat pattern ignore_instructions (...)`` and/or ``holds
        a credential (password_phrase)``."""
        where = self.where
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
    if not found:
        try:
            whole = skill.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        if (extra := _scan("file", whole)) is not None:
            found.append(extra)
    return found + other_files(skill.folder, skill.path)


def other_files(folder, skill_file) -> list[SkillProblem]:
    """What the scanners find in the files of ``folder`` other than ``skill_file`` (see ``READ_AS_TEXT``)."""
    out: list[SkillProblem] = []
    try:
        files = sorted(p for p in folder.rglob("*") if p.is_file() and p != skill_file and not p.is_symlink()
                       and not p.name.endswith(_SKIPPED))
    except OSError:
        return out
    for path in files[:MAX_FILES]:
        part = f"file:{path.relative_to(folder)}"
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data:
            continue
        text = data.decode("utf-8", errors="replace")
        threats = () if path.suffix.lower() not in READ_AS_TEXT else tuple(
            dict.fromkeys(f.id for f in safety.scan_threats(text)))
        secrets = tuple(dict.fromkeys(f.id for f in safety.scan_secrets(text)))
        if threats or secrets:
            out.append(SkillProblem(part, threats, secrets))
    return out


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
