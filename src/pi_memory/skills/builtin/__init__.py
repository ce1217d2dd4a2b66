"""Skills shipped with pi-memory (``<name>/SKILL.md`` folders here), handed to pi like the user's own.

``learn-memory-tool`` teaches a user and the agent how the stores, searches, skills and commands are used
(pi-hermes-memory's ``/learn-memory-tool``). ``tests/skills/test_builtin_skill.py`` checks that every command
and tool it names exists.
"""

from __future__ import annotations

from pathlib import Path

BUILTIN_DIR = Path(__file__).resolve().parent


def builtin_skill_folders() -> list[Path]:
    """The folders of the shipped skills, sorted by name."""
    return sorted(p for p in BUILTIN_DIR.iterdir() if (p / "SKILL.md").is_file())
