"""What the threat and secret scanners find in a skill, part by part, and what a host could not load as it is:
the one check behind pi's skill list (:meth:`pi_memory.skills.SkillStore.discoverable`), ``pi-memory skills
export`` and the inspector's flags.

Before any scan, :func:`form_problems` checks what ``pi-memory import`` checks too (:func:`frontmatter_problems`
is the same function there): a body within the body limit (:data:`~pi_memory.skills.document.MAX_BODY`), a
``name`` and a ``description`` that are plain text in the frontmatter (not a YAML list, mapping, number, date or
yes/no), a description within :data:`~pi_memory.skills.document.MAX_DESCRIPTION`, a frontmatter that ends within
:data:`FRONTMATTER_BYTES`. A part past its limit is not scanned (a hand-edited 10 MB body took the scanners
15 seconds on every page and every session start): the skill is refused for its size, not for what its text
holds. :func:`control_problems` adds a name, description or body holding a control character (a hand edit's
``ESC[2J``, or an escaped ``\\e`` in the YAML): every host shows these parts as they are.

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

from pi_memory import front_matter, safety
from pi_memory.curated.files import is_temp_name
from pi_memory.skills.document import MAX_BODY, MAX_DESCRIPTION
from pi_memory.terminal_text import CONTROL, printable

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
FRONTMATTER_BYTES = 65_536  # of a SKILL.md read for its frontmatter: a name and a 1,024-character description fit
_BOUNDARY = front_matter.BOUNDARY
_SKIPPED = (".lock", ".pi-memory-export")
CONTROL_INVALID = "holds a control character"


@dataclass(frozen=True)
class SkillProblem:
    """One part of a skill (``part``: a key of :data:`PARTS`) and what the scanners found in it: threat pattern
    ids (``threats``) and credential ids (``secrets``), each in the order found."""

    part: str
    threats: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    unscanned: str = ""  # why the part could not be scanned (a file too large, too many files)
    invalid: str = ""  # what a host could not load in the part as it is (too long, not text)
    fix: str = ""  # what to do about ``invalid``

    @property
    def control(self) -> bool:
        """Whether ``invalid`` is a control character (:func:`control_problems`)."""
        return self.invalid.startswith(CONTROL_INVALID)

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
        if self.invalid:
            said.append(self.invalid)
        return f"{where} {' and '.join(said)}"


def _scan(part: str, text: str) -> SkillProblem | None:
    threats = tuple(dict.fromkeys(f.id for f in safety.scan_threats(text)))
    secrets = tuple(dict.fromkeys(f.id for f in safety.scan_secrets(text)))
    return SkillProblem(part, threats, secrets) if threats or secrets else None


def frontmatter_problems(text: str) -> list[SkillProblem]:
    """What a host could not load in the frontmatter at the start of ``text`` (a ``SKILL.md``, or at least its
    first :data:`FRONTMATTER_BYTES`; only those are read): one that does not end there, a ``name`` or ``description`` that is not text,
    a description past :data:`~pi_memory.skills.document.MAX_DESCRIPTION` characters. Text that has no
    frontmatter at all gives nothing here (it cannot be read as a skill: the parser says so)."""
    head = text[:FRONTMATTER_BYTES].encode("utf-8", "surrogatepass")[:FRONTMATTER_BYTES]  # one bound, read or given
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    if not text.startswith("---"):
        return []
    parts = _BOUNDARY.split(text, 2)
    if len(parts) < 3:
        return [SkillProblem("file", invalid=f"has a frontmatter that does not end within its first "
                                             f"{FRONTMATTER_BYTES:,} bytes",
                             fix="keep the frontmatter to a name, a one-line description and a few short keys")]
    try:
        meta = front_matter.load(parts[1])
    except front_matter.FrontMatterError:
        return []  # the parser refuses it (an unreadable skill)
    if not isinstance(meta, dict):
        return []
    out = []
    for key in ("name", "description"):
        if not isinstance(meta.get(key), str):
            out.append(SkillProblem(key, invalid=f"is {front_matter.kind(meta.get(key))} in the frontmatter, not text",
                                    fix=f"write the {key} as one line of plain text (in quotes if YAML would read "
                                        f"it otherwise, e.g. {key}: 'yes')"))
    description = meta.get("description")
    if isinstance(description, str) and len(" ".join(description.split())) > MAX_DESCRIPTION:
        n = len(" ".join(description.split()))
        out.append(SkillProblem("description", invalid=f"has {n:,} characters, past the {MAX_DESCRIPTION:,} a "
                                                       "host reads", fix=f"shorten the description to at most "
                                                                         f"{MAX_DESCRIPTION:,} characters"))
    return out


def _head(path: Path) -> str | None:
    """The first :data:`FRONTMATTER_BYTES` of ``path`` as text (``None`` when it cannot be read)."""
    try:
        with path.open("rb") as f:
            return f.read(FRONTMATTER_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


def form_problems(skill: Skill) -> list[SkillProblem]:
    """What a host could not load of ``skill`` as it is (see the module docstring); empty for an unreadable one."""
    if skill.doc is None:
        return []
    head = _head(skill.path)
    out = frontmatter_problems(head) if head is not None else []
    if len(skill.doc.body) > MAX_BODY:
        out.append(SkillProblem("body", invalid=f"has {len(skill.doc.body):,} characters, past the {MAX_BODY:,}-"
                                                "character limit of a skill body (it was not scanned)",
                                fix=f"cut the body to at most {MAX_BODY:,} characters (keep the steps that matter, "
                                    "or split it into two skills)"))
    return out


def control_problems(skill: Skill) -> list[SkillProblem]:
    """The parts of ``skill`` (name, description, body within its limit) holding a control character (``ESC``,
    ``BEL``, a C1 ``CSI``; tab, newline and a CRLF line end excepted): only a hand edit puts one there (every
    write through the store refuses them, :func:`pi_memory.skills.fields.control`), and a host showing the text
    as it is lets an escape sequence clear or retitle a terminal, or hide text from the person reading it."""
    if skill.doc is None:
        return []
    doc = skill.doc
    out = []
    for part, text in (("name", doc.name), ("description", doc.description), ("body", doc.body[:MAX_BODY])):
        found = CONTROL.search(text.replace("\r\n", "\n"))
        if found:
            out.append(SkillProblem(part, invalid=f"{CONTROL_INVALID} ({printable(found.group())}: terminal "
                                                  "escape codes or similar), which can hide or change text where a "
                                                  "host shows it",
                                    fix="remove the control characters (a hand edit put them there)"))
    return out


_ORDER = {part: n for n, part in enumerate(PARTS)}


def problems(skill: Skill) -> list[SkillProblem]:
    """Every part of ``skill`` a host could not load (:func:`form_problems`), holding a control character
    (:func:`control_problems`) or the scanners find something in
    (empty: clean, or unreadable: an unreadable file hands nothing on). A part past its limit is not scanned;
    the whole file is scanned too, and reported as ``file`` only when no part gave a problem."""
    if skill.doc is None:
        return []
    doc = skill.doc
    form = form_problems(skill)
    unscanned = {p.part for p in form}
    if "file" in unscanned:  # a frontmatter past the bound: its name and description are not scanned either
        unscanned |= {"name", "description"}
    texts = {"folder": skill.slug if skill.slug != doc.name else None, "name": doc.name,
             "description": doc.description, "body": doc.body}
    found = [p for part, text in texts.items() if text is not None and part not in unscanned
             and (p := _scan(part, text)) is not None]
    found = sorted(form + control_problems(skill) + found, key=lambda p: _ORDER[p.part])
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
    link, none inside a linked folder), without lock files, our export marker and the temp files of our atomic
    writes (``.SKILL.md.<8 characters>.tmp``, left by a killed writer: half a file), sorted."""
    out = []
    for root, _dirs, files in os.walk(folder):  # links to folders are listed in dirs and not entered
        for name in files:
            path = Path(root) / name
            if (path != skill_file and not path.is_symlink() and not name.endswith(_SKIPPED)
                    and not is_temp_name(name)):
                out.append(path)
    return sorted(out)


def skill_links(folder: Path) -> list[str]:
    """The symbolic links inside ``folder`` (to files or folders, a linked folder not entered), as paths
    relative to it, sorted: what :func:`skill_files` leaves out and an export does not copy."""
    out = []
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = Path(root) / name
            if path.is_symlink():
                out.append(str(path.relative_to(folder)))
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
    steps = list(dict.fromkeys(p.fix for p in found if p.fix))
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
