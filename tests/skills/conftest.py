"""Fixtures of the skills tests: ``tool``, the skill tool over a store of its own (``(spec, store)``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_memory.skills import SkillStore
from pi_memory.tools.skills import create_skill_tools


@pytest.fixture
def tool(tmp_path: Path):
    store = SkillStore(tmp_path / "data", clock=lambda: "2026-04-26")
    [spec] = create_skill_tools(store)
    return spec, store
