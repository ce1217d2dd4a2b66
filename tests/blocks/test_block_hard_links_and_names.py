"""Hand-made block files the symlink checks missed: a hard link to a file outside the blocks folder (one file,
two names: ``st_nlink`` 2) was read into every prompt and written to; a key Windows cannot use as a file name
(``con``, ``LPT1``) was accepted; and a link swapped in between the check and the write was written through
(the write resolved the path again after the check). Now a hard link is skipped and named like a link leading
out, a Windows device name is refused as a key, and a write opens the path it checked without following a
link, and replaces it by a rename."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from cli_homes import isolated_cli  # tests/: on sys.path by the conftest
from pi_memory.blocks import BlockStore, paths
from pi_memory.cli.app import app
from pi_memory.curated.files import atomic_write_text
from pi_memory.prompt import blocks_text

OWN = "---\ndescription: Facts\nlimit: 2000\n---\n\nPrefers tabs.\n"
SHADOW = "root:$6$salt$hash:19000:0:99999:7:::\n"


def hard_message(key: str, link, links: int, folder) -> str:
    return (f"Block {key!r} (global) is not read: {link} is a hard link (the file has {links} names on disk), so it "
            f"may be a file outside the blocks folder {folder} under another name. A block goes into every prompt, "
            "so it must be a file of its own in its folder; nothing is read from or written to it. Replace it with "
            "a copy of its text (copy it to a new file, delete this one, rename the copy), or delete it.")


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A global blocks folder with ``user.md`` (its own file) and ``notes.md``, a hard link to a file outside."""
    isolated_cli(tmp_path, monkeypatch)  # the environment only: the tests run the CLI themselves
    outside = tmp_path / "secret" / "shadow"
    outside.parent.mkdir()
    outside.write_text(SHADOW)
    blocks = tmp_path / "mem" / "blocks"
    blocks.mkdir(parents=True)
    (blocks / "user.md").write_text(OWN)
    os.link(outside, blocks / "notes.md")
    return tmp_path


def test_a_hard_link_is_skipped_named_and_never_written(world):
    blocks, outside = world / "mem" / "blocks", world / "secret" / "shadow"
    store = BlockStore(blocks)
    assert [(b.key, b.value) for b in store.all_blocks()] == [("user", "Prefers tabs.")]
    (skipped,) = store.skipped()
    assert (skipped.key, skipped.scope, skipped.path, skipped.target, skipped.links) == (
        "notes", "global", blocks / "notes.md", blocks / "notes.md", 2)
    assert skipped.message == hard_message("notes", blocks / "notes.md", 2, blocks)
    assert "root:" not in blocks_text(store.blocks())
    r = store.update("notes", "Moved to Berlin.")
    assert (r.success, r.code, r.error) == (False, "link_outside", (
        "Memory block 'notes' is not available: its file is a link, another name of a file that may lie outside "
        "the blocks folder, so it is neither read nor written. Nothing was changed. Tell the user; `pi-memory "
        "blocks list` shows them what to fix."))
    r = store.create("notes", "Notes")
    assert (r.success, r.code) == (False, "exists")
    assert outside.read_text() == SHADOW


def test_a_hard_link_with_three_names_and_one_reached_by_a_link_inside_the_folder(tmp_path):
    blocks = tmp_path / "blocks"
    (blocks / "shared").mkdir(parents=True)
    outside = tmp_path / "elsewhere.md"
    outside.write_text(OWN)
    os.link(outside, blocks / "a.md")
    os.link(outside, blocks / "shared" / "b.txt")
    (blocks / "b.md").symlink_to("shared/b.txt")  # a link that stays inside, to a hard-linked file
    store = BlockStore(blocks)
    assert store.all_blocks() == []
    assert [(s.key, s.target, s.links) for s in store.skipped()] == [
        ("a", blocks / "a.md", 3), ("b", blocks / "shared" / "b.txt", 3)]


def test_blocks_list_and_show_warn_a_person_about_a_hard_link(world):
    blocks = world / "mem" / "blocks"
    message = hard_message("notes", blocks / "notes.md", 2, blocks)
    runner = CliRunner()
    r = runner.invoke(app, ["blocks", "list"])
    assert r.stdout.splitlines()[:3] == [f"warning: {message}", "",
                                         "user (global) [░░░░░░░░░░░░░░░░░░░░] 0% — 13/2,000 chars"]
    assert "root:" not in r.stdout
    data = json.loads(runner.invoke(app, ["blocks", "list", "--json"]).stdout)
    assert data["skippedBlocks"] == [{"key": "notes", "scope": "global", "file": str(blocks / "notes.md"),
                                      "target": str(blocks / "notes.md"), "message": message, "links": 2}]
    r = runner.invoke(app, ["blocks", "show", "notes"])
    assert (r.exit_code, r.stdout, " ".join(r.stderr.split())) == (1, "", f"refused: {message}")


DEVICE_ERROR = ("'{key}' cannot be a block key: CON, PRN, AUX, NUL, COM1-COM9 and LPT1-LPT9 (in any case, with or "
                "without an extension) are device names on Windows, where no file can be called that, so the block "
                "could not be read or written there. Nothing was created; pick another key (e.g. '{key}-notes').")


@pytest.mark.parametrize("key", ["con", "CON", "Prn", "aux", "nUl", "com1", "COM9", "lpt1", "Lpt9"])
def test_windows_device_names_are_refused_as_keys(tmp_path, key):
    store = BlockStore(tmp_path / "blocks")
    r = store.create(key, "Notes")
    assert (r.success, r.code, r.block_key, r.error) == (False, "reserved_key", key, DEVICE_ERROR.format(key=key))
    assert not (tmp_path / "blocks").exists()


@pytest.mark.parametrize("key", ["con.md", "NUL.txt", "com1.notes", "Lpt3.x"])
def test_a_device_name_with_an_extension_is_one_too(key):
    assert paths.reserved_key(key) is True


@pytest.mark.parametrize("key", ["console", "com10", "lpt0", "com", "nul-notes", "aux_1", "conn", "prn2"])
def test_names_that_only_start_like_a_device_are_keys(tmp_path, key):
    assert paths.reserved_key(key) is False
    assert BlockStore(tmp_path / "blocks").create(key, "Notes").success


def test_the_cli_says_why_a_device_name_is_refused(world):
    r = CliRunner().invoke(app, ["blocks", "create", "AUX", "--description", "Aux notes"])
    assert r.exit_code == 1
    assert " ".join(r.stderr.split()) == "refused: " + DEVICE_ERROR.format(key="AUX")


def test_a_link_swapped_in_after_the_check_is_not_written_through(tmp_path, monkeypatch):
    """The path is worked out once: a link put in its place after that is met by O_NOFOLLOW, not followed."""
    store = BlockStore(tmp_path / "data" / "blocks")
    assert store.create("notes", "Notes", value="A.").success
    path = store.global_dir / "notes.md"
    outside = tmp_path / "outside.md"
    outside.write_text(OWN)
    resolve = paths.real

    def swap_after_resolving(p):
        found = resolve(p)
        if p == path:
            path.unlink()
            path.symlink_to(outside)
        return found

    monkeypatch.setattr(paths, "real", swap_after_resolving)
    r = store.update("notes", "B.")
    assert (r.success, r.code) == (False, "link_outside")
    assert outside.read_text() == OWN
    assert path.is_symlink()


def test_a_hard_link_made_after_the_block_was_read_is_not_written(tmp_path):
    store = BlockStore(tmp_path / "data" / "blocks")
    assert store.create("notes", "Notes", value="A.").success
    block = store.get("notes")
    os.link(block.path, tmp_path / "other-name.md")
    r = store._update_locked(block, "B.", None)
    assert (r.success, r.code) == (False, "link_outside")
    assert (tmp_path / "other-name.md").read_text() == "---\ndescription: Notes\nlimit: 2000\n---\n\nA.\n"


def test_a_write_that_does_not_follow_links_replaces_the_link_itself(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text(OWN)
    outside.chmod(0o600)
    link = tmp_path / "blocks" / "notes.md"
    link.parent.mkdir()
    link.symlink_to(outside)
    atomic_write_text(link, "new\n", follow_links=False)
    assert (link.is_symlink(), link.read_text(), outside.read_text()) == (False, "new\n", OWN)
    assert link.stat().st_mode & 0o777 != 0o777  # a link's own mode is not copied onto the file


def test_create_replaces_a_link_put_there_after_its_check(tmp_path, monkeypatch):
    store = BlockStore(tmp_path / "data" / "blocks")
    store.global_dir.mkdir(parents=True)
    target = tmp_path / "elsewhere" / "made.md"
    target.parent.mkdir()
    calls = []

    def clash(self, key, scope, path):  # the second check, under the lock, passes; then a link appears
        calls.append(path)
        if len(calls) == 2:
            path.symlink_to(target)

    monkeypatch.setattr(BlockStore, "_clash", clash)
    assert store.create("notes", "Notes", value="A.").success
    assert not target.exists()
    assert not (store.global_dir / "notes.md").is_symlink()
    assert (store.global_dir / "notes.md").read_text() == "---\ndescription: Notes\nlimit: 2000\n---\n\nA.\n"
