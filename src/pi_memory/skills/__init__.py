"""Skills: reusable procedures the agent saves as ``SKILL.md`` folders (global or per project).

Public API
----------
* :class:`SkillStore` (``from_settings(settings, cwd)``) -- create / view / patch / update / delete / move,
  ``skills()`` to list, ``discoverable()`` for pi's ``resources_discover``;
* :class:`Skill` -- one folder on disk; :class:`SkillDoc`, :func:`parse`, :func:`render_body`,
  :func:`slugify` -- the file format (:mod:`.document`);
* :func:`tokens`, :func:`jaccard`, :func:`find_clash` -- the similarity guard (:mod:`.similarity`);
* :func:`complex_run_nudge` -- the question asked once after a complex run (:mod:`.nudge`);
* :func:`export_skills` -- scanned copies for Claude Code and Codex (:mod:`.export`; the per-part scan behind it
  and behind ``discoverable()``: :mod:`.checks`).
"""

from pi_memory.skills.document import (
    SECTIONS,
    SKILL_FILE,
    SkillDoc,
    SkillFormatError,
    parse,
    render_body,
    slugify,
)
from pi_memory.skills.export import export_skills
from pi_memory.skills.nudge import complex_run_nudge, is_complex_run
from pi_memory.skills.similarity import find_clash, jaccard, tokens
from pi_memory.skills.store import SCOPES, Skill, SkillStore

__all__ = [
    "SCOPES",
    "SECTIONS",
    "SKILL_FILE",
    "Skill",
    "SkillDoc",
    "SkillFormatError",
    "SkillStore",
    "complex_run_nudge",
    "export_skills",
    "find_clash",
    "is_complex_run",
    "jaccard",
    "parse",
    "render_body",
    "slugify",
    "tokens",
]
