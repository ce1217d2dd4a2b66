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

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pi_memory import safety

if TYPE_CHECKING:
    from pi_memory.skills.store import Skill

PARTS = {"folder": "folder name", "name": "name", "description": "description", "body": "body", "file": "SKILL.md",
         "files": "folder"}
# The other files of a skill folder (scripts, references) go with it to a host, and an agent reads them when the
# skill says so. Export copies exactly the files :func:`skill_files` lists (no symbolic link: its target was
# never scanned), each scanned first (:func:`other_files`): for credentials, for threat patterns unless it is
# code (``CODE_SUFFIXES``: a script's own words, "curl ... | sh", "rm -rf", are what it is for; a README, a
# template or a file without a suffix is text an agent may follow), and its path as a name. A file over
# MAX_FILE_BYTES, or a folder of more than MAX_FILES files, cannot be scanned, so the skill is not exported.
# Part name ``file:<path in the folder>``.
CODE_SUFFIXES = frozenset({
    ".sh", ".bash", ".zsh", ".fish", ".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".rb", ".go", ".rs",
    ".java", ".kt", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".php", ".pl", ".ps1", ".psm1", ".bat", ".cmd",
    ".lua", ".r", ".swift", ".scala", ".sql", ".mk"})
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
    unscanned: str = ""  # why the part could not be scanned (a file too large, too many files)

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
            said.append(f"holds {'credentials' if len(self.secrets) > 1 else 'a credential'} "
                        f"({', '.join(self.secrets)})")
        if self.unscanned:
            said.append(self.unscanned)
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


def skill_files(folder: Path, skill_file: Path) -> list[Path]:
    """The files of ``folder`` that go with its skill, ``skill_file`` excepted: regular files only (no symbolic
    link, none inside a linked folder), without lock files and our export marker, sorted."""
    out = []
    for root, _dirs, files in os.walk(folder):  # links to folders are listed in dirs and not entered
        for name in files:
            path = Path(root) / name
            if path != skill_file and not path.is_symlink() and not name.endswith(_SKIPPED):
                out.append(path)
    return sorted(out)


def other_files(folder: Path, skill_file: Path) -> list[SkillProblem]:
    """What the scanners find in the files :func:`skill_files` lists (see ``CODE_SUFFIXES``)."""
    try:
        files = skill_files(folder, skill_file)
    except OSError:
        return []
    if len(files) > MAX_FILES:
        return [SkillProblem("files", unscanned=f"holds {len(files)} files, more than the {MAX_FILES} an export "
                                                 "scans")]
    out: list[SkillProblem] = []
    for path in files:
        rel = path.relative_to(folder)
        part = f"file:{rel}"
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                out.append(SkillProblem(part, unscanned=f"is over {MAX_FILE_BYTES:,} bytes, too large to scan"))
                continue
            text = path.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            out.append(SkillProblem(part, unscanned=f"cannot be read ({exc.strerror or exc})"))
            continue
        code = path.suffix.lower() in CODE_SUFFIXES
        threats = tuple(dict.fromkeys(f.id for f in [*safety.scan_threats(" ".join(rel.parts)),
                                                       *(() if code else safety.scan_threats(text))]))
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
    if any(p.part == "folder" and p.threats for p in found):
        steps.append("rename the skill's folder to its name")
    if any(p.unscanned for p in found):
        steps.append(f"keep the folder to at most {MAX_FILES} files of at most {MAX_FILE_BYTES:,} bytes each (move "
                     "data elsewhere)")
    text = [p for p in found if p.part != "folder"]
    if any(p.secrets for p in text):
        steps.append("replace each credential with where it lives, e.g. \"the token is in ~/.config/gh/hosts.yml\"")
    if any(p.threats for p in text):
        steps.append("rephrase or remove the text that reads like an instruction to the model")
    return "; ".join(steps)
