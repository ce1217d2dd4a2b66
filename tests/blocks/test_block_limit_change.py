"""There was no way to change a memory block's limit but editing its file, and a limit edited past the blocks'
budget left the block out of every prompt with a note. ``pi-memory blocks limit KEY CHARS`` (and pi's
``/memory limit KEY CHARS``) changes it: refused below the block's text and for a raise past the budget, written
under the block's lock with the rest of the frontmatter as it was, undone by the same command with the old
limit."""

from __future__ import annotations

import json

import pytest

from cli_homes import isolated_cli  # tests/: on sys.path by the conftest
from pi_memory.blocks import BlockStore, change_limit
from pi_memory.blocks.limit import with_limit
from pi_memory.curated.files import StoreLockedError


def block_file(folder, key: str, value: str, limit: int | str = 2000, extra: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{key}.md").write_text(f"---\ndescription: {key} notes\n{extra}limit: {limit}\n---\n\n{value}\n")


def test_a_limit_is_changed_with_the_rest_of_the_file_as_it_was(tmp_path):
    store = BlockStore(tmp_path / "blocks")
    block_file(store.global_dir, "user", "Prefers tabs.", extra="# kept: a comment\nowner: dana\n")
    result = change_limit(store, "user", 4000)
    assert (result.success, result.code, result.message) == (True, "ok", (
        "Block 'user' (global): limit 2,000 -> 4,000 characters (now 0% — 13/4,000 chars). It counts from the next "
        "prompt on. To undo: pi-memory blocks limit user 2000"))
    assert (store.global_dir / "user.md").read_text() == (
        "---\ndescription: user notes\n# kept: a comment\nowner: dana\nlimit: 4000\n---\n\nPrefers tabs.\n")
    assert store.get("user").limit == 4000
    assert change_limit(store, "user", 2000).success  # the undo the message names
    assert store.get("user").limit == 2000
    again = change_limit(store, "user", 2000)
    assert (again.success, again.code) == (True, "unchanged")


def test_a_limit_below_the_text_is_refused_and_nothing_changes(tmp_path):
    store = BlockStore(tmp_path / "blocks")
    block_file(store.global_dir, "notes", "x" * 1500)
    before = (store.global_dir / "notes.md").read_bytes()
    result = change_limit(store, "notes", 1000)
    assert (result.success, result.code) == (False, "below_text")
    assert result.error == (
        f"Block 'notes' holds 1,500 characters, more than a limit of 1,000: every prompt would cut it there. "
        f"Nothing was changed. Shorten its text first (edit {store.global_dir / 'notes.md'}), or use a limit of "
        "at least 1,500.")
    assert (store.global_dir / "notes.md").read_bytes() == before
    assert change_limit(store, "notes", 1500).success  # exactly the text: allowed


def test_a_raise_past_the_budget_is_refused_naming_the_budget_and_the_setting(tmp_path):
    store = BlockStore(tmp_path / "blocks", budget=10_000)
    block_file(store.global_dir, "a", "alpha", limit=3000)
    block_file(store.global_dir, "b", "beta", limit=3000)
    before = (store.global_dir / "b.md").read_bytes()
    result = change_limit(store, "b", 8000)
    assert (result.success, result.code) == (False, "over_budget")
    assert result.error == (
        "A limit of 8,000 characters for block 'b' would bring the limits of the memory blocks together to 11,000, "
        "over the 10,000 characters all blocks may hold in one prompt (\"blocksCharBudget\"): once they fill up, "
        "some would be left out of the prompt. Nothing was changed. To go on, use a limit of at most 7,000 (what "
        "the other blocks' limits leave), lower other blocks' limits (`pi-memory blocks limit KEY CHARS`), or "
        "raise \"blocksCharBudget\" in the \"pi-memory\" settings (settings.json).")
    assert (store.global_dir / "b.md").read_bytes() == before
    assert change_limit(store, "b", 7000).success  # exactly what is left


def test_a_hand_edited_limit_past_the_budget_can_be_lowered_but_not_raised_again(tmp_path):
    store = BlockStore(tmp_path / "blocks", budget=10_000)
    block_file(store.global_dir, "a", "alpha", limit=3000)
    block_file(store.global_dir, "big", "b" * 5_000, limit=50_000)  # edited by hand past the budget
    # the limits together stay over the budget after it (3,000 + 9,000): lowering is never refused for the budget
    result = change_limit(store, "big", 9_000)
    assert (result.success, result.code) == (True, "ok")
    assert "limit: 9000\n" in (store.global_dir / "big.md").read_text()
    assert change_limit(store, "big", 9_500).code == "over_budget"  # a raise is
    assert change_limit(store, "big", 7_000).success


def test_an_invalid_or_unknown_limit_is_refused(tmp_path):
    store = BlockStore(tmp_path / "blocks")
    block_file(store.global_dir, "user", "x")
    assert [change_limit(store, "user", n).code for n in (0, -5, 100_001, True)] == ["invalid_limit"] * 4
    unknown = change_limit(store, "nope", 10)
    assert (unknown.code, unknown.error) == ("unknown_block", "There is no memory block 'nope' (blocks: user). Nothing "
                                             "was changed. See `pi-memory blocks list`.")


def test_a_default_block_with_no_file_yet_is_named_as_such(tmp_path):
    store = BlockStore(tmp_path / "blocks")
    result = change_limit(store, "agent", 3000)
    assert (result.success, result.code, result.error) == (False, "unknown_block", (
        "Block 'agent' has no file yet: the next session start creates it, with the default limit. Nothing was "
        "changed. Change its limit after that, or create it now with `pi-memory blocks create agent --limit CHARS` (a session start then "
        "makes no default block: create 'user' too if you want it)."))
    assert not store.global_dir.exists()


def test_the_change_waits_for_the_blocks_lock(tmp_path):
    from pi_memory.curated.files import locked

    store = BlockStore(tmp_path / "blocks", lock_timeout=0.2)
    block_file(store.global_dir, "user", "x")
    with locked(store.global_dir / "user.md", 5, store.lock_dir):
        result = change_limit(store, "user", 3000)
    assert (result.success, result.code) == (False, "locked")
    assert "limit: 2000" in (store.global_dir / "user.md").read_text()
    assert StoreLockedError  # the error the store turns into that code


def test_a_read_only_blocks_folder_refuses_the_change(tmp_path):
    store = BlockStore(tmp_path / "blocks")
    block_file(store.global_dir, "user", "x")
    store.global_dir.chmod(0o555)
    try:
        result = change_limit(store, "user", 3000)
    finally:
        store.global_dir.chmod(0o755)
    assert (result.success, result.code) == (False, "read_only")
    assert result.error.startswith("The limit of block 'user' was not changed (")
    assert "limit: 2000" in (store.global_dir / "user.md").read_text()


@pytest.mark.parametrize(("fm", "expected"), [
    (None, "limit: 500"),
    ("description: d", "description: d\nlimit: 500"),
    ("description: d\nlimit: 20 # old\nx: 1", "description: d\nlimit: 500\nx: 1"),
    ("description: d\nlimit:\n  2000", "description: d\nlimit: 500\n"),  # not one line: written from its values
    ("- a list", None),
])
def test_only_the_limit_line_of_the_frontmatter_changes(fm, expected):
    assert with_limit(fm, 500) == expected


def test_cli_blocks_limit(tmp_path, monkeypatch):
    run = isolated_cli(tmp_path, monkeypatch)
    assert run("blocks", "create", "decisions", "--description", "Decisions").exit_code == 0
    r = run("blocks", "limit", "decisions", "3000")
    assert (r.exit_code, r.stdout) == (0, "Block 'decisions' (global): limit 2,000 -> 3,000 characters (now 0% — "
                                          "0/3,000 chars). It counts from the next prompt on. To undo: pi-memory "
                                          "blocks limit decisions 2000\n")
    r = run("blocks", "limit", "decisions", "200000", "--json")
    data = json.loads(r.stdout)
    assert (r.exit_code, data["success"], data["refusal"]) == (1, False, "invalid_limit")
    data = json.loads(run("blocks", "show", "decisions", "--json").stdout)
    assert data["limit"] == 3000


def test_an_unknown_key_in_a_new_folder_names_the_default_blocks(tmp_path):
    # a tester's screen: "There is no memory block 'human' (blocks: none)" while `blocks list` showed user and agent
    from pi_memory.blocks import BlockStore, change_limit

    refused = change_limit(BlockStore(tmp_path / "data"), "human", 1500)
    assert (refused.code, refused.error) == ("unknown_block", "There is no memory block 'human' (blocks: none yet; a "
                                             "session start makes user and agent). Nothing was changed. See "
                                             "`pi-memory blocks list`.")
