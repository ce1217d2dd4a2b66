"""A block file that is a link leading out of its blocks folder is not read and not written (a fresh tester's
finding: in a trusted project, ``.pi/memory-blocks/team.md -> /tmp/tsecret/diary.txt`` put the diary into every
prompt; a global block linked to ``/etc/passwd`` was listed in full). A person is told why; links that stay in
the folder still work."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from pi_memory.blocks import BlockStore
from pi_memory.cli.app import app
from pi_memory.config import set_trust
from pi_memory.prompt import blocks_text, run_parts
from pi_memory.runtime import open_memory

DIARY = "Dear diary: the launch code is 0000.\n"
OWN = "---\ndescription: Facts\nlimit: 2000\n---\n\nPrefers tabs.\n"


def message(key: str, scope: str, link, target, folder) -> str:
    return (f"Block {key!r} ({scope}) is not read: {link} is a link to {target}, outside the blocks folder "
            f"{folder}. A block goes into every prompt, so it must be a file in its folder; nothing is read from "
            "or written through this link. Replace the link with the file's text, or delete it.")


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A trusted project with its own ``user`` block and ``team.md`` linked to a diary outside it; a global
    ``pw.md`` linked to a file outside the data root."""
    for name, folder in (("HOME", "home"), ("PI_CODING_AGENT_DIR", "agent"), ("PI_MEMORY_DIR", "mem"),
                         ("PI_MEMORY_STATE_DIR", "state")):
        monkeypatch.setenv(name, str(tmp_path / folder))
    secret = tmp_path / "tsecret"
    secret.mkdir()
    (secret / "diary.txt").write_text(DIARY)
    (secret / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    blocks = repo / ".pi" / "memory-blocks"
    blocks.mkdir(parents=True)
    (blocks / "user.md").write_text(OWN)
    (blocks / "team.md").symlink_to(secret / "diary.txt")
    (tmp_path / "mem" / "blocks").mkdir(parents=True)
    (tmp_path / "mem" / "blocks" / "pw.md").symlink_to(secret / "passwd")
    set_trust(repo, True)
    monkeypatch.chdir(repo)
    return tmp_path


def test_links_out_of_the_folder_reach_no_prompt_and_are_named(world):
    repo, secret = world / "repo", world / "tsecret"
    memory = open_memory(repo)
    try:
        store = memory.blocks()
        assert [(b.key, b.scope, b.value) for b in store.all_blocks()] == [("user", "project", "Prefers tabs.")]
        assert [(s.key, s.scope, s.path, s.target) for s in store.skipped()] == [
            ("team", "project", repo / ".pi" / "memory-blocks" / "team.md", secret / "diary.txt"),
            ("pw", "global", world / "mem" / "blocks" / "pw.md", secret / "passwd")]
        (part, _) = run_parts(memory, preview=True)
        assert "diary" not in part.text and "root:x" not in part.text and "## team" not in part.text
        assert part.note == "1 block(s); 2 block file(s) not read (see pi-memory blocks list)"
        assert "diary" not in run_parts(memory, preview=False)[0].text  # a live session's prompt
    finally:
        memory.close()


def test_blocks_list_show_and_status_warn_a_person(world):
    repo, secret = world / "repo", world / "tsecret"
    team = message("team", "project", repo / ".pi" / "memory-blocks" / "team.md", secret / "diary.txt",
                   repo / ".pi" / "memory-blocks")
    pw = message("pw", "global", world / "mem" / "blocks" / "pw.md", secret / "passwd", world / "mem" / "blocks")
    runner = CliRunner()
    r = runner.invoke(app, ["blocks", "list"])
    assert r.exit_code == 0
    assert r.stdout.splitlines()[:4] == [f"warning: {team}", f"warning: {pw}", "",
                                         "user (project) [░░░░░░░░░░░░░░░░░░░░] 0% — 13/2,000 chars"]
    assert "Dear diary" not in r.stdout and "root:x" not in r.stdout
    data = json.loads(runner.invoke(app, ["blocks", "list", "--json"]).stdout)
    assert [b["key"] for b in data["blocks"]] == ["user"]
    assert data["skippedBlocks"] == [
        {"key": "team", "scope": "project", "file": str(repo / ".pi" / "memory-blocks" / "team.md"),
         "target": str(secret / "diary.txt"), "message": team},
        {"key": "pw", "scope": "global", "file": str(world / "mem" / "blocks" / "pw.md"),
         "target": str(secret / "passwd"), "message": pw}]
    r = runner.invoke(app, ["blocks", "show", "pw"])
    assert (r.exit_code, r.stdout) == (1, "")
    assert " ".join(r.stderr.split()) == f"refused: {pw}"
    r = runner.invoke(app, ["status"])
    assert r.stdout.splitlines()[-2:] == [f"warning: {team}", f"warning: {pw}"]
    assert json.loads(runner.invoke(app, ["status", "--json"]).stdout)["skippedBlocks"] == data["skippedBlocks"]


def test_nothing_is_written_through_a_link_out_of_the_folder(world):
    repo, secret = world / "repo", world / "tsecret"
    memory = open_memory(repo)
    try:
        store = memory.blocks()
        r = store.update("team", "Moved to Berlin.")
        assert (r.success, r.code) == (False, "link_outside")
        assert r.error == ("Memory block 'team' is not available: its file is a link to a file outside the blocks "
                           "folder, so it is neither read nor written. Nothing was changed. Tell the user; "
                           "`pi-memory blocks list` shows them what to fix.")
        assert str(secret) not in r.error  # the model is not told where the link leads
        r = store.create("pw", "Passwords")
        assert (r.success, r.code) == (False, "link_outside")
        assert r.error == (f"Not created: {world / 'mem' / 'blocks' / 'pw.md'} is a link to {secret / 'passwd'}, "
                           f"outside the blocks folder {world / 'mem' / 'blocks'}, and no block is written through "
                           "such a link. Delete the link first, or pick another key.")
        assert (secret / "diary.txt").read_text() == DIARY
        assert (secret / "passwd").read_text() == "root:x:0:0:root:/root:/bin/bash\n"
    finally:
        memory.close()


def test_a_link_made_after_the_block_was_read_is_not_written_through(tmp_path):
    """The check runs again under the lock: a file swapped for a link between the read and the write."""
    store = BlockStore(tmp_path / "data" / "blocks")
    assert store.create("notes", "Notes", value="A.").success
    block = store.get("notes")
    outside = tmp_path / "outside.md"
    outside.write_text(OWN)
    block.path.unlink()
    block.path.symlink_to(outside)
    r = store._update_locked(block, "B.", None)
    assert (r.success, r.code) == (False, "link_outside")
    assert outside.read_text() == OWN


def test_a_dangling_link_is_no_way_to_create_a_file_elsewhere(tmp_path):
    store = BlockStore(tmp_path / "data" / "blocks")
    store.global_dir.mkdir(parents=True)
    (store.global_dir / "notes.md").symlink_to(tmp_path / "elsewhere" / "made.md")
    (tmp_path / "elsewhere").mkdir()
    r = store.create("notes", "Notes")
    assert (r.success, r.code) == (False, "link_outside")
    assert not (tmp_path / "elsewhere" / "made.md").exists()
    (store.global_dir / "inside.md").symlink_to(store.global_dir / "missing.md")  # dangling, inside
    r = store.create("inside", "Inside")
    assert (r.success, r.code, r.error) == (False, "exists", f"A block 'inside' already exists at "
                                            f"{store.global_dir / 'inside.md'}; nothing was changed. Edit that "
                                            "file, or pick another key.")
    assert not (store.global_dir / "missing.md").exists()


def test_a_project_folder_leading_out_of_the_project_is_not_read(tmp_path):
    elsewhere = tmp_path / "home-notes"
    elsewhere.mkdir()
    (elsewhere / "todo.md").write_text("Buy milk.\n")
    repo = tmp_path / "repo"
    (repo / ".pi").mkdir(parents=True)
    (repo / ".pi" / "memory-blocks").symlink_to(elsewhere)
    store = BlockStore(tmp_path / "data" / "blocks", repo, project_trusted=True)
    assert store.all_blocks() == []
    (skipped,) = store.skipped()
    assert (skipped.key, skipped.scope, skipped.target) == (None, "project", elsewhere)
    assert skipped.message == (f"The project's blocks folder {repo / '.pi' / 'memory-blocks'} is not read: it is a "
                               f"link to {elsewhere}, outside the project {repo}. Project blocks must be files of "
                               "the project; move the folder into it, or use global blocks (pi-memory blocks "
                               "create --scope global).")
    r = store.create("notes", "Notes", scope="project")
    assert (r.success, r.code, r.error) == (False, "link_outside", f"Not created: {skipped.message}")
    assert sorted(p.name for p in elsewhere.iterdir()) == ["todo.md"]


def test_links_inside_the_folder_are_read_and_written_through(tmp_path):
    """The decision for links that stay in the folder: allowed (a shared file in a subfolder, an alias); a write
    lands in the target and the link stays a link. The global folder itself may be a link (a data root on
    another disk): only its files must stay in it."""
    real_folder = tmp_path / "disk" / "blocks"
    (real_folder / "shared").mkdir(parents=True)
    (real_folder / "shared" / "team.md").write_text("---\ndescription: Team\n---\n\nAna.\n")
    (real_folder / "team.md").symlink_to("shared/team.md")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "blocks").symlink_to(real_folder)
    store = BlockStore(tmp_path / "data" / "blocks")
    assert [(b.key, b.value) for b in store.blocks()] == [("team", "Ana.")]
    assert store.skipped() == []
    assert store.update("team", "Bo.").success
    assert (real_folder / "team.md").is_symlink()
    assert (real_folder / "shared" / "team.md").read_text() == "---\ndescription: Team\n---\n\nAna.\nBo.\n"
    assert "## team [8/2,000 chars]\nTeam\nAna.\nBo." in blocks_text(store.blocks())


@pytest.mark.parametrize("link", ["notes.md", "./notes.md"])
def test_a_link_to_another_block_of_the_folder_is_not_a_second_block(tmp_path, link):
    """A tester's `alias.md -> notes.md` put the same text in the prompt twice (`## alias` and `## notes`), and
    updateMemory on 'alias' wrote into 'notes'."""
    folder = tmp_path / "blocks"
    folder.mkdir()
    (folder / "notes.md").write_text("---\ndescription: Notes\n---\n\nAna.\n")
    (folder / "alias.md").symlink_to(link)
    store = BlockStore(folder)
    assert [(b.key, b.value) for b in store.blocks()] == [("notes", "Ana.")]
    [skipped] = store.skipped()
    assert (skipped.key, skipped.alias) == ("alias", "notes")
    assert skipped.message == (
        f"Block 'alias' (global) is not read: {folder / 'alias.md'} is a link to block 'notes' in the same folder, so "
        "the same text would be in every prompt twice, under two names, and a change to 'alias' would change "
        "'notes'. Use 'notes'; delete the link, or replace it with a copy of the text if the two should differ.")
    r = store.update("alias", "Bo.")
    assert (r.success, r.code, r.error) == (False, "link_outside", (
        "Memory block 'alias' is not available: its file is a link to block 'notes', the same text under another "
        "name. Nothing was changed. Change 'notes' instead."))
    assert (folder / "notes.md").read_text() == "---\ndescription: Notes\n---\n\nAna.\n"
    assert blocks_text(store.blocks()).count("Ana.") == 1
