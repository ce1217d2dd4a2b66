"""The ``SKILL.md`` file format: YAML frontmatter + a Markdown body in four sections.

::

    ---
    name: debug-typescript-errors
    description: Debug tsc --noEmit failures in a monorepo (type-check errors in CI, tsconfig extends chain)
    version: 1
    created: '2026-04-26'
    updated: '2026-04-26'
    ---
    ## When to Use
    ...
    ## Procedure
    1. ...
    ## Pitfalls
    - ...
    ## Verification
    - ...

* ``name`` is the slug (the folder's name), so pi, Claude Code and Codex, which expect the two to match, load
  the file as it is; a name given with other spelling is kept as ``display_name``.
* The frontmatter is read by pi-memory's one safe loader (:mod:`pi_memory.front_matter`: YAML aliases and a
  frontmatter past 131,072 characters make the file unreadable, said in words) and written with
  ``python-frontmatter`` (PyYAML's safe dumper); a ``name`` or ``description`` that is a list or a mapping is
  refused as not plain text. Keys we do not know (``license``, ``allowed-tools``, ``metadata``...) are kept as
  they are on every rewrite.
* Sections are the ``## `` headings of the body; the four known ones map to the structured fields
  ``when_to_use``, ``procedure``, ``pitfalls`` and ``verification``. Other headings are kept.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import frontmatter

from pi_memory import front_matter

SKILL_FILE = "SKILL.md"
MAX_SLUG = 64
MAX_NAME = 64  # characters of the name given on create: the Agent Skills name limit, so no slug is cut silently
MAX_DESCRIPTION = 1024  # the Agent Skills specification's limit, which pi enforces
MAX_BODY = 20_000  # characters of the body below the frontmatter: a view returns it whole to a model


def body_problem(body: str, before: str | None = None) -> str | None:
    """Why ``body`` is too long to save (``None`` when it fits). ``before``: the body it replaces; one already
    over the limit (edited by hand) may still shrink."""
    if len(body) <= MAX_BODY or (before is not None and len(body) <= len(before)):
        return None
    return (f"The skill's body would have {len(body):,} characters; at most {MAX_BODY:,} are allowed (a view "
            "returns the whole body to the model). Nothing was saved. Keep the steps that matter and cut the rest, "
            "or split it into two skills.")
SECTIONS = {"when_to_use": "When to Use", "procedure": "Procedure", "pitfalls": "Pitfalls",
            "verification": "Verification"}
_TITLE_TO_KEY = {title.lower(): key for key, title in SECTIONS.items()}
_HEADING = re.compile(r"^##\s+(.+?)\s*#*\s*$")
_CORE_KEYS = ("name", "description", "version", "created", "updated")


class SkillFormatError(ValueError):
    """A ``SKILL.md`` that cannot be read (no frontmatter, bad YAML, missing name or description)."""


def slugify(name: str) -> str:
    """The folder name of a skill: lowercase ASCII letters and digits, every other run of characters one ``-``,
    no leading or trailing ``-``, at most 64 characters (the Agent Skills name rules, which pi checks: no other
    script). Case and accents are folded (``Café`` -> ``cafe``, ``Straße`` -> ``strasse``).

    Letters that have no ASCII form (``部署预发布``, ``Развертывание``, ``Øl``) cannot go into it: a name that has
    any gets ``-`` and 8 hex digits of a SHA-256 of its words appended to what is left (``skill`` when nothing
    is), e.g. ``skill-4c1a9e02``; the store keeps the name as given as ``display_name``, and finds the skill by
    it. The same name in any case or Unicode normal form gives the same slug; two names differing only in such
    letters give two. ``""`` only for a name with no letter or digit at all."""
    # invisible format characters (a zero-width space) and combining marks (the dot of a folded "İ") are no word
    # breaks: "de\u200bploy" is "deploy", "İstanbul" is "istanbul" (they split words before)
    base = "".join(ch for ch in unicodedata.normalize("NFKC", name).casefold() if unicodedata.category(ch) != "Cf")
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", base) if unicodedata.category(ch) != "Mn")
    words = re.findall(r"[^\W_]+", folded)
    if not words:
        return ""
    kept = re.sub(r"[^a-z0-9]+", "-", "-".join(words).encode("ascii", "ignore").decode("ascii")).strip("-")
    if not any(ch.isalnum() and not ch.isascii() for ch in folded):
        return kept[:MAX_SLUG].rstrip("-")
    words = re.findall(r"[^\W_]+", unicodedata.normalize("NFC", base))  # the hash keeps the marks: й is not и
    digest = hashlib.sha256(" ".join(words).encode("utf-8")).hexdigest()[:8]
    return f"{kept[:MAX_SLUG - 9].rstrip('-') or 'skill'}-{digest}"


def today() -> str:
    return _dt.date.today().isoformat()


def _as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, _dt.date | _dt.datetime):
        return value.isoformat()[:10]
    return str(value)


@dataclass
class SkillDoc:
    """One parsed ``SKILL.md``: the five core fields, the body, and any other frontmatter keys (``extra``)."""

    name: str
    description: str
    body: str
    version: int = 1
    created: str = ""
    updated: str = ""
    extra: dict = field(default_factory=dict)

    def render(self) -> str:
        meta = {"name": self.name, "description": self.description, "version": self.version,
                "created": self.created, "updated": self.updated, **self.extra}
        post = frontmatter.Post(self.body.strip("\n") + "\n", **meta)
        return frontmatter.dumps(post, sort_keys=False, width=10_000) + "\n"

    def sections(self) -> dict[str, str]:
        """The known sections of the body by field name (``when_to_use``...), text without its heading."""
        return {k: v for k, v in split_sections(self.body).items() if k in SECTIONS}


def parse(text: str) -> SkillDoc:
    """Read a ``SKILL.md``; raises :class:`SkillFormatError` naming what is wrong."""
    text = text.lstrip("\ufeff")
    if not text.startswith("---"):
        raise SkillFormatError("it has no YAML frontmatter (the file must start with a '---' line)")
    text = text.strip()
    fm, content = front_matter.split(text)
    try:
        loaded = front_matter.load(fm) if fm is not None else None
    except front_matter.FrontMatterError as exc:
        raise SkillFormatError(str(exc)) from None
    meta = dict(loaded) if isinstance(loaded, dict) else {}
    content = content.strip() if fm is not None else text
    for key in ("name", "description"):
        if isinstance(meta.get(key), list | dict):  # a Python repr of it is no name (and may be huge)
            raise SkillFormatError(f"{front_matter.not_plain_text(key, meta[key])}; write it as one line of text")
    name, description = _as_text(meta.get("name")).strip(), _as_text(meta.get("description")).strip()
    if not name or not description:
        raise SkillFormatError("its frontmatter needs both 'name' and 'description'")
    try:
        version = int(meta.get("version") or 1)
    except (TypeError, ValueError, OverflowError):
        version = 1
    extra = {k: v for k, v in meta.items() if k not in _CORE_KEYS}
    return SkillDoc(name=name, description=description, body=content, version=version,
                    created=_as_text(meta.get("created")), updated=_as_text(meta.get("updated")), extra=extra)


def read(path: Path) -> SkillDoc:
    """Parse the file at ``path`` (UTF-8); raises :class:`SkillFormatError` or ``OSError``."""
    try:
        return parse(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise SkillFormatError("it is not UTF-8 text") from exc


def split_sections(body: str) -> dict[str, str]:
    """``{field-or-heading: text}`` for every ``## `` heading of ``body``, in order; text before the first
    heading is under ``""``. Known headings are keyed by field name, others by their title."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in body.splitlines():
        m = _HEADING.match(line)
        if m:
            title = m.group(1).strip()
            current = _TITLE_TO_KEY.get(title.lower(), title)
            out.setdefault(current, [])
            continue
        out[current].append(line)
    return {k: "\n".join(v).strip("\n") for k, v in out.items() if k or "\n".join(v).strip()}


def join_sections(sections: dict[str, str]) -> str:
    """The body for ``sections`` (keys as :func:`split_sections` gives them): the known four in their order,
    then any others, then nothing else."""
    parts = []
    if sections.get("", "").strip():
        parts.append(sections[""].strip("\n"))
    order = [k for k in SECTIONS if k in sections] + [k for k in sections if k and k not in SECTIONS]
    for key in order:
        text = sections[key].strip("\n")
        parts.append(f"## {SECTIONS.get(key, key)}\n{text}".rstrip())
    return "\n\n".join(parts) + "\n"


def as_items(value: str | list[str] | None) -> list[str]:
    """A field's items: a list as given, a JSON-array string decoded, other text one item per non-empty line
    (leading ``-``, ``*`` or ``1.`` markers dropped)."""
    if value is None:
        return []
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("["):
            try:
                decoded = json.loads(stripped)
            except ValueError:
                decoded = None
            if isinstance(decoded, list):
                return [str(v).strip() for v in decoded if str(v).strip()]
        lines = [re.sub(r"^\s*(?:[-*]|\d+[.)])\s+", "", line).strip() for line in stripped.splitlines()]
        return [line for line in lines if line]
    return [str(v).strip() for v in value if str(v).strip()]


def render_field(key: str, value: str | list[str]) -> str:
    """The Markdown of one structured field: procedure numbered, pitfalls and verification as bullets (a single
    verification item as plain text), when_to_use as written."""
    if key == "when_to_use":
        return "\n".join(as_items(value)) if isinstance(value, list) else value.strip()
    items = as_items(value)
    if key == "procedure":
        return "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1))
    if key == "verification" and len(items) == 1:
        return items[0]
    return "\n".join(f"- {item}" for item in items)


def render_body(when_to_use=None, procedure=None, pitfalls=None, verification=None) -> str:
    """The body built from the structured fields (a field left out gets no section)."""
    given = {"when_to_use": when_to_use, "procedure": procedure, "pitfalls": pitfalls,
             "verification": verification}
    sections = {k: render_field(k, v) for k, v in given.items() if v not in (None, "", [])}
    return join_sections(sections)
