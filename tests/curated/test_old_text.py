"""What replace/remove do with the text that names an entry: a whole entry given names that entry even when a
longer entry holds it too (the inspector's remove sends the whole text of the entry it shows), and the refusals
quote the text given with its credentials redacted (it may be a whole entry, secret and all)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_memory.curated import MemoryStore

PASSWORD = "Hunter2!x9"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    (tmp_path / "MEMORY.md").write_text("Uses uv\n§\nUses uv for Python packaging\n§\nUses uv on CI\n",
                                        encoding="utf-8")
    s = MemoryStore(tmp_path)
    s.load_from_disk()
    return s


@pytest.mark.parametrize(("old", "left"), [
    ("Uses uv", ["Uses uv for Python packaging", "Uses uv on CI"]),
    ("Uses uv on CI", ["Uses uv", "Uses uv for Python packaging"]),
])
def test_a_whole_entry_names_that_entry(store: MemoryStore, old: str, left: list[str]) -> None:
    assert store.remove("memory", old).success
    assert store.entries("memory") == left


def test_a_whole_entry_is_replaced_though_a_longer_one_holds_it(store: MemoryStore) -> None:
    assert store.replace("memory", "Uses uv", "Uses uv 0.5").success
    assert store.entries("memory") == ["Uses uv 0.5", "Uses uv for Python packaging", "Uses uv on CI"]


def test_a_piece_of_several_entries_is_still_ambiguous(store: MemoryStore) -> None:
    r = store.remove("memory", "uv")
    assert r.code == "ambiguous" and len(store.entries("memory")) == 3


@pytest.mark.parametrize(("old", "code", "quoted"), [
    (f"DB password: {PASSWORD}", "no_match", "No entry in MEMORY.md contains 'DB password: "
                                             "[REDACTED:password_in_prose]'. Nothing was changed."),
    (f"password: {PASSWORD}", "ambiguous", "'password: [REDACTED:password_in_prose]' appears in 2 different "
                                           "entries of MEMORY.md"),
])
def test_refusals_quote_old_text_redacted(tmp_path: Path, old: str, code: str, quoted: str) -> None:
    (tmp_path / "MEMORY.md").write_text(f"Staging password: {PASSWORD}\n§\nProd password: {PASSWORD}\n",
                                        encoding="utf-8")
    store = MemoryStore(tmp_path)
    store.load_from_disk()
    r = store.remove("memory", old)
    assert r.code == code and r.error.startswith(quoted) and PASSWORD not in r.error
