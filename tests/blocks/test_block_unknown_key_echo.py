"""A ``blockKey`` no block has is named in the refusal, cut past the longest key a block can have and redacted (a
tester's 1 MB key came back twice, 2 MB in the model's context)."""

from __future__ import annotations

import json

import pytest

from pi_memory.blocks import BlockStore


@pytest.fixture
def store(tmp_path) -> BlockStore:
    s = BlockStore(tmp_path / "blocks")
    s.ensure_defaults()
    return s


@pytest.mark.parametrize(("key", "shown"), [
    ("k" * 64, "k" * 64),
    ("k" * 65, "k" * 64 + "… (65 characters)"),
    ("k" * 1_000_000, "k" * 64 + "… (1,000,000 characters)"),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED:github_token]"),
])
def test_an_unknown_key_is_named_cut_and_redacted(store, key, shown):
    result = store.update(key, "some text").to_dict()
    assert (result["success"], result["code"], result["blockKey"]) == (False, "unknown_block", shown)
    assert result["error"] == (f"There is no memory block {shown!r}. Nothing was changed. Use one of the existing "
                               "blocks (agent, user); you cannot create blocks, the user can.")
    assert len(json.dumps(result)) < 1000
