"""What a skill's fields must be before the store writes them, and the store's result dicts.

:func:`check` (create): a name of at most :data:`~pi_memory.skills.document.MAX_NAME` characters, a description
of at most :data:`~pi_memory.skills.document.MAX_DESCRIPTION`, a body within the body limit, then :func:`scan`:
a control character in any field (:func:`control`), then every field through
:func:`pi_memory.safety.check_write` (a threat, else a credential), so nothing that would be refused for a
curated entry is saved as a skill. Patch and update scan what they change with :func:`scan`; an import asks
:func:`check` of the parsed fields (:mod:`pi_memory.importers.skills`).

Results are plain dicts (:func:`ok`, :func:`no`: ``{"success", "message" | "code", "error", ...}``) written for
the model; the CLI and the pi manager read the structured fields and word things for a person themselves.
"""

from __future__ import annotations

import re
import unicodedata

from pi_memory import safety
from pi_memory.skills import document as fmt
from pi_memory.terminal_text import CONTROL, printable


def ok(message: str, **fields) -> dict:
    return {"success": True, "message": message, **fields}


def no(code: str, error: str, **fields) -> dict:
    return {"success": False, "code": code, "error": error, **fields}


def control(fields: dict[str, str]) -> dict | None:
    """An ``invalid_content`` refusal naming the first field (by its label) that holds a control character
    (``ESC``, ``BEL``...; tab, newline and a carriage return ending a line excepted): escape codes in a skill
    can retitle or rewrite the terminal of a person listing skills, and hide text there."""
    for label, text in fields.items():
        found = CONTROL.search((text or "").replace("\r\n", "\n"))
        if found:
            return no("invalid_content", f"The {label} holds a control character ({printable(found.group())}: "
                      "terminal escape codes or similar), which can hide or change text on a screen showing it. "
                      "Nothing was saved. Remove it and write plain text.", field=label)
    return None


def scan(fields: dict[str, str]) -> dict | None:
    """A refusal naming the first field (by its label) that holds a control character (:func:`control`), else
    a ``secret`` / ``threat`` refusal naming the first field the scanners find something in."""
    if refused := control(fields):
        return refused
    for label, text in fields.items():
        finding = safety.check_write(text or "")
        if finding is not None:
            return no("secret" if finding.category == safety.secrets.SECRET else "threat",
                      f"{safety.refusal_message(finding, where='skill')} (field: {label})", field=label)
    return None


def check(name: str, description: str, body: str) -> dict | None:
    """The refusal for a new skill's fields (missing, too long, or found by the scanners), else ``None``."""
    if not name:
        return no("invalid_arguments", "A skill needs a name (a few words, e.g. 'deploy staging').")
    if len(name) > fmt.MAX_NAME:
        return no("invalid_arguments", f"The name has {len(name):,} characters; at most {fmt.MAX_NAME} are "
                  "allowed. Give a short name (a few words, e.g. 'deploy staging'); put the details in the "
                  "description and the body.")
    if not description:
        return no("invalid_arguments", "A skill needs a description: what it does and when to use it, with the "
                  "words a user would type (pi picks skills by their description alone).")
    if len(description) > fmt.MAX_DESCRIPTION:
        return no("invalid_arguments", f"The description has {len(description)} characters; at most "
                  f"{fmt.MAX_DESCRIPTION} are allowed. Shorten it; put details in the body.")
    if not (body or "").strip():
        return no("invalid_arguments", "A skill needs a body: give procedure_steps (and when_to_use, pitfalls, "
                  "verification_steps), or the Markdown as content.")
    too_long = fmt.body_problem(body)
    if too_long:
        return no("too_long", too_long)
    return scan({"name": name, "description": description, "body": body})


def name_words(name: str) -> list[str]:
    """The words of a skill's name with case, accents and separators folded: two names with the same words are
    one name ("Deploy staging", "deploy-staging"); ``部署预发布`` and ``skill-6ecc37b7`` are two, though the first
    one's folder name (:func:`~pi_memory.skills.document.slugify`) is the second."""
    base = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name).casefold())
    return re.findall(r"[^\W_]+", "".join(ch for ch in base if unicodedata.category(ch) != "Mn"))


def folder_taken(name: str, held: str, skill_id: str) -> str:
    """Why a new skill named ``name`` cannot be saved where ``skill_id`` (named ``held``) is: the two names make
    the same folder name. It is another skill, so nothing is said of improving that one."""
    slug = skill_id.split(":", 1)[1]
    return (f"The name {safety.quoted_name(name)} makes the folder name {slug}, which the skill {skill_id} (named "
            f"{safety.quoted_name(held)}) already has; two skills cannot share a folder. Nothing was saved. Give the "
            "new skill a different name (one more word is enough).")


def move_clash(moving: str, existing: str) -> str:
    """A move refused because ``existing`` (the destination's id) is taken, for the model calling ``skill_manage``:
    there is no rename, so it says what the tool can do (:func:`move_clash_for_person` says it to a person)."""
    return (f"{existing} already exists; {moving} stays where it is. To keep one skill, update {existing} with what "
            f"{moving} adds (action 'update'), then delete {moving} (action 'delete'); to have {moving} there "
            f"instead, delete {existing} first, then move {moving} again.")


def move_clash_for_person(moving: str, existing: str, path: str) -> str:
    """:func:`move_clash` for a person at the CLI or in the inspector: what they can do by hand and with commands."""
    return (f"{existing} already exists; {moving} stays where it is. To keep one skill, copy what {moving} adds into "
            f"{path}, then run `pi-memory skills delete {moving}`; to have {moving} there instead, run `pi-memory "
            f"skills delete {existing}` first, then move {moving} again (a deleted skill is kept in the data "
            "folder's .trash/skills/).")


def other_scope(wanted: str, other: str) -> str:
    """A new skill ``wanted`` (``scope:slug``) refused because ``other`` (the other scope) has its name: pi would be
    handed two skills of one name and keep the first, and a bare id would name both."""
    scope = wanted.split(":", 1)[0]
    return (f"{other} already has this name; a {scope} skill of the same name would hide it or be hidden (pi keeps "
            f"the first skill of a name) and make the bare name ambiguous. Improve {other} with action 'patch' or "
            f"'update', move it to {scope} with action 'move' if it belongs there, or choose another name.")
