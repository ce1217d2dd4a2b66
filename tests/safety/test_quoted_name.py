"""Names typed by a person or a model are echoed in errors bounded and without credentials."""

from __future__ import annotations

import pytest

from pi_memory import safety
from pi_memory.blocks import BlockStore
from pi_memory.skills import SkillStore

AWS = "AKIAIOSFODNN7EXAMPLE"


@pytest.mark.parametrize(("name", "shown"), [
    ("deploy", "'deploy'"),
    ("a" * 80, repr("a" * 80)),
    ("a" * 10_000, repr("a" * 80 + "…")),
    (f"key {AWS}", "'key [REDACTED:aws_access_key_id]'"),
])
def test_quoted_name(name, shown):
    assert safety.quoted_name(name) == shown


@pytest.mark.parametrize("name", ["n" * 10_000, f"../{AWS} " + "x" * 5_000, f"{AWS}/"])
def test_block_and_skill_errors_do_not_repeat_a_huge_or_secret_name(tmp_path, name):
    made = BlockStore(tmp_path / "data").create(name, description="x")
    assert not made.success and made.code == "invalid_key"
    found = SkillStore(tmp_path / "data").view(name)
    assert found["success"] is False and found["code"] == "not_found"
    for error in (made.error, found["error"]):
        assert AWS not in error and len(error) < 400, error
    assert made.error.startswith(safety.quoted_name(name) + " is not a usable block key")
