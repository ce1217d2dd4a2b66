"""Bring ``SKILL.md`` folders (or the peer's older flat ``skills/<name>.md`` files) into a :class:`SkillStore`.

A skill is taken as it is (its frontmatter and supporting files), after the checks of a new skill on the
fields as YAML reads them (:func:`field_refusal`: lengths, control characters, threat and secret scans; the
raw file is scanned as well), and only when a host could load it as it is: a body within the body limit, a name
and a description that are plain text (:func:`pi_memory.skills.checks.frontmatter_problems`, which ``skills
export`` applies too).
The same slug with the same name, description and body is "already there"; with other content it is a clash
and ours is kept (nothing is overwritten, whichever is newer: the report gives both dates).
"""

from __future__ import annotations

from pathlib import Path

from pi_memory.importers.curated import refusal
from pi_memory.importers.report import ImportReport
from pi_memory.skills import SKILL_FILE, SkillFormatError, SkillStore, checks, fields, parse, slugify
from pi_memory.skills.document import body_problem
from pi_memory.skills.person import for_person


def field_refusal(doc) -> str | None:
    """Why ``skill_manage create`` would refuse the parsed fields of ``doc`` (:func:`pi_memory.skills.fields.check`:
    lengths, control characters, the scanners), else ``None``. The raw file is scanned too, but YAML escapes
    (``name: "a\\u200bb"``, ``description: "\\x1b[2J"``) put into a field what its bytes do not show."""
    display = doc.extra.get("display_name")
    named = {"display name": display} if isinstance(display, str) else {}
    refused = fields.check(doc.name, " ".join(doc.description.split()), doc.body) or fields.scan(named)
    return refused["error"] if refused else None


def _same(a, b) -> bool:
    return (a.name, a.description, a.body.strip()) == (b.name, b.description, b.body.strip())


def import_skills(report: ImportReport, store: SkillStore, scope: str, folder: Path, apply: bool,
                  kind: str = "skills") -> None:
    """Import every skill under ``folder`` (``<slug>/SKILL.md`` folders and flat ``*.md`` files)."""
    if not folder.is_dir():
        return
    for entry in sorted(folder.iterdir()):
        if entry.is_dir() and (entry / SKILL_FILE).is_file():
            path, source = entry / SKILL_FILE, entry
        elif entry.is_file() and entry.suffix == ".md" and entry.name != SKILL_FILE:
            path, source = entry, None
        else:
            continue
        try:
            text = path.read_text(encoding="utf-8")
            doc = parse(text)
        except (OSError, UnicodeDecodeError, SkillFormatError) as exc:
            report.add(kind, entry.name, "skip", f"{path} cannot be read: {exc}")
            continue
        slug = slugify(entry.name if source is not None else doc.name) or slugify(doc.name)
        if not slug:
            report.add(kind, doc.name, "skip", "its name has no letter or digit to make a folder name from")
            continue
        form = checks.frontmatter_problems(text)  # what a host could not load (skills export refuses it too)
        why = (refusal(text) or body_problem(doc.body)
               or (form and f"{checks.summary(form)}: {checks.fix_hint(form)}") or field_refusal(doc))
        if why:
            report.add(kind, f"{scope}:{slug}", "skip", why, refused=True)
            continue
        found = store.find(f"{scope}:{slug}")
        if not isinstance(found, dict):
            if found.doc is not None and _same(found.doc, doc):
                report.add(kind, f"{scope}:{slug}", "already", to=str(found.folder))
            else:
                ours = found.doc.updated if found.doc else "unreadable"
                report.add(kind, f"{scope}:{slug}", "clash", f"{scope}:{slug} already exists with other content "
                           f"(ours updated {ours}, theirs {doc.updated or 'undated'}); ours was kept. Merge them "
                           f"by hand from {path}.")
            continue
        if (other := store.other_scope(scope, slug)) is not None:  # one name in two scopes: pi would keep one
            report.add(kind, f"{scope}:{slug}", "clash", f"{other} already has this name (ours kept); a second skill "
                       f"of one name would hide the other in pi. Merge them by hand from {path}, or import it under "
                       "another name.")
            continue
        if apply:
            result = store.adopt(scope, slug, source=source, text=None if source else text)
            if not result["success"]:
                report.add(kind, f"{scope}:{slug}", "skip", for_person(result["error"]), refused=True)
                continue
        report.add(kind, f"{scope}:{slug}", "add", to=str(store.folder(scope, slug)))
