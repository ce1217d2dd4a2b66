"""A batch's replace and remove name entries as the caller saw the store, not as the batch's earlier steps left it.

A consolidation answer merges entries the way its prompt asks: replace one with the merged text, remove the others.
The merged text holds the very pieces that name the entries to remove, so matching each ``oldText`` against the
store after the earlier steps found it twice and refused good answers (a tester's case, first test below).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_memory.curated import MemoryStore, Operation


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    s = MemoryStore(tmp_path, memory_char_limit=2000, user_char_limit=1000)
    s.load_from_disk()
    return s


def disk(store: MemoryStore) -> str:
    return store.path("memory").read_text(encoding="utf-8")


def seed(store: MemoryStore, *entries: str) -> None:
    for e in entries:
        assert store.add("memory", e).success


MERGE = [
    Operation(action="replace", old_text="uses pnpm", content="Package manager: pnpm (never npm); Node version is 20"),
    Operation(action="remove", old_text="Node version is 20"),
    Operation(action="remove", old_text="never npm"),
]


def test_a_merge_whose_text_holds_the_removed_entries_pieces_is_applied(store):
    seed(store, "The project uses pnpm as its package manager", "Node version is 20",
         "The project package manager is pnpm, never npm")
    r = store.apply("memory", MERGE)
    assert r.success, r.error
    assert disk(store) == "Package manager: pnpm (never npm); Node version is 20\n"


def test_the_same_merge_with_the_removals_first_gives_the_same_file(store):
    seed(store, "The project uses pnpm as its package manager", "Node version is 20",
         "The project package manager is pnpm, never npm")
    r = store.apply("memory", [MERGE[1], MERGE[2], MERGE[0]])
    assert r.success, r.error
    assert disk(store) == "Package manager: pnpm (never npm); Node version is 20\n"


def test_three_entries_merged_into_the_last_one(store):
    seed(store, "Deploys go through staging first", "Staging is at staging.example.test", "Deploy on Fridays is banned")
    r = store.apply("memory", [
        Operation(action="remove", old_text="through staging"),
        Operation(action="remove", old_text="staging.example.test"),
        Operation(action="replace", old_text="Fridays", content=(
            "Deploys: staging first (staging.example.test), never on Fridays; through staging always")),
    ])
    assert r.success, r.error
    assert disk(store) == "Deploys: staging first (staging.example.test), never on Fridays; through staging always\n"


def test_two_operations_on_one_entry_are_refused_and_nothing_is_written(store):
    seed(store, "Use ruff for linting", "Tests run with pytest -q")
    before = disk(store)
    r = store.apply("memory", [
        Operation(action="replace", old_text="ruff", content="Use ruff for linting and formatting"),
        Operation(action="remove", old_text="ruff for linting"),
    ])
    assert not r.success and r.code == "conflict"
    assert r.error == ("Operation 2 (remove): the entry it names ('Use ruff for linting') was already changed by "
                       "operation 1 of this batch. Give each entry at most one replace or remove; nothing was "
                       "changed.")
    assert disk(store) == before


def test_an_entry_added_earlier_in_the_batch_can_still_be_replaced(store):
    seed(store, "Tests run with pytest -q")
    r = store.apply("memory", [
        Operation(action="add", content="Lint with flake8"),
        Operation(action="replace", old_text="flake8", content="Lint with ruff"),
    ])
    assert r.success, r.error
    assert disk(store) == "Tests run with pytest -q\n§\nLint with ruff\n"


def test_a_piece_in_two_entries_as_shown_is_ambiguous_even_after_an_earlier_removal(store):
    seed(store, "alpha one", "alpha two")
    before = disk(store)
    r = store.apply("memory", [Operation(action="remove", old_text="alpha one"),
                               Operation(action="remove", old_text="alpha")])
    assert not r.success and r.code == "ambiguous"
    assert r.error.startswith("Operation 2 (remove): ")
    assert disk(store) == before


def test_a_whole_entry_given_as_old_text_names_that_entry_inside_a_longer_one(store):
    seed(store, "Node version is 20", "Node version is 20 on CI too")
    r = store.apply("memory", [Operation(action="replace", old_text="Node version is 20", content="Node 22 everywhere"),
                               Operation(action="remove", old_text="on CI too")])
    assert r.success, r.error
    assert disk(store) == "Node 22 everywhere\n"


def test_a_piece_matching_nothing_as_shown_or_after_the_steps_is_no_match(store):
    seed(store, "Tests run with pytest -q")
    r = store.apply("memory", [Operation(action="remove", old_text="tox")])
    assert not r.success and r.code == "no_match"


def test_a_whole_entry_quoted_as_shown_with_its_credential_redacted_is_that_entry(tmp_path):
    """A tester's case: the entry as the model was shown it ("token [REDACTED:github_token]") is also inside
    another entry as shown, and was refused as ambiguous; the raw text of a whole entry was already that entry."""
    data = tmp_path / "data"
    data.mkdir()
    token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
    (data / "MEMORY.md").write_text(f"token {token}\n§\nold token {token} was revoked\n", encoding="utf-8")
    store = MemoryStore(data)
    store.load_from_disk()
    r = store.apply("memory", [Operation(action="remove", old_text="token [REDACTED:github_token]")])
    assert r.success, r.error
    assert (data / "MEMORY.md").read_text(encoding="utf-8") == f"old token {token} was revoked\n"
