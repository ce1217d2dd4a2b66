"""``CLAUDE.md`` and ``AGENTS.md`` into pi-memory: the instruction files both hosts load themselves, planned as
entries (a dry run first), written only with ``--apply``. The files are only read, never changed.

Which files (the hosts' documented discovery, 2026):

* Claude Code: the user's ``<config dir>/CLAUDE.md`` and ``<config dir>/rules/**/*.md`` (``~/.claude`` or
  ``$CLAUDE_CONFIG_DIR``); in the project (the git root of the folder given): ``CLAUDE.md``,
  ``.claude/CLAUDE.md``, ``.claude/rules/**/*.md`` and ``CLAUDE.local.md`` in the root and in every folder
  below it (Claude Code loads a nested ``CLAUDE.md`` when it reads files there). ``@path`` imports (relative to
  the importing file, ``~/`` or absolute; not inside code) are followed to Markdown files, at most
  :data:`MAX_HOPS` deep as Claude Code does; an import of another kind of file (``@package.json``) is listed as
  skipped, since a file's contents are not memories. Links are resolved first and the *target* is what is
  checked: a file that is not Markdown once its links are followed (``x.md -> /etc/passwd``) is skipped, and so
  is a project file (or a project file's import) whose target lies outside the project's root and the host's
  own folder (``~/.claude``, ``$CODEX_HOME``): a cloned repository cannot make the import read the rest of the
  disk. The user's own files (in the host's folder, which no repository writes) may import Markdown from
  anywhere, as Claude Code allows (``@~/notes/git.md``). Every refusal is listed in the dry run with its reason.
* Codex: ``$CODEX_HOME/AGENTS.override.md`` if it is not empty, else ``$CODEX_HOME/AGENTS.md`` (``~/.codex``);
  in the project, in the root and every folder below it, ``AGENTS.override.md`` if not empty, else
  ``AGENTS.md`` (one file per folder, as Codex; ``project_doc_fallback_filenames`` are not read).

Folders named ``node_modules``, ``venv``, ``dist``... (:data:`SKIP_DIRS`) and hidden folders (``.git``,
``.venv``; ``.claude`` is read as above) are not walked; at most :data:`MAX_FILES` files are read.

Which entries (decided here, listed in ``docs/hosts.md`` and the commands' help): every bullet (with its continuation lines) and
every paragraph outside code blocks, tables, HTML comments and front matter is one entry, prefixed with the
nearest heading below the title (``Testing: run pytest -q``) and, for a file in a sub-folder, with that folder
(``In services/api/: ...``), so an entry still makes sense alone. Then:

* from the user's files (they apply to every project): a *rule* (an instruction: it starts with a verb or
  word such as "always", "never", "use", "prefer", "run", "do not", :data:`RULE_WORDS`) becomes a standing
  instruction (``STANDING.md``, in every session's prompt, at most 20 rules / 2,000 characters); a *fact*
  (anything else: "I work on a Mac", "My name is Ada") goes to the user profile (``USER.md``);
* from the project's files: rules and facts both go to the project's store (pi-memory has no per-project
  standing instructions, and the project store is what every host's session in that project starts with).

Every entry passes through its store as any write does (threat and secret scanning, limits, duplicates), so a
re-run adds nothing twice. The dry run scans each entry too and says which would be refused and why, and
which are already there. A host whose own file was imported sees those instructions twice (its own copy and
pi-memory's); the import is for the other hosts.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from pi_memory.integrations.hooks.imports import Planned, clean, markdown_sections

MAX_HOPS = 5
MAX_FILES = 200
POINTER_WORDS = 4
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", "target",
                       ".tox", ".mypy_cache", ".pytest_cache", ".cache", "vendor"})
_RULE_TEXT = """
    always never do don't dont avoid use prefer run make ensure keep write add put follow ask check must should
    remember only please stop start commit push test lint format name call read update create delete remove
    set install import export document comment respond reply answer explain include exclude treat mark
"""
RULE_WORDS = frozenset(_RULE_TEXT.split())
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:~/|/|\.{1,2}/)?[\w.\-/~]+)")
_IMPORT_LINE = re.compile(r"(?m)^([ \t]*@\S+(?:[ \t]+@\S+)*[ \t]*)$")
_CODE_SPAN = re.compile(r"`[^`]*`")
_WORD = re.compile(r"[a-z']+")


@dataclass
class InstructionPlan:
    """What an import would write (``planned``) and what it left out and why (``skipped``: ``{"source",
    "reason"}``); ``files``: every file read."""

    planned: list[Planned] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def is_rule(text: str) -> bool:
    """Whether ``text`` (one entry, its heading prefix removed) reads as an instruction."""
    words = _WORD.findall(text.lower()[:40])
    return bool(words) and (words[0] in RULE_WORDS or words[:2] == ["do", "not"])


def _imports(text: str, base: Path) -> list[Path]:
    """The ``@path`` imports of ``text`` (outside code blocks and code spans), resolved against ``base``."""
    out: list[Path] = []
    fence = ""
    for line in text.splitlines():
        stripped = line.strip()
        if fence:
            fence = "" if stripped.startswith(fence) else fence
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        for ref in _IMPORT.findall(_CODE_SPAN.sub(" ", line)):
            ref = ref.rstrip(".,;:)")
            path = Path(ref).expanduser()
            out.append(path if path.is_absolute() else base / path)
    return out


def _only_imports(item: str) -> bool:
    """An item that only points at ``@path`` imports ("See @README.md and @docs/git.md", "Git workflow
    @docs/git.md": at most :data:`POINTER_WORDS` other words); the imports are followed instead."""
    rest = _IMPORT.sub(" ", item)
    return rest != item and len(rest.split()) <= POINTER_WORDS


def _inside(real: Path, folders: tuple[Path, ...]) -> bool:
    return any(real == top or top in real.parents for top in folders)


class _Reader:
    def __init__(self, root: Path | None, host_dir: Path) -> None:
        self.root = root
        self.host_dir = host_dir
        self.plan = InstructionPlan()
        self.seen: set[Path] = set()

    def refusal(self, path: Path, real: Path, scope: str) -> str:
        """Why ``path`` (``real`` once its links are followed) is not read, or ``""``: not Markdown, or, for
        the project's files, outside the project's root and the host's own folder (see the module docstring)."""
        link = f"a link to {real}, " if path.is_symlink() else ""
        if real.suffix.lower() != ".md":
            return f"{link}not a Markdown file (a file's contents are not memories)"
        if scope == "project":
            folders = tuple(p for p in (self.root, self.host_dir, self.host_dir.resolve()) if p is not None)
            if not _inside(real, folders):
                where = f"the project ({self.root}) or {self.host_dir}" if self.root else str(self.host_dir)
                return (f"{link}{real} is outside {where}: a project's files are not followed out of it "
                        "(a cloned repository could point anywhere on the disk)")
        return ""

    def read(self, path: Path, scope: str, hops: int = 0, folder: str = "", source: str = "") -> None:
        real = path.resolve()
        if real in self.seen or len(self.plan.files) >= MAX_FILES:
            return
        self.seen.add(real)
        reason = self.refusal(path, real, scope)
        if reason:
            self.plan.skipped.append({"source": source or str(path), "reason": reason})
            return
        try:
            text = real.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.plan.skipped.append({"source": str(path), "reason": f"not readable: {exc.strerror or exc}"})
            return
        self.plan.files.append(str(path))
        for heading, item in markdown_sections(_IMPORT_LINE.sub(r"\n\1\n", text)):  # an import line: its own item
            if _only_imports(item):
                continue
            body = clean(item)
            if len(body) < 3:
                continue
            text_ = clean(" ".join(p for p in (f"In {folder}/:" if folder else "",
                                                f"{heading}:" if heading else "", body) if p))
            target = ("standing" if is_rule(body) else "user") if scope == "user" else "project"
            self.plan.planned.append(Planned(target, text_, str(path)))
        for ref in _imports(text, real.parent):
            if ref.resolve() in self.seen:
                continue  # read already (an import cycle, or a file two others import)
            if hops + 1 > MAX_HOPS:
                self.plan.skipped.append({"source": f"@{ref} in {path}", "reason": f"more than {MAX_HOPS} "
                                          "imports deep (Claude Code stops there too)"})
            elif ref.is_file() or ref.suffix.lower() != ".md":
                self.read(ref, scope, hops + 1, folder, source=f"@{ref} in {path}")
            else:
                self.plan.skipped.append({"source": f"@{ref} in {path}", "reason": "no such file"})

    def folders(self) -> list[Path]:
        """The project root and every folder below it that is walked, root first."""
        if self.root is None:
            return []
        out = []
        for folder, dirs, _ in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            out.append(Path(folder))
            if len(out) >= MAX_FILES:
                break
        return out

    def relative(self, folder: Path) -> str:
        rel = folder.relative_to(self.root).as_posix() if self.root else "."
        return "" if rel == "." else rel


def _project_root(project: Path | None) -> Path | None:
    if project is None:
        return None
    from pi_memory.project import project_root

    return Path(project_root(project)).resolve()


def plan_claude_md(project: Path | None, config_dir: Path) -> InstructionPlan:
    """The entries of every ``CLAUDE.md`` of the user and of the project of ``project`` (see the module
    docstring)."""
    reader = _Reader(_project_root(project), config_dir)
    user = [config_dir / "CLAUDE.md", *sorted((config_dir / "rules").rglob("*.md"))]
    for path in user:
        if path.is_file():
            reader.read(path, "user")
    for folder in reader.folders():
        where = reader.relative(folder)
        rules = sorted((folder / ".claude" / "rules").rglob("*.md"))
        for path in (folder / "CLAUDE.md", folder / ".claude" / "CLAUDE.md", *rules, folder / "CLAUDE.local.md"):
            if path.is_file():
                reader.read(path, "project", folder=where)
    return reader.plan


def _agents_file(folder: Path) -> Path | None:
    """``AGENTS.override.md`` when it has text, else ``AGENTS.md``, else ``None`` (Codex's rule per folder)."""
    for name in ("AGENTS.override.md", "AGENTS.md"):
        path = folder / name
        try:
            if path.is_file() and path.read_text(encoding="utf-8", errors="replace").strip():
                return path
        except OSError:
            continue
    return None


def plan_agents_md(project: Path | None, codex_home: Path) -> InstructionPlan:
    """The entries of Codex's global ``AGENTS.md`` and of every ``AGENTS.md`` of the project of ``project``."""
    reader = _Reader(_project_root(project), codex_home)
    found = _agents_file(codex_home)
    if found is not None:
        reader.read(found, "user")
    for folder in reader.folders():
        found = _agents_file(folder)
        if found is not None:
            reader.read(found, "project", folder=reader.relative(folder))
    return reader.plan
